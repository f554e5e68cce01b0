# -*- coding: utf-8 -*-
"""octavia/serving.py: what serving means on each provider (ovn's ONLINE at creation proves nothing until a full
monitor window has passed)."""

import datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia import serving as sv

CAPO = {"delay": 10, "timeout": 5, "max_retries": 5, "max_retries_down": 3}
T0 = 1_800_000_000.0  # epoch seconds


def iso(epoch):
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")


def member(oper="ONLINE", prov="ACTIVE", mid="m-1", created=None):
    data = {"id": mid, "name": mid, "address": "10.0.0.1", "protocol_port": 6443, "provisioning_status": prov,
            "operating_status": oper}
    if created is not None:
        data["created_at"] = iso(created)
    return data


def test_the_window_is_delay_times_max_retries_down_plus_timeout():
    assert sv.failure_window(CAPO) == 35.0
    assert sv.failure_window(None) is None
    assert sv.ServingRule("ovn", CAPO).window == 35.0
    assert sv.ServingRule("OVN ", CAPO).window == 35.0
    assert sv.ServingRule("amphora", CAPO).window is None
    assert sv.ServingRule("ovn", None).window is None


def test_amphora_online_serves_at_once():
    history = sv.ServingHistory(sv.ServingRule("amphora", CAPO))
    new = member(created=T0)
    history.observe([new], T0 + 1)
    assert history.serving(new)
    judged = history.judged(new)
    assert judged["serving_since"] == iso(T0 + 1) + "Z" and judged["serving_after"].startswith("amphora: ACTIVE and ONLINE")


def test_ovn_online_at_creation_serves_only_after_the_window_since_created_at():
    history = sv.ServingHistory(sv.ServingRule("ovn", CAPO))
    history.observe([], T0)  # the pool before the member
    for at in (T0 + 2, T0 + 20, T0 + 34.5):
        history.observe([member(created=T0 + 1)], at)
        assert not history.serving(member(created=T0 + 1)), at
        assert "of the 35 s monitor window" in history.waiting(member(), at)
    history.observe([member(created=T0 + 1)], T0 + 36)
    assert history.serving(member())
    judged = history.judged(member())
    assert judged["serving_after"] == ("ONLINE for 35 s since creation (created_at), the full monitor window of 35 s "
                                       "(ovn: delay x max_retries_down + timeout)")


def test_ovn_member_that_goes_error_within_the_window_never_serves():
    history = sv.ServingHistory(sv.ServingRule("ovn", CAPO))
    history.observe([member(created=T0)], T0 + 1)
    history.observe([member(oper="ERROR", created=T0)], T0 + 30)
    history.observe([member(oper="ERROR", created=T0)], T0 + 60)
    assert not history.serving(member(oper="ERROR"))
    # back ONLINE: a full window again from the first ONLINE sample
    history.observe([member(created=T0)], T0 + 70)
    assert not history.serving(member())
    history.observe([member(created=T0)], T0 + 105)
    assert history.serving(member())
    assert "since it was seen ONLINE again" in history.judged(member())["serving_after"]


def test_ovn_serving_member_stops_serving_with_the_first_sample_not_online():
    history = sv.ServingHistory(sv.ServingRule("ovn", CAPO))
    history.observe([member(created=T0 - 3600)], T0)
    assert history.serving(member())  # an old member, created long before the run
    history.observe([member(oper="OFFLINE")], T0 + 1)
    assert not history.serving(member(oper="OFFLINE"))
    history.observe([member()], T0 + 2)
    assert not history.serving(member()) and history.judged(member())["serving_since"] is None


def test_ovn_without_created_at_counts_from_the_first_sample():
    history = sv.ServingHistory(sv.ServingRule("ovn", CAPO))
    assert history.missing_created([member()])
    history.observe([member()], T0)
    assert not history.missing_created([member()])
    history.observe([member()], T0 + 34)
    assert not history.serving(member())
    history.observe([member()], T0 + 35)
    assert history.serving(member())
    assert "(first seen)" in history.judged(member())["serving_after"]


def test_ovn_created_at_from_a_clock_behind_is_not_before_the_last_sample_without_it():
    history = sv.ServingHistory(sv.ServingRule("ovn", CAPO))
    history.observe([], T0 + 100)
    history.observe([member(created=T0)], T0 + 101)  # says created 100 s ago: the pool had no such member at T0+100
    assert not history.serving(member())
    history.observe([member(created=T0)], T0 + 135)
    assert history.serving(member())
    assert "not before the last sample without it" in history.judged(member())["serving_after"]


