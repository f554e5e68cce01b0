# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pre-terminate hold of a drained old Machine: the pure decisions (plain data, no API access).

Cluster API deletes a Machine in this order: pre-drain hooks, node drain, volume detach, pre-terminate hooks, then
the infrastructure (CAPO: the pool member, then the server). KubeadmControlPlane removes the Machine's etcd member
in its own pre-terminate hook ``kcp-cleanup``, and from Kubernetes 1.31.0 (the control plane's ``spec.version``)
only once ``kcp-cleanup`` is the Machine's last pre-terminate hook. So a pre-terminate hook of the guard keeps the
etcd member (and the old API server's answers) while the guard stops the old server through Nova (``os-stop``:
an orderly shutdown, kube-apiserver ends its kept-alive connections after their current answer) and waits for
SHUTOFF; then it takes its hook off and KCP goes on. Below 1.31 KCP does not wait for other hooks: no such hold.

``terminate_next`` decides, for one Machine carrying the guard's pre-terminate hook, on a ``TerminateView``:
``release`` (take the hook off), ``stop`` (ask Nova to stop the server), ``wait`` or ``fail`` (the stop timed out
and ``drain_stop_timeout_action`` is ``fail``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional

from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.objects import (
    condition_false,
    condition_true,
    new_condition,
    old_condition,
)

STOP, WAIT, RELEASE, FAIL = "stop", "wait", "release", "fail"
SHUTOFF = "SHUTOFF"
# Machine deletion phases as Cluster API reports them (core/reconcilers/machine/machine_controller.go)
WAITING_FOR_PRE_TERMINATE = "WaitingForPreTerminateHook"  # v1beta2 condition Deleting, status True
WAITING_EXTERNAL_HOOK = "WaitingExternalHook"  # v1beta1 condition PreTerminateDeleteHookSucceeded, False
ON_TIMEOUT_RELEASE, ON_TIMEOUT_FAIL = "release", "fail"
FIRST_VERSION_WAITING = (1, 31, 0)


def kcp_waits_for_other_hooks(version: Any) -> tuple[bool, str]:
    """(True, why) when KubeadmControlPlane of ``spec.version`` keeps ``kcp-cleanup`` (the etcd member) while
    another pre-terminate hook holds a Machine: ``version.Compare(v, 1.31.0, WithoutPreReleases()) >= 0``, so
    ``v1.31.0-rc.1`` counts; (False, why) otherwise, or when the version cannot be read."""
    match = re.match(r"^v?(\d+)\.(\d+)(?:\.(\d+))?", str(version or "").strip())
    if match is None:
        return False, f"the control plane's spec.version {version!r} cannot be read as a Kubernetes version"
    if tuple(int(part or 0) for part in match.groups()) >= FIRST_VERSION_WAITING:
        return True, (f"Kubernetes {version}: KubeadmControlPlane removes the etcd member only after every other "
                      "pre-terminate hook")
    return False, (f"Kubernetes {version} is below 1.31.0: KubeadmControlPlane removes a Machine's etcd member while "
                   "other pre-terminate hooks still hold it, so no hook can keep the member until the old server is "
                   "stopped; no pre-terminate hook is held")


def pre_terminate_phase(machine: dict[str, Any]) -> tuple[Optional[bool], str]:
    """(True/False/None, words): whether the Machine controller waits for the Machine's pre-terminate hooks, from
    the v1beta2 ``Deleting`` condition (reason WaitingForPreTerminateHook) or the v1beta1
    ``PreTerminateDeleteHookSucceeded`` condition (False, reason WaitingExternalHook); None when it reports
    neither (an older or emulated Cluster API)."""
    deleting = new_condition(machine, "Deleting")
    if deleting is not None:
        waiting = condition_true(deleting) and deleting.get("reason") == WAITING_FOR_PRE_TERMINATE
        return waiting, f"Deleting condition: {deleting.get('reason') or deleting.get('status')}"
    hook = old_condition(machine, "PreTerminateDeleteHookSucceeded")
    if hook is not None:
        waiting = condition_false(hook) and hook.get("reason") == WAITING_EXTERNAL_HOOK
        return waiting, f"PreTerminateDeleteHookSucceeded condition: {hook.get('status')} {hook.get('reason') or ''}"
    return None, "no Deleting or PreTerminateDeleteHookSucceeded condition reported"


@dataclass
class StopRecord:
    """What this run did about one Machine's pre-terminate hold (times: seconds since the module started)."""

    machine: str
    server_id: Optional[str] = None
    member: Optional[str] = None
    status_before: Optional[str] = None
    requested_at: Optional[float] = None
    shutoff_at: Optional[float] = None
    released_at: Optional[float] = None
    connections_at_stop: Optional[int] = None
    connections_at_release: Optional[int] = None
    outcome: str = "holding"
    reason: str = ""

    @property
    def stop_seconds(self) -> Optional[float]:
        if self.requested_at is None or self.shutoff_at is None:
            return None
        return round(self.shutoff_at - self.requested_at, 3)

    @property
    def stopped(self) -> bool:
        return self.shutoff_at is not None

    def to_dict(self) -> dict[str, Any]:
        return {"machine": self.machine, "server_id": self.server_id, "member": self.member,
                "server_status_before": self.status_before, "stop_requested_at": self.requested_at,
                "shutoff_at": self.shutoff_at, "stop_seconds": self.stop_seconds, "server_stopped": self.stopped,
                "released_at": self.released_at, "connections_at_stop": self.connections_at_stop,
                "connections_at_release": self.connections_at_release, "outcome": self.outcome,
                "reason": self.reason}


@dataclass
class TerminateView:
    """One Machine carrying the guard's pre-terminate hook, and what a stop of its server depends on.

    ``phase``: :func:`pre_terminate_phase`'s answer (None: not reported; then a Machine being deleted without a
    pre-drain hook counts as there); ``member_out``: its member is out of rotation or gone; ``serving_without``:
    serving members of the pool that are neither drained nor of a Machine being deleted; ``not_ready``: the other
    control-plane Machines, not being deleted, that are not ready; ``etcd_healthy``: the control plane's
    EtcdClusterHealthy condition (None: not reported); ``server_status``: Nova's status, None when the server is
    gone, ``"unknown"`` without a server id."""

    machine: str
    deleting: bool = True
    pre_drain_hooks: tuple[str, ...] = ()
    phase: Optional[bool] = None
    phase_words: str = ""
    member_out: bool = True
    serving_without: int = 0
    min_healthy: int = 0
    not_ready: list[str] = field(default_factory=list)
    etcd_healthy: Optional[bool] = None
    server_status: Optional[str] = None
    stop_enabled: bool = True
    disabled_why: str = ""
    now: float = 0.0
    stop_timeout: float = 180.0
    on_timeout: str = ON_TIMEOUT_RELEASE


@dataclass
class TerminateStep:
    kind: str
    reason: str = ""
    outcome: str = ""


def terminate_next(view: TerminateView, record: StopRecord | None) -> TerminateStep:
    """The next step for one Machine holding the guard's pre-terminate hook (``record``: this run's StopRecord of
    it, None before any step)."""
    if not view.deleting:
        return TerminateStep(RELEASE, f"a pre-terminate hook of the guard on Machine {view.machine}, which is not "
                             "being deleted (left by an earlier run)", "left_over")
    if not view.stop_enabled:
        return TerminateStep(RELEASE, view.disabled_why, "not_stopped")
    if record is not None and record.requested_at is not None:
        return _after_stop(view, record, record.requested_at)
    reached = view.phase if view.phase is not None else not view.pre_drain_hooks
    if not reached:
        return TerminateStep(WAIT, f"Machine {view.machine} to reach its pre-terminate hooks (node drain and volume "
                             f"detach first; {view.phase_words or 'pre-drain hooks left'})")
    if view.server_status is None:
        return TerminateStep(RELEASE, f"server of Machine {view.machine} gone: nothing to stop", "server_gone")
    if view.server_status == "unknown":
        return TerminateStep(RELEASE, f"Machine {view.machine} names no server (no providerID, no instanceID): nothing "
                             "to stop", "no_server")
    if view.server_status == SHUTOFF:
        return TerminateStep(RELEASE, f"server of Machine {view.machine} already SHUTOFF", "already_shutoff")
    blockers = stop_blockers(view)
    if blockers:
        return TerminateStep(WAIT, f"stopping the server of Machine {view.machine} waits: {'; '.join(blockers)}")
    return TerminateStep(STOP, f"Machine {view.machine} drained and out of rotation, the control plane healthy without "
                         "it")


def stop_blockers(view: TerminateView) -> list[str]:
    """Why stopping the server is not safe yet (empty when it is)."""
    blockers = []
    if not view.member_out:
        blockers.append("its member is still in rotation")
    if view.serving_without < (view.min_healthy or 0):
        blockers.append(f"the pool would have {view.serving_without} serving member(s) without it, "
                        f"min_healthy_members {view.min_healthy}")
    if view.not_ready:
        blockers.append(f"control-plane Machine(s) {', '.join(view.not_ready)} not ready")
    if view.etcd_healthy is False:
        blockers.append("the control plane's EtcdClusterHealthy condition is not True")
    return blockers


def _after_stop(view: TerminateView, record: StopRecord, requested_at: float) -> TerminateStep:
    waited = view.now - requested_at
    if view.server_status is None:
        return TerminateStep(RELEASE, f"server of Machine {view.machine} gone {waited:.0f} s after its stop",
                             "server_gone")
    if view.server_status == SHUTOFF:
        return TerminateStep(RELEASE, f"server of Machine {view.machine} SHUTOFF {waited:.0f} s after its stop",
                             "stopped")
    if waited < view.stop_timeout:
        return TerminateStep(WAIT, f"server of Machine {view.machine} to shut down ({view.server_status}, {waited:.0f} "
                             f"of {view.stop_timeout} s)")
    words = (f"server {record.server_id} of Machine {view.machine} is still {view.server_status} {waited:.0f} s after "
             f"its stop (drain_stop_timeout {view.stop_timeout} s)")
    if view.on_timeout == ON_TIMEOUT_FAIL:
        return TerminateStep(FAIL, words + "; the Machine stays held (drain_stop_timeout_action=fail)", "timed_out")
    return TerminateStep(RELEASE, words + "; released to the control plane with the server still running",
                         "timed_out")
