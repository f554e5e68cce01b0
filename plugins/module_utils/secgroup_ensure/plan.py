# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure decisions of secgroup_ensure: rule normalisation and matching, server selection, port plans.

Rules are compared the way Neutron detects a duplicate rule (``_rule_to_key`` in Neutron's
securitygroups_db): direction, ethertype, protocol (a name equals its number; for IPv6 ``icmp``,
``icmpv6`` and ``1`` all mean ``ipv6-icmp``), port range (1-65535 equals no range), remote group,
remote address group and remote prefix (0.0.0.0/0 and ::/0 equal no prefix). The description is not
compared. Remote prefixes are compared in their network form (``10.0.0.5/8`` is ``10.0.0.0/8``),
which is what a packet filter sees.

Everything here works on plain dicts with Neutron's field names and is unit-tested without a cloud.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import PlanError, RuleError
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.identifiers import is_uuid, normalize_uuid
from ansible_collections.flightcontrol.openstack.plugins.module_utils.nova.selection import is_pattern, select

# neutron_lib.constants.IP_PROTOCOL_MAP, plus the alias icmpv6.
PROTOCOL_NUMBERS = {
    "ah": 51, "dccp": 33, "egp": 8, "esp": 50, "gre": 47, "hopopt": 0, "icmp": 1, "igmp": 2, "ip": 0,
    "ipip": 4, "ipv6-encap": 41, "ipv6-frag": 44, "ipv6-icmp": 58, "icmpv6": 58, "ipv6-nonxt": 59,
    "ipv6-opts": 60, "ipv6-route": 43, "ospf": 89, "pgm": 113, "rsvp": 46, "sctp": 132, "tcp": 6,
    "udp": 17, "udplite": 136, "vrrp": 112,
}
PORT_PROTOCOLS = frozenset([6, 17, 33, 132])  # tcp, udp, dccp, sctp
ICMP_PROTOCOLS = frozenset([1, 58])
IPV6_ONLY_PROTOCOLS = frozenset([41, 44, 58, 59, 60, 43])
ANY_PROTOCOL = ("any", "", None)
DIRECTIONS = ("ingress", "egress")
ETHERTYPES = ("IPv4", "IPv6")
POD_PROTOCOLS = ("tcp", "udp", "icmp")
# Stands for the id of a group not created yet (check mode, plans made before the create).
NEW_GROUP = "(new group)"


def protocol_number(protocol: Any, ethertype: str | None) -> int | None:
    """The protocol as Neutron compares it: None for any, else the number (IPv6 ICMP folded to 58)."""
    if protocol in ANY_PROTOCOL:
        return None
    text = str(protocol).strip().lower()
    if text in ANY_PROTOCOL:
        return None
    if text in PROTOCOL_NUMBERS:
        number = PROTOCOL_NUMBERS[text]
    else:
        try:
            number = int(text)
        except ValueError:
            raise RuleError(f'protocol {protocol!r} is neither a known protocol name ({", ".join(sorted(PROTOCOL_NUMBERS))}) nor a number 0-255')
        if not 0 <= number <= 255:
            raise RuleError(f"protocol number {number} is outside 0-255")
    if ethertype == "IPv6" and number == 1:
        number = 58
    return number


def protocol_name(number: Any) -> str | None:
    if number is None:
        return None
    for name, value in sorted(PROTOCOL_NUMBERS.items()):
        if value == number and name not in ("icmpv6", "ip"):
            return name
    return str(number)


def normalize_prefix(prefix: Any, ethertype: str | None = None, what: str = "remote_ip_prefix") -> str | None:
    """The prefix in network form, None for no prefix or any address; RuleError if malformed or
    of the other family than ``ethertype``."""
    if prefix in (None, ""):
        return None
    try:
        network = ipaddress.ip_network(str(prefix).strip(), strict=False)
    except ValueError as exc:
        raise RuleError(f"{what} {prefix!r} is not a valid CIDR: {exc}")
    if ethertype is not None and f"IPv{network.version}" != ethertype:
        raise RuleError(f"{what} {prefix} is an IPv{network.version} prefix but the rule's ethertype is {ethertype}")
    if network.prefixlen == 0:
        return None
    return str(network)


def _port(value: Any, name: str) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise RuleError(f"{name} {value!r} is not an integer")