def test_ovn_created_at_from_a_clock_ahead_counts_from_the_first_sample():
    history = sv.ServingHistory(sv.ServingRule("ovn", CAPO))
    history.observe([member(created=T0 + 500)], T0)
    history.observe([member(created=T0 + 500)], T0 + 34)
    assert not history.serving(member())
    history.observe([member(created=T0 + 500)], T0 + 35)
    assert history.serving(member())


def test_created_times_given_apart_are_used():
    history = sv.ServingHistory(sv.ServingRule("ovn", CAPO))
    history.observe([member()], T0, created={"m-1": iso(T0 - 3600)})
    assert history.serving(member())


def test_ovn_without_a_monitor_keeps_no_monitor_and_says_so():
    rule = sv.ServingRule("ovn", None)
    assert "no health monitor" in rule.finding and rule.window is None
    history = sv.ServingHistory(rule)
    history.observe([member(oper="NO_MONITOR")], T0)
    assert history.serving(member(oper="NO_MONITOR")) and not history.serving(member())
    assert sv.ServingRule("amphora", None).finding == ""
    assert sv.ServingRule("ovn", None, has_monitor=True).finding.startswith("the pool's health monitor could not")


def test_the_rule_in_words():
    assert sv.ServingRule("ovn", CAPO).describe().startswith(
        "ovn: ACTIVE and ONLINE for a full monitor window since creation, 35 s (delay 10 s x max_retries_down 3 + "
        "timeout 5 s)")
    assert sv.ServingRule("ovn", CAPO).view()["window"] == 35.0


STATUSES = st.sampled_from(["ONLINE", "ONLINE", "ONLINE", "ERROR", "OFFLINE", "NO_MONITOR"])
PROVISIONING = st.sampled_from(["ACTIVE", "ACTIVE", "ACTIVE", "PENDING_UPDATE"])
MONITORS = st.fixed_dictionaries({"delay": st.integers(1, 20), "timeout": st.integers(1, 20),
                                  "max_retries_down": st.integers(1, 10)})
SAMPLES = st.lists(st.tuples(st.floats(0.1, 20), STATUSES, PROVISIONING), min_size=1, max_size=30)


def replay(rule, samples, created_offset):
    """Feed ``samples`` (gap, operating, provisioning) to a history; yields (time, member, serving)."""
    history = sv.ServingHistory(rule)
    history.observe([], T0)
    now = T0
    for gap, oper, prov in samples:
        now += gap
        seen = member(oper=oper, prov=prov, created=T0 + created_offset)
        history.observe([seen], now)
        yield now, seen, history.serving(seen)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["amphora", "octavia", "amphorav2", None, "f5"]), st.one_of(st.none(), MONITORS), SAMPLES)
def test_other_providers_keep_todays_rule(provider, monitor, samples):
    rule = sv.ServingRule(provider, monitor)
    for dummy, seen, serving in replay(rule, samples, 0.5):
        assert serving == sv.plain_serving(seen, monitor is not None)


@settings(max_examples=400, deadline=None)
@given(MONITORS, SAMPLES, st.floats(-100, 100))
def test_ovn_serves_only_after_a_full_window_of_online_samples(monitor, samples, created_offset):
    """Whenever a member is judged serving on ovn: it is ACTIVE/ONLINE now, every sample of the last window (and
    since the pool first showed it, when that is less) was ONLINE, and at least a window has passed since the
    last sample without it (the earliest it can have been created)."""
    window = sv.failure_window(monitor)
    history = []
    for now, seen, serving in replay(sv.ServingRule("ovn", monitor), samples, created_offset):
        history.append((now, seen["operating_status"], seen["provisioning_status"]))
        if not serving:
            continue
        assert sv.plain_serving(seen, True)
        assert now - T0 >= window
        assert all((o, p) == ("ONLINE", "ACTIVE") for t, o, p in history if t >= now - window)


@settings(max_examples=200, deadline=None)
@given(MONITORS, st.lists(st.floats(0.1, 20), min_size=1, max_size=30))
def test_ovn_always_online_serves_once_the_window_has_passed(monitor, gaps):
    """A member ONLINE in every sample serves from the first sample a window after its creation on."""
    window = sv.failure_window(monitor)
    rule = sv.ServingRule("ovn", monitor)
    for now, dummy, serving in replay(rule, [(gap, "ONLINE", "ACTIVE") for gap in gaps], 0.0):
        assert serving == (now - T0 >= window)
