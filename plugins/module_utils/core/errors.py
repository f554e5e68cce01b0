# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's own error classes, in one place.

Services, plans and clients raise these; none of them knows about Ansible.  The module base
(``core.module_base``) turns every ``FlightcontrolError`` into a module failure with the error's message
and its ``data`` as result fields, so a user never sees a traceback for them.
"""

from __future__ import annotations

from typing import Any


class FlightcontrolError(Exception):
    """An error with a message a person can act on; ``data`` goes into the failed result."""

    def __init__(self, message: str, **data: Any) -> None:
        super().__init__(message)
        self.data = data


class ModuleFailure(FlightcontrolError):
    """Raised by a runner to fail with a message and result data."""


class ResolveError(FlightcontrolError):
    """A named object does not exist or is ambiguous: terminal, with a message a person can act on."""


class NotServed(FlightcontrolError):
    """The API does not serve what the module needs (a group, version or kind)."""


class UnreachableError(FlightcontrolError):
    """An API did not answer (connection errors until the deadline)."""


class DeadlineExceeded(FlightcontrolError):
    """A transient fault persisted until the caller's deadline; ``last_error`` is the fault."""

    def __init__(self, message: str, last_error: BaseException | None = None, attempts: int = 0) -> None:
        super().__init__(message)
        self.last_error = last_error
        self.attempts = attempts


class PlanError(FlightcontrolError, ValueError):
    """Input a pure plan cannot work with (malformed CIDRs, nodes, patterns)."""


class RuleError(PlanError):
    """A security-group rule (or server pattern) Neutron would refuse, or that is ambiguous."""


# -- Neutron route writes ---------------------------------------------------------------------------

class RouteRejected(FlightcontrolError):
    """Neutron refused a route change (HTTP 400 other than the route limit)."""

    def __init__(self, message: str, status: int | None = None, kind: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind


class RouteLimitReached(FlightcontrolError):
    """Neutron refused a route change because the router's route limit is reached."""


class RouterChanged(FlightcontrolError):
    """A plain router update lost the race (HTTP 412): the router must be read again. ``after_lost_answer``:
    the 412 came after an attempt whose answer was lost, so the new revision may be our own update."""

    def __init__(self, message: str, after_lost_answer: bool = False) -> None:
        super().__init__(message)
        self.after_lost_answer = after_lost_answer


class KeptChanging(FlightcontrolError):
    """An If-Match update was refused (HTTP 412) on every attempt: the object kept changing under it."""

    def __init__(self, message: str, current: Any = None, attempts: int = 0) -> None:
        super().__init__(message)
        self.current = current
        self.attempts = attempts
