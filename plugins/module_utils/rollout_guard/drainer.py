# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Drain before release, for both modes of rollout_guard: the old member out of rotation as its provider honours
(weight 0 on amphora, admin_state_up false on ovn: ``octavia/provider.py``), wait, then let the runner release it;
put the weight or admin state back on members this run drained but did not release (``drain.py`` decides)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional, cast

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.clock import Clock
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia import provider as providers
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.service import OctaviaService
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard import drain
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.report import RolloutLog

if TYPE_CHECKING:  # runner.py imports the runners, which import this file
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.runner import RolloutOptions

# Seconds a stopped run takes to put drained members back in rotation (weight or admin state): a deliberate
# extension past the run's deadline (``Deadline.extended``), since a member left out of rotation would leave the
# pool short.
RESTORE_SECONDS = 30
RESTORE_REASON = "putting drained members back in rotation after the run stopped"


class Drainer:
    def __init__(self, options: RolloutOptions, clock: Clock, log: RolloutLog, octavia: Optional[OctaviaService],
                 pool: Optional[dict[str, Any]], provider: Optional[str] = "amphora") -> None:
        self.enabled = bool(options.drain)
        self.provider = provider
        self.method = providers.drain_method(provider)
        self.timeout = options.drain_timeout
        self.check_mode = options.check_mode
        self.clock = clock
        self.log = log
        # None only before the pool is resolved: a run that stops then has drained nothing
        self.octavia: Any = octavia
        self.pool: Any = pool
        # member id -> its record, in the order drained (read by the id of any member, which may have none)
        self.records: dict[Optional[str], drain.DrainRecord] = {}
        self.would_drain: list[str] = []  # check mode: the members a real run would drain now

    def now(self) -> float:
        return round(self.clock.monotonic() - self.log.started, 3)

    def ready(self, member: Optional[dict[str, Any]], lb_status: Optional[str],
              deadline: Deadline) -> tuple[bool, Optional[str]]:
        """(True, None) when ``member`` (an old member the plan releases; None: no member) may be released now;
        (False, reason) while it is being drained. Check mode only notes what it would drain."""
        if not self.enabled or member is None or not member.get("id"):
            return True, None
        if self.check_mode:
            if member["id"] not in self.would_drain:
                self.would_drain.append(member["id"])
                self.log.record("drain (check mode: not done)", member=member.get("name") or member["id"])
            return True, None
        record = self.records.get(member["id"])
        connections = None
        if record is not None and (record.applied_at is not None or lb_status == "ACTIVE"):
            connections = self.octavia.listener_connections(self.listener_ids(), deadline)
        step = drain.drain_next(record, lb_status, connections, self.now(), self.timeout)
        if step.kind == drain.DRAIN or record is None:  # drain_next drains exactly the members without a record
            return False, self.start(member, lb_status, deadline)
        if step.kind == drain.WAIT:
            return False, step.reason
        record.connections_at_release = connections
        return True, None

    def out_of_rotation(self, member: dict[str, Any], lb_status: Optional[str],
                        deadline: Deadline) -> tuple[bool, Optional[str]]:
        """(True, None) when ``member`` is out of rotation by this run (drained, not put back); else it is drained
        now, as before a release ((False, reason) until its drain is done: a member an earlier run left in
        rotation)."""
        record = self.records.get(member.get("id"))
        if record is not None and not record.restored and record.applied_at is not None:
            return True, None
        return self.ready(member, lb_status, deadline)

    def drained_ids(self) -> set[str]:
        return set(r.member_id for r in self.records.values() if not r.restored)

    def connections(self, deadline: Deadline) -> Optional[int]:
        """The pool's listeners' active connections now (None when not reported)."""
        return self.octavia.listener_connections(self.listener_ids(), deadline)

    def ready_all(self, members: Iterable[dict[str, Any]], lb_status: Optional[str],
                  deadline: Deadline) -> tuple[bool, Optional[str]]:
        """:meth:`ready` for every member of one release (all drained, then all released together)."""
        waiting = [cast(str, reason) for ok, reason in (self.ready(m, lb_status, deadline) for m in members)
                   if not ok]  # a member not ready says why
        return (False, "; ".join(waiting)) if waiting else (True, None)

    def keep_floor(self, members: Iterable[dict[str, Any]], serving: Callable[[dict[str, Any]], bool],
                   min_healthy: Optional[int], deadline: Deadline) -> None:
        """Each poll: when the serving members that are not drained fall short of ``min_healthy``, the drained
        ones (not released yet) get their weight back."""
        if not self.check_mode and self.records:
            self.restore([m.get("id") for m in members if serving(m)], min_healthy, deadline)

    def start(self, member: dict[str, Any], lb_status: Optional[str], deadline: Deadline) -> str:
        if lb_status != "ACTIVE":
            return f"load balancer to be ACTIVE before draining {self.name(member)} (is {lb_status})"
        if self.method is None:  # the runners refuse this before any write; never a drain that does nothing
            raise ValueError(providers.drain_refusal(self.provider))
        current = self.octavia.get_member(self.pool["id"], member["id"], deadline)
        if current is None:
            return f"member {self.name(member)} to be gone"
        how = providers.describe(self.method)
        if not self.put(member["id"], providers.drained_value(self.method), deadline):
            return f"the load balancer to accept {how} on {self.name(member)} (409)"
        before = providers.before_value(self.method, current)
        self.records[member["id"]] = drain.DrainRecord(
            member["id"], self.name(member), before if self.method == providers.WEIGHT else None, self.now(),
            method=self.method, value_before=before)
        self.log.record(f"drain ({how})", member=self.name(member))
        return f"{how} on {self.name(member)} to be applied (draining)"

    def put(self, member_id: str, value: Any, deadline: Deadline, method: Optional[str] = None) -> bool:
        """The drain's (or the restore's) one write on a member, by ``method`` (this provider's by default)."""
        if (method or self.method) == providers.WEIGHT:
            return self.octavia.set_member_weight(self.pool["id"], member_id, value, deadline)
        return self.octavia.set_member_admin_state(self.pool["id"], member_id, value, deadline)

    def released(self, member: Optional[dict[str, Any]]) -> None:
        record = self.records.get((member or {}).get("id"))
        if record is not None and record.released_at is None:
            record.released_at = self.now()

    def restore(self, serving_ids: Optional[Iterable[Optional[str]]], min_healthy: Optional[int],
                deadline: Deadline) -> None:
        """Put the weight (or admin state) back on the drained members :func:`drain.to_restore` names, the way
        each was drained."""
        for record in drain.to_restore(list(self.records.values()), serving_ids, min_healthy):
            if self.put(record.member_id, record.value_before, deadline, method=record.method):
                record.restored = True
                self.log.record("restore weight" if record.method == providers.WEIGHT else "restore admin state",
                                member=record.member)

    def restore_after_stop(self, deadline: Deadline) -> None:
        """A run that stops: the drained members go back in rotation, each the way it was drained, within the run's
        ``deadline`` extended to at least RESTORE_SECONDS from now; a failure to do so is recorded, never raised
        over the reason the run stopped."""
        try:
            self.restore(None, 0, deadline.extended(RESTORE_SECONDS, RESTORE_REASON))
        except Exception as exc:  # pylint: disable=broad-except
            self.log.record(f"restore failed: {exc}")

    def listener_ids(self) -> list[str]:
        return [item["id"] if isinstance(item, dict) else item for item in self.pool.get("listeners") or []]

    @staticmethod
    def name(member: dict[str, Any]) -> str:
        return member.get("name") or f"{member.get('address')}:{member.get('protocol_port')}"

    def report(self) -> list[dict[str, Any]]:
        return [record.to_dict() for record in self.records.values()]
