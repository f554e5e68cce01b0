"""The ``ovn`` provider's rules and statuses, as ovn-octavia-provider 11.0.0 has them (pure functions).

Refusals (``ovn_octavia_provider/driver.py``, ``OvnProviderDriver``; constants from
``ovn_octavia_provider/common/constants.py``), each an ``UnsupportedOptionError`` with the driver's own words:

- protocols other than TCP, UDP and SCTP (``_check_for_supported_protocols``, ``OVN_NATIVE_LB_PROTOCOLS``);
- algorithms other than SOURCE_IP_PORT and SOURCE_IP (``_check_for_supported_algorithms``,
  ``OVN_NATIVE_LB_ALGORITHMS``);
- session persistence other than SOURCE_IP (``_check_for_supported_session_persistence``);
- a listener's allowed_cidrs (``_check_for_allowed_cidrs``);
- a member's monitor_address or monitor_port (``_check_member_monitor_options``; in a batch update
  ``member_batch_update``'s shorter message);
- a member whose address is of another IP version than the VIP (``IPVersionsMixingNotSupportedError`` in
  ``ovn_octavia_provider/common/exceptions.py``);
- a member without subnet_id whose address is not in the load balancer's VIP subnet (``_members_create``,
  ``member_batch_update``, ``helper.py`` ``_get_subnet_from_pool``): members of a fully populated load
  balancer take the VIP subnet unchecked (``loadbalancer_create``);
- health monitor types other than TCP and UDP-CONNECT (``_validate_hm_support``,
  ``SUPPORTED_HEALTH_MONITOR_TYPES``);
- load balancer failover (``loadbalancer_failover``). L7 policies and rules, flavors and availability zones are
  not implemented by the driver: Octavia-lib's ``ProviderDriver`` refuses them (``NotImplementedError``).

Statuses (``ovn_octavia_provider/helper.py``): every change is reported ACTIVE at once, with no PENDING window
of its own (the helper's request thread answers each request in one status update). A member is OFFLINE while
admin_state_up is false, NO_MONITOR without a health monitor, and with one ONLINE when created or when its
health monitor is created (``member_create``, ``hm_create``: ``_update_hm_member`` finds its port), then what
OVN's service monitor says, ONLINE or ERROR (``hm_update_event``); an update keeps ERROR and otherwise puts it
ONLINE (``member_update``). So a new member whose server never answers is ONLINE until the checks fail: OVN takes
``max_retries_down`` failed probes ``delay`` apart, each waiting up to ``timeout`` (the driver hands them over as
``failure_count``, ``interval`` and ``timeout``). Here the data plane's HAProxy checks stand for OVN's (``check inter
<delay> fall <max_retries_down>``), at most every ``check_interval_cap`` seconds (2 by default): the flip to ERROR
comes sooner than on a real cloud, never later, so a client that waits the monitor's own window is not misled. Pools, listeners and the load balancer roll up as ``_get_current_operating_statuses``
does: a pool is OFFLINE when admin-down or when the load balancer has no member at all, ERROR when all its
members are, DEGRADED when some are; listeners and the load balancer are ERROR or DEGRADED when one of theirs
is. No code reads a member's weight or backup flag.
"""

from __future__ import annotations

import ipaddress

from minicloud.octavia_provider.planner import (ACTIVE, CREATE, DEGRADED, DELETE, DELETED, ERROR, NO_MONITOR,
                                                OFFLINE, ONLINE, PENDING_CREATE, PENDING_DELETE, PROVIDER_ROLL_UPS,
                                                Event, Step, StatusUpdate)
from minicloud.octavia_provider.tree import HEALTHMONITOR, LISTENER, MEMBER, POOL, LbTree, Node

PROVIDER = "ovn"
PROTOCOLS = ("TCP", "UDP", "SCTP")
ALGORITHMS = ("SOURCE_IP_PORT", "SOURCE_IP")
HEALTH_MONITOR_TYPES = ("UDP-CONNECT", "TCP")
SESSION_PERSISTENCE = ("SOURCE_IP",)