class Rule:
    """One normalised rule. ``key`` is what Neutron's duplicate check compares."""

    FIELDS = ("direction", "ethertype", "protocol", "port_range_min", "port_range_max", "remote_ip_prefix",
              "remote_group_id", "remote_address_group_id")

    def __init__(self, direction: Any, ethertype: Any, protocol: Any, port_range_min: int | None,
                 port_range_max: int | None, remote_ip_prefix: str | None, remote_group_id: str | None,
                 remote_address_group_id: str | None = None, description: str | None = None,
                 rule_id: str | None = None) -> None:
        self.direction = direction
        self.ethertype = ethertype
        self.protocol = protocol  # number or None
        self.port_range_min = port_range_min
        self.port_range_max = port_range_max
        self.remote_ip_prefix = remote_ip_prefix
        self.remote_group_id = remote_group_id
        self.remote_address_group_id = remote_address_group_id
        self.description = description
        self.id: Any = rule_id  # Neutron's id (None for a rule not made yet)

    @property
    def key(self) -> tuple[Any, ...]:
        return tuple(getattr(self, f) for f in self.FIELDS)

    def to_api(self, security_group_id: str) -> dict[str, Any]:
        """The body of a rule create request."""
        body: dict[str, Any] = dict(security_group_id=security_group_id, direction=self.direction,
                                    ethertype=self.ethertype)
        if self.protocol is not None:
            body["protocol"] = protocol_name(self.protocol)
        for field in ("port_range_min", "port_range_max", "remote_ip_prefix", "remote_group_id",
                      "remote_address_group_id", "description"):
            value = getattr(self, field)
            if value is not None:
                body[field] = value
        return body

    def view(self) -> dict[str, Any]:
        """The rule as the module reports it."""
        data = dict((f, getattr(self, f)) for f in self.FIELDS)
        data["protocol"] = protocol_name(self.protocol)
        data["description"] = self.description
        data["id"] = self.id
        return data

    def label(self) -> str:
        parts = [self.direction, self.ethertype, protocol_name(self.protocol) or "any"]
        if self.port_range_min is not None or self.port_range_max is not None:
            parts.append(f"{self.port_range_min}-{self.port_range_max}")
        if self.remote_ip_prefix:
            parts.append("from " + self.remote_ip_prefix)
        if self.remote_group_id:
            parts.append("group " + self.remote_group_id)
        if self.remote_address_group_id:
            parts.append("address group " + self.remote_address_group_id)
        return " ".join(parts)


def _canonical_ports(protocol: int | None, pmin: int | None, pmax: int | None) -> tuple[int | None, int | None]:
    """Neutron's port range validation and canonical form (1-65535 becomes no range)."""
    if pmin is None and pmax is None:
        return None, None
    if protocol is None:
        raise RuleError("a port range needs a protocol (Neutron: SecurityGroupProtocolRequiredWithPorts)")
    if protocol in PORT_PROTOCOLS:
        if pmin == 0 or pmax == 0:
            raise RuleError(f"port 0 is not allowed for {protocol_name(protocol)}")
        if pmin is None or pmax is None or pmin > pmax:
            raise RuleError(f"{protocol_name(protocol)} needs port_range_min <= port_range_max, both given (got {pmin} and {pmax})")
        if not (1 <= pmin <= 65535 and 1 <= pmax <= 65535):
            raise RuleError(f"ports must be within 1-65535 (got {pmin}-{pmax})")
        if (pmin, pmax) == (1, 65535):
            return None, None
        return pmin, pmax
    if protocol in ICMP_PROTOCOLS:
        for value, field in ((pmin, "type (port_range_min)"), (pmax, "code (port_range_max)")):
            if value is not None and not 0 <= value <= 255:
                raise RuleError(f"ICMP {field} {value} is outside 0-255")
        if pmin is None and pmax is not None:
            raise RuleError(f"an ICMP code (port_range_max {pmax}) needs an ICMP type (port_range_min)")
        return pmin, pmax
    raise RuleError(f"protocol {protocol_name(protocol)} takes no port range; only tcp, udp, dccp, sctp (ports) and icmp (type/code) do")


