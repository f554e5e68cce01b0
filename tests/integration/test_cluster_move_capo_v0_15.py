# -*- coding: utf-8 -*-
"""roles/cluster_move on management clusters running CAPO v0.15 (v1beta2 stored and served, v1beta1 served through
conversion), through real ansible-playbook runs between minicloud's two Kubernetes APIs with its clusterctl stand-in
(NOT clusterctl), which reads and creates every object at the version the source's CRD stores it at, as clusterctl
does: a v1beta2 cluster lands kept at v1beta2 on a target with v0.15's CRDs, and a target with only v0.14's is
refused before any write."""

import uuid

import pytest
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

from minicloud.runtime.control import MinicloudError
from test_cluster_move import capi, cluster, paused_condition, run_role, without_leases  # noqa: F401 pylint: disable=unused-import

INFRA = "infrastructure.cluster.x-k8s.io"


@pytest.fixture
def capo_v0_15(capi):
    """Clusters made with CAPO v0.15's CRDs on the source (``made``: (name, namespace)); afterwards they are
    deleted from both APIs and both are back to v0.14's CRDs, as the other tests of the run expect them."""
    made = []
    yield made
    for name, namespace in made:
        for target in (False, True):
            try:
                capi.api.delete_capi_cluster(name, namespace, target=target)
            except MinicloudError as exc:
                assert "no cluster named" in str(exc), exc
    for target in (False, True):
        assert capi.api.install_capo_crds("v1beta1", target=target)["served"] == ["v1beta1"]


def seed_v0_15(cloud, made):
    name = "mv2-%s" % uuid.uuid4().hex[:6]
    namespace = "move-%s" % name
    made.append((name, namespace))
    cloud.json("capi", "cluster", "create", name, "--namespace", namespace, "--workers", 1,
               "--capo-api-version", "v1beta2")
    return name, namespace


def openstack_cluster(cloud, name, namespace, kubeconfig="kubeconfig"):
    api = k8s_config.new_client_from_config(config_file=str(cloud.state_dir / kubeconfig))
    with api:
        return k8s_client.CustomObjectsApi(api).get_namespaced_custom_object(
            INFRA, "v1beta2", namespace, "openstackclusters", name)


def test_a_v1beta2_cluster_moves_to_a_target_with_capo_v0_15_and_is_kept_there_at_v1beta2(capi, run_role, capo_v0_15):
    name, namespace = seed_v0_15(capi, capo_v0_15)
    load_balancer = openstack_cluster(capi, name, namespace)["status"]["apiServerManagedLoadBalancer"]
    assert load_balancer["id"] and load_balancer["ip"], load_balancer
    assert capi.json("capi", "crds", "--target")["release"] == "v0.14"
    assert capi.json("capi", "crds", "--target", "--capo-api-version", "v1beta2")["storage"] == "v1beta2"
    proc, got = run_role(name, namespace, "v1.12.0")
    assert got["failed"] is False, proc.stdout + proc.stderr
    assert got["target_unpause"]["acknowledged"] is True, got["target_unpause"]
    assert cluster(capi, name, namespace) is None, "gone from the source"
    assert not cluster(capi, name, namespace, "kubeconfig-target")["spec"].get("paused")
    moved = openstack_cluster(capi, name, namespace, "kubeconfig-target")
    assert moved["status"]["apiServerManagedLoadBalancer"] == load_balancer
    assert "apiServerLoadBalancer" not in moved["status"]
    # Kept at v1beta2 there: v0.14's CRDs (v1beta1 only) are refused while an object is kept at v1beta2, naming it.
    with pytest.raises(MinicloudError) as refused:
        capi.api.install_capo_crds("v1beta1", target=True)
    assert "3 object(s) are kept at v1beta2" in str(refused.value), refused.value
    assert "OpenStackCluster %s/%s" % (namespace, name) in str(refused.value), refused.value


def test_a_target_with_only_capo_v0_14s_crds_is_refused_before_any_write(capi, run_role, capo_v0_15):
    name, namespace = seed_v0_15(capi, capo_v0_15)
    assert capi.api.capo_crds(target=True)["served"] == ["v1beta1"]
    capi.requests(reset=True)
    _proc, got = run_role(name, namespace, "v1.12.0")
    assert got["failed"] is True, got
    error = got["move"]["stderr"]
    assert ("Error: failed to check the target cluster: it does not serve OpenStackCluster, OpenStackMachine at "
            "%s/v1beta2, the version the source cluster stores them at (CAPO v0.15's CRDs on the source, v0.14's on "
            "the target)" % INFRA) in error, error
    assert "Pausing the source cluster" not in got["move"]["stdout"], got["move"]["stdout"]
    assert "failed at 'Run clusterctl move'" in got["msg"], got["msg"]
    assert without_leases(capi.writes("kubernetes")) == {}, "nothing paused, nothing deleted"
    # the role's attempt at the target's Lease (refused there: no namespace) is the only request that is no read
    assert without_leases(capi.writes("kubernetes-target")) == {}, "nothing created"
    source = cluster(capi, name, namespace)
    assert not source["spec"].get("paused") and paused_condition(source)["status"] == "False"
    assert cluster(capi, name, namespace, "kubeconfig-target") is None
