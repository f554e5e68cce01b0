# -*- coding: utf-8 -*-
"""rollout_guard in mode=direct end to end: pool members managed outside Cluster API, replaced pair by
pair on the real Octavia API, judged from a record of the pool taken while the module ran."""

import threading


MODULE = "flightcontrol.openstack.rollout_guard"
STEP = 3  # seconds per status step of the provider emulator: long enough to be seen pending


class PoolRecorder(threading.Thread):
    """Lists the pool's members every 0.25 s: {name: (provisioning_status, operating_status)}."""

    def __init__(self, cloud, pool_id):
        super().__init__(daemon=True)
        self.conn = cloud.sdk()
        self.pool_id = pool_id
        self.samples = []
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            members = self.conn.load_balancer.members(self.pool_id)
            self.samples.append(dict((m.name, (m.provisioning_status, m.operating_status)) for m in members))
            self.done.wait(0.25)

    def stop(self):
        self.done.set()
        self.join(10)
        return self.samples


def serving(sample):
    return [name for name, (prov, oper) in sample.items() if prov == "ACTIVE" and oper == "NO_MONITOR"]


def first(samples, check):
    return next((i for i, sample in enumerate(samples) if check(sample)), None)


def test_direct_mode_replaces_pair_by_pair_stops_on_a_lost_member_and_finishes_after_recovery(
        cloud, lb, run_module):
    old = [m["name"] for m in lb["members"]]
    # the second replacement is lost (PENDING_CREATE under an ACTIVE load balancer); the first is slow
    cloud.octavia("lost-member", members="rg-new-1", delay=STEP)
    cloud.add_member(lb, "rg-new-1", "10.0.0.221")
    cloud.wait_lb_active(lb)
    cloud.add_member(lb, "rg-new-0", "10.0.0.220")
    args = {"cloud": "minicloud", "mode": "direct", "pool": lb["pool"]["name"],
            "replace": [{"old": old[0], "new": "rg-new-0"}, {"old": old[1], "new": "10.0.0.221:6443"}],
            "member_timeout": 12, "timeout": 180, "poll_interval": 1}
    recorder = PoolRecorder(cloud, lb["pool"]["id"])
    recorder.start()
    try:
        run = run_module(MODULE, args, playbook=True)
    finally:
        samples = recorder.stop()

    result = run.result
    assert result["failed"] is True, run.output
    assert "rg-new-1" in result["msg"] and "PENDING_CREATE" in result["msg"], result["msg"]
    assert "Old members not yet replaced are kept" in result["msg"]
    assert result["released"] == [old[0]]
    assert result["members_gone"] == [old[0]]
    assert result["stuck"]["member"] == "rg-new-1"
    assert result["min_healthy_members"] == 3, "by default the members serving before, without the new ones"
    assert [a["action"] for a in result["actions"]] == ["delete_member", "member_gone"]

    # judged from the record: the first sample saw the new member pending, the old one was deleted only once
    # its replacement served, the pool never had fewer than three serving members, and the member behind the
    # lost replacement was never touched
    assert "rg-new-0" not in serving(samples[0]), samples[0]
    new_serves = first(samples, lambda s: "rg-new-0" in serving(s))
    old_leaves = first(samples, lambda s: old[0] not in serving(s))
    assert new_serves is not None and old_leaves is not None
    assert new_serves < old_leaves, (samples[new_serves], samples[old_leaves])
    assert min(len(serving(s)) for s in samples) >= 3, [len(serving(s)) for s in samples]
    assert all(old[1] in serving(s) for s in samples)
    final = dict((m.name, m.provisioning_status) for m in cloud.sdk().load_balancer.members(lb["pool"]["id"]))
    assert old[0] not in final and final[old[1]] == "ACTIVE" and final["rg-new-1"] == "PENDING_CREATE"

    # the emulator recovers (the lost member finishes provisioning); the same task finishes the job
    cloud.octavia("normal")
    run = run_module(MODULE, args, playbook=True)
    assert run.result["failed"] is False, run.output
    assert run.result["changed"] is True and run.result["released"] == [old[1]]
    final = dict((m.name, m.provisioning_status) for m in cloud.sdk().load_balancer.members(lb["pool"]["id"]))
    assert sorted(final) == sorted([old[2], "rg-new-0", "rg-new-1"])

    # and once more: nothing left to do
    run = run_module(MODULE, args, playbook=True)
    assert run.result["failed"] is False, run.output
    assert run.result["changed"] is False and run.result["released"] == []


def test_direct_mode_check_mode_writes_nothing_and_names_the_next_step(cloud, lb, run_module):
    old = lb["members"][0]["name"]
    cloud.add_member(lb, "rg-check", "10.0.0.230")
    cloud.wait_lb_active(lb)
    cloud.requests(reset=True)
    run = run_module(MODULE, {"cloud": "minicloud", "mode": "direct", "pool": lb["pool"]["id"],
                              "replace": [{"old": old, "new": "rg-check"}], "timeout": 60}, check_mode=True)
    assert run.result["failed"] is False, run.output
    assert run.result["changed"] is True, "check mode says a write would be made"
    assert run.result["released"] == []
    assert "next step would be release" in run.result["msg"]
    assert run.result["plan"]["member"] == old
    assert cloud.writes("load-balancer") == {}
    assert old in [m.name for m in cloud.sdk().load_balancer.members(lb["pool"]["id"])]


def test_direct_mode_refuses_a_replacement_that_would_leave_too_few_serving(cloud, lb, run_module):
    old = lb["members"][0]["name"]
    cloud.add_member(lb, "rg-few", "10.0.0.231")
    cloud.wait_lb_active(lb)
    run = run_module(MODULE, {"cloud": "minicloud", "mode": "direct", "pool": lb["pool"]["name"],
                              "replace": [{"old": old, "new": "rg-few"}], "min_healthy_members": 4,
                              "timeout": 5, "poll_interval": 1})
    assert run.result["failed"] is True
    assert "keep 4 serving member(s) without %s (would have 3)" % old in run.result["msg"], run.result["msg"]
    assert run.result["released"] == []
    assert old in [m.name for m in cloud.sdk().load_balancer.members(lb["pool"]["id"])]