def normalize_rule(spec: Mapping[str, Any], group_ids: Mapping[str, str] | None = None) -> Rule:
    """A user's rule spec (module option) as a ``Rule``; RuleError with the reason if Neutron would reject it.

    ``spec`` keys: direction, ethertype, protocol, port_range_min, port_range_max, port (one port),
    remote_ip_prefix, remote_group (id, or a name found in ``group_ids``: name -> id), description.
    """
    group_ids = group_ids or {}
    direction = spec.get("direction") or "ingress"
    if direction not in DIRECTIONS:
        raise RuleError(f'direction {direction!r} is not one of {", ".join(DIRECTIONS)}')
    prefix_text = spec.get("remote_ip_prefix")
    ethertype = spec.get("ethertype")
    if ethertype is None:
        ethertype = f"IPv{ipaddress.ip_network(str(prefix_text).strip(), strict=False).version}" \
            if prefix_text not in (None, "") and _valid_network(prefix_text) else "IPv4"
    if ethertype not in ETHERTYPES:
        raise RuleError(f'ethertype {ethertype!r} is not one of {", ".join(ETHERTYPES)}')
    protocol = protocol_number(spec.get("protocol"), ethertype)
    if protocol in IPV6_ONLY_PROTOCOLS and ethertype == "IPv4":
        raise RuleError(f"protocol {protocol_name(protocol)} is IPv6 only but the ethertype is IPv4")
    pmin = _port(spec.get("port_range_min"), "port_range_min")
    pmax = _port(spec.get("port_range_max"), "port_range_max")
    port = _port(spec.get("port"), "port")
    if port is not None:
        if pmin is not None or pmax is not None:
            raise RuleError("give either port or port_range_min/port_range_max, not both")
        pmin = pmax = port
    pmin, pmax = _canonical_ports(protocol, pmin, pmax)
    prefix = normalize_prefix(prefix_text, ethertype)
    remote_group = spec.get("remote_group")
    if remote_group and prefix_text not in (None, ""):
        raise RuleError("give either remote_ip_prefix or remote_group, not both")
    remote_group_id = None
    if remote_group:
        if remote_group in group_ids:
            remote_group_id = group_ids[remote_group]
        elif is_uuid(remote_group):
            remote_group_id = normalize_uuid(remote_group)
        else:
            raise RuleError(f"remote_group {remote_group!r} is not a security group id nor a name found")
    return Rule(direction, ethertype, protocol, pmin, pmax, prefix, remote_group_id,
                description=spec.get("description"))


def _valid_network(text: object) -> bool:
    try:
        ipaddress.ip_network(str(text).strip(), strict=False)
    except ValueError:
        return False
    return True


def pod_cidr_rules(cidrs: Iterable[Any], description: str | None = None) -> list[Rule]:
    """The shortcut: ingress tcp, udp and icmp (ipv6-icmp for IPv6) from each CIDR."""
    rules: list[Rule] = []
    for cidr in cidrs:
        try:
            network = ipaddress.ip_network(str(cidr).strip(), strict=False)
        except ValueError as exc:
            raise RuleError(f"pod_cidr {cidr!r} is not a valid CIDR: {exc}")
        ethertype = f"IPv{network.version}"
        for proto in POD_PROTOCOLS:
            rules.append(normalize_rule(dict(direction="ingress", ethertype=ethertype, protocol=proto,
                                             remote_ip_prefix=str(network), description=description)))
    return rules


def rule_from_neutron(rule: dict[str, Any]) -> Rule:
    """A rule as Neutron returns it, as a ``Rule``. Never raises on what Neutron stored."""
    ethertype = rule.get("ethertype")
    try:
        protocol: Any = protocol_number(rule.get("protocol"), ethertype)
    except RuleError:
        protocol = rule.get("protocol")
    prefix = rule.get("remote_ip_prefix")
    try:
        prefix = normalize_prefix(prefix)
    except RuleError:
        pass
    pmin, pmax = rule.get("port_range_min"), rule.get("port_range_max")
    if protocol in PORT_PROTOCOLS and (pmin, pmax) == (1, 65535):
        pmin = pmax = None
    remote_group = rule.get("remote_group_id")
    return Rule(rule.get("direction"), ethertype, protocol, pmin, pmax, prefix,
                normalize_uuid(remote_group) if remote_group else None,
                rule.get("remote_address_group_id"), description=rule.get("description"), rule_id=rule.get("id"))


