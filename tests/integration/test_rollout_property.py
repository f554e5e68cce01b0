# -*- coding: utf-8 -*-
"""A property of the control_plane_rollout role over emulator behaviours and fault schedules.

Each example seeds a fresh three-node control plane with real servers, ports and an Octavia load balancer
(``capi cluster create --openstack``), makes minicloud's CAPO wait like a new or an old CAPO, sets the Octavia
step delay, maybe loses the 1st, 2nd or 3rd new member, maybe injects transient faults on a path the role polls,
runs the role in a real ``ansible-playbook`` and judges the run from minicloud's own record of the pool
(``capi history``, a sample every 0.25 s):

* the pool never had fewer serving members than min_healthy_members (3), and no old Machine was released
  before a replacement of its own served (``assert_safe_history``);
* with a lost member the role fails naming that member and its state, keeps the remaining old Machines held
  and the cluster keeps serving; without one it finishes with new Machines only and no hooks left;
* one fixed example then resumes: the emulator recovers, and the role run again without starting releases the
  held Machines one at a time and finishes.

make test runs five fixed examples (``EXAMPLES``: two chosen, three once drawn from ``scenarios``), each its own
test; ``make rollout-examples`` draws ROLLOUT_EXAMPLES more from the same strategy (no shrinking, since every
example costs a rollout).
"""

import json
import os
import threading
import time

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from rollouts import (assert_safe_history, history, hooks_left, machines, pool_name, run_role, seed_cluster,
                      set_capo_wait)

MIN_HEALTHY = 3
LOST_MEMBER_TIMEOUT = 25  # a lost member is called stuck after this; a slow machine needs it to boot first

# GETs the role (cluster_info, lb_member_wait, rollout_guard) makes on every poll, as fnmatch globs on the path.
POLLED_PATHS = [
    ("kubernetes", "/apis/cluster.x-k8s.io/*/namespaces/*/machines"),
    ("kubernetes", "/apis/controlplane.cluster.x-k8s.io/*/namespaces/*/kubeadmcontrolplanes/*"),
    ("load-balancer", "/v2/lbaas/loadbalancers/*/status"),  # the pool's members and statuses, one request
    ("load-balancer", "/v2/lbaas/loadbalancers/*"),
]

faults = st.none() | st.fixed_dictionaries({
    "where": st.sampled_from(POLLED_PATHS),
    "status": st.sampled_from(["429", "503", "drop"]),
    "count": st.integers(min_value=1, max_value=2),
})

scenarios = st.fixed_dictionaries({
    "capo_wait": st.sampled_from(["member", "lb"]),
    "lost": st.none() | st.integers(min_value=1, max_value=3),  # which new member the emulator loses
    "delay": st.sampled_from([0.1, 0.25, 0.5, 1.0]),  # Octavia's time per status step
    "fault": faults,
})


def history_file(cloud, name, namespace="default"):
    return cloud.state_dir / "capi" / ("%s.%s.history.jsonl" % (namespace, name))


class LoseNthMember(threading.Thread):
    """Switch Octavia to lost-member for the pool once the (n-1)th new member exists.

    The mode only affects members created from then on, and the next new member is created only after an
    old Machine is released and deleted and a new server has booted (seconds later), so the nth new member
    is the first one lost.
    """

    def __init__(self, cloud, name, nth, delay):
        super().__init__(daemon=True)
        self.cloud, self.name, self.nth, self.delay = cloud, name, nth, delay
        self.pool = pool_name(name)
        self.done = threading.Event()
        self.stop = threading.Event()
        self.error = None

    def lose(self):
        self.cloud.octavia("lost-member", members=self.pool + "-*", delay=self.delay)
        self.done.set()

    def new_members(self):
        path = history_file(self.cloud, self.name)
        if not path.exists():
            return 0
        seen = 0
        for line in path.read_text().splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line being written
            seen = max(seen, sum(1 for m in record["new"] if "%s-%s" % (self.pool, m) in record["memberStatus"]))
        return seen

    def run(self):
        try:
            while not self.stop.is_set():
                if self.new_members() >= self.nth - 1:
                    self.lose()
                    return
                time.sleep(0.1)
        except Exception as exc:  # pylint: disable=broad-except
            self.error = exc


def member_states(record, pool):
    return dict((m, record["memberStatus"].get("%s-%s" % (pool, m))) for m in record["new"])


# The end-to-end examples make test runs, one test each so that the xdist workers share them: two chosen (the
# outage an old CAPO causes, with throttling on the Machine list the role reads, then the rollout resumed after
# the recovery; a new CAPO that waits for its member, the last new member lost, connections dropped on the pool's
# status tree) and the three hypothesis drew from
# ``scenarios`` with derandomize (CAPO waiting for the member; an Octavia 503 on the load balancer GET; the 2nd
# new member lost with a 1 s Octavia step). ``make rollout-examples`` draws ROLLOUT_EXAMPLES more.
EXAMPLES = {
    "old-capo-lost-1st-429-on-machines-then-resumed": {
        "capo_wait": "lb", "lost": 1, "delay": 0.1, "resume": True,
        "fault": {"where": POLLED_PATHS[0], "status": "429", "count": 2}},
    "new-capo-lost-3rd-drops-on-status-tree": {
        "capo_wait": "member", "lost": 3, "delay": 0.25,
        "fault": {"where": POLLED_PATHS[2], "status": "drop", "count": 2}},
    "drawn-new-capo": {"capo_wait": "member", "lost": None, "delay": 0.1, "fault": None},
    "drawn-503-on-lb": {"capo_wait": "lb", "lost": None, "delay": 1.0,
                        "fault": {"where": POLLED_PATHS[3], "status": "503", "count": 2}},
    "drawn-lost-2nd-slow-octavia": {"capo_wait": "lb", "lost": 2, "delay": 1.0, "fault": None},
}
DRAWN = int(os.environ.get("ROLLOUT_EXAMPLES", "0"))


