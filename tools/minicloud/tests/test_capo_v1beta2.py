"""CAPO v0.15 on the emulated plane: OpenStackCluster and OpenStackMachine converted between v1beta1 and v1beta2
both ways (:mod:`minicloud.kube.capo_convert`), the plane's CAPO CRDs (:mod:`minicloud.kube.capo_crds`: v1beta1
only until v0.15's are installed, then both served, each object kept in the version it was created at), a cluster
seeded at v1beta2, and the rollout controller reading the v1beta2 load-balancer field."""

from __future__ import annotations

import copy

import pytest
from kubernetes import client
from kubernetes.client import ApiException

from minicloud.kube import capo_convert
from minicloud.kube.admin import KubeAdmin
from minicloud.kube.controllers import capo_fields, kcp
from minicloud.kube.resources import by_kind
from minicloud.kube.store import Store

GROUP = "infrastructure.cluster.x-k8s.io"


def old_cluster() -> dict:
    """An OpenStackCluster at v1beta1 with every field that moves."""
    return {
        "apiVersion": f"{GROUP}/v1beta1", "kind": "OpenStackCluster",
        "metadata": {"name": "c", "namespace": "default", "generation": 3},
        "spec": {"apiServerLoadBalancer": {"enabled": True, "provider": "ovn", "allowedCIDRs": ["10.0.0.0/8"]},
                 "apiServerPort": 6444, "apiServerFixedIP": "10.6.0.9", "apiServerFloatingIP": "172.24.4.9",
                 "disableAPIServerFloatingIP": True, "disableExternalNetwork": False, "networkMTU": 1450,
                 "disablePortSecurity": True, "externalRouterIPs": [{"fixedIP": "172.24.4.2"}],
                 "managedSecurityGroups": {"allNodesSecurityGroupRules": [{"name": "bgp"}],
                                           "allowAllInClusterTraffic": True},
                 "bastion": {"enabled": True, "spec": {"flavor": "m1.small",
                                                       "ports": [{"disablePortSecurity": False}]}},
                 "identityRef": {"cloudName": "openstack", "name": "c-cloud-config"}},
        "status": {"ready": True, "failureReason": "CreateError", "failureMessage": "boom",
                   "apiServerLoadBalancer": {"id": "lb-1", "name": "k8s-clusterapi-cluster-default-c-kubeapi",
                                             "ip": "172.24.4.9", "internalIP": "10.6.0.9"},
                   "network": {"id": "net-1", "name": "n", "subnets": [{"id": "s-1", "cidr": "10.6.0.0/24"}]},
                   "failureDomains": {"az-2": {"controlPlane": False}, "az-1": {"controlPlane": True,
                                                                               "attributes": {"r": "1"}}},
                   "conditions": [{"type": "Ready", "status": "True", "severity": "", "reason": "Ok",
                                   "lastTransitionTime": "2026-01-01T00:00:00Z"}],
                   "initialization": {"provisioned": True}},
    }


def test_an_openstack_cluster_goes_up_as_capo_converts_it():
    new = capo_convert.convert(old_cluster(), "OpenStackCluster", "v1beta2")
    assert new["apiVersion"] == f"{GROUP}/v1beta2"
    assert new["spec"]["apiServer"] == {
        "managedLoadBalancer": {"enabled": True, "provider": "ovn", "allowedCIDRs": ["10.0.0.0/8"]}, "port": 6444,
        "fixedIP": "10.6.0.9", "floatingIP": "172.24.4.9", "enableFloatingIP": False}
    assert new["spec"]["enableExternalNetwork"] is True
    assert new["spec"]["managedNetwork"] == {"mtu": 1450, "enablePortSecurity": False}
    assert new["spec"]["managedRouter"] == {"externalIPs": [{"fixedIP": "172.24.4.2"}]}
    assert new["spec"]["managedSecurityGroups"] == {"clusterNodesSecurityGroupRules": [{"name": "bgp"}],
                                                    "allowAllInClusterTraffic": True}
    assert new["spec"]["bastion"]["spec"] == {"flavor": {"filter": {"name": "m1.small"}},
                                              "ports": [{"enablePortSecurity": True}]}
    moved = ("apiServerLoadBalancer", "apiServerPort", "apiServerFixedIP", "apiServerFloatingIP",
             "disableAPIServerFloatingIP", "disableExternalNetwork", "networkMTU", "disablePortSecurity",
             "externalRouterIPs")
    assert not set(moved) & set(new["spec"])
    status = new["status"]
    assert status["apiServerManagedLoadBalancer"]["id"] == "lb-1" and "apiServerLoadBalancer" not in status
    assert not {"ready", "failureReason", "failureMessage"} & set(status)
    assert status["failureDomains"] == [{"name": "az-1", "controlPlane": True, "attributes": {"r": "1"}},
                                        {"name": "az-2", "controlPlane": False}]
    assert status["conditions"] == [{"type": "Ready", "status": "True", "reason": "Ok", "observedGeneration": 3,
                                     "lastTransitionTime": "2026-01-01T00:00:00Z"}]
    assert status["network"] == old_cluster()["status"]["network"] and status["initialization"] == {
        "provisioned": True}


