"""The rollout decisions of KCP, the Machine controller and CAPO, and the history records (pure)."""

from __future__ import annotations

from minicloud.kube.controllers import history
from minicloud.kube.controllers.kcp import machine_view
from minicloud.kube.controllers.rollout import (
    KCP_CLEANUP_HOOK,
    Action,
    MachineView,
    MemberView,
    deletion_next,
    hooks,
    kcp_cleanup_due,
    kcp_counts,
    kcp_next,
    kcp_settled,
    machineset_next,
    phase,
    provision_next,
    summarize,
)

DRAIN = "pre-drain.delete.hook.machine.cluster.x-k8s.io/flight"
TERMINATE = "pre-terminate.delete.hook.machine.cluster.x-k8s.io/flight"


def m(name, order, up_to_date=False, ready=True, deleting=False, pre_drain=(), pre_terminate=()):
    return MachineView(name, (f"t{order}", name), up_to_date, ready, deleting, tuple(pre_drain), tuple(pre_terminate))


def member(status="ACTIVE", operating="NO_MONITOR", name="lb-6443-new"):
    return MemberView("id", name, status, operating)


class TestKcp:
    def test_outdated_machines_get_a_surge_machine_first(self):
        action = kcp_next(3, [m("a", 1), m("b", 2), m("c", 3)])
        assert action.kind == "create" and action.names == ("a", "b", "c")

    def test_oldest_outdated_goes_once_the_new_one_is_ready(self):
        machines = [m("c", 3), m("a", 1), m("b", 2), m("new", 4, up_to_date=True)]
        assert kcp_next(3, machines) == Action("delete", "a", "outdated")

    def test_waits_while_the_new_machine_provisions(self):
        action = kcp_next(3, [m("a", 1), m("b", 2), m("c", 3), m("new", 4, up_to_date=True, ready=False)])
        assert (action.kind, action.reason, action.names) == ("wait", "machine provisioning", ("new",))

    def test_a_machine_held_by_a_hook_stops_the_rollout(self):
        machines = [m("a", 1, deleting=True, pre_drain=[DRAIN]), m("b", 2), m("c", 3), m("new", 4, up_to_date=True)]
        action = kcp_next(3, machines)
        assert (action.kind, action.reason, action.names) == ("wait", "machine deletion", ("a",))

    def test_next_surge_after_the_deletion(self):
        action = kcp_next(3, [m("b", 2), m("c", 3), m("new", 4, up_to_date=True)])
        assert action.kind == "create" and action.names == ("b", "c")

    def test_done_when_all_are_up_to_date(self):
        assert kcp_next(1, [m("new", 4, up_to_date=True)]).kind == "done"

    def test_scale_down_without_outdated_takes_the_oldest(self):
        assert kcp_next(1, [m("y", 2, True), m("x", 1, True)]) == Action("delete", "x", "scale down")

    def test_scale_up_when_short(self):
        assert kcp_next(3, [m("x", 1, True)]).reason == "scale up"

    def test_counts_and_phase(self):
        machines = [m("a", 1, deleting=True), m("b", 2), m("new", 4, up_to_date=True, ready=False)]
        assert kcp_counts(machines) == {"replicas": 3, "upToDateReplicas": 1, "readyReplicas": 1,
                                        "availableReplicas": 1}
        assert phase(machines, 2) == "RollingOut"
        assert phase([m("n1", 1, True), m("n2", 2, True)], 2) == "Completed"
        assert phase([m("n1", 1, True)], 2) == "RollingOut"