FAILOVER = "OVN provider does not support loadbalancer failover"
MEMBER_MONITOR = "OVN Load Balancer does not support different member monitor address or port."
BATCH_MEMBER_MONITOR = "OVN provider does not support monitor options"
ALLOWED_CIDRS = "OVN provider does not support allowed_cidrs option"
HM_TYPE_MISSING = "OVN provider health monitor type not specified."
IP_VERSIONS = "OVN provider does not support mixing IPv4/IPv6 configuration within the same Load Balancer."
SUBNET_REQUIRED = ("Subnet is required, or Loadbalancer associated with Pool must have a subnet, for Member "
                   "{action} with OVN Provider Driver if it is not the same as LB VIP subnet")


class Refused(Exception):
    """What the ovn driver refuses (the driver raises it as ``UnsupportedOptionError``)."""


def check_protocol(protocol: str | None) -> None:
    if protocol not in PROTOCOLS:
        raise Refused(f"OVN provider does not support {protocol} protocol")


def check_algorithm(algorithm: str | None) -> None:
    if algorithm not in ALGORITHMS:
        raise Refused(f"OVN provider does not support {algorithm} algorithm")


def check_session_persistence(session: dict | None) -> None:
    if session and session.get("type") not in SESSION_PERSISTENCE:
        raise Refused(f"OVN provider does not support {session.get('type')} session persistence. "
                      "Only SOURCE_IP type is supported.")


def check_allowed_cidrs(cidrs: list | None) -> None:
    if cidrs:
        raise Refused(ALLOWED_CIDRS)


def check_member_monitor(monitor_address: str | None, monitor_port: int | None, batch: bool = False) -> None:
    if monitor_address or monitor_port:
        raise Refused(BATCH_MEMBER_MONITOR if batch else MEMBER_MONITOR)


def check_health_monitor_type(hm_type: str | None) -> None:
    if not hm_type:
        raise Refused(HM_TYPE_MISSING)
    if hm_type not in HEALTH_MONITOR_TYPES:
        raise Refused(f"OVN provider does not support {hm_type} health monitor type. Supported types: "
                      f"{', '.join(HEALTH_MONITOR_TYPES)}")


def check_ip_version(address: str, vip_address: str | None) -> None:
    if vip_address and ipaddress.ip_address(address).version != ipaddress.ip_address(vip_address).version:
        raise Refused(IP_VERSIONS)


def member_subnet(address: str, subnet_id: str | None, vip_subnet: tuple[str | None, str | None],
                  action: str = "creation") -> str:
    """The subnet the member is on: its own, else the VIP's subnet ``(id, cidr)`` if its address is in it."""
    if subnet_id:
        return subnet_id
    vip_subnet_id, cidr = vip_subnet
    if not (vip_subnet_id and cidr and ipaddress.ip_address(address) in ipaddress.ip_network(cidr, strict=False)):
        raise Refused(SUBNET_REQUIRED.format(action=action))
    return vip_subnet_id


# -- statuses ----------------------------------------------------------------------------


def _monitored(tree: LbTree, member: Node) -> bool:
    monitor = tree.monitor_of(member.parent_id)
    return monitor is not None and monitor.provisioning_status != PENDING_DELETE and monitor.admin_state_up


def member_status(tree: LbTree, member: Node) -> str:
    """``helper.py`` ``member_create`` / ``member_update``: OFFLINE when admin-down, NO_MONITOR without a
    monitor; with one, ERROR stays ERROR, anything else is ONLINE."""
    if not member.admin_state_up:
        return OFFLINE
    if not _monitored(tree, member):
        return NO_MONITOR
    if member.provisioning_status != PENDING_CREATE and member.operating_status == ERROR:
        return ERROR
    return ONLINE


def plan(tree: LbTree, event: Event) -> list[Step]:
    """The one status update ovn sends for ``event``: the object and its parents ACTIVE, statuses rolled up."""
    node = tree.get(event.id)
    if node is None:
        return []
    update = StatusUpdate()
    statuses = {m.id: m.operating_status for m in tree.of_kind(MEMBER)}
    gone: set[str] = set()
    if event.action == DELETE:
        _delete(tree, node, update, statuses, gone)
    else:
        for target in _targets(tree, node, event):
            _settle(tree, target, event.action, update, statuses, gone)
    for ancestor in tree.ancestors(node):
        update.set(ancestor, ACTIVE)
    roll_up(tree, statuses, update, gone)
    return [Step(0.0, update.to_dict())]


