# -*- coding: utf-8 -*-
"""The write ledger: every write a client makes is recorded, and a failure after one says changed: true."""

import random

import pytest

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.module_base import (
    RESULT_WRITES,
    describe_writes,
    written_result,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.retry import (
    CREATE,
    IDEMPOTENT,
    Fault,
    MaybeCommitted,
    RetryPolicy,
)

from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils.fakes import FakeClock, scripted


class Boom(Exception):
    def __init__(self, status=None, connection=False):
        super(Boom, self).__init__("boom %s" % status)
        self.fault = Fault(status=status, connection_error=connection, description="HTTP %s" % status)


def describe(exc):
    return getattr(exc, "fault", None)


def policy():
    clock = FakeClock()
    return RetryPolicy(clock=clock, rng=random.Random(1)), clock


def test_reads_are_not_writes_and_writes_that_answered_are_done():
    retry, clock = policy()
    retry.call(scripted("ok"), describe, Deadline.after(clock, 60), what="GET x")
    retry.call(scripted(Boom(503), "ok"), describe, Deadline.after(clock, 60), what="PATCH x", kind=IDEMPOTENT)
    assert retry.writes == [dict(call="PATCH x", outcome="done")]


def test_a_refused_write_is_not_written_and_a_lost_answer_is_unknown():
    retry, clock = policy()
    with pytest.raises(Boom):
        retry.call(scripted(Boom(403)), describe, Deadline.after(clock, 60), what="DELETE a", kind=IDEMPOTENT)
    assert retry.writes == []
    with pytest.raises(Boom):  # 504 (maybe committed), then a 404 of the replay
        retry.call(scripted(Boom(504), Boom(404)), describe, Deadline.after(clock, 60), what="DELETE b", kind=IDEMPOTENT)
    with pytest.raises(MaybeCommitted):
        retry.call(scripted(Boom(504)), describe, Deadline.after(clock, 60), what="POST c", kind=CREATE)
    assert retry.writes == [dict(call="DELETE b", outcome="unknown"), dict(call="POST c", outcome="unknown")]


def test_a_failure_after_a_write_says_changed_and_carries_what_was_written():
    writes = [dict(call="setting spec.paused=true on Cluster default/c", outcome="done")]
    result = written_result(dict(changed=False), writes, dict(cluster=dict(paused=True), diff={}))
    assert result["changed"] is True and result["writes"] == writes and result["cluster"] == dict(paused=True)
    # the failure's own fields win over what the runner recorded, and no write: nothing added
    assert written_result(dict(cluster=None), writes, dict(cluster=1))["cluster"] is None
    assert written_result(dict(changed=False), [], dict(cluster=1)) == dict(changed=False)


def test_many_writes_are_capped_in_the_result_and_the_message():
    writes = [dict(call="DELETE %d" % i, outcome="done") for i in range(RESULT_WRITES + 5)]
    result = written_result({}, writes, {})
    assert len(result["writes"]) == RESULT_WRITES and result["writes_total"] == RESULT_WRITES + 5
    words = describe_writes(writes)
    assert words.startswith("DELETE 0; DELETE 1") and words.endswith("and %d more" % (RESULT_WRITES))
