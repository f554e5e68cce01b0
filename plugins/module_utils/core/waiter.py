# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one waiting loop every module uses.

A wait is a ``probe`` (reads the world once, returns plain data, writes nothing), optionally an ``act``
step (makes the writes the observation calls for and returns what to judge), and a ``judge`` function
(pure: observation and elapsed seconds in, ``Verdict`` out).  The loop owns time: it polls until the verdict
is DONE or FAILED, or the run's ``Deadline`` passes, and it never sleeps past it.  The clock is
injectable (``monotonic()`` and ``sleep()``), so waits are unit-tested in microseconds.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.clock import Clock

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import DeadlineExceeded

DONE = "done"
FAILED = "failed"
WAITING = "waiting"


@dataclass(eq=False)
class Verdict:
    """The decision about one observation."""

    state: str
    message: str = ""

    def __post_init__(self) -> None:
        if self.state not in (DONE, FAILED, WAITING):
            raise ValueError(f"unknown verdict state {self.state!r}")

    @property
    def finished(self) -> bool:
        return self.state in (DONE, FAILED)

    def __repr__(self) -> str:
        return f"Verdict({self.state}, {self.message!r})"


@dataclass(eq=False)
class WaitResult:
    """How a wait ended: the last verdict and observation, whether it timed out, polls, elapsed."""

    verdict: Verdict
    observation: Any
    timed_out: bool
    polls: int
    elapsed: float
    # when the deadline passed inside a poll (a request still in flight), what said so; the verdict and
    # observation are then the last completed poll's
    interrupted: str = ""

    @property
    def succeeded(self) -> bool:
        return self.verdict.state == DONE and not self.timed_out

    @property
    def interrupted_text(self) -> str:
        """A sentence for failure messages when a request was cut at the deadline ("" otherwise)."""
        return f" The poll in flight at the deadline did not finish: {self.interrupted}." if self.interrupted else ""


def wait_for(probe: Callable[[Deadline], Any], judge: Callable[[Any, float], Verdict], deadline: Deadline,
             poll_interval: float, clock: Clock | None = None,
             act: Callable[[Any, Deadline], Any] | None = None) -> WaitResult:
    """Poll ``probe(deadline)`` and ``judge(observation, elapsed)`` until finished or ``deadline`` (the run's
    ``core.deadline.Deadline``) passes.

    ``act(observation, deadline)``, when given, runs after every probe: it is the one place a wait
    writes (holds, releases, deletions), and returns the observation to judge (read again after its
    writes, or a decision about it).

    ``elapsed`` counts from the run's start (``deadline.started``), so time already spent (resolving names, say)
    counts against the timeout. The probe receives the deadline so its own retries stay inside it. ``clock``
    (by default the deadline's) is the one the loop sleeps on: a clock that wakes early on a watch's events.
    At least one probe always runs, even with no time left: a wait never reports on a guess.

    When the deadline passes inside a later probe (it raises ``DeadlineExceeded``: a read still in flight), the
    wait has timed out like any other: the result is the last completed poll's verdict and observation,
    ``timed_out``, and ``interrupted`` says which request was cut. A first probe that never completes raises, and
    so does ``act``: a write cut at the deadline may have gone through, and only its caller knows what that means.
    """
    if poll_interval <= 0:
        raise ValueError("poll_interval must be positive")
    clock = clock or deadline.clock
    polls = 0
    last: WaitResult | None = None
    while True:
        try:
            observation = probe(deadline)
        except DeadlineExceeded as exc:
            if last is None:
                raise
            return replace(last, elapsed=clock.monotonic() - deadline.started, interrupted=str(exc))
        if act is not None:
            observation = act(observation, deadline)
        polls += 1
        now = clock.monotonic()
        verdict = judge(observation, now - deadline.started)
        if verdict.finished:
            return WaitResult(verdict, observation, False, polls, now - deadline.started)
        last = WaitResult(verdict, observation, True, polls, now - deadline.started)
        remaining = deadline.at - now
        if remaining <= 0:
            return last
        clock.sleep(min(poll_interval, remaining))