def _targets(tree: LbTree, node: Node, event: Event) -> list[Node]:
    if event.action == "batch":
        found = [tree.get(i) for i in event.member_ids if tree.get(i)]
        return found + [m for m in tree.children(node, MEMBER) if m.provisioning_status == PENDING_DELETE]
    if event.action == CREATE:  # a load balancer or pool may come with its children
        return [node, *[d for d in tree.descendants(node) if d.provisioning_status == PENDING_CREATE]]
    return [node]


def _delete(tree: LbTree, node: Node, update: StatusUpdate, statuses: dict, gone: set) -> None:
    for doomed in [*tree.descendants(node), node]:
        update.set(doomed, DELETED)
        gone.add(doomed.id)
        statuses.pop(doomed.id, None)
    if node.kind == HEALTHMONITOR:  # hm_delete: the pool's members go back to NO_MONITOR
        for member in tree.children(tree.get(node.parent_id), MEMBER):
            status = NO_MONITOR if member.admin_state_up else OFFLINE
            statuses[member.id] = status
            update.set(member, operating=status)


def _settle(tree: LbTree, target: Node, action: str, update: StatusUpdate, statuses: dict, gone: set) -> None:
    if target.provisioning_status == PENDING_DELETE:
        update.set(target, DELETED)
        gone.add(target.id)
        statuses.pop(target.id, None)
    elif target.kind == MEMBER:
        statuses[target.id] = member_status(tree, target)
        update.set(target, ACTIVE, statuses[target.id])
    elif target.kind == HEALTHMONITOR:
        update.set(target, ACTIVE, ONLINE if target.admin_state_up else OFFLINE)
        if action == CREATE:  # hm_create: every member of the pool ONLINE until OVN's checks say otherwise
            for member in tree.children(tree.get(target.parent_id), MEMBER):
                statuses[member.id] = ONLINE if member.admin_state_up else OFFLINE
                update.set(member, operating=statuses[member.id])
    else:
        update.set(target, ACTIVE)


def _worst(statuses: list[str]) -> str:
    if ERROR in statuses:
        return ERROR
    return DEGRADED if DEGRADED in statuses else ONLINE


def roll_up(tree: LbTree, statuses: dict[str, str], update: StatusUpdate, gone: set[str] = frozenset()) -> None:
    """Operating statuses of pools, listeners and the load balancer from the members' (``statuses``), as
    ``helper.py`` ``_get_current_operating_statuses`` computes them; only changes (or targets) are set."""
    pools = {}
    for pool in (p for p in tree.of_kind(POOL) if p.id not in gone):
        members = [statuses.get(m.id, ONLINE) for m in tree.children(pool, MEMBER) if m.id not in gone]
        if not pool.admin_state_up or not statuses:
            pools[pool.id] = OFFLINE
        elif members and all(s == ERROR for s in members):
            pools[pool.id] = ERROR
        else:
            pools[pool.id] = DEGRADED if ERROR in members else ONLINE
    listeners = {}
    for listener in (n for n in tree.of_kind(LISTENER) if n.id not in gone):
        mine = [pools[listener.default_pool_id]] if listener.default_pool_id in pools else []
        listeners[listener.id] = _worst(mine) if listener.admin_state_up else OFFLINE
    wanted = {**pools, **listeners}
    if tree.lb.id not in gone:
        wanted[tree.lb.id] = _worst(list(listeners.values())) if tree.lb.admin_state_up else OFFLINE
    targeted = set().union(*(records.keys() for records in update.records.values()))
    for object_id, status in wanted.items():
        node = tree.get(object_id)
        if status != node.operating_status or object_id in targeted:
            update.set(node, operating=status)
    for member_id, status in statuses.items():
        node = tree.get(member_id)
        if node is not None and node.id not in gone and status != node.operating_status:
            update.set(node, operating=status)


def is_ovn(tree: LbTree) -> bool:
    return tree.lb.provider == PROVIDER


PROVIDER_ROLL_UPS[PROVIDER] = roll_up  # health checks' changes roll up the ovn way (planner.roll_up_health)
