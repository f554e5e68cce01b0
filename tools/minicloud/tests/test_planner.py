"""Status transition planning of the provider emulator."""

from minicloud.octavia_provider import planner as p
from minicloud.octavia_provider.modes import Mode
from minicloud.octavia_provider.tree import LbTree, Node


def make_tree(members=(), monitor=None, lb="PENDING_UPDATE", pool="PENDING_UPDATE", listener="PENDING_UPDATE"):
    nodes = [
        Node("loadbalancer", "lb", lb, "ONLINE"),
        Node("listener", "li", listener, "ONLINE", parent_id="lb", default_pool_id="po"),
        Node("pool", "po", pool, "ONLINE", parent_id="lb"),
        *members,
    ]
    if monitor:
        nodes.append(monitor)
    return LbTree(nodes)


def member(mid, prov="PENDING_CREATE", oper="OFFLINE", name=None, address="10.0.0.10", up=True):
    return Node("member", mid, prov, oper, admin_state_up=up, parent_id="po", name=name or mid, address=address)


MONITOR = Node("healthmonitor", "hm", "ACTIVE", "ONLINE", parent_id="po", delay=5)


def statuses(update, key):
    return {r["id"]: (r.get("provisioning_status"), r.get("operating_status")) for r in update.get(key, [])}


def test_member_create_member_first_then_parents():
    tree = make_tree([member("m1")])
    steps = p.plan(tree, p.Event("member", "m1", "create"), Mode())
    assert [s.delay for s in steps] == [0.5, 0.5]
    assert statuses(steps[0].update, "members") == {"m1": ("ACTIVE", "NO_MONITOR")}
    assert set(steps[0].update) == {"members"}
    assert statuses(steps[1].update, "pools") == {"po": ("ACTIVE", None)}
    assert statuses(steps[1].update, "listeners") == {"li": ("ACTIVE", None)}
    assert statuses(steps[1].update, "loadbalancers") == {"lb": ("ACTIVE", None)}


def test_member_with_monitor_is_offline_then_settles_online():
    tree = make_tree([member("m1")], monitor=MONITOR)
    steps = p.plan(tree, p.Event("member", "m1", "create"), Mode())
    assert statuses(steps[0].update, "members") == {"m1": ("ACTIVE", "OFFLINE")}
    assert steps[-1].settle == ("m1",) and steps[-1].delay == p.HEALTH_DELAY_CAP
    settled = make_tree([member("m1", "ACTIVE", "OFFLINE")], monitor=MONITOR)
    assert statuses(p.settle_health(settled, ("m1",), Mode()), "members") == {"m1": (None, "ONLINE")}
    down = Mode.parse("backend-down")
    assert statuses(p.settle_health(settled, ("m1",), down), "members") == {"m1": (None, "ERROR")}


def test_disabled_member_is_offline_and_not_settled():
    tree = make_tree([member("m1", up=False)], monitor=MONITOR)
    steps = p.plan(tree, p.Event("member", "m1", "create"), Mode())
    assert statuses(steps[0].update, "members") == {"m1": ("ACTIVE", "OFFLINE")}
    assert not any(s.settle for s in steps)


def test_lost_member_stays_pending_but_parents_go_active():
    tree = make_tree([member("m1", name="web-member-1")])
    steps = p.plan(tree, p.Event("member", "m1", "create"), Mode.parse("lost-member", members="web-*"))
    assert "members" not in steps[0].update
    assert statuses(steps[1].update, "loadbalancers") == {"lb": ("ACTIVE", None)}


def test_lost_member_only_matching_members():
    tree = make_tree([member("m1", name="a"), member("m2", name="b")])
    steps = p.plan(tree, p.Event("pool", "po", "batch", ("m1", "m2")), Mode.parse("lost-member", members="b"))
    assert statuses(steps[0].update, "members") == {"m1": ("ACTIVE", "NO_MONITOR")}


def test_member_error():
    tree = make_tree([member("m1")])
    steps = p.plan(tree, p.Event("member", "m1", "create"), Mode.parse("member-error"))
    assert statuses(steps[0].update, "members") == {"m1": ("ERROR", None)}
    assert statuses(steps[1].update, "pools") == {"po": ("ACTIVE", None)}


def test_slow_mode_steps_take_the_delay():
    tree = make_tree([member("m1")])
    assert [s.delay for s in p.plan(tree, p.Event("member", "m1", "create"), Mode.parse("slow"))] == [10.0, 10.0]


