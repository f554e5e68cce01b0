# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Updates that must not lose a concurrent change: sent with ``If-Match: revision_number=N``; on HTTP 412
the object is read again and the update computed anew from what it holds now."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import KeptChanging
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.retry import IDEMPOTENT, WriteTrace
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.http import http_status

if TYPE_CHECKING:
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline

#: How many times an update is sent before the object counts as changing too often to update.
IF_MATCH_ATTEMPTS = 5
#: What ``send`` returns for a 412 that came after an attempt whose answer was lost: the revision may have
#: moved on because of our own update.
LOST_ANSWER = "412 after a lost answer"


def if_match_put(client: Any, send: Callable[[], Any], what: str, deadline: Deadline) -> Any:
    """One If-Match PUT under the retry policy (a replay is harmless: it fails 412 if anything changed).
    The updated object; None on 412; ``LOST_ANSWER`` on a 412 after an attempt whose answer was lost."""
    trace = WriteTrace()
    try:
        return client.call(send, what, deadline, kind=IDEMPOTENT, trace=trace)
    except Exception as exc:  # pylint: disable=broad-except
        if http_status(exc) == 412:
            return LOST_ANSWER if trace.maybe_committed else None
        raise


def update_with_reread(current: dict[str, Any], compute: Callable[[dict[str, Any]], Any],
                       send: Callable[[dict[str, Any], Any], Any], reread: Callable[[dict[str, Any]], dict[str, Any]],
                       on_conflict: Optional[Callable[[dict[str, Any]], None]] = None,
                       attempts: int = IF_MATCH_ATTEMPTS) -> tuple[dict[str, Any], bool, int]:
    """Update ``current`` (a dict with ``revision_number``) until the service takes it.

    ``compute(obj)`` is the new value for the object as it is, or None when there is nothing left to do;
    ``send(obj, value)`` sends it with If-Match on ``obj``'s revision and returns the updated object, or
    None on 412 (``LOST_ANSWER`` when the 412 came after our own attempt's lost answer: if the object read
    again needs nothing more, the update was ours and counts as sent); ``reread(obj)`` reads the object
    again; ``on_conflict(obj)`` is told of each 412 that was somebody else's change, with the object read
    again. Returns (object, sent, attempts): the updated object and True, or the object as last
    read and False when nothing was (or is any longer) to do. KeptChanging (with the last object read) when
    ``attempts`` updates were refused and the object still needs the update."""
    for attempt in range(1, attempts + 1):
        value = compute(current)
        if value is None:
            return current, False, attempt - 1
        updated = send(current, value)
        if updated is not None and updated is not LOST_ANSWER:
            return updated, True, attempt
        current = reread(current)
        if updated is LOST_ANSWER and compute(current) is None:
            return current, True, attempt  # our update: its answer was lost, the replay met its revision
        if on_conflict is not None:
            on_conflict(current)
    if compute(current) is None:
        return current, False, attempts
    raise KeptChanging(f"{attempts} updates were refused with HTTP 412", current=current, attempts=attempts)
