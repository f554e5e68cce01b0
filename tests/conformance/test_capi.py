# -*- coding: utf-8 -*-
"""The collection's Cluster API promises against Cluster API's own controllers (v1.13; the tests marked
``every_capi_release`` run on v1.12 too: ``make conformance-v1.12``).

cluster_info and cluster_pause_ack read what the real controllers write (v1beta2, and v1beta1 through the real
conversion webhook); rollout_guard holds and releases Machines of the real KubeadmControlPlane, whether it starts
the rollout or someone else does, and stops at a member the Octavia emulator lost. minicloud's record of the pool
(sampled by its CAPO controller during each rollout) shows it never had fewer serving members than asked.
"""

import datetime
import json

import pytest

HOOK = "pre-drain.delete.hook.machine.cluster.x-k8s.io/flightcontrol-rollout"


def guard_args(cluster, **extra):
    args = {"cloud": "minicloud", "mode": "capi", "cluster": cluster["name"], "namespace": cluster["namespace"],
            "pool": cluster["pool"], "loadbalancer": cluster["lb_id"], "min_healthy_members": 3,
            "member_timeout": 120, "timeout": 600, "poll_interval": 1}
    args.update(extra)
    return args


def machines(kubectl, cluster):
    out = kubectl("get", "machines.v1beta2.cluster.x-k8s.io", "-n", cluster["namespace"], "-l",
                  "cluster.x-k8s.io/cluster-name=%s,cluster.x-k8s.io/control-plane" % cluster["name"], "-o", "json")
    return json.loads(out.stdout)["items"]


def pool_floor(upstream, cluster):
    return upstream.api.capi_history_summary(cluster["name"], cluster["namespace"])


@pytest.mark.parametrize("api_version", ["v1beta2", "v1beta1"])
def test_cluster_info_reads_what_the_real_controllers_wrote(run_module, capi_cluster, api_version):
    result = run_module("cluster_info", {"name": capi_cluster["name"], "namespace": capi_cluster["namespace"],
                                         "api_version": api_version})
    assert not result.get("failed"), result
    cluster = result["cluster"]
    assert cluster["provisioned"] is True, cluster
    machines = result["control_plane_machines"]
    assert len(machines) == 3 and all(m["node_name"] for m in machines), machines


@pytest.mark.every_capi_release
@pytest.mark.parametrize("api_version", ["v1beta2", "v1beta1"])
def test_pause_and_unpause_are_acknowledged_by_the_real_controllers(run_module, capi_cluster, api_version):
    base = {"name": capi_cluster["name"], "namespace": capi_cluster["namespace"], "api_version": api_version,
            "timeout": 120, "poll_interval": 0.5, "quiet_period": 3}
    paused = run_module("cluster_pause_ack", dict(base, state="paused"))
    assert not paused.get("failed"), paused
    assert paused["changed"] is True
    unpaused = run_module("cluster_pause_ack", dict(base, state="unpaused"))
    assert not unpaused.get("failed"), unpaused
    assert unpaused["changed"] is True
    again = run_module("cluster_pause_ack", dict(base, state="unpaused"))
    assert again["changed"] is False, again


@pytest.mark.every_capi_release
def test_a_rollout_the_guard_starts_releases_old_machines_one_at_a_time(run_module, upstream, kubectl, settled):
    capi_cluster = settled
    before = {m["metadata"]["name"] for m in machines(kubectl, capi_cluster)}
    result = run_module("rollout_guard", guard_args(capi_cluster, start=True))
    assert not result.get("failed"), result
    after = {m["metadata"]["name"] for m in machines(kubectl, capi_cluster)}
    assert len(after) == 3 and not after & before
    summary = pool_floor(upstream, capi_cluster)
    assert summary["samples"] > 0 and summary["minServing"] >= 3, summary


def test_a_rollout_someone_else_starts_is_held_and_released_safely(run_module, upstream, kubectl, settled):
    capi_cluster = settled
    before = {m["metadata"]["name"] for m in machines(kubectl, capi_cluster)}
    # what `clusterctl alpha rollout restart` writes: the rollout time now
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    kubectl("patch", "kubeadmcontrolplanes.v1beta2.controlplane.cluster.x-k8s.io", capi_cluster["kcp"], "-n",
            capi_cluster["namespace"], "--type", "merge", "-p", json.dumps({"spec": {"rollout": {"after": now}}}))
    result = run_module("rollout_guard", guard_args(capi_cluster))
    assert not result.get("failed"), result
    after = {m["metadata"]["name"] for m in machines(kubectl, capi_cluster)}
    assert len(after) == 3 and not after & before
    summary = pool_floor(upstream, capi_cluster)
    assert summary["minServing"] >= 3, summary


@pytest.mark.every_capi_release
def test_a_lost_member_stops_the_rollout_with_every_old_machine_held_then_it_resumes(
        run_module, upstream, kubectl, settled):
    capi_cluster = settled
    before = {m["metadata"]["name"] for m in machines(kubectl, capi_cluster)}
    upstream.api.set_octavia_mode("lost-member", members=capi_cluster["pool"] + "-*", delay=0.2)
    stopped = run_module("rollout_guard", guard_args(capi_cluster, start=True, member_timeout=20))
    assert stopped.get("failed"), stopped
    assert "PENDING_CREATE" in stopped["msg"]
    held = [m for m in machines(kubectl, capi_cluster) if m["metadata"]["name"] in before]
    assert len(held) == 3 and all(HOOK in m["metadata"].get("annotations", {}) for m in held)
    upstream.api.set_octavia_mode("normal", delay=0.2)
    resumed = run_module("rollout_guard", guard_args(capi_cluster))
    assert not resumed.get("failed"), resumed
    after = {m["metadata"]["name"] for m in machines(kubectl, capi_cluster)}
    assert len(after) == 3 and not after & before
    summary = pool_floor(upstream, capi_cluster)
    assert summary["minServing"] >= 3, summary