def test_batch_update_creates_updates_and_deletes():
    old = member("old", "PENDING_DELETE", "ONLINE")
    changed = member("chg", "PENDING_UPDATE", "ONLINE")
    tree = make_tree([member("new"), old, changed])
    steps = p.plan(tree, p.Event("pool", "po", "batch", ("new", "chg")), Mode())
    assert statuses(steps[0].update, "members") == {
        "new": ("ACTIVE", "NO_MONITOR"), "chg": ("ACTIVE", "NO_MONITOR"), "old": ("DELETED", None)}
    assert statuses(steps[1].update, "pools") == {"po": ("ACTIVE", None)}


def test_batch_of_hundreds_is_one_update():
    members = [member(f"m{i}", address=f"10.0.{i // 250}.{i % 250}") for i in range(500)]
    steps = p.plan(make_tree(members), p.Event("pool", "po", "batch", tuple(m.id for m in members)), Mode())
    assert len(steps[0].update["members"]) == 500


def test_member_delete():
    tree = make_tree([member("m1", "PENDING_DELETE", "ONLINE")])
    steps = p.plan(tree, p.Event("member", "m1", "delete"), Mode())
    assert statuses(steps[0].update, "members") == {"m1": ("DELETED", None)}
    assert statuses(steps[1].update, "loadbalancers") == {"lb": ("ACTIVE", None)}


def test_lb_cascade_delete_reports_everything_deleted():
    tree = LbTree([
        Node("loadbalancer", "lb", "PENDING_DELETE", "ONLINE"),
        Node("listener", "li", "PENDING_DELETE", "ONLINE", parent_id="lb", default_pool_id="po"),
        Node("pool", "po", "PENDING_DELETE", "ONLINE", parent_id="lb"),
        member("m1", "PENDING_DELETE", "ONLINE"),
        MONITOR,
    ])
    steps = p.plan(tree, p.Event("loadbalancer", "lb", "delete"), Mode())
    assert len(steps) == 1
    update = steps[0].update
    assert all(r["provisioning_status"] == "DELETED" for records in update.values() for r in records)
    assert {k: len(v) for k, v in update.items()} == {
        "members": 1, "healthmonitors": 1, "pools": 1, "listeners": 1, "loadbalancers": 1}


def test_lb_create_activates_its_whole_graph():
    tree = LbTree([
        Node("loadbalancer", "lb", "PENDING_CREATE", "OFFLINE"),
        Node("listener", "li", "PENDING_CREATE", "OFFLINE", parent_id="lb", default_pool_id="po"),
        Node("pool", "po", "PENDING_CREATE", "OFFLINE", parent_id="lb"),
    ])
    steps = p.plan(tree, p.Event("loadbalancer", "lb", "create"), Mode())
    assert len(steps) == 1
    assert statuses(steps[0].update, "loadbalancers") == {"lb": ("ACTIVE", "ONLINE")}
    assert statuses(steps[0].update, "listeners") == {"li": ("ACTIVE", "ONLINE")}


def test_monitor_create_rechecks_members_and_delete_sets_no_monitor():
    tree = make_tree([member("m1", "ACTIVE", "NO_MONITOR")],
                     monitor=Node("healthmonitor", "hm", "PENDING_CREATE", "OFFLINE", parent_id="po", delay=1))
    steps = p.plan(tree, p.Event("healthmonitor", "hm", "create"), Mode())
    assert statuses(steps[0].update, "healthmonitors") == {"hm": ("ACTIVE", "ONLINE")}
    assert statuses(steps[0].update, "members") == {"m1": (None, "OFFLINE")}
    assert steps[-1].settle == ("m1",)
    tree = make_tree([member("m1", "ACTIVE", "ONLINE")],
                     monitor=Node("healthmonitor", "hm", "PENDING_DELETE", "ONLINE", parent_id="po", delay=1))
    steps = p.plan(tree, p.Event("healthmonitor", "hm", "delete"), Mode())
    assert statuses(steps[0].update, "members") == {"m1": (None, "NO_MONITOR")}
    assert statuses(steps[0].update, "healthmonitors") == {"hm": ("DELETED", None)}


