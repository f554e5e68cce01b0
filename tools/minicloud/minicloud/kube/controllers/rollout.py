"""What KCP, CAPI's Machine controller and CAPO do next during a control-plane rollout (pure).

Everything here is a function of plain data (:class:`MachineView`, :class:`MemberView`),
so the decisions are unit-tested without a cloud; :mod:`minicloud.kube.controllers.kcp`
reads the store and OpenStack into these views and carries the decisions out.

- KCP (``kcp_next``), maxSurge 1: wait while a Machine is being deleted or provisioned;
  scale down (oldest outdated first) while there are more Machines than replicas; else
  create a Machine while any is outdated or there are fewer than replicas.
- The Machine controller (``deletion_next``): pre-drain hooks hold the Machine; then drain
  (cordoning the Node: instant here); pre-terminate hooks hold it; then the infrastructure goes
  (the member, the server); then the finalizer is removed. KCP's own pre-terminate hook (``kcp-cleanup``,
  on every Machine it owns) comes off last, one Machine at a time (``kcp_cleanup_due``).
- The MachineSet controller (``machineset_next``): like CAPI's, it counts every Machine it owns,
  deleting ones too, so a deleted Machine is replaced once it is gone.
- CAPO (``provision_next``): server, then the pool member, then wait: ``member`` waits for
  the member to be ACTIVE (CAPO v0.14 on), ``lb`` only for the load balancer to be ACTIVE
  (CAPO before v0.14: a member the provider lost looks done).
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field

PRE_DRAIN_HOOK_PREFIX = "pre-drain.delete.hook.machine.cluster.x-k8s.io"
PRE_TERMINATE_HOOK_PREFIX = "pre-terminate.delete.hook.machine.cluster.x-k8s.io"
# KCP's own pre-terminate hook, on every Machine it owns: taken off (after the etcd member is removed) once the
# Machine controller waits for it and it is the Machine's last pre-terminate hook
KCP_CLEANUP_HOOK = PRE_TERMINATE_HOOK_PREFIX + "/kcp-cleanup"
WAIT_MEMBER = "member"
WAIT_LB = "lb"
CAPO_WAITS = (WAIT_MEMBER, WAIT_LB)

ACTIVE = "ACTIVE"
ERROR = "ERROR"
PENDING_DELETE = "PENDING_DELETE"
SERVING_OPERATING = ("ONLINE", "NO_MONITOR")


def hooks(annotations: dict | None, prefix: str) -> list[str]:
    """Annotations ``prefix/<name>`` (CAPI's lifecycle hooks), sorted."""
    return sorted(k for k in (annotations or {}) if k.startswith(prefix + "/"))


@dataclass(frozen=True)
class MemberView:
    id: str
    name: str
    provisioning_status: str
    operating_status: str

    @property
    def serving(self) -> bool:
        """ACTIVE and taking traffic: ONLINE, or NO_MONITOR (a pool without a health monitor)."""
        return self.provisioning_status == ACTIVE and self.operating_status in SERVING_OPERATING


@dataclass(frozen=True)
class MachineView:
    name: str
    order: tuple  # creation order: (creationTimestamp, resourceVersion as int)
    up_to_date: bool
    ready: bool = True
    deleting: bool = False
    pre_drain: tuple[str, ...] = ()
    pre_terminate: tuple[str, ...] = ()


@dataclass(frozen=True)
class Action:
    kind: str  # create | delete | wait | done
    machine: str | None = None
    reason: str = ""
    names: tuple[str, ...] = field(default=())


def parse_time(text: str | None) -> datetime.datetime | None:
    """An RFC 3339 time, or None when empty or unreadable."""
    if not text:
        return None
    try:
        moment = datetime.datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=datetime.timezone.utc)


def rollout_after(kcp_spec: dict | None) -> str | None:
    """KCP's rollout time: v1beta1 ``spec.rolloutAfter``, v1beta2 ``spec.rollout.after``."""
    spec = kcp_spec or {}
    return spec.get("rolloutAfter") or (spec.get("rollout") or {}).get("after")


