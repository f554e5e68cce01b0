# -*- coding: utf-8 -*-
"""The retry policy's idempotency classes and the adoption of a create whose answer was lost."""

import random

import pytest

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import DeadlineExceeded
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.idempotency import create_or_adopt
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.retry import (
    CREATE,
    Fault,
    IDEMPOTENT,
    MaybeCommitted,
    READ,
    RetryPolicy,
    WriteTrace,
)

from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils import fakes
from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils.fakes import FakeClock


class Boom(Exception):
    def __init__(self, fault):
        super(Boom, self).__init__(fault.description)
        self.fault = fault


def describe(exc):
    return getattr(exc, "fault", None)


GATEWAY_504 = Fault(status=504, description="HTTP 504")
RESET_AFTER_SENDING = Fault(connection_error=True, description="connection reset")
REFUSED = Fault(connection_error=True, before_sending=True, description="connection refused")
BUSY_503 = Fault(status=503, description="HTTP 503")
RATE_429 = Fault(status=429, retry_after=1, description="HTTP 429")
NOT_FOUND = Fault(status=404, description="HTTP 404")


def scripted(*outcomes):
    """``fakes.scripted`` with each ``Fault`` raised as the exception that carries it."""
    return fakes.scripted(*[Boom(o) if isinstance(o, Fault) else o for o in outcomes])


def policy():
    clock = FakeClock()
    return RetryPolicy(clock=clock, rng=random.Random(7)), clock


@pytest.mark.parametrize("fault, maybe", [
    (GATEWAY_504, True), (Fault(status=502), True), (RESET_AFTER_SENDING, True),
    (REFUSED, False), (BUSY_503, False), (RATE_429, False), (NOT_FOUND, False),
])
def test_which_faults_may_have_come_after_the_commit(fault, maybe):
    assert fault.maybe_committed is maybe


@pytest.mark.parametrize("kind", [READ, IDEMPOTENT])
def test_reads_and_idempotent_writes_are_retried_on_every_transient_fault(kind):
    retry, clock = policy()
    func = scripted(GATEWAY_504, RESET_AFTER_SENDING, BUSY_503, RATE_429, "done")
    trace = WriteTrace()
    assert retry.call(func, describe, Deadline.after(clock, 60), kind=kind, trace=trace) == "done"
    assert len(func.calls) == 5
    assert trace.maybe_committed and len(trace.faults) == 4


def test_an_idempotent_write_tells_its_caller_that_the_replays_404_may_be_its_own_doing():
    retry, clock = policy()
    func = scripted(GATEWAY_504, NOT_FOUND)
    trace = WriteTrace()
    with pytest.raises(Boom):
        retry.call(func, describe, Deadline.after(clock, 60), kind=IDEMPOTENT, trace=trace)
    assert trace.maybe_committed


def test_a_replay_after_faults_before_the_service_leaves_the_trace_clean():
    retry, clock = policy()
    func = scripted(BUSY_503, REFUSED, NOT_FOUND)
    trace = WriteTrace()
    with pytest.raises(Boom):
        retry.call(func, describe, Deadline.after(clock, 60), kind=IDEMPOTENT, trace=trace)
    assert not trace.maybe_committed and len(trace.faults) == 2


@pytest.mark.parametrize("fault", [GATEWAY_504, Fault(status=502, description="HTTP 502"), RESET_AFTER_SENDING])
def test_a_create_is_not_replayed_after_a_fault_that_may_have_come_after_the_commit(fault):
    retry, clock = policy()
    func = scripted(fault, "second")
    with pytest.raises(MaybeCommitted) as caught:
        retry.call(func, describe, Deadline.after(clock, 60), kind=CREATE, what="creating group g")
    assert len(func.calls) == 1 and caught.value.fault is fault
    assert "creating group g met a fault after which it may have been done" in str(caught.value)


def test_a_create_is_retried_after_faults_before_the_service():
    retry, clock = policy()
    func = scripted(BUSY_503, RATE_429, REFUSED, "made")
    assert retry.call(func, describe, Deadline.after(clock, 60), kind=CREATE) == "made"
    assert len(func.calls) == 4


def adopt(send, find, settle=10.0, deadline=60.0):
    retry, clock = policy()

    def create():
        return retry.call(send, describe, Deadline.after(clock, deadline), kind=CREATE)
    return create_or_adopt(create, find, Deadline.after(clock, deadline), settle), clock


def test_a_create_whose_answer_was_lost_is_found_and_adopted_without_a_second_create():
    send = scripted(GATEWAY_504, "never sent")
    looks = scripted(None, None, {"id": "sg1"})
    created, _clock = adopt(send, looks)
    assert created.value == {"id": "sg1"} and created.adopted and created.lost_answers == 1
    assert len(send.calls) == 1 and len(looks.calls) == 3


def test_a_create_is_sent_again_only_after_looking_for_the_settle_time_found_nothing():
    send = scripted(RESET_AFTER_SENDING, {"id": "sg2"})
    looks = scripted(*([None] * 50))
    created, clock = adopt(send, looks, settle=5.0)
    assert created.value == {"id": "sg2"} and not created.adopted and created.lost_answers == 1
    assert len(send.calls) == 2
    assert sum(clock.sleeps) == pytest.approx(5.0)  # looked for exactly the settle time, then sent again


def test_a_create_answered_at_once_is_not_looked_for():
    send = scripted({"id": "sg3"})
    looks = scripted()
    created, _clock = adopt(send, looks)
    assert created.value == {"id": "sg3"} and not created.adopted and created.lost_answers == 0
    assert looks.calls == []


def test_the_deadline_ends_the_looking_with_a_message_that_a_rerun_finds_it():
    send = scripted(GATEWAY_504)
    looks = scripted(*([None] * 50))
    with pytest.raises(DeadlineExceeded, match="its answer was lost .HTTP 504. and it was not found before the "
                                               "deadline; it may still be done by the service, and a re-run finds it"):
        adopt(send, looks, settle=30.0, deadline=4.0)
    assert len(send.calls) == 1
