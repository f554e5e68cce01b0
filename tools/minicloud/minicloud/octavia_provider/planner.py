"""Which statuses the emulated provider reports, and when. Pure functions of a tree and a mode.

Like the amphora provider: the changed object settles first (ACTIVE, or what the
mode says), then the objects Octavia locked for the change (pool, listeners, load
balancer) go back to ACTIVE. Deleted objects are reported DELETED (the driver
agent removes their rows; a load balancer stays as DELETED). Members of a pool
with a health monitor start OFFLINE and settle ONLINE after the monitor's delay.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from minicloud.octavia_provider.modes import BACKEND_DOWN, LOST_MEMBER, MEMBER_ERROR, NORMAL, Mode
from minicloud.octavia_provider.tree import HEALTHMONITOR, LISTENER, LOADBALANCER, MEMBER, POOL, STATUS_KEYS, LbTree, Node

ACTIVE = "ACTIVE"
ERROR = "ERROR"
DELETED = "DELETED"
PENDING_CREATE = "PENDING_CREATE"
PENDING_UPDATE = "PENDING_UPDATE"
PENDING_DELETE = "PENDING_DELETE"
PENDING_STATUSES = (PENDING_CREATE, PENDING_UPDATE, PENDING_DELETE)
ONLINE = "ONLINE"
OFFLINE = "OFFLINE"
DEGRADED = "DEGRADED"
NO_MONITOR = "NO_MONITOR"
# Health checks settle after the monitor's delay, but never later than this (seconds).
HEALTH_DELAY_CAP = 2.0

# Kinds Octavia sets PENDING_UPDATE while one of their children changes.
LOCKED_PARENTS = (LOADBALANCER, LISTENER, POOL)

CREATE = "create"
UPDATE = "update"
DELETE = "delete"
BATCH = "batch"


@dataclass(frozen=True)
class Event:
    """A provider call: ``action`` on object ``kind``/``id``. For ``batch`` (member batch
    update), ``id`` is the pool and ``member_ids`` the members Octavia passed."""

    kind: str
    id: str
    action: str
    member_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Step:
    """Wait ``delay`` seconds, then send ``update``; then settle health of ``settle`` members."""

    delay: float
    update: dict = field(default_factory=dict)
    settle: tuple[str, ...] = ()


class StatusUpdate:
    """Builds the dict the driver agent takes: ``{"members": [{"id": ..., ...}], ...}``."""

    def __init__(self):
        self.records: dict[str, dict[str, dict]] = {}

    def set(self, node: Node, provisioning: str | None = None, operating: str | None = None) -> None:
        record = self.records.setdefault(STATUS_KEYS[node.kind], {}).setdefault(node.id, {"id": node.id})
        if provisioning:
            record["provisioning_status"] = provisioning
        if operating:
            record["operating_status"] = operating

    def to_dict(self) -> dict:
        return {key: list(records.values()) for key, records in self.records.items()}


def admin_operating_status(node: Node) -> str:
    return ONLINE if node.admin_state_up else OFFLINE


def member_operating_status(tree: LbTree, member: Node, mode: Mode, settled: bool) -> str:
    """OFFLINE if disabled; NO_MONITOR without a monitor; with one, OFFLINE until the
    first health check, then ONLINE (ERROR in backend-down mode for matching members)."""
    if not member.admin_state_up:
        return OFFLINE
    monitor = tree.monitor_of(member.parent_id)
    if monitor is None or monitor.provisioning_status == PENDING_DELETE or not monitor.admin_state_up:
        return NO_MONITOR
    if not settled:
        return OFFLINE
    if mode.name == BACKEND_DOWN and mode.matches(member.name, member.address):
        return ERROR
    return ONLINE


def health_delay(tree: LbTree, pool_id: str, mode: Mode) -> float:
    monitor = tree.monitor_of(pool_id)
    monitor_delay = min(monitor.delay, HEALTH_DELAY_CAP) if monitor else 0.0
    return max(mode.delay, monitor_delay)


def plan(tree: LbTree, event: Event, mode: Mode) -> list[Step]:
    """The status steps the provider reports for ``event``."""
    node = tree.get(event.id)
    if node is None:
        return []
    if event.action == DELETE:
        return _plan_delete(tree, node, mode)
    if event.action == BATCH:
        targets = [tree.get(i) for i in event.member_ids if tree.get(i)]
        targets += [m for m in tree.children(node, MEMBER) if m.provisioning_status == PENDING_DELETE]
        ancestors = [node, *tree.ancestors(node)]
    else:
        targets = [node]
        if event.action == CREATE:  # a load balancer or pool may be created with its children
            targets += [d for d in tree.descendants(node) if d.provisioning_status == PENDING_CREATE]
        ancestors = tree.ancestors(node)

    update = StatusUpdate()
    settle: list[str] = []
    for target in targets:
        if target.provisioning_status == PENDING_DELETE:
            update.set(target, DELETED)
        elif target.kind == MEMBER:
            _settle_member(tree, target, mode, update, settle)
        else:
            update.set(target, ACTIVE, admin_operating_status(target))
        if target.kind == HEALTHMONITOR:  # members get checked again by the new/updated monitor
            for member in tree.children(tree.get(target.parent_id), MEMBER):
                if member.provisioning_status == ACTIVE and member.admin_state_up:
                    update.set(member, operating=OFFLINE)
                    settle.append(member.id)

    steps = [Step(mode.delay, update.to_dict())]
    if ancestors:
        parents = StatusUpdate()
        for ancestor in ancestors:
            parents.set(ancestor, ACTIVE)
        steps.append(Step(mode.delay, parents.to_dict()))
    if settle:
        pool_id = tree.get(settle[0]).parent_id
        steps.append(Step(health_delay(tree, pool_id, mode), settle=tuple(settle)))
    return steps


def resume(tree: LbTree, mode: Mode) -> list[Step]:
    """Finish what was in flight when octavia-api stopped (the emulator's queue was lost).

    Octavia locks the load balancer for every change, so only trees whose load balancer
    is pending have work in flight; members lost under a settled load balancer stay lost.
    """
    if tree.lb.provisioning_status not in PENDING_STATUSES:
        return []
    if tree.lb.provisioning_status == PENDING_DELETE:
        return _plan_delete(tree, tree.lb, mode)
    update = StatusUpdate()
    settle: list[str] = []
    parents = StatusUpdate()
    for node in tree.nodes.values():
        status = node.provisioning_status
        if status == PENDING_DELETE:
            for doomed in [*tree.descendants(node), node]:
                update.set(doomed, DELETED)
        elif node.kind == MEMBER and status in PENDING_STATUSES:
            _settle_member(tree, node, mode, update, settle)
        elif status == PENDING_CREATE or (status == PENDING_UPDATE and node.kind not in LOCKED_PARENTS):
            update.set(node, ACTIVE, admin_operating_status(node))
        elif status == PENDING_UPDATE:
            parents.set(node, ACTIVE)
    steps = [Step(mode.delay, update.to_dict()), Step(mode.delay, parents.to_dict())]
    if settle:
        steps.append(Step(health_delay(tree, tree.get(settle[0]).parent_id, mode), settle=tuple(settle)))
    return steps


def _settle_member(tree: LbTree, member: Node, mode: Mode, update: StatusUpdate, settle: list[str]) -> None:
    """A member created or updated: ACTIVE, unless the mode loses it or fails it."""
    matching = mode.matches(member.name, member.address)
    if member.provisioning_status == PENDING_CREATE and matching:
        if mode.name == LOST_MEMBER:
            return  # stays PENDING_CREATE: the amphora v2 failure
        if mode.name == MEMBER_ERROR:
            update.set(member, ERROR)
            return
    operating = member_operating_status(tree, member, mode, settled=False)
    if (member.provisioning_status == PENDING_UPDATE and operating == OFFLINE and member.admin_state_up
            and member.operating_status in (ONLINE, ERROR)):
        operating = member.operating_status  # an update (a weight) keeps what the health checks said
    update.set(member, ACTIVE, operating)
    if operating == OFFLINE and member.admin_state_up:
        settle.append(member.id)


def _plan_delete(tree: LbTree, node: Node, mode: Mode) -> list[Step]:
    update = StatusUpdate()
    for doomed in [*tree.descendants(node), node]:
        update.set(doomed, DELETED)
    if node.kind == HEALTHMONITOR:
        for member in tree.children(tree.get(node.parent_id), MEMBER):
            if member.provisioning_status == ACTIVE:
                update.set(member, operating=NO_MONITOR if member.admin_state_up else OFFLINE)
    steps = [Step(mode.delay, update.to_dict())]
    ancestors = tree.ancestors(node)
    if ancestors:
        parents = StatusUpdate()
        for ancestor in ancestors:
            parents.set(ancestor, ACTIVE)
        steps.append(Step(mode.delay, parents.to_dict()))
    return steps


def settle_health(tree: LbTree, member_ids: tuple[str, ...], mode: Mode) -> dict:
    """Operating statuses after the first health check of these members."""
    update = StatusUpdate()
    changed: dict[str, str] = {}
    for member_id in member_ids:
        member = tree.get(member_id)
        if member is None or member.provisioning_status != ACTIVE:
            continue
        wanted = member_operating_status(tree, member, mode, settled=True)
        if wanted != member.operating_status:
            update.set(member, operating=wanted)
            changed[member.id] = wanted
    roll_up_health(tree, changed, update)
    return update.to_dict()


def pool_health(member_statuses: list[str]) -> str:
    """A health-monitored pool's operating status from its members', as Octavia's health manager
    reports it: ERROR when every member is down, DEGRADED when some are, ONLINE otherwise."""
    down = sum(1 for status in member_statuses if status == ERROR)
    if member_statuses and down == len(member_statuses):
        return ERROR
    return DEGRADED if down else ONLINE


# Provider -> its roll-up of member statuses ``(tree, member statuses, update)``, for providers that roll up
# otherwise than the amphora's health manager (registered by their module: ovn's by
# :mod:`minicloud.octavia_provider.ovn`).
PROVIDER_ROLL_UPS: dict = {}


def roll_up_health(tree: LbTree, changed: dict[str, str], update: StatusUpdate) -> None:
    """Carry member health changes up: pools (with a monitor) and the load balancer, which is
    DEGRADED while any pool is DEGRADED or ERROR."""
    if not changed:
        return
    if tree.lb.provider in PROVIDER_ROLL_UPS:  # a provider's own roll-up (ovn's: minicloud.octavia_provider.ovn)
        current = {m.id: m.operating_status for m in tree.of_kind(MEMBER)}
        PROVIDER_ROLL_UPS[tree.lb.provider](tree, {**current, **changed}, update)
        return
    pool_statuses = {}
    for pool in tree.of_kind(POOL):
        if tree.monitor_of(pool.id) is None or pool.provisioning_status != ACTIVE:
            pool_statuses[pool.id] = pool.operating_status
            continue
        members = [changed.get(m.id, m.operating_status) for m in tree.children(pool, MEMBER)
                   if m.provisioning_status == ACTIVE and m.admin_state_up]
        wanted = pool_health(members)
        pool_statuses[pool.id] = wanted
        if wanted != pool.operating_status:
            update.set(pool, operating=wanted)
    lb_wanted = DEGRADED if any(s in (DEGRADED, ERROR) for s in pool_statuses.values()) else ONLINE
    if lb_wanted != tree.lb.operating_status and tree.lb.provisioning_status == ACTIVE:
        update.set(tree.lb, operating=lb_wanted)


def reconcile(tree: LbTree, mode: Mode, health: bool = True) -> dict:
    """Statuses to report when the mode changes.

    Health-checked members follow the mode (ERROR while backend-down matches them,
    ONLINE otherwise), unless ``health`` is False (a data plane's checks report health). Back in ``normal`` mode, members lost earlier (PENDING_CREATE
    under a load balancer that is no longer pending) finish provisioning.
    """
    update = StatusUpdate()
    changed: dict[str, str] = {}
    for member in tree.of_kind(MEMBER):
        if health and member.provisioning_status == ACTIVE and member.operating_status in (ONLINE, ERROR):
            wanted = member_operating_status(tree, member, mode, settled=True)
            if wanted != member.operating_status:
                update.set(member, operating=wanted)
                changed[member.id] = wanted
        elif (
            mode.name == NORMAL
            and member.provisioning_status == PENDING_CREATE
            and tree.lb.provisioning_status not in PENDING_STATUSES
        ):
            update.set(member, ACTIVE, member_operating_status(tree, member, mode, settled=True))
    roll_up_health(tree, changed, update)
    return update.to_dict()
