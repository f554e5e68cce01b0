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


# -- pairs that name nothing, a world that moves before the deletion, an API error named --------------------

def direct_args(lb, replace, **extra):
    args = {"cloud": "minicloud", "mode": "direct", "pool": lb["pool"]["name"], "replace": replace,
            "timeout": 20, "poll_interval": 0.5, "member_timeout": 15}
    args.update(extra)
    return args


def pool_names(cloud, lb):
    return sorted(m.name for m in cloud.sdk().load_balancer.members(lb["pool"]["id"]))


def test_an_old_member_that_is_not_in_the_pool_is_refused_or_named_never_a_green_replacement(cloud, lb, run_module):
    old = lb["members"][0]["name"]
    cloud.add_member(lb, "rg-typo-new", "10.0.0.232")
    cloud.wait_lb_active(lb)
    before = pool_names(cloud, lb)
    cloud.requests(reset=True)
    # neither member is in the pool: a typo (or another pool), refused before any write
    refused = run_module(MODULE, direct_args(lb, [{"old": old, "new": "rg-typo-new"},
                                                  {"old": old + "-typo", "new": "rg-nowhere"}])).result
    assert refused["failed"] is True and refused["changed"] is False
    assert "replace[1]: neither old member %s-typo nor new member rg-nowhere is in the pool" % old in refused["msg"]
    assert "nothing was changed" in refused["msg"]
    assert cloud.writes("load-balancer") == {} and pool_names(cloud, lb) == before
    # the old member is a typo while its new member serves: no success that says every old member was replaced
    named = run_module(MODULE, direct_args(lb, [{"old": old + "-typo", "new": "rg-typo-new"}]), playbook=True).result
    assert named["failed"] is False and named["changed"] is False, named["msg"]
    assert "nothing replaced by this run" in named["msg"] and "replace[0] (%s-typo)" % old in named["msg"]
    assert named["replaced_before"] == [{"old": old + "-typo", "new": "rg-typo-new"}]
    assert any("taken as replaced by an earlier run" in w for w in named.get("warnings", [])), named.get("warnings")
    assert cloud.writes("load-balancer") == {} and pool_names(cloud, lb) == before


class _Run(threading.Thread):
    def __init__(self, run):
        super().__init__(daemon=True)
        self.run_module, self.outcome = run, {}
        self.start()

    def run(self):
        self.outcome["result"] = self.run_module()


def with_change_before_second_list(cloud, path, run, change):
    """Run ``run()`` while the cloud answers the first GET of ``path`` and holds the second one until ``change()``
    is made. A run that never sends a second one ends without the change (returns None for it)."""
    first = cloud.api.add_fault("load-balancer", method="GET", path=path, gate=True, count=1)
    thread = _Run(run)
    second = changed = None
    try:
        cloud.api.wait_held(first["id"], 1, timeout=120)
        second = cloud.api.add_fault("load-balancer", method="GET", path=path, gate=True, count=1)
        cloud.api.release_fault(first["id"])
        first = None
        while thread.is_alive():
            try:
                cloud.api.wait_held(second["id"], 1, timeout=0.5)
            except Exception:  # pylint: disable=broad-except  # not held yet
                continue
            changed = change()
            break
    finally:
        for rule in (first, second):
            if rule is not None:
                cloud.api.release_fault(rule["id"])
    thread.join(120)
    return thread.outcome["result"], changed


def test_a_member_lost_after_the_poll_stops_the_deletion_on_the_read_just_before_it(cloud, lb, run_module):
    """The poll sees the replacement serve and the pool keep 3 serving members without the old one; just before the
    deletion, another old member is deleted by someone else. The read before the deletion sees it: the old member
    is kept (the pool would have 2 serving members)."""
    old = [m["name"] for m in lb["members"]]
    cloud.add_member(lb, "rg-race", "10.0.0.233")
    cloud.wait_lb_active(lb)
    conn = cloud.sdk()
    other = [m for m in conn.load_balancer.members(lb["pool"]["id"]) if m.name == old[1]][0]
    result, changed = with_change_before_second_list(
        cloud, "*/pools/%s/members" % lb["pool"]["id"],
        lambda: run_module(MODULE, direct_args(lb, [{"old": old[0], "new": "rg-race"}], timeout=15), playbook=True),
        lambda: conn.load_balancer.delete_member(other.id, lb["pool"]["id"]) or True)
    assert changed, "the module never read the pool again before deleting"
    result = result.result
    assert result["failed"] is True and result["released"] == [], result["msg"]
    assert "keep 3 serving member(s) without %s" % old[0] in result["msg"] or "to be ACTIVE" in result["msg"], \
        result["msg"]
    assert old[0] in pool_names(cloud, lb)


