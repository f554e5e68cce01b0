# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure decisions of route_audit: the audit's findings (``KINDS``): route findings per destination, missing
address pairs, and the route count against the router's limit.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import cidr_cache
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit.routes import (
    by_destination,
    cluster_key,
    is_canonical,
    is_right,
    network_order,
    route_text,
    split_routes,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit.cidr_cache import IPAddress, IPNetwork
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit.inputs import NO_KEPT, KeptRoutes
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit.nodes import (
    incomplete_nodes,
    left_alone,
    needed_routes,
    Node,
    node_address_map,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit.routes import Route

#: one finding of the audit (``kind``, ``severity``, ``destination``, ``node``, ``routes``, ``fix``, ``message``)
Finding = dict[str, Any]

ERROR = "error"
WARNING = "warning"
KINDS = ("duplicate", "stale", "missing", "wrong_nexthop", "address_pair_missing", "limit", "incomplete_node",
         "foreign_dropped")
DEFAULT_WARN_RATIO = 0.9


def _role(route: Route, want: dict[str, Any] | None, node_addresses: dict[IPAddress, str],
          kept: KeptRoutes = NO_KEPT) -> str:
    key = cluster_key(route)
    if want is not None and is_right(route, want):
        return "right"
    if kept.holds(route):
        return "kept"
    if not is_canonical(route):
        return "not_canonical"
    if key[1] not in node_addresses:
        return "stale"
    if want is None:
        return "unused"
    return "wrong"


def route_findings(routes: list[Route], nodes: Sequence[Node], cluster_cidrs: Iterable[IPNetwork],
                   reachable: Callable[[IPAddress], bool] | None = None, kept: KeptRoutes = NO_KEPT) -> list[Finding]:
    """Findings about routes, one per destination: duplicate, wrong_nexthop, missing, stale.

    ``reachable(address)`` (optional) says whether Neutron will accept the address as a nexthop; a
    fix that Neutron would refuse carries a ``note``. A route of ``kept`` (``KeptRoutes``) is never in a fix's
    removals: to a destination no node has it is no finding; beside a node's route it is listed (role ``kept``).
    """
    cluster, _foreign = split_routes(routes, cluster_cidrs)
    needed = needed_routes(nodes)
    incomplete = incomplete_nodes(nodes)
    addresses = node_address_map(list(nodes) + incomplete)
    groups = by_destination(cluster)
    findings: list[Finding] = []
    kept_by_node: dict[str, list[Route]] = dict((node["name"], []) for node in incomplete)
    for destination in sorted(set(groups) | set(needed), key=network_order):
        group = groups.get(destination, [])
        want = needed.get(destination)
        if want is not None and len(group) == 1 and is_right(group[0], want):
            continue  # the node's route and nothing else: most destinations
        if want is None:
            group = _not_kept(group, incomplete, kept_by_node, kept)
            if not group:
                continue
        group = sorted(group, key=lambda r: (r["destination"], r["nexthop"]))
        described = [dict(r, role=_role(r, want, addresses, kept),
                          node=addresses.get(cluster_key(r)[1])) for r in group]
        if want is None:
            findings.append(dict(
                kind="stale", severity=WARNING, destination=str(destination), node=None, routes=described,
                fix={"add": [], "remove": [dict(destination=r["destination"], nexthop=r["nexthop"]) for r in group]},
                message=f"no node has pod CIDR {destination}; " + "; ".join(
                    f"{route_text(r)} points at " + (f'node {r["node"]}' if r["node"] else "no current node")
                    for r in described)))
            continue
        right = [r for r in group if is_right(r, want)]
        others = [dict(destination=r["destination"], nexthop=r["nexthop"]) for r in group
                  if not is_right(r, want) and not kept.holds(r)]
        fix = {"add": [] if right else [dict(want["route"])], "remove": others}
        if len(group) > 1:
            missing = "" if right else ", which is not there"
            kind, message = "duplicate", (f"{len(group)} routes for {destination} "
                                          f"({', '.join(route_text(r) for r in group)}); the right one is "
                                          f"{route_text(want['route'])} (node {want['node']}){missing}"
                                          f"{_kept_words(group, want, kept)}")
        elif group:
            kind = "wrong_nexthop"
            message = (f"the only route for {destination} is {route_text(group[0])} ({_role_text(described[0])}); node "
                       f"{want['node']} needs {route_text(want['route'])}{_kept_words(group, want, kept)}")
        else:
            kind, message = "missing", f'node {want["node"]} has no route: {route_text(want["route"])} is not on the router'
        finding = dict(kind=kind, severity=ERROR, destination=str(destination), node=want["node"],
                       routes=described, fix=fix, message=message)
        if fix["add"] and reachable is not None and not reachable(want["nexthop"]):
            finding["note"] = (f'{want["nexthop"]} is on no subnet of the router that this user can see; Neutron will likely '
                               "refuse the route (attach the node's subnet to the router)")
        findings.append(finding)
    return findings + [_incomplete_finding(node, kept_by_node[node["name"]]) for node in incomplete]


def _not_kept(group: list[Route], incomplete: list[Node], kept_by_node: dict[str, list[Route]],
              kept: KeptRoutes) -> list[Route]:
    """The routes of ``group`` (a destination no node routes) that are neither kept (``keep_routes``) nor an
    incomplete node's (those are added to ``kept_by_node``)."""
    group = [r for r in group if not kept.holds(r)]
    return _keep_incomplete(group, incomplete, kept_by_node) if incomplete and group else group


def _kept_words(group: list[Route], want: dict[str, Any], kept: KeptRoutes) -> str:
    held = [route_text(r) for r in group if kept.holds(r) and not is_right(r, want)]
    return f'; {", ".join(held)} {"is" if len(held) == 1 else "are"} in keep_routes and never removed' \
        if held else ""


def _keep_incomplete(group: list[Route], incomplete: list[Node], kept: dict[str, list[Route]]) -> list[Route]:
    """The routes of ``group`` (a destination no node routes) that belong to no incomplete node; the others
    are added to ``kept`` (node name -> routes)."""
    rest: list[Route] = []
    for route in group:
        node = left_alone(route, cluster_key(route), incomplete)
        if node is None:
            rest.append(route)
        else:
            kept[node["name"]].append(route)
    return rest


def _incomplete_finding(node: Node, routes: list[Route]) -> Finding:
    described = [dict(destination=r["destination"], nexthop=r["nexthop"], role="kept", node=node["name"])
                 for r in sorted(routes, key=lambda r: (r["destination"], r["nexthop"]))]
    return dict(
        kind="incomplete_node", severity=WARNING, destination=str(node["pod_cidrs"][0]) if node["pod_cidrs"] else None,
        node=node["name"], routes=described, fix={}, reason=node["reason"],
        message=f"node {node['name']} exists but cannot be routed: {node['reason']}; "
                + (f'its routes are left alone: {", ".join(route_text(r) for r in described)}'
                   if described else "it has no route on the router"))


def _role_text(route: dict[str, Any]) -> str:
    return {
        "stale": "its nexthop is no current node",
        "wrong": f'its nexthop is node {route.get("node")}',
        "unused": "unused",
        "not_canonical": "its destination has host bits set, which no router can install",
        "kept": "it is in keep_routes",
    }.get(route["role"], route["role"])


def pair_covers(pairs: Iterable[dict[str, Any]] | None, cidr: IPNetwork, mac: str | None = None) -> bool:
    for pair in pairs or []:
        # parsed once per text and run (mostly a node's pod CIDR, parsed already)
        network = cidr_cache.destination(pair.get("ip_address"))
        if network is None:
            continue
        if (network.version == cidr.version and cidr.subnet_of(network) and  # type: ignore[arg-type]
                (not pair.get("mac_address") or mac is None or pair["mac_address"].lower() == mac.lower())):
            return True
    return False


def pair_findings(nodes: Iterable[Node], node_ports: dict[str, dict[str, Any] | None]) -> list[Finding]:
    """address_pair_missing findings. ``node_ports``: node name -> port dict (Neutron fields) or None."""
    findings: list[Finding] = []
    for node in nodes:
        port = node_ports.get(node["name"])
        if not port or port.get("port_security_enabled") is False:
            continue
        lacking = [c for c in node["pod_cidrs"]
                   if not pair_covers(port.get("allowed_address_pairs"), c, port.get("mac_address"))]
        for cidr in lacking:
            findings.append(dict(
                kind="address_pair_missing", severity=ERROR, destination=str(cidr), node=node["name"], routes=[],
                port=port["id"], fix={"port": port["id"], "add_address_pairs": [{"ip_address": str(cidr)}]},
                message=f"port {port.get('name') or port['id']} of node {node['name']} lacks {cidr} in "
                        "allowed_address_pairs, so port security drops its pods' traffic"))
    return findings


def limit_info(routes: list[Route], nodes: Sequence[Node], cluster_cidrs: Iterable[IPNetwork], limit: int | None,
               source: str, warn_ratio: float = DEFAULT_WARN_RATIO,
               kept: KeptRoutes = NO_KEPT) -> tuple[dict[str, Any], Finding | None]:
    """The route count against the router's limit (None: unlimited) and the finding, if any. The routes a repair
    leaves besides the needed ones (an incomplete node's, ``kept``) count as staying."""
    cluster, foreign = split_routes(routes, cluster_cidrs)
    needed_map = needed_routes(nodes)
    needed = len(needed_map)
    staying = _staying(cluster, needed_map, incomplete_nodes(nodes), kept)
    info: dict[str, Any] = dict(limit=limit, source=source, current=len(routes), foreign=len(foreign), cluster=len(cluster),
                                needed=needed, after_repair=needed + len(foreign) + staying)
    if limit is None or limit < 0:
        info["limit"] = None
        return info, None
    info["free_after_repair"] = limit - info["after_repair"]
    if info["after_repair"] > limit:
        return info, dict(
            kind="limit", severity=ERROR, destination=None, node=None, routes=[],
            fix={"raise_limit_to": info["after_repair"]},
            message=f"the cluster needs {needed} routes and {len(foreign)} foreign routes share the router, "
                    f"{info['after_repair']} in all, but the router's limit is {limit} ({source}): raise it to at "
                    f"least {info['after_repair']} (Neutron 2026.2 and later: the project's router_route quota; "
                    "before: max_routes in neutron.conf)")
    threshold = limit * warn_ratio
    if info["after_repair"] >= threshold or len(routes) > limit:
        now = f" after repair ({len(routes)} now)" if len(routes) != info["after_repair"] else ""
        return info, dict(
            kind="limit", severity=WARNING, destination=None, node=None, routes=[],
            fix={"raise_limit_to": None},
            message=f"{info['after_repair']} of the router's {limit} routes ({source}) are used{now}; room for "
                    f"{max(0, limit - info['after_repair'])} more node route(s)")
    return info, None


def _staying(cluster: list[Route], needed_map: dict[IPNetwork, dict[str, Any]], incomplete: list[Node],
             kept_routes: KeptRoutes) -> int:
    """How many cluster routes a repair leaves besides the needed ones: kept routes that are not a node's right
    route, and, of destinations no node has, the routes of incomplete nodes."""
    count = 0
    for route in cluster:
        destination = cluster_key(route)[0]
        want = needed_map.get(destination)
        if kept_routes.holds(route):
            count += 0 if want is not None and is_right(route, want) else 1
        elif want is None and incomplete and left_alone(route, cluster_key(route), incomplete):
            count += 1
    return count


def count_kinds(findings: Iterable[Finding]) -> dict[str, int]:
    counts = dict((kind, 0) for kind in KINDS)
    for finding in findings:
        counts[finding["kind"]] = counts.get(finding["kind"], 0) + 1
    return counts
