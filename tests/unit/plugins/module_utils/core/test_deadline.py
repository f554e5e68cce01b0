# -*- coding: utf-8 -*-
"""The run's one deadline (``core.deadline``) and the request guard both API clients share
(``core.request_guard``)."""

import threading

import pytest

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import (
    Deadline,
    LAST_REQUEST_SECONDS,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.module_base import run_deadline
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.request_guard import RequestGuard

from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils.fakes import FakeClock


def test_a_deadline_counts_from_the_start_it_is_given():
    clock = FakeClock(start=100.0)
    deadline = Deadline.after(clock, 60, started=95.0)
    assert (deadline.at, deadline.timeout) == (155.0, 60)
    assert deadline.remaining() == 55.0 and deadline.elapsed() == 5.0 and not deadline.expired()
    clock.now = 155.0
    assert deadline.remaining() == 0.0 and deadline.expired()
    clock.now = 170.0
    assert deadline.remaining() == 0.0, "never negative"


def test_clamp_cuts_a_request_to_what_remains_but_leaves_the_last_one_a_moment():
    clock = FakeClock(start=100.0)
    deadline = Deadline.after(clock, 10)
    assert deadline.clamp(30) == 10.0
    assert deadline.clamp(4) == 4
    assert deadline.clamp(None) == 10.0
    assert deadline.clamp_timeout((5, 60)) == (5, 10.0)
    assert deadline.clamp_timeout((None, 3)) == (10.0, 3)
    clock.now = 120.0
    assert deadline.clamp(30) == LAST_REQUEST_SECONDS


def test_within_never_goes_past_the_run_and_extended_never_ends_sooner():
    clock = FakeClock(start=100.0)
    deadline = Deadline.after(clock, 60)
    short = deadline.within(10, "first contact")
    assert (short.at, short.reason, short.started) == (110.0, "first contact", 100.0)
    assert deadline.within(600, "x").at == 160.0
    clock.now = 158.0
    restore = deadline.extended(30, "restore")
    assert (restore.at, restore.reason) == (188.0, "restore"), "past the run's deadline, by a named step"
    clock.now = 100.0
    assert deadline.extended(30, "restore").at == 160.0, "an extension never shortens the run's deadline"
    assert deadline.reason == "" and deadline.at == 160.0, "a deadline is a value: the run's is unchanged"


@pytest.mark.parametrize("timeout, seconds", [(300, 300), (1, 1), (None, 30 * 24 * 3600),
                                              (float("nan"), 30 * 24 * 3600), (float("inf"), 30 * 24 * 3600)])
def test_the_module_base_makes_the_run_deadline_from_timeout(timeout, seconds):
    clock = FakeClock(start=100.0)
    deadline = run_deadline(clock, 90.0, timeout)
    assert deadline.started == 90.0 and deadline.at == 90.0 + seconds


def test_the_guard_counts_and_clamps_only_inside_a_call():
    clock = FakeClock(start=100.0)
    guard = RequestGuard(default_timeout=30)
    assert guard.timeout() == 30 and guard.timeout(5) == 5 and guard.timeout((2, 40)) == (2, 40)
    with guard.bound(Deadline.after(clock, 3)):
        assert guard.timeout() == 3.0 and guard.timeout((2, 40)) == (2, 3.0)
        clock.now = 110.0
        assert guard.timeout() == LAST_REQUEST_SECONDS
    assert guard.deadline is None and guard.timeout() == 30
    guard.sent()
    guard.sent()
    assert guard.total == 2


def test_each_thread_keeps_the_deadline_of_its_own_call():
    """A watch ending its call in another thread must not lift the cap of the call this thread is making."""
    clock = FakeClock(start=100.0)
    guard = RequestGuard(default_timeout=30)
    with guard.bound(Deadline.after(clock, 3)):
        def other_call():
            with guard.bound(Deadline.after(clock, 20)):
                pass
        thread = threading.Thread(target=other_call)
        thread.start()
        thread.join()
        assert guard.timeout() == 3.0