def test_an_openstack_cluster_comes_back_down_unchanged_but_for_what_v1beta2_cannot_say():
    old = old_cluster()
    back = capo_convert.convert(capo_convert.convert(old, "OpenStackCluster", "v1beta2"), "OpenStackCluster",
                                "v1beta1")
    expected = copy.deepcopy(old)
    del expected["status"]["failureReason"], expected["status"]["failureMessage"]
    del expected["status"]["conditions"][0]["severity"]  # CAPO's ConditionSeverityNone, omitted
    assert back == expected


def test_v1beta1_ready_is_the_ready_condition():
    new = {"apiVersion": f"{GROUP}/v1beta2", "kind": "OpenStackMachine", "metadata": {"name": "m"},
           "status": {"conditions": [{"type": "Ready", "status": "False", "reason": "Booting"}]}}
    assert capo_convert.convert(new, "OpenStackMachine", "v1beta1")["status"]["ready"] is False
    new["status"]["conditions"][0]["status"] = "True"
    assert capo_convert.convert(new, "OpenStackMachine", "v1beta1")["status"]["ready"] is True


@pytest.mark.parametrize("old, new", [
    ({"flavor": "m1.medium"}, {"flavor": {"filter": {"name": "m1.medium"}}}),
    ({"flavorID": "f-1"}, {"flavor": {"id": "f-1"}}),
    ({"flavor": "m1.medium", "ports": [{"disablePortSecurity": True}]},
     {"flavor": {"filter": {"name": "m1.medium"}}, "ports": [{"enablePortSecurity": False}]}),
])
def test_an_openstack_machine_spec_both_ways(old, new):
    machine = {"apiVersion": f"{GROUP}/v1beta1", "kind": "OpenStackMachine", "metadata": {"name": "m"},
               "spec": dict(old, providerID="openstack:///s-1")}
    up = capo_convert.convert(machine, "OpenStackMachine", "v1beta2")
    assert up["spec"] == dict(new, providerID="openstack:///s-1")
    assert capo_convert.convert(up, "OpenStackMachine", "v1beta1")["spec"] == machine["spec"]


def test_an_unknown_version_is_refused():
    with pytest.raises(ValueError, match="v1beta1, v1beta2"):
        capo_convert.convert(old_cluster(), "OpenStackCluster", "v1alpha7")


def test_a_write_at_v1beta2_keeps_the_v1beta1_failure():
    current = old_cluster()
    sent = capo_convert.convert(current, "OpenStackCluster", "v1beta2")
    sent["status"]["network"]["name"] = "renamed"
    kept = capo_convert.keep_lost(capo_convert.convert(sent, "OpenStackCluster", "v1beta1"), current)
    assert kept["status"]["failureReason"] == "CreateError" and kept["status"]["network"]["name"] == "renamed"


# -- the plane ----------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def admin(server):
    return KubeAdmin(server.kubeconfig)


@pytest.fixture(scope="module")
def custom(server):
    return client.CustomObjectsApi(server.api_client())


def served(admin) -> list[str]:
    return [v["version"] for v in admin.call("GET", f"/apis/{GROUP}")["versions"]]


