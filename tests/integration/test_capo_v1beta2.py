# -*- coding: utf-8 -*-
"""A cluster whose OpenStackCluster is shaped as CAPO v0.15 serves it (v1beta2: the API load balancer in
``status.apiServerManagedLoadBalancer``, no ``status.apiServerLoadBalancer``): rollout_guard (mode=capi),
cluster_info and cluster_readiness find its API load balancer and pool without ``pool`` given.

minicloud's emulated plane serves the OpenStackCluster in v1beta1 only, so the test writes the status in the
v1beta2 shape itself (a merge patch of the status subresource) and puts the v1beta1 shape back afterwards: the
emulated control-plane controller reads the v1beta1 field."""

import copy

import pytest

from rollouts import seed_cluster, pool_name

INFRA = ("infrastructure.cluster.x-k8s.io", "v1beta1", "default", "openstackclusters")


def custom(cloud):
    from kubernetes import client
    return client.CustomObjectsApi(cloud.api.kube_client())


@pytest.fixture
def v1beta2_shaped(cloud):
    """A cluster on real Octavia whose OpenStackCluster reports its load balancer only as CAPO's v1beta2 does."""
    name = seed_cluster(cloud, control_plane=1)
    api = custom(cloud)
    lb = copy.deepcopy(api.get_namespaced_custom_object(*(INFRA + (name,)))["status"]["apiServerLoadBalancer"])
    api.patch_namespaced_custom_object_status(*(INFRA + (name, {"status": {
        "apiServerLoadBalancer": None, "apiServerManagedLoadBalancer": lb}})))
    status = api.get_namespaced_custom_object(*(INFRA + (name,)))["status"]
    assert "apiServerLoadBalancer" not in status and status["apiServerManagedLoadBalancer"]["id"] == lb["id"]
    try:
        yield name, lb
    finally:
        api.patch_namespaced_custom_object_status(*(INFRA + (name, {"status": {
            "apiServerLoadBalancer": lb, "apiServerManagedLoadBalancer": None}})))


def kube(cloud):
    return {"kubeconfig": str(cloud.state_dir / "kubeconfig")}


def test_rollout_guard_finds_the_pool_without_pool_given(cloud, run_module, v1beta2_shaped):
    name, lb = v1beta2_shaped
    run = run_module("flightcontrol.openstack.rollout_guard", dict(
        cloud="minicloud", mode="capi", cluster=name, kubernetes=kube(cloud), start=False, timeout=60,
        poll_interval=0.5), check_mode=True)
    assert run.rc == 0, run.output
    assert run.result["pool"]["name"] == pool_name(name) == lb["name"] + "-6443", run.result["pool"]
    assert run.result["changed"] is False


def test_cluster_info_and_cluster_readiness_find_the_load_balancer_and_pool(cloud, run_module, v1beta2_shaped):
    name, lb = v1beta2_shaped
    run = run_module("flightcontrol.openstack.cluster_info", dict(kube(cloud), name=name))
    assert run.rc == 0, run.output
    infra = run.result["infrastructure"]
    assert infra["api_server_load_balancer"]["id"] == lb["id"] and infra["api_server_load_balancer"]["ip"]
    assert infra["api_server_pool"] == pool_name(name) and infra["api_server_load_balancer_error"] is None
    run = run_module("flightcontrol.openstack.cluster_readiness", dict(
        kubernetes=kube(cloud), name=name, cloud="minicloud", fail_on=[]))
    assert run.rc == 0, run.output
    assert run.result["monitor"]["pool"] == pool_name(name), run.result["monitor"]
    assert run.result["views"]["monitor"]["status"] != "unknown", run.result["views"]["monitor"]