class TestKeepingReplicas:
    def test_a_deleted_machine_is_replaced_once_it_is_gone(self):
        held = [m("a", 1, True, deleting=True, pre_drain=[DRAIN]), m("b", 2, True), m("c", 3, True)]
        assert kcp_next(3, held).reason == "machine deletion"
        assert kcp_next(3, held[1:]) == Action("create", reason="scale up")
        assert not kcp_settled(3, held[1:]) and kcp_settled(2, held[1:])

    def test_nothing_is_created_while_seeding_writes_the_machines(self):
        assert kcp_next(3, [m("a", 1, True)], adopted=False).kind == "idle"
        assert kcp_settled(3, [m("a", 1, True)], adopted=False)
        assert kcp_next(3, [m("a", 1, True)]) == Action("create", reason="scale up")
        assert kcp_next(3, []).kind == "create"  # a KCP applied without Machines gets them

    def test_machine_set_creates_every_missing_machine_at_once(self):
        action = machineset_next(3, [m("a", 1)])
        assert (action.kind, len(action.names)) == ("create", 2)
        assert machineset_next(3, [m("a", 1)], adopted=False).kind == "idle"
        assert machineset_next(1, [m("a", 1)]).kind == "done"

    def test_machine_set_counts_deleting_machines_and_waits_for_them(self):
        machines = [m("a", 1, deleting=True), m("b", 2)]
        assert machineset_next(2, machines).kind == "done"
        assert machineset_next(1, machines) == Action("wait", reason="machine deletion", names=("a",))

    def test_machine_set_scales_down_unready_then_oldest(self):
        machines = [m("old", 1), m("young", 3), m("booting", 2, ready=False)]
        assert machineset_next(1, machines).names == ("booting", "old")


class TestDeletion:
    def test_pre_drain_hook_holds_everything(self):
        action = deletion_next(m("a", 1, deleting=True, pre_drain=[DRAIN]), True, "ACTIVE", True)
        assert (action.kind, action.reason, action.names) == ("wait", "pre-drain hook", (DRAIN,))

    def test_pre_terminate_hook_holds_the_infrastructure(self):
        action = deletion_next(m("a", 1, deleting=True, pre_terminate=[TERMINATE]), True, "ACTIVE", True)
        assert (action.kind, action.reason) == ("wait", "pre-terminate hook")

    def test_drain_after_the_pre_drain_hooks_and_before_the_pre_terminate_ones(self):
        both = m("a", 1, deleting=True, pre_drain=[DRAIN], pre_terminate=[TERMINATE])
        assert deletion_next(both, True, "ACTIVE", True, drained=False).reason == "pre-drain hook"
        terminate = m("a", 1, deleting=True, pre_terminate=[TERMINATE])
        assert deletion_next(terminate, True, "ACTIVE", True, drained=False) == Action("drain", "a")
        assert deletion_next(terminate, True, "ACTIVE", True, drained=True).reason == "pre-terminate hook"
        assert deletion_next(m("a", 1, deleting=True), False, None, False, drained=False).kind == "drain"

    def test_member_then_server_then_finalizer(self):
        machine = m("a", 1, deleting=True)
        assert deletion_next(machine, True, "ACTIVE", True).kind == "delete-member"
        assert deletion_next(machine, True, "PENDING_DELETE", True).reason == "member deletion"
        assert deletion_next(machine, False, None, True).kind == "delete-server"
        assert deletion_next(machine, False, None, False).kind == "remove-finalizer"

    def test_hooks_are_annotations_with_the_prefix_and_a_name(self):
        annotations = {DRAIN: "", TERMINATE: "", "pre-drain.delete.hook.machine.cluster.x-k8s.io": "",
                       "other/x": ""}
        assert hooks(annotations, "pre-drain.delete.hook.machine.cluster.x-k8s.io") == [DRAIN]
        assert hooks(None, "x") == []


class TestCapo:
    def test_server_then_member(self):
        assert provision_next("member", False, None, None).kind == "create-server"
        assert provision_next("member", True, None, "ACTIVE").kind == "create-member"

    def test_member_wait_needs_the_member_active(self):
        assert provision_next("member", True, member("PENDING_CREATE"), "ACTIVE").kind == "wait"
        assert "ERROR" in provision_next("member", True, member("ERROR"), "ACTIVE").reason
        assert provision_next("member", True, member("ACTIVE"), "PENDING_UPDATE").kind == "ready"

    def test_lb_wait_is_fooled_by_a_lost_member(self):
        assert provision_next("lb", True, member("PENDING_CREATE"), "ACTIVE").kind == "ready"
        assert provision_next("lb", True, member("ACTIVE"), "PENDING_UPDATE").kind == "wait"


