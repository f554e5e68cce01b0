# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How long a dead member keeps taking traffic: a pool's health monitor judged against a limit. Pure, the one
computation of it (cluster_readiness' ``monitor`` view; control_plane_rollout's preflight reads that view).

A member whose API server died stays in rotation until the monitor has failed ``max_retries_down`` checks
``delay`` seconds apart (each check may also take up to ``timeout``); without a monitor it stays until the
member is deleted.
"""

from __future__ import annotations

from typing import Any

#: The monitor's fields a report carries.
MONITOR_FIELDS = ("id", "name", "type", "delay", "timeout", "max_retries", "max_retries_down", "admin_state_up")


def monitor_fields(monitor: dict[str, Any] | None) -> dict[str, Any] | None:
    """The report's fields of a monitor as the API returned it (None stays None)."""
    if not monitor:
        return None
    return dict((key, monitor.get(key)) for key in MONITOR_FIELDS)


def monitor_window(monitor: dict[str, Any] | None) -> int | None:
    """Seconds a dead member may keep traffic: ``delay x max_retries_down``; None without a monitor."""
    if not monitor:
        return None
    return int(monitor.get("delay") or 0) * int(monitor.get("max_retries_down") or 0)


def window_check(pool: str, monitor: dict[str, Any] | None, limit: float) -> dict[str, Any]:
    """``{health_monitor, window, limit, finding}`` of pool ``pool`` (its name) whose monitor is ``monitor``
    (``monitor_fields``, or None): ``finding`` is empty when the window is within ``limit`` seconds, else a
    sentence with the numbers."""
    window = monitor_window(monitor)
    finding = ""
    if not monitor:
        finding = (f"pool {pool} has no health monitor: a member whose API server died keeps its share of the traffic "
                   "until the member is deleted")
    elif window is not None and window > int(limit):
        finding = (f"health monitor {monitor.get('name') or monitor.get('id')} lets a dead member take traffic for up "
                   f"to {window} s (delay {monitor.get('delay')} s x max_retries_down "
                   f"{monitor.get('max_retries_down')}, each check up to timeout {monitor.get('timeout')} s), more "
                   f"than {int(limit)} s")
    return {"health_monitor": monitor, "window": window, "limit": int(limit), "finding": finding}
