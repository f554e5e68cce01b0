# -*- coding: utf-8 -*-

import datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi import topology
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.objects import parse_kube_time as parse_time
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia import members as lb_members
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard import plan as rollout_plan
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.machines import (
    kcp_all_up_to_date,
    machine_data,
    rollout_after_patch,
    rollout_time,
)

from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils.fakes import FakeClock

HOOK = rollout_plan.hook_key(rollout_plan.DEFAULT_HOOK_NAME)
PREFIX = "lb-6443-"


def machine(name, up_to_date=False, deleting=False, held=False, created=None, address=None):
    return {"name": name, "created": created or name, "deleting": deleting, "hooks": [HOOK] if held else [],
            "addresses": [address] if address else [], "up_to_date": up_to_date}


def member(machine_name, status="ACTIVE", operating="NO_MONITOR", address=None):
    return {"id": "id-" + machine_name, "name": PREFIX + machine_name, "address": address or "10.0.0.%d" % len(machine_name),
            "protocol_port": 6443, "provisioning_status": status, "operating_status": operating}


def snap(machines, members, min_healthy=3, **extra):
    extra.setdefault("replicas", 3)
    return rollout_plan.Snapshot(machines, members, False, min_healthy, member_prefix=PREFIX, **extra)


def test_holds_every_old_machine_first():
    action = rollout_plan.next_action(snap([machine("a"), machine("b", held=True), machine("c")], [member(n) for n in "abc"]))
    assert action.kind == rollout_plan.HOLD and action.machines == ("a", "c")


def test_waits_for_the_control_plane_to_pick_a_victim():
    machines = [machine(n, held=True) for n in "abc"] + [machine("n1", up_to_date=True)]
    action = rollout_plan.next_action(snap(machines, [member(n) for n in ("a", "b", "c", "n1")]))
    assert action.kind == rollout_plan.WAIT


def test_releases_the_deleting_old_machine_when_its_replacement_serves():
    machines = [machine("a", held=True, deleting=True), machine("b", held=True), machine("c", held=True),
                machine("n1", up_to_date=True)]
    action = rollout_plan.next_action(snap(machines, [member(n) for n in ("a", "b", "c", "n1")]))
    assert action.kind == rollout_plan.RELEASE and action.machines == ("a",)


def test_no_release_while_the_replacement_member_is_pending():
    machines = [machine("a", held=True, deleting=True), machine("b", held=True), machine("c", held=True),
                machine("n1", up_to_date=True)]
    members = [member(n) for n in "abc"] + [member("n1", "PENDING_CREATE")]
    action = rollout_plan.next_action(snap(machines, members, now=5.0, not_serving_since={"id-n1": 0.0}, member_timeout=10))
    assert action.kind == rollout_plan.WAIT and "serving replacement" in action.reason


def test_stuck_after_member_timeout_names_member_and_state():
    machines = [machine("a", held=True, deleting=True), machine("n1", up_to_date=True)]
    members = [member("a"), member("n1", "PENDING_CREATE")]
    s = snap(machines, members, now=100.0, not_serving_since={"id-n1": 10.0}, member_timeout=60)
    action = rollout_plan.next_action(s)
    assert action.kind == rollout_plan.STUCK and action.member == PREFIX + "n1" and action.state == "PENDING_CREATE/NO_MONITOR"
    assert action.since == 10.0 and action.machines == ("n1",)


def test_error_is_stuck_at_once():
    machines = [machine("a", held=True), machine("n1", up_to_date=True)]
    action = rollout_plan.next_action(snap(machines, [member("a"), member("n1", "ERROR", "OFFLINE")]))
    assert action.kind == rollout_plan.STUCK and action.state == "ERROR/OFFLINE"


def test_min_healthy_blocks_a_release():
    machines = [machine("a", held=True, deleting=True), machine("b", held=True), machine("n1", up_to_date=True)]
    members = [member("a"), member("b", "ACTIVE", "OFFLINE"), member("n1")]
    action = rollout_plan.next_action(snap(machines, members, min_healthy=2, replicas=2))
    assert action.kind == rollout_plan.WAIT and "keep 2 serving" in action.reason


def test_after_release_waits_for_member_and_machine_gone():
    machines = [machine("a", deleting=True), machine("b", held=True), machine("n1", up_to_date=True)]
    members = [member("a"), member("b"), member("n1")]
    assert rollout_plan.next_action(snap(machines, members, released=["a"])).reason.startswith("member lb-6443-a")
    action = rollout_plan.next_action(snap(machines, [member("b"), member("n1")], released=["a"]))
    assert action.kind == rollout_plan.WAIT and "released Machine a" in action.reason


