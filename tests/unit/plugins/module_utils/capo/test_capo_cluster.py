# -*- coding: utf-8 -*-
"""CAPO's OpenStackCluster in both of its API versions, the shapes taken from CAPO's api/v1beta1 and api/v1beta2
types (v0.14 and v0.15) and its conversion between them."""

import copy

import pytest

from ansible_collections.flightcontrol.openstack.plugins.module_utils.capo import cluster as capo
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capo import names

LB_NAME = "k8s-clusterapi-cluster-default-c1-kubeapi"
LB = {"name": LB_NAME, "id": "lb-1", "ip": "203.0.113.10", "internalIP": "10.6.0.5",
      "allowedCIDRs": ["10.6.0.0/24"], "tags": ["a"],
      "loadBalancerNetwork": {"id": "net-1", "name": "k8s-clusterapi-cluster-default-c1", "subnets": []}}
STATUS = {
    "network": {"id": "net-1", "name": "k8s-clusterapi-cluster-default-c1",
                "subnets": [{"id": "sub-1", "name": "k8s-clusterapi-cluster-default-c1", "cidr": "10.6.0.0/24"}]},
    "externalNetwork": {"id": "ext-1", "name": "public"},
    "router": {"id": "rtr-1", "name": "k8s-clusterapi-cluster-default-c1", "ips": ["172.24.4.7"]},
    "controlPlaneSecurityGroup": {"id": "sg-cp", "name": "k8s-cluster-default-c1-secgroup-controlplane"},
    "workerSecurityGroup": {"id": "sg-w", "name": "k8s-cluster-default-c1-secgroup-worker"},
    "bastion": {"id": "srv-b", "name": "bastion", "state": "ACTIVE"},
}


def v1beta1(port=None, endpoint_port=6443, enabled=True, lb=True):
    """As CAPO v0.14 serves it: flat apiServer* fields, status.ready, status.apiServerLoadBalancer."""
    spec = {"identityRef": {"name": "cloud", "cloudName": "openstack"},
            "apiServerLoadBalancer": {"enabled": enabled}, "externalNetwork": {"filter": {"name": "public"}}}
    if port is not None:
        spec["apiServerPort"] = port
    if endpoint_port is not None:
        spec["controlPlaneEndpoint"] = {"host": "203.0.113.10", "port": endpoint_port}
    status = dict(copy.deepcopy(STATUS), ready=True, failureDomains={"az-1": {"controlPlane": True}})
    if lb:
        status["apiServerLoadBalancer"] = copy.deepcopy(LB)
    return {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "OpenStackCluster",
            "metadata": {"name": "c1", "namespace": "default"}, "spec": spec, "status": status}


def v1beta2(port=None, endpoint_port=6443, enabled=True, lb=True):
    """As CAPO v0.15 serves it: spec.apiServer grouping, status.initialization, apiServerManagedLoadBalancer."""
    api_server = {"managedLoadBalancer": {"enabled": enabled}}
    if port is not None:
        api_server["port"] = port
    spec = {"identityRef": {"name": "cloud", "cloudName": "openstack"}, "apiServer": api_server,
            "externalNetwork": {"filter": {"name": "public"}}}
    if endpoint_port is not None:
        spec["controlPlaneEndpoint"] = {"host": "203.0.113.10", "port": endpoint_port}
    status = dict(copy.deepcopy(STATUS), initialization={"provisioned": True},
                  failureDomains=[{"name": "az-1", "controlPlane": True}],
                  conditions=[{"type": "Ready", "status": "True", "observedGeneration": 1, "reason": "Ready"}])
    if lb:
        status["apiServerManagedLoadBalancer"] = copy.deepcopy(LB)
    return {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "OpenStackCluster",
            "metadata": {"name": "c1", "namespace": "default"}, "spec": spec, "status": status}


BOTH = [v1beta1, v1beta2]


@pytest.mark.parametrize("shape", BOTH)
def test_the_api_load_balancer_in_either_version(shape):
    assert capo.api_load_balancer(shape()) == {"id": "lb-1", "name": LB_NAME, "ip": "203.0.113.10",
                                               "internal_ip": "10.6.0.5", "allowed_cidrs": ["10.6.0.0/24"]}


@pytest.mark.parametrize("shape", BOTH)
def test_the_pool_is_named_after_the_control_plane_endpoint_port(shape):
    assert capo.api_pool_name(shape()) == LB_NAME + "-6443"
    assert capo.api_pool_name(shape(endpoint_port=443, port=6443)) == LB_NAME + "-443"