def dedupe(rules: Iterable[Rule]) -> list[Rule]:
    """The rules with duplicates (same key) dropped, first one kept, order kept."""
    seen = set()
    result = []
    for rule in rules:
        if rule.key not in seen:
            seen.add(rule.key)
            result.append(rule)
    return result


@dataclass(eq=False)
class RulePlan:
    create: list[Rule]
    delete: list[Rule]
    present: list[Rule]


def plan_rules(wanted: Iterable[Rule], existing: Iterable[Rule], state: str = "present",
               exclusive: bool = False) -> RulePlan:
    """What to create and delete so the group has ``wanted`` (state present, plus nothing else with
    ``exclusive``) or lacks it (state absent). ``existing`` are ``Rule`` objects with ids."""
    wanted = dedupe(wanted)
    existing_keys: dict[tuple[Any, ...], list[Rule]] = {}
    for rule in existing:
        existing_keys.setdefault(rule.key, []).append(rule)
    wanted_keys = set(r.key for r in wanted)
    if state == "absent":
        delete = [r for r in existing if r.key in wanted_keys]
        return RulePlan(create=[], delete=guard_deletes(delete, wanted_keys, state), present=[])
    create = [r for r in wanted if r.key not in existing_keys]
    present = [existing_keys[r.key][0] for r in wanted if r.key in existing_keys]
    delete = [r for r in existing if r.key not in wanted_keys] if exclusive else []
    return RulePlan(create=create, delete=guard_deletes(delete, wanted_keys, state), present=present)


def guard_deletes(delete: list[Rule], wanted_keys: set[tuple[Any, ...]], state: str) -> list[Rule]:
    """The final guard over a rule plan: with state present no rule of ``rules``/``pod_cidr`` (``wanted_keys``) is
    ever deleted (``exclusive`` removes only the others); with state absent only those are. A plan that breaks this
    is an internal error (PlanError), raised before any write. Returns ``delete``."""
    wrong = [r for r in delete if (r.key in wanted_keys) != (state == "absent")]
    if wrong:
        raise PlanError(f"internal error: the plan would delete {'; '.join(r.label() for r in wrong)}, which "
                        f"{'the rules ask to keep' if state != 'absent' else 'the rules do not name'}; nothing was "
                        "written")
    return delete


def select_servers(servers: list[dict[str, Any]],
                   selectors: Iterable[str] | None) -> tuple[list[dict[str, Any]], list[str]]:
    """The servers chosen by ``selectors`` (ids, names, or glob patterns on names; the rule of ``core.names``: an
    entry that is exactly a server's name means that server only, even with ``*`` in it), in list order, each
    once; and the selectors (ids or names, not patterns) that matched nothing.

    Raises ResolveError for a name that several servers have (the user must use ids or a pattern)."""
    selection = select(servers, selectors)
    existing = set(s.get("name") or "" for s in servers)
    missing = [entry for entry in selection.missing if entry in existing or not is_pattern(entry)]
    return selection.chosen, missing


@dataclass(eq=False)
class PortChange:
    server: dict[str, Any]
    port: dict[str, Any]
    before: list[str]
    after: list[str]

    def view(self) -> dict[str, Any]:
        return dict(server=self.server.get("name"), server_id=self.server["id"], port=self.port["id"],
                    port_name=self.port.get("name"), before=list(self.before), after=list(self.after))


def wanted_groups(current: Iterable[str] | None, group_id: str, state: str) -> list[str]:
    """A port's security group list after ensuring ``group_id`` is in it (present) or not (absent);
    order kept, the group appended at the end."""
    current = list(current or [])
    if state == "absent":
        return [g for g in current if g != group_id]
    return current if group_id in current else current + [group_id]


