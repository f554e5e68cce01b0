# -*- coding: utf-8 -*-
"""rollout_guard mode=capi with drain on a three-node cluster (Kubernetes 1.31+): each old Machine is held by the
guard's pre-terminate hook until its server, stopped through Nova, is SHUTOFF; only then does KCP's kcp-cleanup
(the etcd member's removal) go, and CAPO delete the server."""

from rollouts import hooks_left, machines, seed_cluster


def test_old_servers_are_stopped_before_their_pre_terminate_hooks_go(cloud, run_module):
    name = seed_cluster(cloud, 3)
    old = dict((m["metadata"]["name"], m["spec"]["providerID"].rsplit("/", 1)[-1]) for m in machines(cloud, name))
    run = run_module("flightcontrol.openstack.rollout_guard", dict(
        cloud="minicloud", mode="capi", cluster=name, kubernetes={"kubeconfig": str(cloud.state_dir / "kubeconfig")},
        start=True, drain=True, drain_timeout=1, poll_interval=1, member_timeout=300, timeout=900))
    assert run.rc == 0, run.output
    result = run.result
    assert result["server_stop"]["holds_pre_terminate"], result["server_stop"]
    rows = dict((r["machine"], r) for r in result["server_stop"]["servers"])
    assert sorted(rows) == sorted(old), rows
    actions = [(a["action"], a["machines"]) for a in result["actions"]]
    for machine, server in old.items():
        row = rows[machine]
        assert row["server_id"] == server and row["outcome"] == "stopped" and row["server_stopped"], row
        assert row["stop_seconds"] is not None and row["released_at"] >= row["shutoff_at"], row
        stop = actions.index(("stop server", [machine]))
        release = actions.index(("release pre-terminate hook (stopped)", [machine]))
        drained = [i for i, (what, _m) in enumerate(actions) if what.startswith("drain")]
        assert drained and min(drained) < stop < release, actions
    assert all(r["server_stopped"] and r["out_of_rotation_seconds"] is not None for r in result["drained"]), \
        result["drained"]
    assert not hooks_left(cloud, name)
