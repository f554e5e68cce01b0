# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Drain before release: the pure decisions.

Before an old member is released (its Machine's hook removed, or the member deleted), rollout_guard takes it out
of rotation the way the load balancer's provider honours (``octavia/provider.py``):

- amphora (HAProxy): **weight 0**, not ``admin_state_up: false``. Weight 0 means the server gets no new
  connection while its established ones go on, and its health checks keep running: the member stays ONLINE, so
  the guard (and anyone else) still sees whether it serves, and putting the weight back is instant.
  ``admin_state_up: false`` renders the server ``disabled`` (maintenance): its checks stop, Octavia reports it
  OFFLINE at once, and when it is enabled again it must pass its checks before it takes traffic.
- ovn: **admin_state_up false** (ovn-octavia-provider never reads a weight); the member leaves the VIP's
  backends and reports OFFLINE; restored with admin_state_up true.
- Cluster API and CAPO never set a member's weight or admin state after creating it, so the guard's change is
  not undone under it.

The drain period starts when the load balancer is ACTIVE again after the change and ends when the pool's
listeners report no active connection or after ``drain_timeout`` seconds. Octavia reports connections per
listener, not per member: with other members serving, the listeners are rarely idle, so under load the drain
lasts ``drain_timeout``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional

DRAIN, WAIT, RELEASE = "drain", "wait", "release"


@dataclass
class DrainRecord:
    """One old member taken out of rotation by this run; ``method``: ``octavia.provider.WEIGHT`` (weight 0) or
    ``ADMIN_STATE`` (admin_state_up false), as the load balancer's provider honours; ``value_before``: the weight or
    admin_state_up it had, put back on restore."""

    member_id: str
    member: str  # its name or address, for the report
    weight_before: Any
    drained_at: float  # seconds since the run started
    applied_at: Optional[float] = None  # when the load balancer was ACTIVE again after the change
    connections_at_release: Optional[int] = None
    released_at: Optional[float] = None
    restored: bool = False
    method: str = "weight"
    value_before: Any = None

    def to_dict(self) -> dict[str, Any]:
        return {"member": self.member, "member_id": self.member_id, "weight_before": self.weight_before,
                "method": self.method, "value_before": self.value_before,
                "drained_at": self.drained_at, "applied_at": self.applied_at,
                "connections_at_release": self.connections_at_release,
                "released_at": self.released_at, "restored": self.restored}


@dataclass
class DrainStep:
    kind: str
    reason: str = ""


def drain_next(record: DrainRecord | None, lb_status: str | None, connections: int | None, now: float,
               drain_timeout: float) -> DrainStep:
    """What to do about one old member the plan releases: drain it (no record yet), wait, or release it.

    ``connections``: the pool's listeners' active connections now (None when the cloud does not say);
    ``now``: seconds since the run started, like the record's times.
    """
    if record is None:
        return DrainStep(DRAIN, "taking the old member out of rotation before releasing it")
    if record.applied_at is None:
        if lb_status != "ACTIVE":
            how = "weight 0" if record.method == "weight" else "admin_state_up false"
            return DrainStep(WAIT, f"load balancer to apply {how} on {record.member} (is {lb_status})")
        record.applied_at = now
    drained_for = now - record.applied_at
    if connections == 0:
        return DrainStep(RELEASE, "no active connection left on the pool's listeners")
    if drained_for >= drain_timeout:
        return DrainStep(RELEASE, f"drained for {drained_for:.0f} s (drain_timeout)")
    active = "unknown" if connections is None else connections
    return DrainStep(WAIT, f"member {record.member} draining: {drained_for:.0f} of {drain_timeout} s, {active} active "
                           "connection(s) on the pool's listeners")


def to_restore(records: list[DrainRecord], serving_ids: Iterable[Optional[str]] | None,
               min_healthy: int | None) -> list[DrainRecord]:
    """Drained members whose weight must go back now: every one not released yet when the serving members that
    are not drained fall short of ``min_healthy`` (the pool must carry its floor without them); ``serving_ids``:
    the ids of the members serving now, or None when the run stops (then all of them)."""
    waiting = [r for r in records if r.released_at is None and not r.restored]
    if serving_ids is None:
        return waiting
    drained = set(r.member_id for r in waiting)
    carrying = [i for i in serving_ids if i not in drained]
    return waiting if len(carrying) < (min_healthy or 0) else []
