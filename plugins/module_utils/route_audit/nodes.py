# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure decisions of route_audit: the node list checked (``normalize_nodes``), its incomplete nodes (their
routes left alone) and the routes the nodes need (``needed_routes``).
"""

from __future__ import annotations

import bisect
from typing import Any, Iterable, Optional

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import PlanError
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import cidr_cache
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit.cidr_cache import (
    IPAddress,
    IPNetwork,
    RouteKey,
    inside,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit.routes import (
    as_text,
    parse_address,
    parse_cidr,
)

#: a node as ``normalize_nodes`` checked it: ``{name, pod_cidrs: [network], addresses: [address]}``
Node = dict[str, Any]
#: destination network -> ``{"nexthop": address, "node": name, "route": canonical route dict}``
Needed = dict[IPNetwork, dict[str, Any]]


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def normalize_nodes(raw_nodes: Iterable[Any] | None, cluster_cidrs: Iterable[IPNetwork], source: str = "nodes",
                    lenient: bool = False) -> CheckedNodes:
    """Check every node; return ``[{name, pod_cidrs: [network], addresses: [address]}]``.

    A node needs a name, at least one pod CIDR inside a cluster CIDR, and an address of each pod CIDR's
    family. Names and pod CIDRs must be unique (two nodes claiming one CIDR cannot both be right).
    All problems are reported at once.

    ``lenient`` (nodes read from Kubernetes): a node that exists but cannot be routed yet (no pod CIDR, or no
    usable address for one of its pod CIDRs) is no error: it goes to the result's ``incomplete`` list
    (``{name, pod_cidrs, addresses, reason}``, what of it could be read), and routes to its pod CIDRs or via its
    addresses are left alone (``left_alone``). A node is never taken for gone because its record is incomplete.
    """
    problems: list[str] = []
    nodes: list[Node] = []
    incomplete: list[Node] = []
    names: dict[str, int] = {}
    owners = _Claims()
    for index, raw in enumerate(raw_nodes or []):
        where = f"{source}[{index}]"
        if not isinstance(raw, dict):
            problems.append(f"{where} is not a dict with name, pod_cidr and address")
            continue
        name = raw.get("name")
        if not name:
            problems.append(f"{where} has no name")
            continue
        where = f"{source}[{index}] ({name})"
        if name in names:
            problems.append(f"{where}: the name is used by {source}[{names[name]}] too")
            continue
        names[name] = index
        cidr_values = _as_list(raw.get("pod_cidrs", raw.get("pod_cidr")))
        address_values = _as_list(raw.get("addresses", raw.get("address")))
        node: Node = {"name": name, "pod_cidrs": [], "addresses": []}
        reason = incomplete_reason(cidr_values, address_values) if lenient else None
        if reason:
            incomplete.append(_incomplete_node(name, cidr_values, address_values, reason))
            continue
        try:
            node["addresses"] = _node_addresses(address_values, where)
            node["pod_cidrs"] = _node_pod_cidrs(cidr_values, node, where, cluster_cidrs, owners)
        except PlanError as exc:
            problems.append(str(exc))
            continue
        nodes.append(node)
    if problems:
        raise PlanError("; ".join(problems))
    return CheckedNodes(nodes, incomplete)


def incomplete_reason(cidr_values: list[Any], address_values: list[Any]) -> str | None:
    """Why a node that exists cannot be routed yet, or None: no pod CIDR, an address that is none, two of one
    family, or no address of a pod CIDR's family. (A malformed pod CIDR stays an error.)"""
    if not cidr_values:
        return "it has no pod CIDR yet (spec.podCIDR is empty: still being set up, or the CIDR allocator lags)"
    try:
        addresses = _node_addresses(address_values, "its")
    except PlanError as exc:
        return f"no usable address: {str(exc)}"
    for value in cidr_values:
        network = cidr_cache.destination(as_text(value).strip())
        if network is not None and not any(a.version == network.version for a in addresses):
            return (f"no usable address: pod CIDR {network} is IPv{network.version} and the node has no "
                    f"IPv{network.version} InternalIP (has: {', '.join(map(str, addresses)) or 'none'})")
    return None


def _incomplete_node(name: str, cidr_values: list[Any], address_values: list[Any], reason: str) -> Node:
    cidrs = [n for n in (cidr_cache.destination(as_text(v).strip()) for v in cidr_values) if n is not None]
    addresses = [a for a in (cidr_cache.address(as_text(v).strip()) for v in address_values) if a is not None]
    return {"name": name, "pod_cidrs": cidrs, "addresses": addresses, "reason": reason}


class CheckedNodes(list):
    """The nodes as ``normalize_nodes`` checked them, and ``incomplete``: the nodes that exist but cannot be
    routed yet. Their needed routes are computed once: an audit and each step of a repair ask for them again
    (not to be changed afterwards, like the list)."""

    _needed: Optional[Needed] = None

    def __init__(self, nodes: Iterable[Node] = (), incomplete: Iterable[Node] = ()) -> None:
        super().__init__(nodes)
        self.incomplete = list(incomplete)

    def needed_routes(self) -> Needed:
        if self._needed is None:
            self._needed = _needed_routes(self)
        return self._needed