def test_members_matched_by_address_too():
    machines = [machine("a", held=True, deleting=True, address="10.1.1.1"),
                machine("n1", up_to_date=True, address="10.1.1.2")]
    members = [dict(member("x", address="10.1.1.1"), name="other-a"),
               dict(member("y", address="10.1.1.2"), name="other-n1")]
    action = rollout_plan.next_action(snap(machines, members, min_healthy=1, replicas=1))
    assert action.kind == rollout_plan.RELEASE and action.machines == ("a",)


def test_done_when_only_serving_new_machines_are_left():
    machines = [machine(n, up_to_date=True) for n in ("n1", "n2", "n3")]
    assert rollout_plan.next_action(snap(machines, [member(n) for n in ("n1", "n2", "n3")])).kind == rollout_plan.FINISHED
    held = [dict(machines[0], hooks=[HOOK])] + machines[1:]
    action = rollout_plan.next_action(snap(held, [member(n) for n in ("n1", "n2", "n3")]))
    assert action.kind == rollout_plan.RELEASE and action.machines == ("n1",)


def test_health_monitor_means_online():
    assert rollout_plan.serving(member("a", operating="ONLINE"), True)
    assert not rollout_plan.serving(member("a", operating="NO_MONITOR"), True)
    assert rollout_plan.serving(member("a"), False) and not rollout_plan.serving(None, False)


# -- property: a simulated KCP with maxSurge 1, members that serve late or never ------------------

class World:
    """A control plane rolling with maxSurge 1 whose controllers honour the hook, and members whose
    provisioning takes ``delays[i]`` steps (None: lost, never serves)."""

    def __init__(self, replicas, delays, monitor):
        self.replicas = replicas
        self.delays = list(delays)
        self.monitor = monitor
        self.machines = [machine("old%d" % i, created="0-%d" % i) for i in range(replicas)]
        self.members = dict(("old%d" % i, "serving") for i in range(replicas))
        self.age = {}
        self.created = 0
        self.step_no = 0

    def member_dicts(self):
        result = []
        for name, state in sorted(self.members.items()):
            good = "ONLINE" if self.monitor else "NO_MONITOR"
            status, operating = ("ACTIVE", good) if state == "serving" else ("PENDING_CREATE", "OFFLINE" if self.monitor else "NO_MONITOR")
            result.append(member(name, status, operating))
        return result

    def serving(self):
        return sum(1 for s in self.members.values() if s == "serving")

    def step(self):
        self.step_no += 1
        for name in list(self.age):
            self.age[name] += 1
            delay = self.delays[int(name[3:]) % len(self.delays)]
            if delay is not None and self.age[name] >= delay:
                self.members[name] = "serving"
        for m in list(self.machines):
            if m["deleting"] and HOOK not in m["hooks"]:
                if m["name"] in self.members:
                    del self.members[m["name"]]
                else:
                    self.machines.remove(m)
        if any(m["deleting"] for m in self.machines):
            return
        old = [m for m in self.machines if not m["up_to_date"]]
        if len(self.machines) > self.replicas and old:
            old[0]["deleting"] = True  # KCP (CAPO "lb"-style) does not wait for the member to serve
        elif old:
            name = "new%d" % self.created
            self.created += 1
            self.machines.append(machine(name, up_to_date=True, created="1-%03d" % self.created))
            self.members[name] = "pending"
            self.age[name] = 0


@settings(max_examples=150, deadline=None)
@given(replicas=st.integers(1, 4), delays=st.lists(st.one_of(st.none(), st.integers(0, 6)), min_size=1, max_size=4),
       monitor=st.booleans(), holds_late=st.integers(0, 1))
