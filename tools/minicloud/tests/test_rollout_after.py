"""KCP's rollout time (v1beta1 ``spec.rolloutAfter``, v1beta2 ``spec.rollout.after``) outdates older Machines (pure)."""

from __future__ import annotations

import datetime

from minicloud.kube.controllers.kcp import machine_view
from minicloud.kube.controllers.rollout import outdated_by_time, rollout_after, rollout_after_due

NOW = datetime.datetime(2025, 6, 1, 12, 0, 0, tzinfo=datetime.timezone.utc)


def test_rollout_time_in_both_contracts():
    assert rollout_after({"rolloutAfter": "2025-06-01T11:00:00Z"}) == "2025-06-01T11:00:00Z"
    assert rollout_after({"rollout": {"after": "2025-06-01T11:00:00Z"}}) == "2025-06-01T11:00:00Z"
    assert rollout_after({}) is None and rollout_after(None) is None


def test_a_passed_rollout_time_outdates_machines_created_before_it():
    after = "2025-06-01T11:00:00Z"
    assert rollout_after_due(after, NOW)
    assert outdated_by_time("2025-06-01T10:59:59Z", after, NOW)
    assert not outdated_by_time("2025-06-01T11:00:00Z", after, NOW)
    assert not outdated_by_time("2025-06-01T11:30:00Z", after, NOW)


def test_a_future_or_missing_rollout_time_outdates_nothing():
    assert not rollout_after_due("2025-06-01T13:00:00Z", NOW)
    assert not outdated_by_time("2025-01-01T00:00:00Z", "2025-06-01T13:00:00Z", NOW)
    assert not outdated_by_time("2025-01-01T00:00:00Z", None, NOW)
    assert not outdated_by_time("2025-01-01T00:00:00Z", "not a time", NOW)


def test_offsets_and_fractions_are_read():
    assert outdated_by_time("2025-06-01T10:59:59.5Z", "2025-06-01T13:00:00+02:00", NOW)


def test_machine_view_combines_annotation_and_rollout_time():
    old = {"metadata": {"name": "cp-a", "creationTimestamp": "2020-01-01T00:00:00Z"}}
    past = "2021-01-01T00:00:00Z"
    assert machine_view(old, 0).up_to_date
    assert not machine_view(old, 0, past).up_to_date
    newer = {"metadata": {"name": "cp-b", "creationTimestamp": "2022-01-01T00:00:00Z"}}
    assert machine_view(newer, 0, past).up_to_date
    assert not machine_view(newer, 1, past).up_to_date  # the annotation still counts
