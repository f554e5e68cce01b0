# -*- coding: utf-8 -*-
"""cluster_info against minicloud's Kubernetes API: one view of v1beta1 and v1beta2 clusters."""

import uuid

import pytest

MODULE = "flightcontrol.openstack.cluster_info"
SAME_IN_BOTH = ("provisioned", "ready", "paused", "deleting", "infrastructure_provisioned",
                "control_plane_initialized", "failure")


def seed(cloud, version, control_plane=3, workers=2):
    name = "ci-%s" % uuid.uuid4().hex[:6]
    cloud.json("capi", "cluster", "create", name, "--control-plane", control_plane, "--workers", workers,
               "--api-version", version)
    return name


def info(cloud, run_module, name, playbook=False, **extra):
    args = {"kubeconfig": str(cloud.state_dir / "kubeconfig"), "name": name}
    args.update(extra)
    run = run_module(MODULE, args, playbook=playbook)
    assert run.rc == 0, run.output
    return run.result


@pytest.mark.parametrize("seeded", ["v1beta1", "v1beta2"])
def test_the_same_view_whichever_version_the_cluster_was_written_and_is_read_in(cloud, run_module, seeded):
    name = seed(cloud, seeded)
    views = dict((read, info(cloud, run_module, name, api_version=read, playbook=True)) for read in ("v1beta1", "v1beta2"))
    for read, view in views.items():
        assert view["cluster"]["api_version"] == "cluster.x-k8s.io/%s" % read
        assert view["cluster"]["provisioned"] is True and view["cluster"]["ready"] is True, view["cluster"]
        assert view["healthy"] is True and view["blockers"] == []
        assert len(view["control_plane_machines"]) == 3 and len(view["machines"]) == 5
        for machine in view["control_plane_machines"]:
            assert machine["node_name"] and machine["addresses"] and machine["deleting"] is False
        lb = view["infrastructure"]["api_server_load_balancer"]
        assert lb["id"] and lb["ip"]
        assert view["control_plane"]["replicas"] == 3
        assert view["changed"] is False and view["api_calls"] >= 4
    old, new = views["v1beta1"]["cluster"], views["v1beta2"]["cluster"]
    assert dict((k, old[k]) for k in SAME_IN_BOTH) == dict((k, new[k]) for k in SAME_IN_BOTH)
    old_available = [c for c in old["conditions"] if c["type"] == "Available"][0]
    new_available = [c for c in new["conditions"] if c["type"] == "Available"][0]
    assert old_available["location"] == "status.v1beta2.conditions"
    assert new_available["location"] == "status.conditions"
    assert old_available["reason"] == new_available["reason"]


def test_a_paused_cluster_is_not_fit_for_a_change(cloud, run_module):
    name = seed(cloud, "v1beta2", control_plane=1, workers=0)
    cloud.cli("capi", "provider", "block-move", "--delay", "0")
    try:
        run = run_module("flightcontrol.openstack.cluster_pause_ack",
                         {"kubeconfig": str(cloud.state_dir / "kubeconfig"), "name": name, "quiet_period": 1,
                          "poll_interval": 0.5, "timeout": 60})
        assert run.rc == 0, run.output
    finally:
        cloud.cli("capi", "provider", "silent", "--delay", "2")
    view = info(cloud, run_module, name)
    assert view["cluster"]["paused"] is True
    assert view["healthy"] is False
    assert "Cluster default/%s is paused" % name in view["blockers"]
    paused = [c for c in view["cluster"]["conditions"] if c["type"] == "Paused"][0]
    assert paused["status"] == "True" and paused["reason"] == "Paused"


def test_missing_cluster_is_a_clear_error(cloud, run_module):
    run = run_module(MODULE, {"kubeconfig": str(cloud.state_dir / "kubeconfig"), "name": "nope"})
    assert run.result["failed"] is True
    assert "Cluster default/nope not found" in run.result["msg"]
