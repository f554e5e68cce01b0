# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Creates that are never sent twice blindly.

Neutron and Octavia take no idempotency key: a create whose answer was lost (a gateway's 504 after the
service committed, a connection dropped on the way back, a client timeout while the service worked) may
or may not have made the object, and sending it again can make a second one (two security groups of one
name: every later run fails as "ambiguous"). ``create_or_adopt`` sends the create under the ``CREATE``
class of the retry policy, which raises ``MaybeCommitted`` instead of replaying after such a fault; then it
looks for what it asked for (by name, by the rule's tuple, by the member's address and port) and adopts
what it finds as its own. It sends the create again only when looking for ``settle`` seconds found
nothing: the time one request is given (``api_timeout``) has passed once more since the fault, so an
attempt still being worked on by the service had that long to show.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import DeadlineExceeded
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.retry import MaybeCommitted

if TYPE_CHECKING:
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline

FIRST_LOOK_INTERVAL = 0.25
LONGEST_LOOK_INTERVAL = 2.0


@dataclass(eq=False)
class Created:
    """The object a create made: ``adopted`` when it was found after a lost answer rather than returned by the
    create itself (it is ours all the same: nothing else asked for it in this run); ``lost_answers`` counts
    the faults after which the create's fate was unknown."""

    value: Any
    adopted: bool = False
    lost_answers: int = 0


def create_or_adopt(send: Callable[[], Any], find: Callable[[], Any], deadline: Deadline, settle: float,
                    what: str = "create", on_lost: Callable[[MaybeCommitted], Any] | None = None) -> Created:
    """Run ``send()`` (a create under the ``CREATE`` class); after ``MaybeCommitted``, call ``find()`` (a read
    returning the object or None) until it finds the object or ``settle`` seconds passed, then send again.
    ``on_lost(exc)`` is told of each ``MaybeCommitted``.

    Returns a ``Created``. Raises ``DeadlineExceeded`` when the deadline (a ``core.deadline.Deadline``) comes
    first: then the create may still have been done, and a re-run finds it."""
    lost = 0
    while True:
        try:
            return Created(send(), lost_answers=lost)
        except MaybeCommitted as exc:
            lost += 1
            if on_lost is not None:
                on_lost(exc)
            found = _look(find, deadline.within(settle, "looking for what a create whose answer was lost made"))
            if found is not None:
                return Created(found, adopted=True, lost_answers=lost)
            if deadline.expired():
                raise DeadlineExceeded(
                    f"{what}: its answer was lost ({exc.fault.description if exc.fault else exc}) and it was not found "
                    "before the deadline; it may still be done by the service, and a re-run finds it",
                    last_error=exc.last_error, attempts=lost)


def _look(find: Callable[[], Any], until: Deadline) -> Any:
    """``find()`` until it returns something or ``until`` (a ``Deadline``) passes; the object or None."""
    interval = FIRST_LOOK_INTERVAL
    while True:
        found = find()
        if found is not None:
            return found
        if until.expired():
            return None
        until.clock.sleep(min(interval, until.remaining()))
        interval = min(LONGEST_LOOK_INTERVAL, interval * 2)
