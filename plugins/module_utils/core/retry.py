# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One retry policy for every API call a module makes.

Transient faults (HTTP 429 honouring Retry-After, 502/503/504, connection errors and resets) are
retried with jittered exponential backoff; an expired token (HTTP 401) gets exactly one re-auth;
everything else is terminal and raised at once.  A retry never sleeps past the caller's deadline:
when the next wait would cross it, the last fault is raised with the reason.

Each call has an idempotency class, as amazon.aws marks its retried calls:

- ``READ``: retried on every transient fault.
- ``IDEMPOTENT``: a write whose replay is harmless (PUT with If-Match, DELETE where 404 means done,
  Neutron's extraroute add/remove, a Kubernetes merge patch of one field): retried too, but a fault that
  may have come after the service committed (``Fault.maybe_committed``: 502, 504, a connection dropped or
  timed out after the request was sent) is written down in the call's ``WriteTrace``, so that the caller
  reads a 404, 409 or 412 of the replay as the answer to its own first attempt.
- ``CREATE``: never replayed after such a fault: ``MaybeCommitted`` is raised instead, and the caller
  looks for what it asked for (``core.idempotency.create_or_adopt``). Faults that come before the
  service saw the request (429, 503, a connection refused) are retried as for a read.

Every write (any call whose class is not ``READ``) is written down in ``RetryPolicy.writes`` as it ends:
``done`` when the service answered it, ``unknown`` when it failed after a fault that may have come after
the service committed. The module base reads that ledger when a run fails, so a failure after a write
still says ``changed: true`` and what was written, whichever runner made it.

The policy is plain Python with an injectable clock and random source, so it is unit-tested without
a cloud.  Classification of exceptions is done by ``classify``, a pure function over the status code
and headers that callers extract from whatever library raised.
"""

from __future__ import annotations

import email.utils
import random
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, cast

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.clock import Clock
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import (
    DeadlineExceeded,
    FlightcontrolError,
)

if TYPE_CHECKING:
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline

TRANSIENT_STATUS = frozenset([429, 502, 503, 504])
# A gateway's answer that may come after the service behind it did the work.
MAYBE_COMMITTED_STATUS = frozenset([502, 504])

READ = "read"
IDEMPOTENT = "idempotent"
CREATE = "create"

RETRY = "retry"
REAUTH = "reauth"
FATAL = "fatal"


@dataclass(eq=False)
class Fault:
    """What a failed call looked like, independent of the client library that raised it.

    ``before_sending``: the connection failed before the request went out (refused, connect timeout), so
    the service cannot have seen it. ``maybe_committed`` says whether the service may have done the
    request all the same."""

    status: int | None = None
    retry_after: float | None = None
    connection_error: bool = False
    description: str = ""
    before_sending: bool = False

    @property
    def maybe_committed(self) -> bool:
        if self.connection_error:
            return not self.before_sending
        return self.status in MAYBE_COMMITTED_STATUS


@dataclass(eq=False)
class WriteTrace:
    """What the attempts of one write met: ``maybe_committed`` once any fault left it unknown whether an
    attempt was done (then a 404 of a DELETE, a 409 of a create or a 412 of an If-Match PUT may be the
    answer to our own earlier attempt, not somebody else's change)."""

    maybe_committed: bool = False
    faults: list[str] = field(default_factory=list)

    def saw(self, fault: Fault) -> None:
        self.faults.append(fault.description)
        if fault.maybe_committed:
            self.maybe_committed = True


class MaybeCommitted(FlightcontrolError):
    """A create met a fault after which it may or may not have been done; it was not sent again."""

    def __init__(self, message: str, fault: Fault | None = None, last_error: BaseException | None = None) -> None:
        super().__init__(message)
        self.fault = fault
        self.last_error = last_error


def parse_retry_after(value: object, now_epoch: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP-date), or None."""
    if value is None:
        return None
    value = str(value).strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    now_epoch = time.time() if now_epoch is None else now_epoch
    return max(0.0, when.timestamp() - now_epoch)


def classify(fault: Fault, can_reauth: bool) -> str:
    """Decide what to do with a fault: RETRY, REAUTH (only while ``can_reauth``) or FATAL."""
    if fault.connection_error:
        return RETRY
    if fault.status in TRANSIENT_STATUS:
        return RETRY
    if fault.status == 401 and can_reauth:
        return REAUTH
    return FATAL


class RetryPolicy:
    """Jittered exponential backoff ("full jitter", as amazon.aws and the AWS architecture blog do).

    ``delay(attempt)`` is uniform in [0, min(max_delay, base * 2**attempt)]; a Retry-After from the
    server is a floor, never shortened by jitter.
    """

    def __init__(self, base_delay: float = 0.5, max_delay: float = 20.0, clock: Clock | None = None,
                 rng: random.Random | None = None) -> None:
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.clock = clock or Clock()
        self.rng = rng or random.Random()
        self.retried: list[int | str] = []
        self.writes: list[dict[str, str]] = []

    def _record_write(self, what: str, kind: str, outcome: str) -> None:
        if kind != READ:
            self.writes.append(dict(call=what, outcome=outcome))

    def backoff(self, attempt: int, retry_after: float | None = None) -> float:
        ceiling = min(self.max_delay, self.base_delay * (2 ** attempt))
        delay = self.rng.uniform(0, ceiling)
        if retry_after is not None:
            delay = max(delay, retry_after)
        return delay

    def call(self, func: Callable[[], Any], describe_fault: Callable[[BaseException], Fault | None],
             deadline: Deadline, reauth: Callable[[], Any] | None = None, what: str = "API call", kind: str = READ,
             trace: WriteTrace | None = None) -> Any:
        """Run ``func()`` until it succeeds, a fault is terminal, or the deadline is reached.

        ``kind`` is the call's idempotency class (``READ``, ``IDEMPOTENT``, ``CREATE``); ``trace``, a
        ``WriteTrace``, records the faults every attempt met (the caller reads it after the call, whether
        it returned or raised).

        A backoff that would cross the deadline is shortened to end at it, for one last attempt; a
        Retry-After that crosses it ends the call at once (the server said it will not be ready).

        ``describe_fault(exc)`` returns a ``Fault`` for exceptions worth looking at, or None for
        exceptions that are not API faults (they propagate unchanged).  ``deadline`` is the run's
        ``core.deadline.Deadline`` (or one a step made from it).  ``reauth()`` drops the cached token and is called at most once; pass
        None when the client library already renews an expired token itself (keystoneauth does).
        Every retried fault is recorded in ``self.retried`` (status or "connection") for results, every write
        in ``self.writes`` (``done``, or ``unknown`` when it failed after a fault that may have come after the
        service committed).
        """
        seen = WriteTrace()
        try:
            answer = self._attempts(func, describe_fault, deadline, reauth, what, kind, trace, seen)
        except Exception:
            if seen.maybe_committed:
                self._record_write(what, kind, "unknown")
            raise
        self._record_write(what, kind, "done")
        return answer

    def _attempts(self, func: Callable[[], Any], describe_fault: Callable[[BaseException], Fault | None],
                  deadline: Deadline, reauth: Callable[[], Any] | None, what: str, kind: str,
                  trace: WriteTrace | None, seen: WriteTrace) -> Any:
        attempt = 0
        reauth_done = False
        while True:
            try:
                return func()
            except Exception as exc:  # pylint: disable=broad-except
                fault = describe_fault(exc)
                if fault is None:
                    raise
                seen.saw(fault)
                decision = classify(fault, can_reauth=reauth is not None and not reauth_done)
                if decision == FATAL:
                    raise
                if trace is not None:
                    trace.saw(fault)
                if kind == CREATE and decision == RETRY and fault.maybe_committed:
                    raise MaybeCommitted(
                        f"{what} met a fault after which it may have been done ({fault.description}); it was not sent again", fault=fault, last_error=exc)
                if decision == REAUTH:
                    reauth_done = True
                    cast(Callable[[], Any], reauth)()  # classify gives REAUTH only when there is one
                    continue
                delay = self.backoff(attempt, fault.retry_after)
                remaining = deadline.remaining()
                if fault.retry_after is not None and fault.retry_after > remaining:
                    raise DeadlineExceeded(
                        f"{what} failed with a transient fault ({fault.description}) and the server asked to retry "
                        f"after {fault.retry_after:.1f} s but only {max(0.0, remaining):.1f} s are left before the "
                        f"deadline (attempt {attempt + 1})",
                        last_error=exc, attempts=attempt + 1)
                if remaining <= 0:
                    raise DeadlineExceeded(
                        f"{what} failed with a transient fault ({fault.description}) until the deadline (attempt "
                        f"{attempt + 1})",
                        last_error=exc, attempts=attempt + 1)
                delay = min(delay, remaining)
                self.retried.append(fault.status if fault.status is not None else "connection")
                self.clock.sleep(delay)
                attempt += 1