def test_rollout_never_drops_below_min_healthy_and_releases_one_at_a_time(replicas, delays, monitor, holds_late):
    world = World(replicas, delays, monitor)
    clock = FakeClock(0.0)
    released, since = [], {}
    for _turn in range(300):
        if holds_late:
            world.step()
        s = rollout_plan.Snapshot([dict(m) for m in world.machines], world.member_dicts(), monitor, replicas,
                                  member_prefix=PREFIX, released=released, not_serving_since=since, now=clock.monotonic(),
                                  member_timeout=20, replicas=replicas)
        since = rollout_plan.track(s)
        s.not_serving_since = since
        action = rollout_plan.next_action(s)
        if action.kind == rollout_plan.HOLD:
            for m in world.machines:
                if m["name"] in action.machines:
                    m["hooks"] = [HOOK]
        elif action.kind == rollout_plan.RELEASE:
            assert len(action.machines) == 1 or all(m["up_to_date"] for m in s.machines if m["name"] in action.machines)
            victim = [m for m in world.machines if m["name"] == action.machines[0]][0]
            if not victim["up_to_date"]:
                assert victim["deleting"]
                assert all(n not in [m["name"] for m in world.machines] for n in released)  # one at a time
                new_serving = [m for m in world.machines if m["up_to_date"] and world.members.get(m["name"]) == "serving"]
                assert len(new_serving) >= 1
                assert world.serving() - (1 if world.members.get(victim["name"]) == "serving" else 0) >= replicas
                released.append(victim["name"])
            for m in world.machines:
                if m["name"] in action.machines:
                    m["hooks"] = []
        elif action.kind in (rollout_plan.FINISHED, rollout_plan.STUCK):
            break
        assert world.serving() >= replicas
        world.step()
        clock.sleep(1)
    if action.kind == rollout_plan.FINISHED:
        assert all(m["up_to_date"] and not m["hooks"] for m in world.machines)
        assert world.serving() == replicas
    else:
        assert action.kind == rollout_plan.STUCK and action.state.startswith("PENDING_CREATE")
        assert None in delays


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans(), st.booleans(),
                          st.sampled_from(["ACTIVE", "PENDING_CREATE", "PENDING_DELETE", None])), min_size=1, max_size=6),
       st.integers(0, 5))
def test_any_observation_release_is_safe(rows, min_healthy):
    machines, members = [], []
    for i, (up_to_date, deleting, held, status) in enumerate(rows):
        name = "m%d" % i
        machines.append(machine(name, up_to_date=up_to_date, deleting=deleting, held=held))
        if status:
            members.append(member(name, status))
    s = snap(machines, members, min_healthy=min_healthy, replicas=None)
    action = rollout_plan.next_action(s)
    if action.kind == rollout_plan.RELEASE and not all(m["up_to_date"] for m in machines if m["name"] in action.machines):
        assert len(action.machines) == 1
        victim = [m for m in machines if m["name"] == action.machines[0]][0]
        assert victim["deleting"] and HOOK in victim["hooks"]
        leaving = set(PREFIX + m["name"] for m in machines if m["deleting"])
        assert sum(1 for m in members if rollout_plan.serving(m, False) and m["name"] not in leaving) >= min_healthy
        assert any(m["up_to_date"] and not m["deleting"] and rollout_plan.serving(s.member_of(m), False) for m in machines)


# -- direct mode -----------------------------------------------------------------------------

def test_direct_waits_for_new_then_deletes_old_then_waits_gone():
    pairs = [(lb_members.parse_selector(PREFIX + "a"), lb_members.parse_selector(PREFIX + "n1"))]
    members = [member("a"), member("b"), member("n1", "PENDING_CREATE")]
    action, since = rollout_plan.direct_next(pairs, members, False, 2, now=0.0)
    assert action.kind == rollout_plan.WAIT and since == {"pair:0": 0.0}
    action, since = rollout_plan.direct_next(pairs, members, False, 2, not_serving_since=since, now=50.0, member_timeout=30)
    assert action.kind == rollout_plan.STUCK and action.state == "PENDING_CREATE/NO_MONITOR"
    members[2] = member("n1")
    action, _since = rollout_plan.direct_next(pairs, members, False, 2)
    assert action.kind == rollout_plan.RELEASE and action.pair == 0 and [m["name"] for m in action.targets] == [PREFIX + "a"]
    action, _since = rollout_plan.direct_next(pairs, members, False, 3)
    assert action.kind == rollout_plan.WAIT and "keep 3" in action.reason
    action, _since = rollout_plan.direct_next(pairs, members, False, 2, deleted={0})
    assert action.kind == rollout_plan.WAIT and "to be gone" in action.reason
    action, _since = rollout_plan.direct_next(pairs, members[1:], False, 2, deleted={0})
    assert action.kind == rollout_plan.FINISHED


# -- Machines as data ---------------------------------------------------------------------------

