# -*- coding: utf-8 -*-

import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.flightcontrol.openstack.plugins.module_utils.cluster_pause_ack.plan import (
    MESSAGE_BLOCKERS,
    Tracker,
    assess,
    judge,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.waiter import DONE, WAITING
from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils import capi_samples as s

BLOCK_MOVE = "clusterctl.cluster.x-k8s.io/block-move"


def seen(objects, now, tracker=None):
    tracker = tracker or Tracker()
    tracker.observe(objects, now)
    return tracker


def check(obj, paused=True, now=100.0, quiet=10.0, since=0.0, tracker=None):
    tracker = tracker or seen([obj], now)
    return assess(obj, paused, tracker.get(obj), now, quiet, since)


def test_v1beta1_cluster_paused_condition_lives_under_status_v1beta2():
    item = check(s.cluster("v1beta1", paused=True, generation=2, paused_status="True"))
    assert item["acknowledged"] is True
    assert "status.v1beta2.conditions" in item["how"]
    assert item["paused_condition"]["location"] == "status.v1beta2.conditions"


def test_v1beta2_cluster_paused_condition_lives_under_status_conditions():
    item = check(s.cluster("v1beta2", paused=True, generation=2, paused_status="True"))
    assert item["acknowledged"] is True
    assert item["paused_condition"]["location"] == "status.conditions"


def test_cluster_condition_must_have_caught_up_with_the_generation():
    # spec.paused was just set (generation 3); the condition still speaks of generation 2
    item = check(s.cluster("v1beta2", paused=True, generation=3, paused_status="True", paused_generation=2))
    assert item["acknowledged"] is False
    assert "generation 3" in item["waiting_for"]


def test_paused_condition_false_is_not_an_acknowledgement():
    item = check(s.cluster("v1beta1", paused=True, generation=2, paused_status="False"))
    assert item["acknowledged"] is False
    assert "not paused yet" in item["waiting_for"]


def test_block_move_annotation_blocks_even_with_a_paused_condition():
    obj = s.machine(paused_status="True")
    obj["metadata"]["annotations"][BLOCK_MOVE] = "true"
    item = check(obj)
    assert item["acknowledged"] is False
    assert BLOCK_MOVE in item["waiting_for"]


def test_block_move_removed_during_the_wait_acknowledges_without_quiet_period():
    before = s.openstack_cluster(block_move=True)
    tracker = seen([before], 10.0)
    after = s.written(before, 301, annotations={})
    tracker.observe([after], 11.0)
    item = check(after, now=11.0, quiet=30.0, since=10.0, tracker=tracker)
    assert item["acknowledged"] is True
    assert "removed" in item["how"]


def test_silent_provider_needs_the_quiet_period_after_its_last_write():
    obj = s.openstack_cluster()
    tracker = seen([obj], 0.0)
    for t, version in ((1.0, 301), (2.0, 302), (3.0, 303)):   # still writing after the pause
        obj = s.written(obj, version)
        tracker.observe([obj], t)
    assert check(obj, now=12.9, quiet=10.0, since=0.0, tracker=tracker)["acknowledged"] is False
    item = check(obj, now=13.0, quiet=10.0, since=0.0, tracker=tracker)
    assert item["acknowledged"] is True
    assert "no writes for 10.0 s" in item["how"]


def test_quiet_period_starts_when_the_pause_was_set_at_the_earliest():
    obj = s.openstack_cluster()
    tracker = seen([obj], 0.0)
    assert check(obj, now=14.0, quiet=10.0, since=5.0, tracker=tracker)["acknowledged"] is False
    assert check(obj, now=15.0, quiet=10.0, since=5.0, tracker=tracker)["acknowledged"] is True


def test_unpause_waits_for_paused_false_and_names_a_paused_annotation():
    assert check(s.machine(paused_status="True"), paused=False)["acknowledged"] is False
    assert check(s.machine(paused_status="False"), paused=False)["acknowledged"] is True
    annotated = s.machine(paused_status="False")
    annotated["metadata"]["annotations"]["cluster.x-k8s.io/paused"] = ""
    item = check(annotated, paused=False)
    assert item["acknowledged"] is False and "cluster.x-k8s.io/paused" in item["waiting_for"]
    silent = check(s.openstack_cluster(), paused=False)
    assert silent["acknowledged"] is True and "nothing to wait for" in silent["how"]


def test_unpause_waits_for_an_object_no_controller_has_reconciled_here():
    # what clusterctl move leaves on the target: the objects without their status (a create does not write the
    # status subresource); through v1beta1 an empty v1beta2 status still reads infrastructureReady: false
    for status in (None, {}, {"infrastructureReady": False, "controlPlaneReady": False},
                   {"v1beta2": {}, "conditions": [], "ready": False}):
        moved = s.openstack_cluster()
        moved.pop("status")
        if status is not None:
            moved["status"] = status
        item = check(moved, paused=False)
        assert item["acknowledged"] is False, status
        assert "status is empty" in item["waiting_for"] and "controllers of its provider" in item["waiting_for"]
    reconciled = s.openstack_cluster(ready=False)
    reconciled["status"] = {"ready": False, "conditions": [{"type": "Ready", "status": "False"}]}
    assert check(reconciled, paused=False)["acknowledged"] is True
    # a pause is not held by it: a silent object is judged by its quiet period as before
    moved = s.openstack_cluster()
    moved.pop("status")
    assert check(moved, paused=True, now=100.0, quiet=10.0, since=0.0, tracker=seen([moved], 0.0))["acknowledged"]


def test_judge_names_blockers_and_caps_the_message():
    items = [check(s.openstack_cluster(name="c%d" % i, block_move=True)) for i in range(MESSAGE_BLOCKERS + 3)]
    verdict = judge(items)
    assert verdict.state == WAITING
    assert "OpenStackCluster default/c0" in verdict.message
    assert "and 3 more" in verdict.message
    assert judge([check(s.machine(paused_status="True"))]).state == DONE


write_times = st.lists(st.floats(min_value=0.0, max_value=60.0, allow_nan=False), max_size=20).map(sorted)


@settings(max_examples=200, deadline=None)
@given(writes=write_times, quiet=st.floats(min_value=0.5, max_value=30.0), poll=st.floats(min_value=0.1, max_value=5.0))
def test_a_silent_object_is_never_acknowledged_within_the_quiet_period_of_a_seen_write(writes, quiet, poll):
    """Polling at least twice per quiet period (as the module does), a silent object is acknowledged
    only when every write made so far lies at least ``quiet`` seconds back."""
    poll = min(poll, quiet / 2.0)
    obj = s.openstack_cluster()
    tracker = Tracker()
    now, version, pending = 0.0, 300, list(writes)
    last_seen_write = 0.0
    while now < 200.0:
        while pending and pending[0] <= now:
            pending.pop(0)
            version += 1
            obj = s.written(obj, version)
        before = tracker.get(obj).resource_version if tracker.get(obj) else None
        tracker.observe([obj], now)
        if before is not None and before != obj["metadata"]["resourceVersion"]:
            last_seen_write = now
        item = assess(obj, True, tracker.get(obj), now, quiet, 0.0)
        if item["acknowledged"]:
            assert now - last_seen_write >= quiet - 1e-9
            # every write made so far happened at least the quiet period before the acknowledgement
            assert all(w <= now - quiet + 1e-9 for w in writes if w <= now)
            return
        now += poll
    raise AssertionError("never acknowledged")


FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
def test_replay_of_a_recorded_pause(version):
    """Objects recorded from minicloud's CAPI emulator every half second after spec.paused was set
    (provider block-move with a 2 s delay): the pause is done exactly when the last block-move goes."""
    with open(os.path.join(FIXTURES, "pause_timeline_%s.json" % version)) as handle:
        timeline = json.load(handle)["timeline"]
    tracker = Tracker()
    tracker.observe(timeline[0]["objects"], 0.0)   # before the pause
    first_done = None
    for snapshot in timeline[1:]:
        now = snapshot["t"]
        tracker.observe(snapshot["objects"], now)
        items = dict((i["kind"], i) for i in
                     (assess(o, True, tracker.get(o), now, 30.0, 0.0) for o in snapshot["objects"]))
        block_move = any(BLOCK_MOVE in (o["metadata"].get("annotations") or {}) for o in snapshot["objects"])
        assert items["OpenStackCluster"]["acknowledged"] is not block_move
        if version == "v1beta1":
            condition = items["Cluster"]["paused_condition"]
            assert condition is None or condition["location"] == "status.v1beta2.conditions"
        if judge(list(items.values())).state == DONE and first_done is None:
            first_done = now
            assert "removed by its provider" in items["OpenStackMachine"]["how"]
            assert "observedGeneration" in items["Cluster"]["how"]
    assert first_done is not None and 2.0 <= first_done < 3.0