def rollout_after_due(after: str | None, now: datetime.datetime) -> bool:
    """Whether a rollout time is set and has passed (KCP ignores one in the future until then)."""
    moment = parse_time(after)
    return moment is not None and moment <= now


def outdated_by_time(created: str | None, after: str | None, now: datetime.datetime) -> bool:
    """Like KCP: a Machine created before a rollout time that has passed is outdated."""
    if not rollout_after_due(after, now):
        return False
    born = parse_time(created)
    return born is not None and born < parse_time(after)


def kcp_next(replicas: int, machines: list[MachineView], adopted: bool = True) -> Action:
    """KCP's next move on its control-plane Machines (maxSurge 1).

    Like the real KCP it counts deleting Machines too: a Machine deleted by hand is replaced once it is
    gone. ``adopted``: False while seeding still writes its Machines (a seeded KCP is written before them,
    see ``seed.SEEDING_ANNOTATION``); until then it creates none (``idle``)."""
    deleting = sorted(m.name for m in machines if m.deleting)
    if deleting:
        return Action("wait", reason="machine deletion", names=tuple(deleting))
    provisioning = sorted(m.name for m in machines if not m.ready)
    if provisioning:
        return Action("wait", reason="machine provisioning", names=tuple(provisioning))
    outdated = sorted((m for m in machines if not m.up_to_date), key=lambda m: m.order)
    if len(machines) > replicas:
        victim = outdated[0] if outdated else min(machines, key=lambda m: m.order)
        return Action("delete", machine=victim.name, reason="scale down" if not outdated else "outdated")
    if not adopted and len(machines) < replicas:
        return Action("idle", reason="its Machines to be seeded")
    if outdated or len(machines) < replicas:
        return Action("create", reason="outdated machines" if outdated else "scale up",
                      names=tuple(m.name for m in outdated))
    return Action("done")


def kcp_settled(replicas: int, machines: list[MachineView], adopted: bool = True) -> bool:
    """Whether KCP has nothing left to do: as many Machines as replicas, all ready and up to date, none
    deleting. A settled cluster needs no pass until something changes (or a rollout time comes)."""
    return kcp_next(replicas, machines, adopted).kind in ("done", "idle")


def machineset_next(replicas: int, machines: list[MachineView], adopted: bool = True) -> Action:
    """The MachineSet controller's next move on the Machines it owns.

    Like CAPI's, it counts deleting Machines too (``diff = len(machines) - replicas``): a Machine deleted
    by hand is replaced once it is gone. Short: create every missing Machine at once (``names`` holds one
    entry per Machine to create). Too many: delete, deleting Machines first (they count as deleted
    already), then Machines not ready, then the oldest (CAPI's default order is random; oldest is
    deterministic). ``adopted``: as for :func:`kcp_next`."""
    diff = len(machines) - replicas
    if diff < 0 and not adopted:
        return Action("idle", reason="its Machines to be seeded")
    if diff < 0:
        return Action("create", reason="scale up", names=tuple(str(i) for i in range(-diff)))
    if diff == 0:
        return Action("done")
    ranked = sorted(machines, key=lambda m: (not m.deleting, m.ready, m.order))
    victims = tuple(m.name for m in ranked[:diff] if not m.deleting)
    if not victims:
        return Action("wait", reason="machine deletion", names=tuple(m.name for m in ranked[:diff]))
    return Action("delete", machine=victims[0], reason="scale down", names=victims)


def deletion_next(machine: MachineView, member_present: bool, member_status: str | None,
                  server_present: bool, drained: bool = True) -> Action:
    """The Machine controller's (and CAPO's) next step for a Machine being deleted: pre-drain hooks,
    drain (``drained``: its Node is cordoned, or it has none), pre-terminate hooks, then the
    infrastructure (member, server), then the finalizer."""
    if machine.pre_drain:
        return Action("wait", machine.name, "pre-drain hook", machine.pre_drain)
    if not drained:
        return Action("drain", machine.name)
    if machine.pre_terminate:
        return Action("wait", machine.name, "pre-terminate hook", machine.pre_terminate)
    if member_present:
        if member_status == PENDING_DELETE:
            return Action("wait", machine.name, "member deletion")
        return Action("delete-member", machine.name)
    if server_present:
        return Action("delete-server", machine.name)
    return Action("remove-finalizer", machine.name)