NOW = datetime.datetime(2025, 6, 1, 12, 0, 0, tzinfo=datetime.timezone.utc)


def stored(name, created, **extra):
    obj = {"apiVersion": "cluster.x-k8s.io/v1beta1", "metadata": {"name": name, "creationTimestamp": created}}
    obj.update(extra)
    return obj


def test_rollout_time_decides_old_and_new():
    kcp = {"spec": {"rolloutAfter": "2025-06-01T11:00:00Z", "replicas": 3}}
    assert not machine_data(stored("a", "2025-06-01T10:00:00Z"), kcp, {"a"}, NOW)["up_to_date"]
    assert machine_data(stored("b", "2025-06-01T11:00:01Z"), kcp, {"a"}, NOW)["up_to_date"]
    started = NOW.replace(hour=11, minute=30)
    assert not machine_data(stored("b", "2025-06-01T11:00:01Z"), kcp, {"a"}, NOW, started)["up_to_date"]


def test_up_to_date_condition_wins_and_baseline_is_the_fallback():
    cond = {"status": {"v1beta2": {"conditions": [{"type": "UpToDate", "status": "True"}]}}}
    assert machine_data(stored("a", "2020-01-01T00:00:00Z", **cond), {}, {"a"}, NOW)["up_to_date"]
    kcp = {"spec": {"replicas": 1}, "status": {"replicas": 2, "upToDateReplicas": 1}}
    assert not machine_data(stored("a", "2020-01-01T00:00:00Z"), kcp, {"a"}, NOW)["up_to_date"]
    assert machine_data(stored("z", "2020-01-01T00:00:00Z"), kcp, {"a"}, NOW)["up_to_date"]
    assert kcp_all_up_to_date({"spec": {"replicas": 1}, "status": {"replicas": 1, "updatedReplicas": 1}})


def test_a_rollout_time_beats_an_up_to_date_condition_the_control_plane_has_not_updated_yet():
    """Cluster API v1.12's KCP keeps UpToDate True on its Machines for a while after spec.rollout.after is set
    (seen on the real controllers): a Machine created before a due rollout time is old whatever it says."""
    cond = {"status": {"conditions": [{"type": "UpToDate", "status": "True"}]}}
    v1beta2 = dict(cond, apiVersion="cluster.x-k8s.io/v1beta2")
    kcp = {"spec": {"rollout": {"after": "2025-06-01T11:00:00Z"}, "replicas": 3}}
    old = dict(stored("a", "2025-06-01T10:00:00Z"), **v1beta2)
    assert machine_data(old, kcp, {"a"}, NOW)["up_to_date"] is False
    assert machine_data(old, kcp, {"a"}, NOW)["up_to_date_reason"] == "created before the rollout time"
    started = NOW.replace(hour=11, minute=30)
    assert machine_data(old, {"spec": {"replicas": 3}}, {"a"}, NOW, started)["up_to_date"] is False
    newer = dict(stored("b", "2025-06-01T11:00:01Z"), **v1beta2)
    assert machine_data(newer, kcp, {"a"}, NOW)["up_to_date"] is True
    not_due = {"spec": {"rollout": {"after": "2025-06-01T13:00:00Z"}, "replicas": 3}}
    assert machine_data(old, not_due, {"a"}, NOW)["up_to_date"] is True