def plan_ports(servers: Iterable[dict[str, Any]], ports: Iterable[dict[str, Any]], group_id: str,
               state: str = "present") -> tuple[list[PortChange], list[dict[str, Any]], list[dict[str, Any]]]:
    """Port updates and skipped ports. ``ports`` are Neutron ports of all chosen servers (matched to a
    server by device_id). A port without port security cannot carry a group: it is skipped with the
    reason (when removing, it has no group to remove, so it is only skipped if it lists the group).
    Servers with no port are returned too."""
    by_device: dict[Any, list[dict[str, Any]]] = {}
    for port in ports:
        by_device.setdefault(port.get("device_id"), []).append(port)
    changes: list[PortChange] = []
    skipped: list[dict[str, Any]] = []
    portless: list[dict[str, Any]] = []
    for server in servers:
        mine = sorted(by_device.get(server["id"], []), key=lambda p: (p.get("name") or "", p["id"]))
        if not mine:
            portless.append(server)
        for port in mine:
            current = port.get("security_groups") or []
            if port.get("port_security_enabled") is False:
                if state == "present" or group_id in current:
                    skipped.append(dict(server=server.get("name"), server_id=server["id"], port=port["id"],
                                        port_name=port.get("name"),
                                        reason="port security is disabled on this port (port_security_enabled "
                                               "false), so it cannot carry security groups"))
                continue
            after = wanted_groups(current, group_id, state)
            if after != list(current):
                changes.append(PortChange(server, port, current, after))
    return changes, skipped, portless


# -- guards --------------------------------------------------------------------------------------

#: Neutron's longest name and description (its API refuses longer ones with HTTP 400).
NAME_LENGTH = 255


def text_problem(what: str, value: str | None, required: bool = False) -> str | None:
    """Why a name or description is refused (Neutron's length limit, blank names), or None."""
    if value is None:
        return None
    if required and not value.strip():
        return f"{what} must not be empty or blank"
    if len(value) > NAME_LENGTH:
        return f"{what} is {len(value)} characters long; Neutron takes at most {NAME_LENGTH}"
    return None


def exclusive_refusal(plan: RulePlan, existing: Sequence[Rule], max_share: float) -> str | None:
    """Why ``exclusive`` must not remove ``plan.delete`` from a group that had ``existing`` rules, or None:
    every rule of the group, or more than ``max_share`` of them. ``max_share`` 1 lifts the guard."""
    if not plan.delete or max_share >= 1 or not existing:
        return None
    share = float(len(plan.delete)) / len(existing)
    if share <= max_share and len(plan.delete) < len(existing):
        return None
    return (f"refusing exclusive: it would remove {len(plan.delete)} of the group's {len(existing)} rules "
            f"({'; '.join(r.label() for r in plan.delete[:10])}){', ...' if len(plan.delete) > 10 else ''}, more than "
            f"max_removal_share {max_share} allows; a rule list that misses most of what the group carries is more "
            "likely wrong than the group. Nothing was changed. To remove them all the same, run again with "
            "max_removal_share: 1")


def settle_twins(groups: list[dict[str, Any]], ours_id: str) -> tuple[dict[str, Any], bool]:
    """Two runs that created a group of one name at the same time: the group both keep (the oldest by
    ``created_at``, then by id: every run that sees the same groups keeps the same one) and whether ours must
    go. ``groups`` are Neutron's dicts of every group of the name, ours among them."""
    kept = sorted(groups, key=lambda g: (g.get("created_at") or "", g["id"]))[0]
    return kept, kept["id"] != ours_id


def untouched_since_created(created: dict[str, Any], now: dict[str, Any] | None) -> bool:
    """Whether a group we created still has the rules Neutron gave it and nothing else (no rule added by
    another client): then removing it loses nothing."""
    return now is not None and _rule_keys(created) == _rule_keys(now)


def _rule_keys(group: dict[str, Any]) -> list[str]:
    return sorted(repr(rule_from_neutron(r).key) for r in group.get("security_group_rules") or [])


def recheck_deletes(planned: list[Rule], fresh: list[Rule], max_share: float) -> tuple[list[Rule], list[Rule], str | None]:
    """The planned deletes judged again on a fresh read of the group (``fresh``: its rules as ``Rule``), just
    before they are made: the rules that are still there, those already gone, and the refusal of
    ``exclusive_refusal`` on the group as it is now (a rule added after the plan's read is never deleted: only
    planned rules are). Returns (delete, gone, refusal)."""
    by_id = dict((r.id, r) for r in fresh)
    delete = [by_id[r.id] for r in planned if r.id in by_id]
    gone = [r for r in planned if r.id not in by_id]
    return delete, gone, exclusive_refusal(RulePlan(create=[], delete=delete, present=[]), fresh, max_share)