def test_a_refused_member_deletion_names_the_member_and_the_call(cloud, lb, run_module):
    """The service refuses the deletion (a 401 that stays: minicloud's faults have no 403, the words come from the
    same place): the message names the old member, the pool and the call, not only the service's words."""
    old = lb["members"][0]["name"]
    cloud.add_member(lb, "rg-refused", "10.0.0.234")
    cloud.wait_lb_active(lb)
    cloud.fault("load-balancer", "*/members/*", 401, method="DELETE")
    result = run_module(MODULE, direct_args(lb, [{"old": old, "new": "rg-refused"}])).result
    cloud.clear_faults()
    assert result["failed"] is True and result["changed"] is False
    assert "deleting old member %s of pool %s" % (old, lb["pool"]["name"]) in result["msg"], result["msg"]
    assert "(DELETE member " in result["msg"] and "401" in result["msg"], result["msg"]
    assert old in pool_names(cloud, lb)


def test_an_old_member_removed_by_someone_else_never_makes_a_lost_replacement_a_success(cloud, lb, run_module):
    """The new member is lost (PENDING_CREATE for good); while the run waits for it, another client deletes the old
    member. The pair is not done: the run waits on and stops at member_timeout, naming the new member and saying
    the old one was removed by someone else; never a success below min_healthy_members."""
    old = [m["name"] for m in lb["members"]]
    cloud.octavia("lost-member", members="rg-lost-new")
    try:
        cloud.add_member(lb, "rg-lost-new", "10.0.0.235")
        cloud.wait_lb_active(lb)
        conn = cloud.sdk()
        gone = [m for m in conn.load_balancer.members(lb["pool"]["id"]) if m.name == old[1]][0]
        result, changed = with_change_before_second_list(
            cloud, "*/loadbalancers/%s/status" % lb["loadbalancer"]["id"],
            lambda: run_module(MODULE, direct_args(lb, [{"old": old[1], "new": "rg-lost-new"}], member_timeout=6,
                                                   timeout=30), playbook=True),
            lambda: conn.load_balancer.delete_member(gone.id, lb["pool"]["id"]) or True)
    finally:
        cloud.octavia("normal")
    assert changed, "the module never polled twice"
    result = result.result
    assert result["failed"] is True, result["msg"]
    assert "rg-lost-new" in result["msg"] and "removed by someone else" in result["msg"], result["msg"]
    assert "not ACTIVE and healthy after" in result["msg"], result["msg"]
    assert result["stuck"]["member"] == "rg-lost-new"
    assert result["released"] == [] and result["changed"] is False
    assert result["serving_members"] < result["min_healthy_members"] == 3


def test_the_drain_uses_the_providers_method_and_says_so(cloud, lb, run_module):
    """drain: true on minicloud's amphora emulation: the old member gets weight 0 (what amphora honours) before its
    deletion, and the result names the provider and the method per drained member."""
    old = lb["members"][0]["name"]
    cloud.add_member(lb, "rg-drain-new", "10.0.0.236")
    cloud.wait_lb_active(lb)
    result = run_module(MODULE, direct_args(lb, [{"old": old, "new": "rg-drain-new"}], drain=True, drain_timeout=1,
                                            timeout=60), playbook=True).result
    assert result["failed"] is False, result["msg"]
    assert result["provider"] in ("amphora", "minicloud"), result["provider"]
    [row] = result["drained"]
    assert row["member"] == old and row["method"] == "weight" and row["value_before"] == 1, row
    assert row["released_at"] is not None and row["restored"] is False
    assert [a["action"] for a in result["actions"]][:2] == ["drain (weight 0)", "delete_member"], result["actions"]
    assert old not in pool_names(cloud, lb)