def test_rollout_patch_per_contract_and_time_parsing():
    assert rollout_after_patch({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2"}, NOW) == {
        "spec": {"rollout": {"after": "2025-06-01T12:00:00Z"}}}
    assert rollout_after_patch({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1"}, NOW) == {
        "spec": {"rolloutAfter": "2025-06-01T12:00:00Z"}}
    assert parse_time("2025-06-01T14:00:00.25+02:00") == NOW
    assert parse_time("garbage") is None and parse_time(None) is None


def test_the_rollout_time_rolls_a_machine_created_in_the_second_the_run_started():
    utc = datetime.timezone.utc
    started = datetime.datetime(2026, 11, 24, 0, 30, 5, 400000, tzinfo=utc)
    moment = rollout_time(started)
    assert moment == datetime.datetime(2026, 11, 24, 0, 30, 6, tzinfo=utc)
    kcp = {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2"}
    kcp["spec"] = dict(rollout_after_patch(kcp, moment)["spec"], replicas=1)
    seeded = {"metadata": {"name": "m1", "creationTimestamp": "2026-11-24T00:30:05Z"}}
    kcp["status"] = {"replicas": 1, "upToDateReplicas": 1}  # the control plane has not seen the new time yet
    # the run's own rollout time counts at once, also while it is still ahead
    for now in (started, moment + datetime.timedelta(seconds=2)):
        data = machine_data(seeded, kcp, {"m1"}, now, moment)
        assert (data["up_to_date"], data["up_to_date_reason"]) == (False, "created before the rollout time"), now
    replacement = {"metadata": {"name": "m2", "creationTimestamp": "2026-11-24T00:30:07Z"}}
    assert machine_data(replacement, kcp, {"m1"}, moment + datetime.timedelta(seconds=2), moment)["up_to_date"]
    # a rollout time someone else set ahead counts once it has come
    scheduled = dict(kcp, spec=dict(rollout_after_patch(kcp, moment + datetime.timedelta(hours=1))["spec"], replicas=1))
    assert machine_data(seeded, scheduled, {"m1"}, started, None)["up_to_date_reason"] == "control plane up to date"


# -- direct mode: pairs whose old member is not in the pool, names that look like addresses ----------------

def _member(name, address, status="ACTIVE", operating="NO_MONITOR"):
    return {"id": "id-" + name, "name": name, "address": address, "protocol_port": 6443,
            "provisioning_status": status, "operating_status": operating}


def test_an_old_member_never_in_the_pool_is_refused_unless_its_replacement_serves():
    members = [_member("old-1", "10.0.0.1"), _member("new-1", "10.0.0.3"), _member("new-2", "10.0.0.4", "PENDING_CREATE")]
    pairs = [(lb_members.parse_selector(o), lb_members.parse_selector(n)) for o, n in (
        ("old-1", "new-1"), ("gone-before", "new-1x"), ("typo", "new-2"), ("done-before", "new-1"))]
    problems, replaced = rollout_plan.absent_olds(pairs, members, False)
    assert replaced == [3]  # its new member serves: an earlier run replaced it
    assert problems == [
        "replace[1]: neither old member gone-before nor new member new-1x is in the pool (a typo, or another pool)",
        "replace[2]: old member typo is not in the pool, and its new member new-2 does not serve "
        "(PENDING_CREATE/NO_MONITOR): nothing was replaced by an earlier run; check the name"]


def test_an_entry_that_is_an_existing_member_name_means_that_member():
    members = [_member("10.0.0.9", "10.0.0.1"), _member("other", "10.0.0.9")]
    selector = lb_members.bind(lb_members.parse_selector("10.0.0.9"), members)
    assert [m["name"] for m in members if selector.matches(m)] == ["10.0.0.9"]  # by name, not the address
    plain = lb_members.bind(lb_members.parse_selector("10.0.0.9"), members[1:])
    assert [m["name"] for m in members if plain.matches(m)] == ["other"]  # no such name: the address


# -- a pair is done only when its new member serves; a success never ends below min_healthy ------------------

def _pair(old, new):
    return (lb_members.parse_selector(PREFIX + old), lb_members.parse_selector(PREFIX + new))


def test_direct_an_old_member_removed_by_someone_else_does_not_make_the_new_one_serve():
    pairs = [_pair("a", "n1")]
    members = [member("b"), member("c"), member("n1", "PENDING_CREATE")]  # "a" deleted by another client
    action, since = rollout_plan.direct_next(pairs, members, False, 2, now=0.0)
    assert action.kind == rollout_plan.WAIT, action
    assert "removed by someone else" in action.reason and PREFIX + "n1" in action.reason
    action, _since = rollout_plan.direct_next(pairs, members, False, 2, not_serving_since=since, now=30.0,
                                              member_timeout=30)
    assert action.kind == rollout_plan.STUCK and action.member == PREFIX + "n1"
    assert "not ACTIVE and healthy after 30 s" in action.reason and "removed by someone else" in action.reason
    # the new member never there at all: the same
    action, _since = rollout_plan.direct_next(pairs, members[:2], False, 2, now=0.0)
    assert action.kind == rollout_plan.WAIT and "removed by someone else" in action.reason


def test_direct_a_pair_this_run_deleted_needs_its_new_member_serving_too():
    pairs = [_pair("a", "n1")]
    members = [member("b", operating="ONLINE"), member("c", operating="ONLINE"), member("n1", "ACTIVE", "ERROR")]
    action, _since = rollout_plan.direct_next(pairs, members, True, 2, deleted={0}, now=0.0)
    assert action.kind == rollout_plan.WAIT and PREFIX + "n1" in action.reason
    members[2] = member("n1", "ACTIVE", "ONLINE")
    action, _since = rollout_plan.direct_next(pairs, members, True, 2, deleted={0})
    assert action.kind == rollout_plan.FINISHED


def test_direct_success_never_below_min_healthy():
    pairs = [_pair("a", "n1")]
    members = [member("b"), member("n1")]  # every pair done, but 2 serving against a floor of 3
    action, since = rollout_plan.direct_next(pairs, members, False, 3, deleted={0}, now=0.0)
    assert action.kind == rollout_plan.WAIT and "3 serving member(s)" in action.reason and "has 2" in action.reason
    action, _since = rollout_plan.direct_next(pairs, members, False, 3, deleted={0}, not_serving_since=since,
                                              now=20.0, member_timeout=20)
    assert action.kind == rollout_plan.STUCK and "has 2" in action.reason


def test_capi_success_never_below_min_healthy():
    machines = [machine(n, up_to_date=True) for n in ("x", "y", "z")]
    members = [member("x"), member("y"), member("z")]
    assert rollout_plan.next_action(snap(machines, members, min_healthy=3)).kind == rollout_plan.FINISHED
    action = rollout_plan.next_action(snap(machines, members, min_healthy=4))
    assert action.kind == rollout_plan.WAIT and "4 serving member(s)" in action.reason, action


def test_a_machine_of_another_version_is_old_whatever_its_up_to_date_condition_says():
    """An upgrade written to a ClusterClass Cluster (spec.topology.version) reaches the control plane a pass of the
    topology controller later and the Machines' UpToDate a pass of KCP after that: judged against the control plane
    as wanted (capi/topology.control_plane_as_wanted), the old Machines are old from the Cluster's change."""
    stale = {"status": {"conditions": [{"type": "UpToDate", "status": "True"}]}, "spec": {"version": "v1.34.0"},
             "apiVersion": "cluster.x-k8s.io/v1beta2"}
    machine = dict(stored("a", "2025-06-01T10:00:00Z"), **stale)
    as_read = {"spec": {"version": "v1.34.0", "replicas": 3}}
    assert machine_data(machine, as_read, {"a"}, NOW)["up_to_date"] is True
    cluster = {"apiVersion": "cluster.x-k8s.io/v1beta2", "metadata": {"name": "c", "namespace": "n"},
               "spec": {"topology": {"classRef": {"name": "k"}, "version": "v1.35.0"}}}
    data = machine_data(machine, topology.control_plane_as_wanted(cluster, as_read), {"a"}, NOW)
    assert (data["up_to_date"], data["up_to_date_reason"]) == (False, "version v1.34.0, control plane wants v1.35.0")
    upgraded = dict(machine, spec={"version": "v1.35.0"})
    assert machine_data(upgraded, topology.control_plane_as_wanted(cluster, as_read), {"a"}, NOW)["up_to_date"]
    assert machine_data(dict(machine, spec={"version": "1.34.0"}), as_read, {"a"}, NOW)["up_to_date"]  # v or not


def test_in_an_upgrade_in_steps_the_intermediate_machines_are_the_replacements():
    cluster = {"apiVersion": "cluster.x-k8s.io/v1beta2", "metadata": {"name": "c", "namespace": "n"},
               "spec": {"topology": {"classRef": {"name": "k"}, "version": "v1.33.0"}}}
    kcp = {"spec": {"version": "v1.32.0", "replicas": 1}}
    fresh = {"status": {"conditions": [{"type": "UpToDate", "status": "True"}]}, "apiVersion": "cluster.x-k8s.io/v1beta2"}
    old = dict(stored("a", "2025-06-01T10:00:00Z"), spec={"version": "v1.31.0"}, **fresh)
    step = dict(stored("n1", "2025-06-01T11:00:00Z"), spec={"version": "v1.32.0"}, **fresh)
    wanted = topology.control_plane_as_wanted(cluster, kcp, ["v1.31.0", "v1.32.0"])
    assert not machine_data(old, wanted, {"a"}, NOW)["up_to_date"]
    assert machine_data(step, wanted, {"a"}, NOW)["up_to_date"]
    after_the_step = topology.control_plane_as_wanted(cluster, kcp, ["v1.32.0"])
    assert not machine_data(step, after_the_step, {"a"}, NOW)["up_to_date"]  # the Cluster wants v1.33.0 next
