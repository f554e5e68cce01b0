# -*- coding: utf-8 -*-

import random

import pytest

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import DeadlineExceeded
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.retry import (
    classify,
    FATAL,
    Fault,
    parse_retry_after,
    REAUTH,
    RETRY,
    RetryPolicy,
)

from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils.fakes import FakeClock, scripted


class Boom(Exception):
    def __init__(self, status=None, retry_after=None, connection=False):
        super(Boom, self).__init__("boom %s" % status)
        self.fault = Fault(status=status, retry_after=retry_after, connection_error=connection,
                           description="HTTP %s" % status)


def describe(exc):
    return getattr(exc, "fault", None)


@pytest.mark.parametrize("status,expected", [
    (429, RETRY), (502, RETRY), (503, RETRY), (504, RETRY),
    (400, FATAL), (403, FATAL), (404, FATAL), (409, FATAL), (500, FATAL), (401, REAUTH),
])
def test_classify_by_status(status, expected):
    assert classify(Fault(status=status), can_reauth=True) == expected


def test_classify_401_without_reauth_is_fatal_and_connection_errors_retry():
    assert classify(Fault(status=401), can_reauth=False) == FATAL
    assert classify(Fault(connection_error=True), can_reauth=False) == RETRY


def test_parse_retry_after_seconds_and_http_date():
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after(" 2.5 ") == 2.5
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    # 1 Jan 2030 00:00:10 GMT, seen from 00:00:00
    assert parse_retry_after("Tue, 01 Jan 2030 00:00:10 GMT", now_epoch=1893456000) == 10.0
    assert parse_retry_after("Tue, 01 Jan 2030 00:00:10 GMT", now_epoch=1893456100) == 0.0


def test_retries_transient_faults_then_returns():
    clock = FakeClock()
    policy = RetryPolicy(clock=clock, rng=random.Random(1))
    func = scripted(Boom(503), Boom(502), Boom(connection=True), "ok")
    assert policy.call(func, describe, deadline=Deadline.after(clock, 60)) == "ok"
    assert len(func.calls) == 4
    assert policy.retried == [503, 502, "connection"]
    assert len(clock.sleeps) == 3


def test_retry_after_is_a_floor_for_the_wait():
    clock = FakeClock()
    policy = RetryPolicy(base_delay=0.1, clock=clock, rng=random.Random(2))
    func = scripted(Boom(429, retry_after=4.0), "ok")
    policy.call(func, describe, deadline=Deadline.after(clock, 60))
    assert clock.sleeps == [4.0]


def test_never_sleeps_past_the_deadline():
    clock = FakeClock()
    policy = RetryPolicy(clock=clock, rng=random.Random(3))
    func = scripted(Boom(429, retry_after=30.0), "ok")
    with pytest.raises(DeadlineExceeded) as info:
        policy.call(func, describe, deadline=Deadline.after(clock, 10), what="list members")
    assert clock.sleeps == []
    assert "retry after 30.0 s" in str(info.value)
    assert "list members" in str(info.value)
    assert info.value.last_error is not None


def test_last_backoff_is_shortened_to_end_at_the_deadline():
    clock = FakeClock()
    policy = RetryPolicy(base_delay=8.0, max_delay=8.0, clock=clock, rng=random.Random(5))
    calls = []

    def always_503():
        calls.append(clock.now)
        raise Boom(503)

    start = clock.now
    with pytest.raises(DeadlineExceeded) as info:
        policy.call(always_503, describe, deadline=Deadline.after(clock, 10, start))
    assert clock.now == start + 10
    assert calls[-1] == start + 10, "the last attempt is made at the deadline, not before it"
    assert "until the deadline" in str(info.value)


def test_backoff_grows_and_is_capped():
    policy = RetryPolicy(base_delay=1.0, max_delay=8.0, clock=FakeClock(), rng=random.Random(4))
    for attempt in range(10):
        delays = [policy.backoff(attempt) for _draw in range(200)]
        ceiling = min(8.0, 2 ** attempt)
        assert all(0 <= d <= ceiling for d in delays)
        # full jitter: spread over the whole range, so the mean is near half the ceiling
        assert ceiling * 0.35 < sum(delays) / len(delays) < ceiling * 0.65


def test_terminal_fault_raises_at_once():
    clock = FakeClock()
    policy = RetryPolicy(clock=clock)
    func = scripted(Boom(400), "never")
    with pytest.raises(Boom):
        policy.call(func, describe, deadline=Deadline.after(clock, 60))
    assert len(func.calls) == 1
    assert clock.sleeps == []


def test_expired_token_gets_exactly_one_reauth():
    clock = FakeClock()
    policy = RetryPolicy(clock=clock)
    reauths = []
    func = scripted(Boom(401), "ok")
    assert policy.call(func, describe, deadline=Deadline.after(clock, 60), reauth=lambda: reauths.append(1)) == "ok"
    assert reauths == [1]
    func = scripted(Boom(401), Boom(401), "never")
    with pytest.raises(Boom):
        policy.call(func, describe, deadline=Deadline.after(clock, 60), reauth=lambda: reauths.append(1))
    assert len(func.calls) == 2
    assert reauths == [1, 1]


def test_without_a_reauth_callback_401_is_terminal():
    clock = FakeClock()
    policy = RetryPolicy(clock=clock)
    func = scripted(Boom(401), "never")
    with pytest.raises(Boom):
        policy.call(func, describe, deadline=Deadline.after(clock, 1000))
    assert len(func.calls) == 1


def test_exceptions_that_are_no_api_fault_propagate_untouched():
    clock = FakeClock()
    policy = RetryPolicy(clock=clock)
    func = scripted(KeyError("x"))
    with pytest.raises(KeyError):
        policy.call(func, describe, deadline=Deadline.after(clock, 1000))