@pytest.mark.parametrize("scenario", list(EXAMPLES.values()), ids=list(EXAMPLES))
def test_rollout_keeps_min_healthy_over_behaviours_and_faults(cloud, playbooks, scenario):
    check_rollout(cloud, playbooks, scenario)


@pytest.mark.skipif(DRAWN == 0, reason="ROLLOUT_EXAMPLES=N draws N more scenarios (make rollout-examples)")
@settings(max_examples=max(DRAWN, 1), deadline=None, derandomize=False, phases=[Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(scenario=scenarios)
def test_rollout_keeps_min_healthy_over_drawn_scenarios(cloud, playbooks, scenario):
    check_rollout(cloud, playbooks, scenario)


def check_resumed(cloud, playbooks, name, pool, delay):
    """The emulator finishes the members it lost; the role run again without starting (what an operator does
    once the cause is fixed) releases the held Machines one at a time and finishes."""
    cloud.octavia("normal", delay=delay)
    rc, output, result = run_role(playbooks, cloud, {
        "control_plane_rollout_cluster": name, "control_plane_rollout_start": False,
        "control_plane_rollout_member_timeout": 120, "control_plane_rollout_timeout": 600})
    assert rc == 0, output
    assert len(result["released"]) == 3 and not result["rollout_started"], result
    assert all(m["up_to_date"] and m["serving"] for m in result["machines"]), result["machines"]
    assert not hooks_left(cloud, name)
    assert_safe_history(history(cloud, name), MIN_HEALTHY, pool)


def check_rollout(cloud, playbooks, scenario):
    name = seed_cluster(cloud, 3)
    pool = pool_name(name)
    lost = scenario["lost"]
    watcher = None
    try:
        set_capo_wait(cloud, name, scenario["capo_wait"])
        cloud.octavia("normal", delay=scenario["delay"])
        if lost == 1:
            cloud.octavia("lost-member", members=pool + "-*", delay=scenario["delay"])
        elif lost:
            watcher = LoseNthMember(cloud, name, lost, scenario["delay"])
            watcher.start()
        if scenario["fault"]:
            service, path = scenario["fault"]["where"]
            status = scenario["fault"]["status"]
            cloud.fault(service, path, status, count=scenario["fault"]["count"],
                        retry_after=1 if status == "429" else None)

        rc, output, result = run_role(playbooks, cloud, {
            "control_plane_rollout_cluster": name,
            "control_plane_rollout_member_timeout": LOST_MEMBER_TIMEOUT if lost else 120,
            "control_plane_rollout_timeout": 600})
        if watcher:
            watcher.stop.set()
            watcher.join(5)
            assert watcher.error is None, watcher.error
            assert watcher.done.is_set(), "member %d was never created: %s" % (lost, output)

        if scenario["fault"]:
            # the schedule hit the role (else the example would test nothing more than one without faults)
            rules = cloud.faults()
            assert rules and all(r["spent"] and r["fired"] == scenario["fault"]["count"] for r in rules), rules

        records = history(cloud, name)
        # Catches a role that releases an old Machine before its replacement serves (with capo-wait lb and a
        # lost member, or before the new member is ACTIVE), and any release that takes the pool below 3.
        assert_safe_history(records, MIN_HEALTHY, pool)
        summary = cloud.json("capi", "history", name, "--summary")
        assert summary["minServing"] >= MIN_HEALTHY, summary

        if lost:
            # Catches a role that goes on (or succeeds) past a member that never serves, or stops without
            # saying which member and in which state.
            assert rc != 0, output
            stuck = result.get("stuck") or {}
            states = member_states(records[-1], pool)
            pending = [m for m, state in states.items() if state and state.startswith("PENDING_CREATE/")]
            assert len(pending) == 1, states
            assert stuck.get("member") == "%s-%s" % (pool, pending[0]), (stuck, states)
            assert stuck["state"].startswith("PENDING_CREATE"), stuck
            assert stuck["member"] in output and "PENDING_CREATE" in output, output
            # the lost member is the drawn one: the ones before it all serve
            assert sum(1 for state in states.values() if state == "ACTIVE/NO_MONITOR") == lost - 1, states
            # Catches a role that lets go of the old Machines when it stops (the next KCP step would then take
            # a serving member away): every old Machine left is still held.
            old = sorted(m["metadata"]["name"] for m in machines(cloud, name)
                         if m["metadata"]["name"] not in records[-1]["new"])
            assert len(old) == 3 - (lost - 1), old
            assert sorted(result["held"]) == old, result
            assert sorted(hooks_left(cloud, name)) == old
            assert len(result["released"]) == lost - 1, result
            assert summary["final"]["serving"] >= MIN_HEALTHY, summary
            if scenario.get("resume"):
                check_resumed(cloud, playbooks, name, pool, scenario["delay"])
        else:
            # Catches a role that gives up under transient faults or a slow Octavia, or leaves hooks behind.
            assert rc == 0, output
            assert len(result["released"]) == 3, result
            assert all(m["up_to_date"] and m["serving"] and not m["held"] for m in result["machines"]), result
            assert not hooks_left(cloud, name)
            assert summary["final"]["serving"] == 3 and summary["final"]["members"] == 3, summary
            assert not records[-1]["old"] and len(records[-1]["new"]) == 3, records[-1]
    finally:
        if watcher:
            watcher.stop.set()
            watcher.join(5)
        cloud.clear_faults()
        cloud.octavia("normal")
        cloud.cli("capi", "cluster", "delete", name, check=False)
