# -*- coding: utf-8 -*-
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pre-terminate hold of rollout_guard (mode=capi, ``drain``): stop an old Machine's server through Nova once
the Machine waits for its pre-terminate hooks and the stop is safe, wait for SHUTOFF, then take the guard's
pre-terminate hook off (``terminate.py`` decides; this file reads and writes)."""

from ansible_collections.flightcontrol.openstack.plugins.module_utils.nova.server_service import SERVER_GONE
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard import terminate

# Seconds a stopped run takes to release the Machines whose servers it stopped.
RELEASE_SECONDS = 30


class Stopper:
    """``servers``: a Nova ``ServerService`` (None when no stop is asked); ``enabled``: the stop is asked and the
    control plane's version lets a pre-terminate hook keep the etcd member; ``disabled_why``: why not."""

    def __init__(self, options, clock, log, servers, enabled, disabled_why=""):
        self.options = options
        self.clock = clock
        self.log = log
        self.servers = servers
        self.enabled = enabled
        self.disabled_why = disabled_why
        self.records = {}  # Machine name -> terminate.StopRecord, in the order met

    def now(self):
        return round(self.clock.monotonic() - self.log.started, 3)

    def record_of(self, machine, member):
        record = self.records.get(machine["name"])
        if record is None:
            record = self.records[machine["name"]] = terminate.StopRecord(
                machine["name"], server_id=machine.get("server_id"), member=(member or {}).get("name"))
        return record

    def server_status(self, machine, deadline):
        """Nova's status of the Machine's server: None when gone, ``"unknown"`` without a server id, None-free
        only when a stop is asked (else not read)."""
        if not self.enabled or not machine.get("deleting"):
            return "not read"
        if not machine.get("server_id"):
            return "unknown"
        server = self.servers.get_server(machine["server_id"], deadline)
        return None if server is None else server.get("status")

    def view(self, machine, safety, server_status):
        """The ``terminate.TerminateView`` of one Machine; ``safety``: dict of member_out, serving_without,
        min_healthy, not_ready, etcd_healthy."""
        return terminate.TerminateView(
            machine["name"], deleting=bool(machine.get("deleting")), pre_drain_hooks=tuple(machine["pre_drain_hooks"]),
            phase=machine.get("pre_terminate_phase"), phase_words=machine.get("pre_terminate_words") or "",
            server_status=server_status, stop_enabled=self.enabled, disabled_why=self.disabled_why, now=self.now(),
            stop_timeout=self.options.drain_stop_timeout, on_timeout=self.options.drain_stop_timeout_action,
            **safety)

    def stop(self, record, status, connections, deadline):
        """Ask Nova to stop the server (a 409, already stopping or stopped, counts as asked; 404: gone)."""
        record.status_before = status
        record.connections_at_stop = connections
        answer = self.servers.stop_server(record.server_id, deadline)
        record.requested_at = self.now()
        self.log.record("stop server" if answer != SERVER_GONE else "stop server (gone)", [record.machine],
                        record.member)
        return answer

    def released(self, record, step, connections):
        record.released_at = self.now()
        record.connections_at_release = connections
        record.outcome = step.outcome
        record.reason = step.reason
        if step.outcome in ("stopped", "server_gone") and record.requested_at is not None:
            record.shutoff_at = record.released_at

    def to_release_after_stop(self):
        """Records whose server this run asked to stop but whose hook it has not taken off yet (a run that stops:
        the server is going down, so keeping its etcd member only costs the control plane a member). Not those
        whose stop outlasted drain_stop_timeout with drain_stop_timeout_action=fail: the run stopped to keep
        them held, as its message says."""
        return [r for r in self.records.values() if r.requested_at is not None and r.released_at is None
                and not self.held_on_timeout(r)]

    def held_on_timeout(self, record):
        """Whether ``record``'s Machine stays held: its stop is older than drain_stop_timeout and the action on a
        timeout is ``fail``."""
        return (self.options.drain_stop_timeout_action == terminate.ON_TIMEOUT_FAIL and
                self.now() - record.requested_at >= self.options.drain_stop_timeout)

    def report(self):
        return [record.to_dict() for record in self.records.values()]

    def enrich(self, drained_rows):
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
