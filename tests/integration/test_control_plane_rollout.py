# -*- coding: utf-8 -*-
"""The control_plane_rollout role (and rollout_guard) rolling minicloud's CAPI control planes on the real Octavia.

Each test seeds a cluster with real servers, ports and an Octavia load balancer (``capi cluster create
--openstack``), runs the role in a real ``ansible-playbook`` and judges it from minicloud's own record of the
pool (``capi history``): serving members sampled every 0.25 s during the rollout. The rollout that goes through
without trouble is the role's molecule scenario (extensions/molecule/control_plane_rollout), which checks the
same record; the rollout property (test_rollout_property.py) rolls with faults and lost members.
"""

from rollouts import assert_safe_history, history, hooks_left, pool_name, run_role, seed_cluster, set_capo_wait


def test_lost_member_stops_with_holds_then_resumes(cloud, playbooks):
    name = seed_cluster(cloud, 3)
    set_capo_wait(cloud, name, "lb")  # CAPO before v0.14: a lost member looks done
    cloud.octavia("lost-member", members=pool_name(name) + "-*")
    rc, output, result = run_role(playbooks, cloud, {
        "control_plane_rollout_cluster": name, "control_plane_rollout_member_timeout": 10})
    assert rc != 0
    stuck = result["stuck"]
    assert stuck["member"].startswith(pool_name(name) + "-") and stuck["state"].startswith("PENDING_CREATE"), result
    assert stuck["member"] in output and "PENDING_CREATE" in output, output
    old = [m["name"] for m in result["machines"] if not m["up_to_date"]]
    assert len(old) == 3 and sorted(result["held"]) == sorted(old), result
    assert not result["released"]
    assert sorted(hooks_left(cloud, name)) == sorted(old)
    assert_safe_history(history(cloud, name), 3, pool_name(name))

    cloud.octavia("normal", delay=0.1)  # the emulator finishes the members it lost
    rc, output, result = run_role(playbooks, cloud, {
        "control_plane_rollout_cluster": name, "control_plane_rollout_start": False,
        "control_plane_rollout_member_timeout": 120})
    assert rc == 0, output
    assert len(result["released"]) == 3 and not result["rollout_started"], result
    assert not hooks_left(cloud, name)
    assert all(m["up_to_date"] and m["serving"] for m in result["machines"])
    assert_safe_history(history(cloud, name), 3, pool_name(name))
