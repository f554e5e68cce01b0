# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one deadline of a run.

The module base makes a ``Deadline`` once, from the module's ``timeout`` counted from the moment the module was
made (``BaseModule.deadline``); the runner, the services, the retry policy, the waiting loop
(``core.waiter.wait_for``) and the request guard of both API clients (``core.request_guard``) are handed that
value and ask it what they need: ``remaining()``, ``expired()``, ``clamp(request_timeout)`` (one request's own
timeout, cut to what remains). Nothing else adds seconds to the clock.

A step that must end sooner than the run takes ``within(seconds, reason)``: a create's search for what it made
(``core.idempotency``), the first contact with a Kubernetes API. A step that is given time past the run's
deadline on purpose takes ``extended(seconds, reason)``, named as such, and each is listed in
docs/reliability.md: ``rollout_guard`` putting drained members back in rotation after a run stopped, and releasing
the pre-terminate hook of Machines whose server it stopped. Plugins that are not modules (the inventory, the
event source) make their own with ``Deadline.after``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.clock import Clock

#: A request started at (or just before) the deadline still gets this long to answer.
LAST_REQUEST_SECONDS = 1.0

Timeout = Union[None, float, tuple]


@dataclass(frozen=True)
class Deadline:
    """An instant on ``clock.monotonic()`` (``at``) by which a run, or one deliberate step of it, ends.

    ``started`` is when the run began (``elapsed()`` counts from it); ``reason`` is empty for the run's own
    deadline and names the step for a deadline made by ``extended`` or ``within``."""

    started: float
    at: float
    clock: Clock = field(compare=False, repr=False)
    reason: str = ""

    @classmethod
    def after(cls, clock: Clock, seconds: float, started: float | None = None) -> Deadline:
        """The deadline ``seconds`` after ``started`` (by default now)."""
        start = clock.monotonic() if started is None else started
        return cls(started=start, at=start + seconds, clock=clock)

    @property
    def timeout(self) -> float:
        """The seconds from the start to the deadline."""
        return self.at - self.started

    def remaining(self) -> float:
        """Seconds left before the deadline (zero once it passed)."""
        return max(0.0, self.at - self.clock.monotonic())

    def expired(self) -> bool:
        return self.clock.monotonic() >= self.at

    def elapsed(self) -> float:
        """Seconds since the run began."""
        return self.clock.monotonic() - self.started

    def clamp(self, request_timeout: float | None) -> float:
        """One request's own timeout: ``request_timeout`` (None: no limit of its own), at most what remains, and
        never less than ``LAST_REQUEST_SECONDS`` (a request started at the deadline still gets an answer's time)."""
        cap = max(LAST_REQUEST_SECONDS, self.at - self.clock.monotonic())
        return cap if request_timeout is None else min(request_timeout, cap)

    def clamp_timeout(self, timeout: Timeout) -> Timeout:
        """``clamp`` over a timeout as the HTTP libraries take it: a number, None, or a ``(connect, read)`` pair
        (each part clamped; a part that is None becomes what remains)."""
        if isinstance(timeout, tuple):
            return tuple(self.clamp(part) for part in timeout)
        return self.clamp(timeout)

    def within(self, seconds: float, reason: str) -> Deadline:
        """A deadline for a step that must end within ``seconds`` from now, and never after this one."""
        return Deadline(self.started, min(self.at, self.clock.monotonic() + seconds), self.clock, reason)

    def extended(self, seconds: float, reason: str) -> Deadline:
        """A deliberate extension: a deadline for a step (named by ``reason``) that gets at least ``seconds`` from
        now, past this deadline if need be; never sooner than this one."""
        return Deadline(self.started, max(self.at, self.clock.monotonic() + seconds), self.clock, reason)