def test_the_plane_serves_v1beta1_until_v0_15_is_installed_then_both(server, admin, custom):
    assert admin.capo_crds()["apiVersion"] == "v1beta1" and served(admin) == ["v1beta1"]
    admin.create_cluster("keep", api_version="v1beta2")  # CAPO v1beta1: today's shapes
    with pytest.raises(ApiException) as refused:
        custom.get_namespaced_custom_object(GROUP, "v1beta2", "default", "openstackclusters", "keep")
    assert refused.value.status == 404
    admin.create_cluster("new", api_version="v1beta2", capo_api_version="v1beta2")
    assert served(admin) == ["v1beta2", "v1beta1"]
    assert admin.call("GET", f"/apis/{GROUP}")["preferredVersion"]["version"] == "v1beta2"
    store = server.store
    kept = {o["metadata"]["name"]: o["apiVersion"] for o in store.list(by_kind("OpenStackCluster"))[0]}
    assert kept == {"keep": f"{GROUP}/v1beta1", "new": f"{GROUP}/v1beta2"}
    new = custom.get_namespaced_custom_object(GROUP, "v1beta2", "default", "openstackclusters", "new")
    assert new["status"]["apiServerManagedLoadBalancer"]["name"] == "k8s-clusterapi-cluster-default-new-kubeapi"
    assert new["status"]["initialization"] == {"provisioned": True} and "ready" not in new["status"]
    assert new["spec"]["apiServer"] == {"managedLoadBalancer": {"enabled": True}}
    old_view = custom.get_namespaced_custom_object(GROUP, "v1beta1", "default", "openstackclusters", "new")
    assert old_view["status"]["apiServerLoadBalancer"] == new["status"]["apiServerManagedLoadBalancer"]
    assert old_view["status"]["ready"] is True and "apiServerManagedLoadBalancer" not in old_view["status"]
    keep = custom.get_namespaced_custom_object(GROUP, "v1beta2", "default", "openstackclusters", "keep")
    assert "apiServerManagedLoadBalancer" in keep["status"]  # the old cluster through conversion too
    machines = custom.list_namespaced_custom_object(GROUP, "v1beta2", "default", "openstackmachines",
                                                    label_selector="cluster.x-k8s.io/cluster-name=new")["items"]
    assert machines and all(m["spec"]["flavor"] == {"filter": {"name": "m1.medium"}} for m in machines)


def test_a_write_in_the_other_version_keeps_the_object_where_it_is(server, admin, custom):
    admin.create_cluster("mixed", capo_api_version="v1beta2")
    custom.patch_namespaced_custom_object(GROUP, "v1beta1", "default", "openstackclusters", "mixed",
                                          {"spec": {"apiServerPort": 6444}})
    stored = server.store.get(by_kind("OpenStackCluster"), "default", "mixed")
    assert stored["apiVersion"] == f"{GROUP}/v1beta2" and stored["spec"]["apiServer"]["port"] == 6444
    assert "apiServerPort" not in stored["spec"]


def test_back_to_v0_14_is_refused_while_objects_are_kept_at_v1beta2(admin):
    with pytest.raises(ApiException) as refused:
        admin.install_capo_crds("v1beta1")
    assert refused.value.status == 409 and "kept at v1beta2" in refused.value.body
    for name in ("new", "mixed"):
        admin.delete_cluster(name)
    assert admin.install_capo_crds("v1beta1")["served"] == ["v1beta1"]
    assert served(admin) == ["v1beta1"]


def test_a_bad_capo_api_version_is_refused_before_any_write(admin):
    with pytest.raises(ValueError, match="capo_api_version"):
        admin.create_cluster("never", capo_api_version="v2")
    assert not [c for c in admin.list_clusters() if c["name"] == "never"]


# -- the controllers ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
def test_the_rollout_controller_reads_the_load_balancer_of_either_version(version):
    osc = capo_convert.convert(old_cluster(), "OpenStackCluster", version)
    assert capo_fields.load_balancer(osc)["id"] == "lb-1"
    store = Store()
    osc["metadata"]["annotations"] = {"minicloud.test/openstack": "true", "minicloud.test/pool-id": "pool-1"}
    store.create(by_kind("Namespace"), {"metadata": {"name": "default"}})
    store.create(by_kind("OpenStackCluster"), osc, "default")
    store.update(by_kind("OpenStackCluster"), "default", "c", lambda o: dict(o, status=osc["status"]),
                 subresource="status")
    kcp_obj = {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlane",
               "metadata": {"name": "c-control-plane", "namespace": "default",
                            "labels": {"cluster.x-k8s.io/cluster-name": "c"}}, "spec": {"replicas": 1}}
    store.create(by_kind("KubeadmControlPlane"), kcp_obj, "default")
    [ctx] = kcp.openstack_clusters(store)
    assert (ctx.lb_id, ctx.lb_name, ctx.pool_id) == ("lb-1", "k8s-clusterapi-cluster-default-c-kubeapi", "pool-1")


@pytest.mark.parametrize("version, ready, expected", [
    ("v1beta1", True, {"ready": True}),
    ("v1beta1", False, {"ready": False}),
    ("v1beta2", True, {"initialization": {"provisioned": True}}),
    ("v1beta2", False, {}),
])
def test_readiness_is_written_in_the_machines_version(version, ready, expected):
    osm = {"apiVersion": f"{GROUP}/{version}", "metadata": {"generation": 2}}
    assert capo_fields.ready_fields(osm, ready) == expected
    conditions = capo_fields.ready_fields(osm, ready, [{"type": "Ready", "status": "True"}])["conditions"]
    if version == "v1beta2":
        assert conditions == [{"type": "Ready", "status": "True", "reason": "Ready", "observedGeneration": 2}]
    else:
        assert conditions == [{"type": "Ready", "status": "True"}]