def test_reconcile_backend_down_and_recovery():
    tree = make_tree([member("a", "ACTIVE", "ONLINE", name="a"), member("b", "ACTIVE", "ONLINE", name="b")],
                     monitor=MONITOR, lb="ACTIVE", pool="ACTIVE", listener="ACTIVE")
    assert statuses(p.reconcile(tree, Mode.parse("backend-down", members="a")), "members") == {"a": (None, "ERROR")}
    down = make_tree([member("a", "ACTIVE", "ERROR")], monitor=MONITOR, pool="ACTIVE", listener="ACTIVE")
    assert statuses(p.reconcile(down, Mode()), "members") == {"a": (None, "ONLINE")}
    no_monitor = make_tree([member("a", "ACTIVE", "NO_MONITOR")], pool="ACTIVE", listener="ACTIVE")
    assert p.reconcile(no_monitor, Mode.parse("backend-down")) == {}


def test_backend_down_rolls_up_to_pool_and_load_balancer():
    def tree(a="ONLINE", b="ONLINE", pool_oper="ONLINE", lb_oper="ONLINE"):
        nodes = [Node("loadbalancer", "lb", "ACTIVE", lb_oper),
                 Node("listener", "li", "ACTIVE", "ONLINE", parent_id="lb", default_pool_id="po"),
                 Node("pool", "po", "ACTIVE", pool_oper, parent_id="lb"),
                 member("a", "ACTIVE", a, name="a"), member("b", "ACTIVE", b, name="b"), MONITOR]
        return LbTree(nodes)

    one_down = p.reconcile(tree(), Mode.parse("backend-down", members="a"))
    assert statuses(one_down, "pools") == {"po": (None, "DEGRADED")}
    assert statuses(one_down, "loadbalancers") == {"lb": (None, "DEGRADED")}
    assert "listeners" not in one_down
    all_down = p.reconcile(tree(), Mode.parse("backend-down"))
    assert statuses(all_down, "pools") == {"po": (None, "ERROR")}
    assert statuses(all_down, "loadbalancers") == {"lb": (None, "DEGRADED")}
    recovered = p.reconcile(tree("ERROR", "ERROR", "ERROR", "DEGRADED"), Mode())
    assert statuses(recovered, "members") == {"a": (None, "ONLINE"), "b": (None, "ONLINE")}
    assert statuses(recovered, "pools") == {"po": (None, "ONLINE")}
    assert statuses(recovered, "loadbalancers") == {"lb": (None, "ONLINE")}


def test_pool_health_from_members():
    assert p.pool_health([]) == "ONLINE"
    assert p.pool_health(["ONLINE", "ONLINE"]) == "ONLINE"
    assert p.pool_health(["ONLINE", "ERROR"]) == "DEGRADED"
    assert p.pool_health(["ERROR", "ERROR"]) == "ERROR"


def test_normal_mode_recovers_lost_members_only_when_lb_settled():
    lost = member("m1", "PENDING_CREATE", "OFFLINE")
    settled = make_tree([lost], lb="ACTIVE", pool="ACTIVE", listener="ACTIVE")
    assert statuses(p.reconcile(settled, Mode()), "members") == {"m1": ("ACTIVE", "NO_MONITOR")}
    assert p.reconcile(settled, Mode.parse("lost-member")) == {}
    busy = make_tree([lost])
    assert p.reconcile(busy, Mode()) == {}


def test_unknown_object_plans_nothing():
    assert p.plan(make_tree(), p.Event("member", "nope", "create"), Mode()) == []


def test_resume_finishes_in_flight_changes_only_under_pending_lbs():
    tree = make_tree([member("m1"), member("gone", "PENDING_DELETE", "ONLINE")])
    steps = p.resume(tree, Mode())
    assert statuses(steps[0].update, "members") == {"m1": ("ACTIVE", "NO_MONITOR"), "gone": ("DELETED", None)}
    assert statuses(steps[1].update, "loadbalancers") == {"lb": ("ACTIVE", None)}
    assert statuses(steps[1].update, "pools") == {"po": ("ACTIVE", None)}
    lost = make_tree([member("m1")], lb="ACTIVE", pool="ACTIVE", listener="ACTIVE")
    assert p.resume(lost, Mode()) == []


def test_resume_respects_the_mode_and_lb_delete():
    tree = make_tree([member("m1", name="x")])
    steps = p.resume(tree, Mode.parse("lost-member", members="x"))
    assert "members" not in steps[0].update
    deleting = LbTree([Node("loadbalancer", "lb", "PENDING_DELETE", "ONLINE")])
    assert statuses(p.resume(deleting, Mode())[0].update, "loadbalancers") == {"lb": ("DELETED", None)}
