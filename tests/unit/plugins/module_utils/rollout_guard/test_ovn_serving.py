# -*- coding: utf-8 -*-
"""rollout_guard's plan with the ovn rule of serving (octavia/serving.py): a replacement that ovn reports ONLINE at
creation releases no old Machine before a full monitor window has passed, and goes ERROR in between on a backend
that never answers."""

from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia import serving as sv
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard import plan as rollout_plan

HOOK = rollout_plan.hook_key(rollout_plan.DEFAULT_HOOK_NAME)
PREFIX = "lb-6443-"
CAPO = {"delay": 10, "timeout": 5, "max_retries": 5, "max_retries_down": 3}
T0 = 1_800_000_000.0


def machine(name, up_to_date=False, deleting=False):
    return {"name": name, "created": name, "deleting": deleting, "hooks": [] if up_to_date else [HOOK],
            "addresses": [], "up_to_date": up_to_date}


def member(name, operating="ONLINE", created="2020-01-01T00:00:00"):
    return {"id": "id-" + name, "name": PREFIX + name, "address": "10.0.0.%d" % len(name), "protocol_port": 6443,
            "provisioning_status": "ACTIVE", "operating_status": operating, "created_at": created}


MACHINES = [machine("a", deleting=True), machine("b"), machine("c"), machine("n1", up_to_date=True)]


def step(history, members, now):
    history.observe(members, now)
    snapshot = rollout_plan.Snapshot(MACHINES, members, True, 3, member_prefix=PREFIX, replicas=3,
                                     judge=history.serving, now=now)
    return rollout_plan.next_action(snapshot)


def test_ovn_replacement_online_at_creation_releases_only_after_the_window():
    history = sv.ServingHistory(sv.ServingRule("ovn", CAPO))
    old = [member(n) for n in "abc"]
    assert step(history, old, T0).kind == rollout_plan.WAIT
    for now in (T0 + 1, T0 + 20, T0 + 35):
        action = step(history, old + [member("n1", created=None)], now)
        assert action.kind == rollout_plan.WAIT, (now, action)
        assert "a serving replacement for a" in action.reason
    action = step(history, old + [member("n1", created=None)], T0 + 36.5)
    assert action.kind == rollout_plan.RELEASE and action.machines == ("a",)


def _error_in_the_window(stepper, names):
    """On ovn a new member that goes ERROR within its monitor window releases nothing, however long the run waits
    (``stepper``: one step of capi mode or of direct mode; ``names``: the old members)."""
    history = sv.ServingHistory(sv.ServingRule("ovn", CAPO))
    old = [member(n) for n in names]
    stepper(history, old, T0)
    stepper(history, old + [member("n1", created=None)], T0 + 1)
    for now in (T0 + 30, T0 + 40, T0 + 100):
        assert stepper(history, old + [member("n1", "ERROR", created=None)], now).kind == rollout_plan.WAIT


def test_ovn_replacement_that_goes_error_in_the_window_never_releases():
    _error_in_the_window(step, "abc")


def test_amphora_online_replacement_releases_at_once():
    history = sv.ServingHistory(sv.ServingRule("amphora", CAPO))
    old = [member(n) for n in "abc"]
    step(history, old, T0)
    action = step(history, old + [member("n1", created=None)], T0 + 1)
    assert action.kind == rollout_plan.RELEASE


def test_the_floor_counts_with_the_judge():
    history = sv.ServingHistory(sv.ServingRule("ovn", CAPO))
    members = [member("n1", created=None), member("n2"), member("n3")]
    history.observe(members, T0)
    judge = history.serving
    assert rollout_plan.below_floor(members, True, 3, judge) is not None
    assert rollout_plan.below_floor(members, True, 3) is None


class Named:
    """A pair's selector as rollout_guard's direct mode has it (``matches(member)``, ``text``)."""

    def __init__(self, name):
        self.text = PREFIX + name

    def matches(self, candidate):
        return candidate.get("name") == self.text


def direct_step(history, members, now, judge=True):
    history.observe(members, now)
    action, dummy = rollout_plan.direct_next([(Named("a"), Named("n1"))], members, True, 3, now=now,
                                             member_timeout=600, judge=history.serving if judge else None)
    return action


def test_direct_mode_on_ovn_deletes_no_old_member_before_the_new_one_was_online_for_the_window():
    history = sv.ServingHistory(sv.ServingRule("ovn", CAPO))
    old = [member(n) for n in "abcd"]
    direct_step(history, old, T0)
    for now in (T0 + 1, T0 + 20, T0 + 35):
        action = direct_step(history, old + [member("n1", created=None)], now)
        assert action.kind == rollout_plan.WAIT and "n1" in action.reason, (now, action)
    assert direct_step(history, old + [member("n1", created=None)], T0 + 36.5).kind == rollout_plan.RELEASE


def test_direct_mode_on_ovn_a_new_member_that_goes_error_in_the_window_releases_nothing():
    _error_in_the_window(direct_step, "abcd")


def test_direct_mode_without_the_judge_keeps_the_plain_rule():
    """The plain rule (every provider but ovn) releases as soon as the new member is ACTIVE/ONLINE: the case the
    judge exists for on ovn."""
    history = sv.ServingHistory(sv.ServingRule("ovn", CAPO))
    old = [member(n) for n in "abcd"]
    direct_step(history, old, T0)
    assert direct_step(history, old + [member("n1", created=None)], T0 + 1, judge=False).kind == rollout_plan.RELEASE