class TestKcpCleanupHook:
    """KCP takes its own pre-terminate hook off last, one Machine being deleted at a time (CAPI v1.12)."""

    def test_off_the_oldest_machine_being_deleted_once_it_is_the_last_hook(self):
        old = m("old", 1, deleting=True, pre_terminate=[KCP_CLEANUP_HOOK])
        older_live = m("live", 0, pre_terminate=[KCP_CLEANUP_HOOK])
        assert kcp_cleanup_due(old, [older_live, old])
        newer = m("newer", 2, deleting=True, pre_terminate=[KCP_CLEANUP_HOOK])
        assert not kcp_cleanup_due(newer, [old, newer]) and kcp_cleanup_due(old, [old, newer])

    def test_never_before_the_other_hooks_nor_on_a_live_machine(self):
        assert not kcp_cleanup_due(m("a", 1, deleting=True, pre_terminate=sorted([KCP_CLEANUP_HOOK, TERMINATE])), [])
        assert not kcp_cleanup_due(m("a", 1, deleting=True, pre_drain=[DRAIN], pre_terminate=[KCP_CLEANUP_HOOK]), [])
        live = m("a", 1, pre_terminate=[KCP_CLEANUP_HOOK])
        assert not kcp_cleanup_due(live, [live])

    def test_a_machine_being_deleted_without_the_hook_goes_first(self):
        bare = m("bare", 2, deleting=True)
        held = m("held", 1, deleting=True, pre_terminate=[KCP_CLEANUP_HOOK])
        assert not kcp_cleanup_due(held, [held, bare])


def test_serving_needs_active_and_online_or_no_monitor():
    assert member("ACTIVE", "NO_MONITOR").serving and member("ACTIVE", "ONLINE").serving
    assert not member("ACTIVE", "OFFLINE").serving and not member("ACTIVE", "ERROR").serving
    assert not member("PENDING_CREATE", "NO_MONITOR").serving


def test_machine_view_from_a_stored_machine():
    stored = {"metadata": {"name": "cp-x", "creationTimestamp": "2025-01-01T00:00:00Z",
                           "deletionTimestamp": "2025-01-01T00:01:00Z",
                           "annotations": {"minicloud.test/rollout": "2", DRAIN: ""}},
              "status": {"nodeRef": {"name": "cp-x"}}}
    view = machine_view(stored, 2)
    assert view.up_to_date and view.ready and view.deleting and view.pre_drain == (DRAIN,)
    assert not machine_view({"metadata": {"name": "old"}}, 1).up_to_date


def test_history_record_and_summary(tmp_path):
    members = [member("ACTIVE", "NO_MONITOR", "a"), member("PENDING_CREATE", "NO_MONITOR", "b")]
    first = history.record(10.0, 1, "lb", "RollingOut", "ACTIVE", members, ["old"], ["new"], ["old"])
    assert (first["members"], first["active"], first["serving"]) == (2, 1, 1)
    assert first["memberStatus"] == {"a": "ACTIVE/NO_MONITOR", "b": "PENDING_CREATE/NO_MONITOR"}
    second = history.record(11.0, 1, "lb", "Completed", "ACTIVE", members[1:], [], ["new"], [])
    for item in (dict(first, rollout=0), first, second):
        history.append(tmp_path, "default", "c", item)
    records = history.read_history(tmp_path, "default", "c")
    assert [r["time"] for r in records] == [10.0, 11.0]
    summary = summarize(records)
    assert summary["minServing"] == 0 and summary["minServingAt"] == 11.0 and summary["samples"] == 2
    assert summarize([]) == {"samples": 0}
    assert history.read_history(tmp_path, "default", "missing") == []


