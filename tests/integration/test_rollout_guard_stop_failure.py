# -*- coding: utf-8 -*-
"""rollout_guard mode=capi with drain when Nova's stop of an old server does not finish: the guests of the old
servers ignore ACPI (minicloud's power fault), so Nova keeps each ``powering-off`` for its whole shutdown_timeout.

With ``drain_stop_timeout_action: fail`` the run stops with that Machine held at the guard's pre-terminate hook,
names it, and leaves the pool its serving members; once the guest takes the shutdown, a second run finds the hook
it left and finishes it (the server is SHUTOFF: the hook goes, the rollout goes on). With ``release`` (the default)
each hook goes at the timeout, with a warning, and the rollout finishes. Gated on the cloud's state, never on time.
"""

import time

from minicloud.dataplane.power import PowerFile
from rollouts import hooks_left, machines, pool_name, seed_cluster

MODULE = "flightcontrol.openstack.rollout_guard"
PRE_TERMINATE = "pre-terminate.delete.hook.machine.cluster.x-k8s.io/flightcontrol-rollout"
# Nova keeps a stop of a guest that ignores ACPI for its shutdown_timeout (60 s): far past these.
STOP_TIMEOUT = 3


def args(cloud, name, **extra):
    values = dict(cloud="minicloud", mode="capi", cluster=name,
                  kubernetes={"kubeconfig": str(cloud.state_dir / "kubeconfig")}, drain=True, drain_timeout=1,
                  poll_interval=1, member_timeout=300, timeout=300, drain_stop_timeout=STOP_TIMEOUT)
    values.update(extra)
    return values


def old_servers(cloud, name):
    """Machine name -> its server id, for the control plane as seeded."""
    return dict((m["metadata"]["name"], m["spec"]["providerID"].rsplit("/", 1)[-1]) for m in machines(cloud, name))


def ignore_acpi(cloud, servers, ignore=True):
    power = PowerFile(cloud.state_dir)
    for server in servers:
        power.ignore_acpi(server, ignore)


def serving_members(cloud, name):
    """Members of the cluster's API pool that take traffic: ACTIVE, healthy (no monitor: NO_MONITOR), enabled,
    weight above 0."""
    conn = cloud.sdk()
    pool = conn.load_balancer.find_pool(pool_name(name))
    return [m.name for m in conn.load_balancer.members(pool.id)
            if m.provisioning_status == "ACTIVE" and m.operating_status == "NO_MONITOR" and m.is_admin_state_up
            and (m.weight or 0) > 0]


def wait_for_status(cloud, server, status, timeout=60):
    conn = cloud.sdk()
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        found = conn.compute.find_server(server, ignore_missing=True)
        if found is None or found.status == status:
            return found
        time.sleep(0.2)
    raise AssertionError("server %s is not %s after %s s" % (server, status, timeout))


def test_a_stop_that_times_out_with_fail_keeps_the_machine_held_and_the_next_run_finishes_it(cloud, run_module):
    name = seed_cluster(cloud, 3)
    old = old_servers(cloud, name)
    ignore_acpi(cloud, old.values())
    try:
        run = run_module(MODULE, args(cloud, name, start=True, drain_stop_timeout_action="fail"), playbook=True)
    finally:
        ignore_acpi(cloud, old.values(), ignore=False)
    result = run.result
    assert result["failed"], run.output
    # the Machine whose stop timed out is past its pre-drain hook and held at the pre-terminate one; the other
    # old Machines keep both holds
    held = [machine for machine, hooks in hooks_left(cloud, name).items() if hooks == [PRE_TERMINATE]]
    assert len(held) == 1, (hooks_left(cloud, name), result["server_stop"], result["msg"])
    machine = list(held)[0]
    assert machine in old, (machine, old)
    assert machine in result["msg"] and "stays held" in result["msg"] and PRE_TERMINATE in result["msg"], \
        result["msg"]
    row = [r for r in result["server_stop"]["servers"] if r["machine"] == machine][0]
    assert row["stop_requested_at"] is not None and not row["server_stopped"] and row["released_at"] is None, row
    # the pool keeps the control plane's three serving members: the new one and the two old ones not deleted
    assert len(serving_members(cloud, name)) >= 3, serving_members(cloud, name)

    # The guest took the shutdown once the fault was lifted: Nova says SHUTOFF; the next run finds the hook its
    # predecessor left, releases it and follows the rollout to its end.
    wait_for_status(cloud, old[machine], "SHUTOFF")
    again = run_module(MODULE, args(cloud, name, start=False), playbook=True)
    result = again.result
    assert not result["failed"], again.output
    rows = dict((r["machine"], r) for r in result["server_stop"]["servers"])
    assert rows[machine]["outcome"] == "already_shutoff", rows[machine]
    assert {"action": "release pre-terminate hook (already_shutoff)", "machines": [machine]}.items() <= \
        dict([a for a in result["actions"] if a["machines"] == [machine] and a["action"].startswith(
            "release pre-terminate")][0]).items(), result["actions"]
    assert not any(a["action"] == "stop server" and a["machines"] == [machine] for a in result["actions"]), \
        result["actions"]
    assert sorted(rows) == sorted(old), rows
    assert all(rows[m]["outcome"] == "stopped" for m in old if m != machine), rows
    assert not hooks_left(cloud, name)
    assert not set(old) & set(m["metadata"]["name"] for m in machines(cloud, name))


def test_a_stop_that_times_out_with_release_lets_each_machine_go_with_a_warning(cloud, run_module):
    name = seed_cluster(cloud, 3)
    old = old_servers(cloud, name)
    ignore_acpi(cloud, old.values())
    try:
        run = run_module(MODULE, args(cloud, name, start=True, drain_stop_timeout_action="release"), playbook=True)
    finally:
        ignore_acpi(cloud, old.values(), ignore=False)
    result = run.result
    assert not result["failed"], run.output
    rows = dict((r["machine"], r) for r in result["server_stop"]["servers"])
    assert sorted(rows) == sorted(old), rows
    for machine, server in old.items():
        row = rows[machine]
        assert row["outcome"] == "timed_out" and not row["server_stopped"], row
        assert row["released_at"] - row["stop_requested_at"] >= STOP_TIMEOUT, row
        assert any(machine in w and "drain_stop_timeout %s s" % STOP_TIMEOUT in w for w in result["warnings"]), \
            result["warnings"]
    assert not hooks_left(cloud, name)
