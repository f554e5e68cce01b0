"""Operating statuses from HAProxy's ``show stat``, as Octavia's health manager maps them (pure).

The amphora's health daemon sends each server's ``status`` column; the health manager maps
``UP`` to ONLINE, ``DOWN`` to ERROR, ``DRAIN`` to DRAINING (HAProxy says DRAIN only for a server put in
drain on its socket; a server configured with weight 0 stays UP, hence ONLINE), ``MAINT`` (disabled) to OFFLINE and
``no check`` to NO_MONITOR. A transitional ``UP 1/3`` (going down) is still UP, ``DOWN 1/2`` (coming up)
still DOWN. A server whose first check has not run yet (``check_status`` INI, or empty under a
monitor) says nothing: the member keeps the status it was given when it was configured.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from minicloud.octavia_provider.modes import BACKEND_DOWN
from minicloud.octavia_provider.planner import (ACTIVE, ERROR, NO_MONITOR, OFFLINE, ONLINE, StatusUpdate,
                                                roll_up_health)
from minicloud.octavia_provider.tree import MEMBER, LbTree

DRAINING = "DRAINING"
STATUS_MAP = {"UP": ONLINE, "DOWN": ERROR, "DRAIN": DRAINING, "MAINT": OFFLINE, "NOLB": OFFLINE,
              "no check": NO_MONITOR}


@dataclass(frozen=True)
class ServerStat:
    backend: str
    server: str
    status: str
    check_status: str
    weight: int
    current_sessions: int


def parse_stat(text: str) -> list[ServerStat]:
    """The server rows of ``show stat`` (not FRONTEND/BACKEND)."""
    lines = text.splitlines()
    if not lines or not lines[0].startswith("# "):
        return []
    reader = csv.DictReader(io.StringIO("\n".join([lines[0][2:], *lines[1:]])))
    rows = []
    for row in reader:
        if row.get("svname") in (None, "FRONTEND", "BACKEND"):
            continue
        rows.append(ServerStat(backend=row["pxname"], server=row["svname"], status=row.get("status") or "",
                               check_status=row.get("check_status") or "",
                               weight=_int(row.get("weight")), current_sessions=_int(row.get("scur"))))
    return rows


def listener_statistics(text: str) -> list[dict]:
    """Each frontend (a listener) as the amphora reports listener statistics: active and total connections,
    bytes in and out, request errors."""
    lines = text.splitlines()
    if not lines or not lines[0].startswith("# "):
        return []
    result = []
    for row in csv.DictReader(io.StringIO("\n".join([lines[0][2:], *lines[1:]]))):
        if row.get("svname") == "FRONTEND":
            result.append({"id": row["pxname"], "active_connections": _int(row.get("scur")),
                           "total_connections": _int(row.get("stot")), "bytes_in": _int(row.get("bin")),
                           "bytes_out": _int(row.get("bout")), "request_errors": _int(row.get("ereq"))})
    return result


def _int(value: str | None) -> int:
    try:
        return int(value or 0)
    except ValueError:
        return 0


def operating_status(stat: ServerStat) -> str | None:
    """The member's operating_status from one server row; None while the first check has not run."""
    if stat.status == "no check":
        return NO_MONITOR
    word = stat.status.split(" ", 1)[0]
    if word in ("UP", "DOWN", "DRAIN") and stat.check_status in ("", "INI"):
        return None
    return STATUS_MAP.get(word, ERROR)


def member_statuses(stats: list[ServerStat]) -> dict[str, str]:
    """Member id -> operating status. A member served by several listeners is down if any says so."""
    order = [ERROR, OFFLINE, DRAINING, ONLINE, NO_MONITOR]
    result: dict[str, str] = {}
    for stat in stats:
        status = operating_status(stat)
        if status is None:
            continue
        known = result.get(stat.server)
        if known is None or order.index(status) < order.index(known):
            result[stat.server] = status
    return result


def sessions(stats: list[ServerStat]) -> dict[str, int]:
    """Member id -> established connections (``scur``) over all its backends."""
    result: dict[str, int] = {}
    for stat in stats:
        result[stat.server] = result.get(stat.server, 0) + stat.current_sessions
    return result


def health_update(tree: LbTree, observed: dict[str, str]) -> dict:
    """The status update that brings the database in line with what HAProxy sees.

    Only members the amphora has (ACTIVE, enabled, present in ``observed``) change; pool and load
    balancer follow as Octavia rolls member health up. A status HAProxy's configuration for the tree could not
    give is not taken (:func:`observed_in_line`): it was read from an older configuration.
    """
    update = StatusUpdate()
    changed: dict[str, str] = {}
    for member in tree.of_kind(MEMBER):
        wanted = observed.get(member.id)
        if wanted is None or member.provisioning_status != ACTIVE or not member.admin_state_up:
            continue
        if not observed_in_line(wanted, tree.monitor_of(member.parent_id) is not None):
            continue
        if wanted != member.operating_status:
            update.set(member, operating=wanted)
            changed[member.id] = wanted
    roll_up_health(tree, changed, update)
    return update.to_dict()


def observed_in_line(status: str, monitored: bool) -> bool:
    """Whether HAProxy, configured for an enabled member of a pool with (``monitored``) or without a health
    monitor, can say ``status``: ``no check`` (NO_MONITOR) only without a monitor, a check's verdict (ONLINE,
    ERROR) only with one, and MAINT (OFFLINE) never, since only a disabled member is in maintenance. Anything else
    comes from the configuration before the last change (the observation was made before the reload, or the old
    worker answered), and taking it would undo the status the change was given: a member would read NO_MONITOR
    after its pool's monitor was created, or OFFLINE after it was enabled again, until the next poll."""
    if status == NO_MONITOR:
        return not monitored
    if status in (ONLINE, ERROR):
        return monitored
    return status != OFFLINE


def mode_settled(tree: LbTree, mode, previous) -> bool:
    """True when the members a backend-down mode change affects show it: ERROR where ``mode`` takes
    their backend down, ONLINE where ``previous`` had and ``mode`` gives it back."""
    def down(which, member) -> bool:
        return which is not None and which.name == BACKEND_DOWN and which.matches(member.name, member.address)

    for member in tree.of_kind(MEMBER):
        if member.provisioning_status != ACTIVE or not member.admin_state_up:
            continue
        if tree.monitor_of(member.parent_id) is None or not (down(mode, member) or down(previous, member)):
            continue
        if member.operating_status != (ERROR if down(mode, member) else ONLINE):
            return False
    return True
