# -*- coding: utf-8 -*-
"""rollout_guard mode=capi on a cluster whose API load balancer is of the ``ovn`` provider, in a real
ansible-playbook: ovn-octavia-provider reports a new member ONLINE the moment it is created, before OVN has checked
it, so the guard counts it as serving only after a full monitor window (delay x max_retries_down + timeout, read
from the pool's monitor) since its creation. A new member whose server never answers (minicloud's ``backend-down``
for that member only, set as soon as the new Machine appears, before CAPO adds its member) goes ERROR within that
window: the guard never judges it serving, releases no old Machine and stops at member_timeout naming it."""

import threading
import time
import uuid

from rollouts import HOOK, machines, pool_name

MODULE = "flightcontrol.openstack.rollout_guard"
# A small monitor keeps the test short: window 6 x 2 + 5 = 17 s. minicloud's checks run at most every 2 s (its data
# plane's check_interval_cap), so the member goes ERROR a few seconds after creation, well inside the window.
MONITOR = {"delay": 6, "timeout": 5, "max_retries_down": 2}
WINDOW = 17.0
NEW_MACHINE_SECONDS = 120


def seed_ovn_cluster(cloud):
    cloud.octavia("normal", delay=0.1)
    name = "ro-%s" % uuid.uuid4().hex[:6]
    cloud.json("capi", "cluster", "create", name, "--control-plane", 3, "--openstack", "--monitor",
               "--lb-provider", "ovn")
    conn = cloud.sdk()
    pool = conn.load_balancer.find_pool(pool_name(name))
    conn.load_balancer.update_health_monitor(pool.health_monitor_id, **MONITOR)
    cloud.wait_lb_active({"loadbalancer": {"id": pool.loadbalancers[0]["id"]}})
    return name, conn, pool


def lose_new_member(cloud, name, old, run_done, seen):
    """As soon as the rollout's new Machine appears, its member's backend is down (before CAPO adds the member)."""
    deadline = time.monotonic() + NEW_MACHINE_SECONDS
    while not run_done.is_set() and time.monotonic() < deadline:
        new = [m["metadata"]["name"] for m in machines(cloud, name) if m["metadata"]["name"] not in old]
        if new:
            cloud.octavia("backend-down", members="%s-%s" % (pool_name(name), new[0]), delay=0.1)
            seen["new"] = new[0]
            return
        time.sleep(0.2)


def test_ovn_new_member_that_never_answers_is_not_judged_serving_and_every_old_machine_stays_held(cloud, run_module):
    name, conn, pool = seed_ovn_cluster(cloud)
    old = set(m["metadata"]["name"] for m in machines(cloud, name))
    run_done, seen = threading.Event(), {}
    watcher = threading.Thread(target=lose_new_member, args=(cloud, name, old, run_done, seen))
    watcher.start()
    started = time.monotonic()
    try:
        run = run_module(MODULE, dict(
            cloud="minicloud", mode="capi", cluster=name, kubernetes={"kubeconfig": str(cloud.state_dir / "kubeconfig")},
            start=True, poll_interval=1, member_timeout=30, timeout=300), playbook=True)
    finally:
        run_done.set()
        watcher.join()
    took = time.monotonic() - started
    result = run.result
    assert run.rc != 0 and result["failed"] is True, run.output
    new_member = "%s-%s" % (pool_name(name), seen["new"])
    assert result["serving_rule"]["provider"] == "ovn" and result["serving_rule"]["window"] == WINDOW, result
    assert result["stuck"]["member"] == new_member and result["stuck"]["state"] == "ACTIVE/ERROR", result["stuck"]
    assert new_member in result["msg"] and "not ACTIVE and healthy" in result["msg"], result["msg"]
    assert result["released"] == [] and not any(a["action"] == "release" for a in result["actions"]), result["actions"]
    rows = dict((r["name"], r) for r in result["members"])
    assert rows[new_member]["serving"] is False and rows[new_member]["serving_since"] is None, rows[new_member]
    for member in old:
        row = rows["%s-%s" % (pool_name(name), member)]
        assert row["serving"] is True and row["serving_after"].startswith("ONLINE for"), row
    held = dict((m["metadata"]["name"], HOOK in (m["metadata"].get("annotations") or {})) for m in machines(cloud, name))
    assert all(held[m] for m in old), held
    members = dict((m.name, m.operating_status) for m in conn.load_balancer.members(pool.id))
    assert members[new_member] == "ERROR" and all(members["%s-%s" % (pool_name(name), m)] == "ONLINE" for m in old), \
        members
    print("ovn guard stopped after %.0f s" % took)