@pytest.mark.parametrize("shape", BOTH)
def test_without_an_endpoint_the_spec_port_then_6443(shape):
    assert capo.api_pool_name(shape(endpoint_port=None, port=8443)) == LB_NAME + "-8443"
    assert capo.api_pool_name(shape(endpoint_port=None)) == LB_NAME + "-6443"
    half = shape(port=8443)
    half["spec"]["controlPlaneEndpoint"]["host"] = ""  # CAPI's APIEndpoint.IsValid: a host and a port
    assert capo.api_server_port(half) == 8443


@pytest.mark.parametrize("shape", BOTH)
def test_neither_field_is_no_load_balancer_and_says_why(shape):
    infra = shape(lb=False, enabled=False)
    assert capo.api_load_balancer(infra) is None and capo.api_pool_name(infra) is None
    words = capo.no_load_balancer(infra)
    assert "OpenStackCluster default/c1 reports no API load balancer" in words
    assert "status.apiServerManagedLoadBalancer" in words and "status.apiServerLoadBalancer" in words
    assert "turns CAPO's API load balancer off" in words
    assert "off" not in capo.no_load_balancer(shape(lb=False))
    empty = shape(lb=False)
    empty["status"]["apiServerManagedLoadBalancer"] = {}  # created before the load balancer was found
    assert capo.api_load_balancer(empty) is None


def test_both_fields_naming_the_same_load_balancer_are_read():
    infra = v1beta2()
    infra["status"]["apiServerLoadBalancer"] = copy.deepcopy(LB)
    assert capo.api_load_balancer(infra)["id"] == "lb-1"


def test_both_fields_naming_different_load_balancers_are_refused():
    infra = v1beta2()
    infra["status"]["apiServerLoadBalancer"] = dict(LB, id="lb-old", name="old-kubeapi")
    with pytest.raises(capo.CapoError) as info:
        capo.api_load_balancer(infra)
    message = str(info.value)
    assert "OpenStackCluster default/c1 carries both status.apiServerManagedLoadBalancer" in message
    assert "lb-1" in message and "lb-old" in message and "which one it acts on is unknown" in message
    with pytest.raises(capo.CapoError):
        capo.api_pool_name(infra)


def test_both_spec_ports_that_differ_are_refused_and_a_port_must_be_one():
    infra = v1beta2(endpoint_port=None, port=8443)
    infra["spec"]["apiServerPort"] = 6443
    with pytest.raises(capo.CapoError) as info:
        capo.api_server_port(infra)
    assert "spec.apiServer.port" in str(info.value) and "spec.apiServerPort" in str(info.value)
    with pytest.raises(capo.CapoError, match="no port"):
        capo.api_server_port(v1beta1(endpoint_port=None, port="6443"))


@pytest.mark.parametrize("shape", BOTH)
def test_what_did_not_move_reads_the_same(shape):
    infra = shape()
    assert capo.provisioned(infra) is True and capo.failure(infra) is None
    assert capo.network(infra) == {"id": "net-1", "name": "k8s-clusterapi-cluster-default-c1"}
    assert capo.subnets(infra) == [{"id": "sub-1", "name": "k8s-clusterapi-cluster-default-c1",
                                    "cidr": "10.6.0.0/24"}]
    assert capo.external_network(infra) == {"id": "ext-1", "name": "public"}
    assert capo.router(infra) == {"id": "rtr-1", "name": "k8s-clusterapi-cluster-default-c1", "ips": ["172.24.4.7"]}
    assert capo.security_groups(infra) == {
        "control_plane": {"id": "sg-cp", "name": "k8s-cluster-default-c1-secgroup-controlplane"},
        "worker": {"id": "sg-w", "name": "k8s-cluster-default-c1-secgroup-worker"}, "bastion": None}


def test_provisioned_and_failure_where_each_version_has_them():
    old = v1beta1()
    old["status"].update(ready=False, failureReason="UpdateError", failureMessage="no network")
    assert capo.provisioned(old) is False
    assert capo.failure(old) == {"reason": "UpdateError", "message": "no network"}
    new = v1beta2()
    new["status"]["initialization"]["provisioned"] = False
    assert capo.provisioned(new) is False and capo.failure(new) is None
    assert capo.provisioned({"status": {}}) is None


def test_capos_names():
    assert names.api_load_balancer_name("default", "c1") == LB_NAME
    assert names.port_objects_name(LB_NAME, 6443) == LB_NAME + "-6443"
    assert names.member_name(LB_NAME, 6443, "c1-cp-x") == LB_NAME + "-6443-c1-cp-x"
