# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure decisions of route_audit: reading router routes (what ``findings``, ``steps`` and ``guards`` match on).

route_audit's plan works on plain data (routes as Neutron returns them, ``{"destination", "nexthop"}``
strings; nodes as ``{"name", "pod_cidrs", "addresses"}``) and is unit-tested without a cloud. By concern:
``routes`` (this file: parsing and matching routes), ``inputs`` (the cluster CIDRs and ``keep_routes``),
``nodes`` (the node list and the routes it needs), ``findings`` (the audit), ``steps`` (the repair order),
``guards`` (what a repair may never do) and ``ownership`` (who owns the routes).

Matching. A route belongs to the cluster when its destination lies inside one of the cluster CIDRs;
every other route is foreign and never appears in a change. Destinations are compared as networks
and nexthops as addresses (``fd00::05`` is ``fd00::5``). The route a node needs is its pod CIDR in
canonical form to its address of the same family. Neutron refuses a destination with host bits set
(``198.19.1.5/24``) in a router update, but its ``add_extraroutes`` stores one verbatim; such a route is
matched to its network (``198.19.1.0/24``) but never counts as the right route (a Linux router cannot
install it), and removals always send the string Neutron stored (it compares strings). Routes, addresses
and pod CIDRs are parsed through ``cidr_cache`` (each text once per run): the same answers as ``ipaddress``.
"""

from __future__ import annotations

import ipaddress
from typing import Any, Iterable, cast

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import PlanError
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import cidr_cache
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit.cidr_cache import (
    IPAddress,
    IPNetwork,
    RouteKey,
    inside,
)

#: a route as Neutron returns it: ``{"destination", "nexthop"}`` strings
Route = dict[str, Any]


def as_text(value: object) -> str:
    return value if isinstance(value, str) else str(value)


def parse_cidr(text: object, what: str) -> IPNetwork:
    """A CIDR in network form; PlanError for malformed input or host bits (Neutron refuses those)."""
    text = as_text(text).strip()
    if "/" not in text:
        raise PlanError(f"{what} {text!r} is not a CIDR (it needs a prefix length, e.g. 198.19.1.0/24)")
    try:
        network = cidr_cache.network(text)  # in network form: the common case, one parse
    except ValueError:
        pass
    else:
        return cidr_cache.shared(text, network)
    try:
        loose = ipaddress.ip_network(text, strict=False)
    except ValueError as exc:
        raise PlanError(f"{what} {text!r} is not a valid CIDR: {exc}")
    if loose.network_address != ipaddress.ip_interface(text).ip:
        raise PlanError(f"{what} {text} has host bits set; Neutron refuses it as a route destination (did you mean {loose}?)")
    return loose


def parse_address(text: object, what: str) -> IPAddress:
    address = cidr_cache.address(as_text(text).strip())
    if address is None:
        raise PlanError(f"{what} {text!r} is not an IP address")
    return address


def route_key(route: Any) -> RouteKey | None:
    """(network, nexthop) of a route as Neutron returned it, host bits dropped; None if unparsable."""
    try:
        destination, nexthop = route["destination"], route["nexthop"]
    except (KeyError, TypeError):
        return None
    return cidr_cache.route_key(destination, nexthop)


def cluster_key(route: Route) -> RouteKey:
    """``route_key`` of a route ``split_routes`` took for the cluster's: it was parsed, so never None."""
    return cast(RouteKey, route_key(route))


def is_canonical(route: Any) -> bool:
    try:
        destination = route["destination"]
    except (KeyError, TypeError):
        return False
    return cidr_cache.is_canonical(destination)


def route_text(route: Route) -> str:
    return f'{route["destination"]} -> {route["nexthop"]}'


def network_order(network: IPNetwork) -> tuple[int, int, int]:
    """The sort key of a network: IPv4 first, then as ``ipaddress`` orders networks (address, then prefix
    length), computed once per network instead of at every comparison."""
    return (network.version, int(network.network_address), network.prefixlen)


def split_routes(routes: Iterable[Any], cluster_cidrs: Iterable[IPNetwork]) -> tuple[list[Any], list[Any]]:
    """(cluster routes, foreign routes); a route that cannot be parsed is foreign (never touched)."""
    cluster: list[Any] = []
    foreign: list[Any] = []
    cidrs = cidr_cache.ClusterCidrs(cluster_cidrs)
    for route in routes:
        try:
            destination, nexthop = route["destination"], route["nexthop"]
        except (KeyError, TypeError):
            destination = nexthop = None
        if isinstance(destination, str) and isinstance(nexthop, str):
            mine = cidr_cache.in_cluster(destination, nexthop, cidrs)  # once per route and run
        else:
            key = route_key(route)
            mine = key is not None and inside(key[0], cluster_cidrs)
        (cluster if mine else foreign).append(route)
    return cluster, foreign


def is_right(route: Route, want: dict[str, Any]) -> bool:
    key = route_key(route)
    return key is not None and key[1] == want["nexthop"] and is_canonical(route) and \
        route["destination"] == want["route"]["destination"]


def by_destination(cluster_routes: Iterable[Route]) -> dict[IPNetwork, list[Route]]:
    groups: dict[IPNetwork, list[Route]] = {}
    for route in cluster_routes:
        groups.setdefault(cluster_key(route)[0], []).append(route)
    return groups


def route_pairs(routes: Iterable[Route]) -> frozenset[tuple[str, str]]:
    """The ``(destination, nexthop)`` strings of ``routes``: what ``removable`` holds."""
    return frozenset((r["destination"], r["nexthop"]) for r in routes)


def plain_routes(routes: Iterable[Route]) -> list[Route]:
    return [dict(destination=r["destination"], nexthop=r["nexthop"]) for r in routes]