def incomplete_nodes(nodes: Iterable[Node]) -> list[Node]:
    return getattr(nodes, "incomplete", None) or []


def left_alone(route: dict[str, Any], key: RouteKey, incomplete: Iterable[Node]) -> Node | None:
    """The incomplete node a route belongs to (its destination is inside the node's pod CIDR, or its nexthop is
    one of the node's addresses), or None. ``key``: the route's ``route_key``."""
    for node in incomplete:
        if key[1] in node["addresses"] or any(
                key[0].version == c.version and key[0].subnet_of(c) for c in node["pod_cidrs"]):
            return node
    return None


def _node_addresses(values: list[Any], where: str) -> list[IPAddress]:
    """A node's addresses, at most one per family."""
    addresses: list[IPAddress] = []
    for value in values:
        address = parse_address(value, f"{where} address")
        if any(a.version == address.version for a in addresses):
            raise PlanError(f"{where} has two IPv{address.version} addresses ({', '.join(map(str, values))}); give one "
                            "per family")
        addresses.append(address)
    return addresses


class _Claims(dict):
    """The pod CIDRs claimed so far: pod CIDR -> node name, in the order claimed. Claimed CIDRs never overlap
    (a CIDR is claimed only after the check), so per family their address ranges, kept sorted, tell in
    O(log n) whether a new CIDR overlaps any of them: only the claimed range starting last at or before its
    end can."""

    def __init__(self) -> None:
        super().__init__()
        self._starts: dict[int, list[int]] = {4: [], 6: []}
        self._ends: dict[int, list[int]] = {4: [], 6: []}

    def overlapping(self, cidr: IPNetwork) -> tuple[IPNetwork, str] | None:
        """(claimed CIDR, owner) of the first claimed CIDR other than ``cidr`` that overlaps it, or None."""
        starts, ends = self._starts[cidr.version], self._ends[cidr.version]
        start, end = _span(cidr)
        index = bisect.bisect_right(starts, end) - 1
        if index < 0 or ends[index] < start:
            return None
        for other, owner in self.items():  # rare: name the first one claimed, as the message always did
            if other != cidr and other.version == cidr.version and other.overlaps(cidr):
                return other, owner
        return None

    def claim(self, cidr: IPNetwork, owner: str) -> None:
        if cidr not in self:
            starts, ends = self._starts[cidr.version], self._ends[cidr.version]
            start, end = _span(cidr)
            index = bisect.bisect_right(starts, start)
            starts.insert(index, start)
            ends.insert(index, end)
        self[cidr] = owner


def _span(cidr: IPNetwork) -> tuple[int, int]:
    """The first and the last address of ``cidr`` as numbers."""
    start = int(cidr.network_address)
    return start, start + (1 << (cidr.max_prefixlen - cidr.prefixlen)) - 1


def _node_pod_cidrs(values: list[Any], node: Node, where: str, cluster_cidrs: Iterable[IPNetwork],
                    owners: _Claims) -> list[IPNetwork]:
    """A node's pod CIDRs: inside a cluster CIDR, of a family the node has an address of, claimed by no other
    node (``owners``: the ``_Claims`` so far, pod CIDR -> node name, updated)."""
    if not values:
        raise PlanError(f"{where} has no pod CIDR")
    cidrs: list[IPNetwork] = []
    for value in values:
        cidr = parse_cidr(value, f"{where} pod CIDR")
        if not inside(cidr, cluster_cidrs):
            raise PlanError(f'{where} pod CIDR {cidr} is outside cluster_cidr {", ".join(map(str, cluster_cidrs))}; its route would never be managed')
        if not any(a.version == cidr.version for a in node["addresses"]):
            raise PlanError(f"{where} pod CIDR {cidr} is IPv{cidr.version} but the node has no IPv{cidr.version} "
                            f"address (has: {', '.join(map(str, node['addresses'])) or 'none'})")
        if cidr in owners and owners[cidr] != node["name"]:
            raise PlanError(f"{where} pod CIDR {cidr} is claimed by node {owners[cidr]} too; a pod CIDR belongs to one node")
        clash = owners.overlapping(cidr)
        if clash is not None:
            raise PlanError(f"{where} pod CIDR {cidr} overlaps {clash[0]} of node {clash[1]}")
        owners.claim(cidr, node["name"])
        if cidr not in cidrs:
            cidrs.append(cidr)
    return cidrs


def needed_routes(nodes: Iterable[Node]) -> Needed:
    """destination network -> {"nexthop": address, "node": name, "route": canonical route dict} (read only:
    for ``CheckedNodes`` the same dict every time)."""
    if isinstance(nodes, CheckedNodes):
        return nodes.needed_routes()
    return _needed_routes(nodes)


def _needed_routes(nodes: Iterable[Node]) -> Needed:
    needed: Needed = {}
    for node in nodes:
        for cidr in node["pod_cidrs"]:
            address = next(a for a in node["addresses"] if a.version == cidr.version)
            needed[cidr] = {"nexthop": address, "node": node["name"],
                            "route": {"destination": str(cidr), "nexthop": str(address)}}
    return needed


def node_address_map(nodes: Iterable[Node]) -> dict[IPAddress, str]:
    return dict((address, node["name"]) for node in nodes for address in node["addresses"])