class FakeOpenStack:
    def __init__(self):
        self.calls = 0

    def members(self, pool_id):
        self.calls += 1
        return [member()]

    def lb_status(self, lb_id):
        self.calls += 1
        return "ACTIVE"


def test_sampler_samples_while_rolling_and_a_while_after(tmp_path):
    now = [100.0]
    target = {"namespace": "default", "cluster": "c", "rollout": 1, "capoWait": "member", "phase": "RollingOut",
              "pool_id": "p", "lb_id": "l", "old": ["o"], "new": [], "released": []}
    conn = FakeOpenStack()
    sampler = history.HistorySampler(tmp_path, lambda: [target], lambda: conn, clock=lambda: now[0], linger=2.0)
    sampler.tick()
    target["phase"], target["old"] = "Completed", []
    for now[0] in (101.0, 102.0, 102.5, 103.0):
        sampler.tick()
    assert [r["time"] for r in history.read_history(tmp_path, "default", "c")] == [100.0, 101.0, 102.0]
    assert conn.calls == 6  # one member list and one load balancer GET per sample
    target["rollout"] = 0
    sampler.tick()
    assert conn.calls == 6


def test_sampler_goes_on_after_completed_until_no_old_machine_is_left(tmp_path):
    """KCP says Completed once its Machines are up to date; the last old Machine's deletion may end seconds later
    on a busy machine (its server's delete): the history's end is its first sample without an old Machine."""
    now = [100.0]
    target = {"namespace": "default", "cluster": "c", "rollout": 1, "capoWait": "member", "phase": "Completed",
              "pool_id": "p", "lb_id": "l", "old": ["o"], "new": ["n"], "released": ["o"]}
    sampler = history.HistorySampler(tmp_path, lambda: [target], lambda: FakeOpenStack(), clock=lambda: now[0],
                                     linger=2.0)
    for now[0] in (100.0, 103.0, 106.0):
        sampler.tick()
    target["old"] = []
    for now[0] in (107.0, 108.0, 109.5):
        sampler.tick()
    records = history.read_history(tmp_path, "default", "c")
    assert [r["time"] for r in records] == [100.0, 103.0, 106.0, 107.0, 108.0]
    assert records[2]["old"] == ["o"] and records[3]["old"] == []
    # an old Machine kept for ever (another owner's hook): the history ends SETTLE seconds after Completed
    target["rollout"], target["old"] = 2, ["kept"]
    for now[0] in (200.0, 200.0 + history.SETTLE - 1, 200.0 + history.SETTLE + 1, 200.0 + history.SETTLE + 5):
        sampler.tick()
    assert [r["time"] for r in history.read_history(tmp_path, "default", "c", 2)] == [
        200.0, 200.0 + history.SETTLE - 1, 200.0 + history.SETTLE + 1]


def test_other_pre_terminate_hooks_hold_it_only_from_kubernetes_1_31():
    """CAPI v1.9+ reconcilePreTerminateHook: the wait for the Machine's other pre-terminate hooks applies only
    when the control plane's version is >= 1.31.0 (pre-releases count as their release); below it, the etcd
    member goes (and the hook comes off) while another owner's pre-terminate hook still holds the Machine."""
    held = m("a", 1, deleting=True, pre_terminate=sorted([KCP_CLEANUP_HOOK, TERMINATE]))
    for version in ("v1.31.0", "1.31.0-rc.1", "v1.32.3", None):
        assert not kcp_cleanup_due(held, [held], version=version), version
    for version in ("v1.30.9", "1.29.0"):
        assert kcp_cleanup_due(held, [held], version=version), version
    assert not kcp_cleanup_due(m("a", 1, deleting=True, pre_terminate=[TERMINATE]), [], version="v1.30.0")
