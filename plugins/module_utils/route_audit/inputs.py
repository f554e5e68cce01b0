# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure decisions of route_audit: the checked pod network options (``cluster_cidr``,
``cloud_controller.cluster_cidr``) and ``keep_routes``, each checked before any request.
"""

from __future__ import annotations

from typing import Any, Iterable

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import PlanError
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit.routes import (
    parse_address,
    parse_cidr,
    Route,
    route_key,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit.cidr_cache import (
    IPAddress,
    IPNetwork,
    RouteKey,
)


def normalize_cluster_cidrs(values: Iterable[Any] | None, what: str = "cluster_cidr") -> list[IPNetwork]:
    """The checked CIDRs of a pod network option (``cluster_cidr``, ``cloud_controller.cluster_cidr``): each a
    CIDR in network form and not a whole family (``0.0.0.0/0``, ``::/0``: every route of the router would be the
    cluster's). The rule every CIDR-typed pod network input of route_audit is checked by, before any request; the
    overlap with the router's own subnets needs the router (``cidr_scope_problem``)."""
    if not values:
        raise PlanError(f"{what} needs at least one CIDR")
    cidrs: list[IPNetwork] = []
    for value in values:
        cidr = parse_cidr(value, what)
        if cidr.prefixlen == 0:
            raise PlanError(whole_family(what, cidr))
        if cidr not in cidrs:
            cidrs.append(cidr)
    return cidrs


def whole_family(what: str, cidr: IPNetwork) -> str:
    return f"{what} {cidr} is every address of its family; give the cluster's pod network"


def normalize_keep_routes(values: Iterable[dict[str, Any]] | None) -> KeptRoutes:
    """``keep_routes`` checked (``KeptRoutes``): each destination a CIDR in network form (a default route may be
    kept), each nexthop an address of the destination's family. All problems are reported at once."""
    problems: list[str] = []
    keys: list[tuple[IPNetwork, IPAddress]] = []
    for index, route in enumerate(values or []):
        where = f"keep_routes[{index}]"
        try:
            destination = parse_cidr(route.get("destination"), f"{where} destination")
            nexthop = parse_address(route.get("nexthop"), f"{where} nexthop")
        except PlanError as exc:
            problems.append(str(exc))
            continue
        if destination.version != nexthop.version:
            problems.append(f"{where}: the destination {destination} is IPv{destination.version} but the nexthop "
                            f"{nexthop} is IPv{nexthop.version}; a route's nexthop is of its destination's family")
            continue
        keys.append((destination, nexthop))
    if problems:
        raise PlanError("; ".join(problems))
    return KeptRoutes(keys)


class KeptRoutes(frozenset[RouteKey]):
    """The routes of ``keep_routes`` as ``route_key``s: never removed by any step of a repair (``guard_removals``)
    and never a finding's removal, whatever they look like inside the cluster CIDRs."""

    def holds(self, route: Route) -> bool:
        """Whether ``route`` (as Neutron wrote it, host bits too) is a kept route."""
        if not self:
            return False
        key = route_key(route)
        return key is not None and key in self


NO_KEPT = KeptRoutes()