def kcp_cleanup_due(machine: MachineView, machines: list[MachineView], version: str | None = None) -> bool:
    """Whether KCP takes its ``kcp-cleanup`` hook off ``machine`` now, removing its etcd member (CAPI v1.9+'s
    reconcilePreTerminateHook): the Machine is being deleted and past its pre-drain hooks, every Machine being
    deleted still carries the hook (one without it goes away first), no Machine being deleted is older (one at a
    time; the creation order stands for the deletion time), and, when the control plane's ``version`` is 1.31.0 or
    later (pre-releases count as their release; unknown: as later), no other pre-terminate hook holds the Machine.
    Below 1.31 KCP does not wait for the other hooks."""
    if not machine.deleting or machine.pre_drain or KCP_CLEANUP_HOOK not in machine.pre_terminate:
        return False
    if machine.pre_terminate != (KCP_CLEANUP_HOOK,) and waits_for_other_hooks(version):
        return False
    deleting = [m for m in machines if m.deleting]
    if any(KCP_CLEANUP_HOOK not in m.pre_terminate for m in deleting):
        return False
    return min(deleting, key=lambda m: m.order).name == machine.name


def waits_for_other_hooks(version: str | None) -> bool:
    """KCP's ``version.Compare(parsed, 1.31.0, WithoutPreReleases()) >= 0``: major.minor.patch only."""
    match = re.match(r"^v?(\d+)\.(\d+)(?:\.(\d+))?", str(version or "").strip())
    if match is None:
        return True
    return tuple(int(part or 0) for part in match.groups()) >= (1, 31, 0)


def provision_next(capo_wait: str, server_present: bool, member: MemberView | None, lb_status: str | None) -> Action:
    """CAPO's next step for a new control-plane machine; ``ready`` when it reports it provisioned."""
    if not server_present:
        return Action("create-server")
    if member is None:
        return Action("create-member")
    if capo_wait == WAIT_MEMBER:
        if member.provisioning_status == ACTIVE:
            return Action("ready")
        if member.provisioning_status == ERROR:
            return Action("wait", reason=f"member {member.name} is ERROR")
        return Action("wait", reason=f"member {member.name} to be ACTIVE (is {member.provisioning_status})")
    if lb_status == ACTIVE:
        return Action("ready")
    return Action("wait", reason=f"load balancer to be ACTIVE (is {lb_status})")


def kcp_counts(machines: list[MachineView]) -> dict:
    """KCP status counts: replicas (every Machine), upToDate, ready, available."""
    ready = sum(1 for m in machines if m.ready and not m.deleting)
    return {"replicas": len(machines), "upToDateReplicas": sum(1 for m in machines if m.up_to_date),
            "readyReplicas": ready, "availableReplicas": ready}


def phase(machines: list[MachineView], replicas: int) -> str:
    """``RollingOut`` while a Machine is outdated, deleting, provisioning or missing; else ``Completed``."""
    if any(not m.up_to_date or m.deleting or not m.ready for m in machines) or len(machines) != replicas:
        return "RollingOut"
    return "Completed"


def summarize(records: list[dict]) -> dict:
    """The history of one rollout in a few numbers (records as the sampler writes them)."""
    if not records:
        return {"samples": 0}
    lowest = min(records, key=lambda r: r["serving"])
    return {"samples": len(records), "rollout": records[-1].get("rollout"),
            "minServing": lowest["serving"], "minServingAt": lowest["time"],
            "minActive": min(r["active"] for r in records), "maxMembers": max(r["members"] for r in records),
            "first": records[0]["time"], "last": records[-1]["time"],
            "final": {k: records[-1][k] for k in ("members", "active", "serving")}}
