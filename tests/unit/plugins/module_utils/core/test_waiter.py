# -*- coding: utf-8 -*-

import pytest

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.waiter import (
    DONE,
    FAILED,
    WAITING,
    Verdict,
    wait_for,
)

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import DeadlineExceeded
from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils.fakes import FakeClock


def probe_sequence(values):
    seen = []

    def probe(deadline):
        seen.append(deadline)
        return values[min(len(seen), len(values)) - 1]
    probe.seen = seen
    return probe


def by_value(observation, _elapsed):
    return Verdict(observation, "it is %s" % observation)


def test_returns_as_soon_as_done():
    clock = FakeClock()
    probe = probe_sequence([WAITING, WAITING, DONE])
    result = wait_for(probe, by_value, Deadline.after(clock, 60), poll_interval=5)
    assert result.succeeded and not result.timed_out
    assert result.polls == 3
    assert clock.sleeps == [5, 5]
    assert result.elapsed == 10


def test_failure_stops_at_once():
    clock = FakeClock()
    result = wait_for(probe_sequence([WAITING, FAILED, DONE]), by_value, Deadline.after(clock, 60), poll_interval=1)
    assert result.verdict.state == FAILED and not result.succeeded and not result.timed_out
    assert result.polls == 2


def test_times_out_without_sleeping_past_the_deadline():
    clock = FakeClock()
    result = wait_for(probe_sequence([WAITING]), by_value, Deadline.after(clock, 12), poll_interval=5)
    assert result.timed_out and not result.succeeded
    assert clock.sleeps == [5, 5, 2]
    assert result.polls == 4  # the last probe is at the deadline itself
    assert result.elapsed == 12


def test_zero_timeout_still_probes_once():
    clock = FakeClock()
    result = wait_for(probe_sequence([DONE]), by_value, Deadline.after(clock, 0), poll_interval=5)
    assert result.succeeded and result.polls == 1


def test_time_spent_before_the_wait_counts_and_probe_gets_deadline():
    clock = FakeClock(start=100.0)
    started = clock.now
    clock.now += 8
    probe = probe_sequence([WAITING])
    result = wait_for(probe, by_value, Deadline.after(clock, 10, started), poll_interval=5)
    assert result.timed_out
    assert clock.sleeps == [2]
    assert probe.seen[0].at == 110.0


def test_rejects_non_positive_interval_and_unknown_verdicts():
    with pytest.raises(ValueError):
        wait_for(probe_sequence([DONE]), by_value, Deadline.after(FakeClock(), 1), poll_interval=0)
    with pytest.raises(ValueError):
        Verdict("maybe")


def test_the_act_step_runs_after_each_probe_and_its_answer_is_judged():
    clock = FakeClock()
    events = []

    def probe(deadline):
        events.append(("look", deadline.at))
        return len(events)

    def act(observation, deadline):
        events.append(("act", observation, deadline.at))
        return DONE if observation >= 3 else WAITING

    result = wait_for(probe, by_value, Deadline.after(clock, 60), poll_interval=5, act=act)
    assert result.succeeded and result.polls == 2
    assert events == [("look", 1060.0), ("act", 1, 1060.0), ("look", 1060.0), ("act", 3, 1060.0)]
    assert result.observation == DONE, "the act step's answer is what was judged"


def slow_probe(clock, answers):
    """A probe whose third call is still in flight when the deadline passes (it spends 8 s, then raises as the
    retry layer does); ``answers`` are the first two polls'."""
    calls = []

    def probe(deadline):
        calls.append(clock.monotonic())
        if len(calls) <= len(answers):
            return answers[len(calls) - 1]
        clock.sleep(8)
        raise DeadlineExceeded("GET /v2/lbaas/pools/p/members did not answer before the deadline")
    return probe


def test_a_read_cut_by_the_deadline_is_a_timeout_on_the_last_completed_poll():
    clock = FakeClock()
    result = wait_for(slow_probe(clock, ["first", WAITING]), lambda obs, _e: Verdict(WAITING, "still " + obs),
                      Deadline.after(clock, 12), poll_interval=5)
    assert result.timed_out and not result.succeeded
    assert result.observation == WAITING and result.verdict.message == "still waiting"
    assert result.polls == 2 and result.elapsed == 18  # the third poll started at 10 s and was cut at 18 s
    assert "did not answer before the deadline" in result.interrupted
    assert result.interrupted_text.startswith(" The poll in flight at the deadline did not finish: GET ")


def test_a_first_read_cut_by_the_deadline_raises_and_a_cut_write_always_does():
    clock = FakeClock()
    with pytest.raises(DeadlineExceeded):
        wait_for(slow_probe(clock, []), by_value, Deadline.after(clock, 10), poll_interval=5)

    def cut_write(_observation, _deadline):
        raise DeadlineExceeded("DELETE of member m did not answer before the deadline")
    with pytest.raises(DeadlineExceeded, match="DELETE"):
        wait_for(probe_sequence([WAITING]), by_value, Deadline.after(clock, 10), poll_interval=5, act=cut_write)
    untimed = wait_for(probe_sequence([WAITING]), by_value, Deadline.after(clock, 0), poll_interval=5)
    assert untimed.timed_out and untimed.interrupted == "" and untimed.interrupted_text == ""
