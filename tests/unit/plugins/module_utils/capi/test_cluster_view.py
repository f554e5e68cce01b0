# -*- coding: utf-8 -*-

import pytest

from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.service import choose_version
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.cluster_view import build_view, cluster_summary
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import NotServed
from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils import capi_samples as s

SAME_IN_BOTH = ("name", "namespace", "phase", "paused", "infrastructure_provisioned", "control_plane_initialized",
                "provisioned", "ready", "deleting", "control_plane_endpoint")


@pytest.mark.parametrize("provisioned,ready", [(True, True), (False, False), (True, False)])
def test_both_contracts_give_the_same_view(provisioned, ready):
    old = cluster_summary(s.cluster("v1beta1", provisioned=provisioned, ready=ready))
    new = cluster_summary(s.cluster("v1beta2", provisioned=provisioned, ready=ready))
    assert dict((k, old[k]) for k in SAME_IN_BOTH) == dict((k, new[k]) for k in SAME_IN_BOTH)
    assert old["provisioned"] is provisioned and old["ready"] is ready


def test_conditions_keep_reasons_and_say_where_they_were_found():
    view = cluster_summary(s.cluster("v1beta1", ready=False, paused=True, paused_status="True"))
    by_type = dict((c["type"], c) for c in view["conditions"])
    assert by_type["Available"]["reason"] == "NotAvailable"
    assert by_type["Available"]["location"] == "status.v1beta2.conditions"
    assert by_type["Paused"]["status"] == "True"
    assert by_type["Ready"]["severity"] == "Warning" and by_type["Ready"]["location"] == "status.conditions"


def test_failure_fields_where_the_contract_still_has_them():
    old = s.cluster("v1beta1")
    old["status"].update(failureReason="InvalidConfiguration", failureMessage="no network")
    new = s.cluster("v1beta2")
    new["status"]["deprecated"]["v1beta1"].update(failureReason="InvalidConfiguration", failureMessage="no network")
    assert cluster_summary(old)["failure"] == cluster_summary(new)["failure"] == {
        "reason": "InvalidConfiguration", "message": "no network"}
    assert cluster_summary(s.cluster("v1beta2"))["failure"] is None


def test_view_lists_control_plane_machines_with_nodes_addresses_and_hooks():
    machines = [s.machine(name="w-1", control_plane=False, node="w1"),
                s.machine(name="cp-b", node="node-b", address="10.0.0.12", deleting=True,
                          hooks=["pre-drain.delete.hook.machine.cluster.x-k8s.io/rollout"]),
                s.machine(name="cp-a")]
    view = build_view(s.cluster(), None, s.openstack_cluster(), machines)
    names = [m["name"] for m in view["control_plane_machines"]]
    assert sorted(names) == ["cp-a", "cp-b"]
    cp_b = [m for m in view["machines"] if m["name"] == "cp-b"][0]
    assert cp_b["deleting"] is True and cp_b["node_name"] == "node-b"
    assert cp_b["addresses"] == [{"type": "InternalIP", "address": "10.0.0.12"}]
    assert cp_b["deletion_hooks"] == ["pre-drain.delete.hook.machine.cluster.x-k8s.io/rollout"]
    assert view["machines"][-1]["name"] == "w-1"
    assert view["infrastructure"]["api_server_load_balancer"]["internal_ip"] == "10.0.0.5"
    assert "control-plane Machine cp-b is being deleted" in view["blockers"]
    assert view["healthy"] is False


def test_a_healthy_cluster_has_no_blockers_and_each_problem_is_one_sentence():
    healthy = build_view(s.cluster("v1beta2"), None, s.openstack_cluster(), [s.machine("v1beta2")])
    assert healthy["blockers"] == [] and healthy["healthy"] is True
    broken = build_view(s.cluster("v1beta2", paused=True, provisioned=False, ready=False), None,
                        s.openstack_cluster(block_move=True, ready=False), [s.machine("v1beta2", ready=False)])
    text = " | ".join(broken["blockers"])
    for expected in ("is paused", "is not provisioned", "not ready/available", "OpenStackCluster c1 is not provisioned",
                     "control-plane Machine c1-cp-a is not ready"):
        assert expected in text
    assert "block-move" not in text and broken["infrastructure"]["block_move"] is True


def test_choose_version_prefers_v1beta2_and_respects_a_request():
    assert choose_version({"cluster.x-k8s.io": ["v1beta2", "v1beta1"]}) == "v1beta2"
    assert choose_version({"cluster.x-k8s.io": ["v1beta1"]}) == "v1beta1"
    assert choose_version({"cluster.x-k8s.io": ["v1beta2", "v1beta1"]}, "v1beta1") == "v1beta1"
    with pytest.raises(NotServed, match="not served"):
        choose_version({"cluster.x-k8s.io": ["v1beta1"]}, "v1beta2")
    with pytest.raises(NotServed, match="Cluster API is not installed"):
        choose_version({"apps": ["v1"]})


def capo_v1beta2(infra):
    """``infra`` as CAPO v0.15 serves it in its v1beta2 API (api/v1beta1/conversion.go)."""
    infra = dict(infra, apiVersion="infrastructure.cluster.x-k8s.io/v1beta2", status=dict(infra["status"]))
    status = infra["status"]
    status["apiServerManagedLoadBalancer"] = status.pop("apiServerLoadBalancer")
    status.pop("ready")
    status["initialization"] = {"provisioned": True}
    return infra


@pytest.mark.parametrize("shape", [lambda infra: infra, capo_v1beta2], ids=["capo-v1beta1", "capo-v1beta2"])
def test_the_api_load_balancer_and_pool_of_either_capo_version(shape):
    infra = shape(s.openstack_cluster())
    infra["spec"] = {"controlPlaneEndpoint": {"host": "203.0.113.10", "port": 443}}
    view = build_view(s.cluster("v1beta2"), None, infra, [s.machine("v1beta2")])
    summary = view["infrastructure"]
    assert summary["api_server_load_balancer"]["id"] == "lb-1"
    assert summary["api_server_pool"] == "k8s-clusterapi-cluster-default-c1-443"
    assert summary["provisioned"] is True and summary["api_server_load_balancer_error"] is None


def test_an_openstack_cluster_naming_two_load_balancers_is_a_blocker():
    infra = capo_v1beta2(s.openstack_cluster())
    infra["status"]["apiServerLoadBalancer"] = {"id": "lb-other", "name": "other"}
    view = build_view(s.cluster("v1beta2"), None, infra, [s.machine("v1beta2")])
    summary = view["infrastructure"]
    assert summary["api_server_load_balancer"] is None and summary["api_server_pool"] is None
    assert "carries both" in summary["api_server_load_balancer_error"]
    assert view["healthy"] is False and any("carries both" in b for b in view["blockers"])
