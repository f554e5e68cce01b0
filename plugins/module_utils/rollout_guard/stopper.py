# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pre-terminate hold of rollout_guard (mode=capi, ``drain``): stop an old Machine's server through Nova once
the Machine waits for its pre-terminate hooks and the stop is safe, wait for SHUTOFF, then take the guard's
pre-terminate hook off (``terminate.py`` decides; this file reads and writes)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, cast

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.clock import Clock
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
from ansible_collections.flightcontrol.openstack.plugins.module_utils.nova.server_service import (
    SERVER_GONE,
    ServerService,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard import terminate
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.report import RolloutLog

if TYPE_CHECKING:  # runner.py imports the runners, which import this file
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.runner import RolloutOptions

# Seconds a stopped run takes to release the Machines whose servers it stopped.
RELEASE_SECONDS = 30


class Stopper:
    """``servers``: a Nova ``ServerService`` (None when no stop is asked); ``enabled``: the stop is asked and the
    control plane's version lets a pre-terminate hook keep the etcd member; ``disabled_why``: why not."""

    def __init__(self, options: RolloutOptions, clock: Clock, log: RolloutLog, servers: Optional[ServerService],
                 enabled: bool, disabled_why: str = "") -> None:
        self.options = options
        self.clock = clock
        self.log = log
        self.servers: Any = servers  # read only when enabled, which a stop asked gives a ServerService
        self.enabled = enabled
        self.disabled_why = disabled_why
        self.records: dict[str, terminate.StopRecord] = {}  # Machine name -> its record, in the order met

    def now(self) -> float:
        return round(self.clock.monotonic() - self.log.started, 3)

    def record_of(self, machine: dict[str, Any], member: Optional[dict[str, Any]]) -> terminate.StopRecord:
        record = self.records.get(machine["name"])
        if record is None:
            record = self.records[machine["name"]] = terminate.StopRecord(
                machine["name"], server_id=machine.get("server_id"), member=(member or {}).get("name"))
        return record

    def server_status(self, machine: dict[str, Any], deadline: Deadline) -> Optional[str]:
        """Nova's status of the Machine's server: None when gone, ``"unknown"`` without a server id, None-free
        only when a stop is asked (else not read)."""
        if not self.enabled or not machine.get("deleting"):
            return "not read"
        if not machine.get("server_id"):
            return "unknown"
        server = self.servers.get_server(machine["server_id"], deadline)
        return None if server is None else server.get("status")

    def view(self, machine: dict[str, Any], safety: dict[str, Any],
             server_status: Optional[str]) -> terminate.TerminateView:
        """The ``terminate.TerminateView`` of one Machine; ``safety``: dict of member_out, serving_without,
        min_healthy, not_ready, etcd_healthy."""
        return terminate.TerminateView(
            machine["name"], deleting=bool(machine.get("deleting")), pre_drain_hooks=tuple(machine["pre_drain_hooks"]),
            phase=machine.get("pre_terminate_phase"), phase_words=machine.get("pre_terminate_words") or "",
            server_status=server_status, stop_enabled=self.enabled, disabled_why=self.disabled_why, now=self.now(),
            stop_timeout=self.options.drain_stop_timeout, on_timeout=self.options.drain_stop_timeout_action,
            **safety)

    def stop(self, record: terminate.StopRecord, status: Optional[str], connections: Optional[int],
             deadline: Deadline) -> str:
        """Ask Nova to stop the server (a 409, already stopping or stopped, counts as asked; 404: gone)."""
        record.status_before = status
        record.connections_at_stop = connections
        answer = self.servers.stop_server(record.server_id, deadline)
        record.requested_at = self.now()
        self.log.record("stop server" if answer != SERVER_GONE else "stop server (gone)", [record.machine],
                        record.member)
        return answer

    def released(self, record: terminate.StopRecord, step: terminate.TerminateStep,
                 connections: Optional[int]) -> None:
        record.released_at = self.now()
        record.connections_at_release = connections
        record.outcome = step.outcome
        record.reason = step.reason
        if step.outcome in ("stopped", "server_gone") and record.requested_at is not None:
            record.shutoff_at = record.released_at

    def to_release_after_stop(self) -> list[terminate.StopRecord]:
        """Records whose server this run asked to stop but whose hook it has not taken off yet (a run that stops:
        the server is going down, so keeping its etcd member only costs the control plane a member). Not those
        whose stop outlasted drain_stop_timeout with drain_stop_timeout_action=fail: the run stopped to keep
        them held, as its message says."""
        return [r for r in self.records.values() if r.requested_at is not None and r.released_at is None
                and not self.held_on_timeout(r)]

    def held_on_timeout(self, record: terminate.StopRecord) -> bool:
        """Whether ``record``'s Machine stays held: its stop is older than drain_stop_timeout and the action on a
        timeout is ``fail``; ``record``: one whose stop was asked."""
        return (self.options.drain_stop_timeout_action == terminate.ON_TIMEOUT_FAIL and
                self.now() - cast(float, record.requested_at) >= self.options.drain_stop_timeout)

    def report(self) -> list[dict[str, Any]]:
        return [record.to_dict() for record in self.records.values()]

    def enrich(self, drained_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Each drained row with the stop of its Machine: ``machine``, ``server_stopped``, ``stop_seconds``,
        ``connections_at_stop``, ``hook_released_at``, ``connections_at_hook_release`` and
        ``out_of_rotation_seconds`` (from out of rotation to the Machine's release to the control plane: the
        pre-terminate hook's release when held, else the pre-drain hook's)."""
        by_member = dict((r.member, r) for r in self.records.values() if r.member)
        for row in drained_rows:
            record = by_member.get(row["member"])
            row.update(machine=record.machine if record else None,
                       server_stopped=bool(record and record.stopped),
                       stop_seconds=record.stop_seconds if record else None,
                       connections_at_stop=record.connections_at_stop if record else None,
                       hook_released_at=record.released_at if record else None,
                       connections_at_hook_release=record.connections_at_release if record else None)
            start = row.get("applied_at") if row.get("applied_at") is not None else row.get("drained_at")
            end = record.released_at if record and record.released_at is not None else row.get("released_at")
            row["out_of_rotation_seconds"] = None if end is None or start is None else round(end - start, 3)
        return drained_rows
