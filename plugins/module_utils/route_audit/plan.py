# -*- coding: utf-8 -*-
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure decisions of route_audit: which router routes a cluster needs, what is wrong, how to repair.

Everything here works on plain data (routes as Neutron returns them, ``{"destination", "nexthop"}``
strings; nodes as ``{"name", "pod_cidrs", "addresses"}``) and is unit-tested without a cloud.

Matching. A route belongs to the cluster when its destination lies inside one of the cluster CIDRs;
every other route is foreign and never appears in a change. Destinations are compared as networks
and nexthops as addresses (``fd00::05`` is ``fd00::5``). The route a node needs is its pod CIDR in
canonical form to its address of the same family. Neutron refuses a destination with host bits set
(``198.19.1.5/24``) in a router update, but its ``add_extraroutes`` stores one verbatim; such a route is
matched to its network (``198.19.1.0/24``) but never counts as the right route (a Linux router cannot
install it), and removals always send the string Neutron stored (it compares strings). Routes, addresses
and pod CIDRs are parsed through ``cidr_cache`` (each text once per run): the same answers as ``ipaddress``.

Repair order (``next_step``), so that a failure at any point leaves no destination worse off:
adds of the right routes first (never more than the route limit leaves room for), then removal of the
other routes of destinations whose right route is in place, then address pairs, then routes to pod
CIDRs no node has (stale). Only when the limit leaves no room for an add are stale routes removed
first, and only when no stale route is left the wrong routes of the destinations still waiting
(they carry no working traffic).
"""

import bisect
import ipaddress

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import PlanError
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import cidr_cache
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit.cidr_cache import inside

ERROR = "error"
WARNING = "warning"
KINDS = ("duplicate", "stale", "missing", "wrong_nexthop", "address_pair_missing", "limit", "incomplete_node",
         "foreign_dropped")
DEFAULT_WARN_RATIO = 0.9


def _text(value):
    return value if isinstance(value, str) else str(value)


def parse_cidr(text, what):
    """A CIDR in network form; PlanError for malformed input or host bits (Neutron refuses those)."""
    text = _text(text).strip()
    if "/" not in text:
        raise PlanError("%s %r is not a CIDR (it needs a prefix length, e.g. 198.19.1.0/24)" % (what, text))
    try:
        network = cidr_cache.network(text)  # in network form: the common case, one parse
    except ValueError:
        pass
    else:
        return cidr_cache.shared(text, network)
    try:
        loose = ipaddress.ip_network(text, strict=False)
    except ValueError as exc:
        raise PlanError("%s %r is not a valid CIDR: %s" % (what, text, exc))
    if loose.network_address != ipaddress.ip_interface(text).ip:
        raise PlanError("%s %s has host bits set; Neutron refuses it as a route destination (did you mean %s?)"
                        % (what, text, loose))
    return loose


def parse_address(text, what):
    address = cidr_cache.address(_text(text).strip())
    if address is None:
        raise PlanError("%s %r is not an IP address" % (what, text))
    return address


def route_key(route):
    """(network, nexthop) of a route as Neutron returned it, host bits dropped; None if unparsable."""
    try:
        destination, nexthop = route["destination"], route["nexthop"]
    except (KeyError, TypeError):
        return None
    return cidr_cache.route_key(destination, nexthop)


def is_canonical(route):
    try:
        destination = route["destination"]
    except (KeyError, TypeError):
        return False
    return cidr_cache.is_canonical(destination)


def route_text(route):
    return "%s -> %s" % (route["destination"], route["nexthop"])


def network_order(network):
    """The sort key of a network: IPv4 first, then as ``ipaddress`` orders networks (address, then prefix
    length), computed once per network instead of at every comparison."""
    return (network.version, int(network.network_address), network.prefixlen)


# -- input --------------------------------------------------------------------------------------

def normalize_cluster_cidrs(values, what="cluster_cidr"):
    """The checked CIDRs of a pod network option (``cluster_cidr``, ``cloud_controller.cluster_cidr``): each a
    CIDR in network form and not a whole family (``0.0.0.0/0``, ``::/0``: every route of the router would be the
    cluster's). The rule every CIDR-typed pod network input of route_audit is checked by, before any request; the
    overlap with the router's own subnets needs the router (``cidr_scope_problem``)."""
    if not values:
        raise PlanError("%s needs at least one CIDR" % what)
    cidrs = []
    for value in values:
        cidr = parse_cidr(value, what)
        if cidr.prefixlen == 0:
            raise PlanError(whole_family(what, cidr))
        if cidr not in cidrs:
            cidrs.append(cidr)
    return cidrs


def whole_family(what, cidr):
    return "%s %s is every address of its family; give the cluster's pod network" % (what, cidr)


def normalize_keep_routes(values):
    """``keep_routes`` checked (``KeptRoutes``): each destination a CIDR in network form (a default route may be
    kept), each nexthop an address of the destination's family. All problems are reported at once."""
    problems, keys = [], []
    for index, route in enumerate(values or []):
        where = "keep_routes[%d]" % index
        try:
            destination = parse_cidr(route.get("destination"), "%s destination" % where)
            nexthop = parse_address(route.get("nexthop"), "%s nexthop" % where)
        except PlanError as exc:
            problems.append(str(exc))
            continue
        if destination.version != nexthop.version:
            problems.append("%s: the destination %s is IPv%d but the nexthop %s is IPv%d; a route's nexthop is of "
                            "its destination's family" % (where, destination, destination.version, nexthop,
                                                          nexthop.version))
            continue
        keys.append((destination, nexthop))
    if problems:
        raise PlanError("; ".join(problems))
    return KeptRoutes(keys)


class KeptRoutes(frozenset):
    """The routes of ``keep_routes`` as ``route_key``s: never removed by any step of a repair (``guard_removals``)
    and never a finding's removal, whatever they look like inside the cluster CIDRs."""

    def holds(self, route):
        """Whether ``route`` (as Neutron wrote it, host bits too) is a kept route."""
        if not self:
            return False
        key = route_key(route)
        return key is not None and key in self


NO_KEPT = KeptRoutes()


def guard_removals(step, kept):
    """The final guard over a planned step: removing a kept route is an internal error (PlanError), raised before
    the step is written. None when the step is safe."""
    if step is None or step.get("action") != "remove_routes" or not kept:
        return None
    held = [route_text(route) for route in step["routes"] if kept.holds(route)]
    if held:
        raise PlanError("internal error: the repair planned to remove %s, which keep_routes keeps (%s); nothing of "
                        "this step was written" % (", ".join(held), step.get("reason")))
    return None


def _as_list(value):
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def normalize_nodes(raw_nodes, cluster_cidrs, source="nodes", lenient=False):
    """Check every node; return ``[{name, pod_cidrs: [network], addresses: [address]}]``.

    A node needs a name, at least one pod CIDR inside a cluster CIDR, and an address of each pod CIDR's
    family. Names and pod CIDRs must be unique (two nodes claiming one CIDR cannot both be right).
    All problems are reported at once.

    ``lenient`` (nodes read from Kubernetes): a node that exists but cannot be routed yet (no pod CIDR, or no
    usable address for one of its pod CIDRs) is no error: it goes to the result's ``incomplete`` list
    (``{name, pod_cidrs, addresses, reason}``, what of it could be read), and routes to its pod CIDRs or via its
    addresses are left alone (``left_alone``). A node is never taken for gone because its record is incomplete.
    """
    problems = []
    nodes = []
    incomplete = []
    names = {}
    owners = _Claims()
    for index, raw in enumerate(raw_nodes or []):
        where = "%s[%d]" % (source, index)
        if not isinstance(raw, dict):
            problems.append("%s is not a dict with name, pod_cidr and address" % where)
            continue
        name = raw.get("name")
        if not name:
            problems.append("%s has no name" % where)
            continue
        where = "%s[%d] (%s)" % (source, index, name)
        if name in names:
            problems.append("%s: the name is used by %s[%d] too" % (where, source, names[name]))
            continue
        names[name] = index
        cidr_values = _as_list(raw.get("pod_cidrs", raw.get("pod_cidr")))
        address_values = _as_list(raw.get("addresses", raw.get("address")))
        node = {"name": name, "pod_cidrs": [], "addresses": []}
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


def incomplete_reason(cidr_values, address_values):
    """Why a node that exists cannot be routed yet, or None: no pod CIDR, an address that is none, two of one
    family, or no address of a pod CIDR's family. (A malformed pod CIDR stays an error.)"""
    if not cidr_values:
        return "it has no pod CIDR yet (spec.podCIDR is empty: still being set up, or the CIDR allocator lags)"
    try:
        addresses = _node_addresses(address_values, "its")
    except PlanError as exc:
        return "no usable address: %s" % str(exc)
    for value in cidr_values:
        network = cidr_cache.destination(_text(value).strip())
        if network is not None and not any(a.version == network.version for a in addresses):
            return "no usable address: pod CIDR %s is IPv%d and the node has no IPv%d InternalIP (has: %s)" % (
                network, network.version, network.version, ", ".join(map(str, addresses)) or "none")
    return None


def _incomplete_node(name, cidr_values, address_values, reason):
    cidrs = [n for n in (cidr_cache.destination(_text(v).strip()) for v in cidr_values) if n is not None]
    addresses = [a for a in (cidr_cache.address(_text(v).strip()) for v in address_values) if a is not None]
    return {"name": name, "pod_cidrs": cidrs, "addresses": addresses, "reason": reason}


class CheckedNodes(list):
    """The nodes as ``normalize_nodes`` checked them, and ``incomplete``: the nodes that exist but cannot be
    routed yet. Their needed routes are computed once: an audit and each step of a repair ask for them again
    (not to be changed afterwards, like the list)."""

    _needed = None

    def __init__(self, nodes=(), incomplete=()):
        super(CheckedNodes, self).__init__(nodes)
        self.incomplete = list(incomplete)

    def needed_routes(self):
        if self._needed is None:
            self._needed = _needed_routes(self)
        return self._needed


def incomplete_nodes(nodes):
    return getattr(nodes, "incomplete", None) or []


def left_alone(route, key, incomplete):
    """The incomplete node a route belongs to (its destination is inside the node's pod CIDR, or its nexthop is
    one of the node's addresses), or None. ``key``: the route's ``route_key``."""
    for node in incomplete:
        if key[1] in node["addresses"] or any(
                key[0].version == c.version and key[0].subnet_of(c) for c in node["pod_cidrs"]):
            return node
    return None


def _node_addresses(values, where):
    """A node's addresses, at most one per family."""
    addresses = []
    for value in values:
        address = parse_address(value, "%s address" % where)
        if any(a.version == address.version for a in addresses):
            raise PlanError("%s has two IPv%d addresses (%s); give one per family" % (
                where, address.version, ", ".join(map(str, values))))
        addresses.append(address)
    return addresses


class _Claims(dict):
    """The pod CIDRs claimed so far: pod CIDR -> node name, in the order claimed. Claimed CIDRs never overlap
    (a CIDR is claimed only after the check), so per family their address ranges, kept sorted, tell in
    O(log n) whether a new CIDR overlaps any of them: only the claimed range starting last at or before its
    end can."""

    def __init__(self):
        super(_Claims, self).__init__()
        self._starts = {4: [], 6: []}
        self._ends = {4: [], 6: []}

    def overlapping(self, cidr):
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

    def claim(self, cidr, owner):
        if cidr not in self:
            starts, ends = self._starts[cidr.version], self._ends[cidr.version]
            start, end = _span(cidr)
            index = bisect.bisect_right(starts, start)
            starts.insert(index, start)
            ends.insert(index, end)
        self[cidr] = owner


def _span(cidr):
    """The first and the last address of ``cidr`` as numbers."""
    start = int(cidr.network_address)
    return start, start + (1 << (cidr.max_prefixlen - cidr.prefixlen)) - 1


def _node_pod_cidrs(values, node, where, cluster_cidrs, owners):
    """A node's pod CIDRs: inside a cluster CIDR, of a family the node has an address of, claimed by no other
    node (``owners``: the ``_Claims`` so far, pod CIDR -> node name, updated)."""
    if not values:
        raise PlanError("%s has no pod CIDR" % where)
    cidrs = []
    for value in values:
        cidr = parse_cidr(value, "%s pod CIDR" % where)
        if not inside(cidr, cluster_cidrs):
            raise PlanError("%s pod CIDR %s is outside cluster_cidr %s; its route would never be managed" % (
                where, cidr, ", ".join(map(str, cluster_cidrs))))
        if not any(a.version == cidr.version for a in node["addresses"]):
            raise PlanError("%s pod CIDR %s is IPv%d but the node has no IPv%d address (has: %s)" % (
                where, cidr, cidr.version, cidr.version, ", ".join(map(str, node["addresses"])) or "none"))
        if cidr in owners and owners[cidr] != node["name"]:
            raise PlanError("%s pod CIDR %s is claimed by node %s too; a pod CIDR belongs to one node" % (
                where, cidr, owners[cidr]))
        clash = owners.overlapping(cidr)
        if clash is not None:
            raise PlanError("%s pod CIDR %s overlaps %s of node %s" % (where, cidr, clash[0], clash[1]))
        owners.claim(cidr, node["name"])
        if cidr not in cidrs:
            cidrs.append(cidr)
    return cidrs


def needed_routes(nodes):
    """destination network -> {"nexthop": address, "node": name, "route": canonical route dict} (read only:
    for ``CheckedNodes`` the same dict every time)."""
    if isinstance(nodes, CheckedNodes):
        return nodes.needed_routes()
    return _needed_routes(nodes)


def _needed_routes(nodes):
    needed = {}
    for node in nodes:
        for cidr in node["pod_cidrs"]:
            address = next(a for a in node["addresses"] if a.version == cidr.version)
            needed[cidr] = {"nexthop": address, "node": node["name"],
                            "route": {"destination": str(cidr), "nexthop": str(address)}}
    return needed


# -- audit --------------------------------------------------------------------------------------

def split_routes(routes, cluster_cidrs):
    """(cluster routes, foreign routes); a route that cannot be parsed is foreign (never touched)."""
    cluster, foreign = [], []
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


def _is_right(route, want):
    key = route_key(route)
    return key is not None and key[1] == want["nexthop"] and is_canonical(route) and \
        route["destination"] == want["route"]["destination"]


def _role(route, want, node_addresses, kept=NO_KEPT):
    key = route_key(route)
    if want is not None and _is_right(route, want):
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


def _by_destination(cluster_routes):
    groups = {}
    for route in cluster_routes:
        groups.setdefault(route_key(route)[0], []).append(route)
    return groups


def node_address_map(nodes):
    return dict((address, node["name"]) for node in nodes for address in node["addresses"])


def route_findings(routes, nodes, cluster_cidrs, reachable=None, kept=NO_KEPT):
    """Findings about routes, one per destination: duplicate, wrong_nexthop, missing, stale.

    ``reachable(address)`` (optional) says whether Neutron will accept the address as a nexthop; a
    fix that Neutron would refuse carries a ``note``. A route of ``kept`` (``KeptRoutes``) is never in a fix's
    removals: to a destination no node has it is no finding; beside a node's route it is listed (role ``kept``).
    """
    cluster, _foreign = split_routes(routes, cluster_cidrs)
    needed = needed_routes(nodes)
    incomplete = incomplete_nodes(nodes)
    addresses = node_address_map(list(nodes) + incomplete)
    groups = _by_destination(cluster)
    findings = []
    kept_by_node = dict((node["name"], []) for node in incomplete)
    for destination in sorted(set(groups) | set(needed), key=network_order):
        group = groups.get(destination, [])
        want = needed.get(destination)
        if want is not None and len(group) == 1 and _is_right(group[0], want):
            continue  # the node's route and nothing else: most destinations
        if want is None:
            group = _not_kept(group, incomplete, kept_by_node, kept)
            if not group:
                continue
        group = sorted(group, key=lambda r: (r["destination"], r["nexthop"]))
        described = [dict(r, role=_role(r, want, addresses, kept),
                          node=addresses.get(route_key(r)[1])) for r in group]
        if want is None:
            findings.append(dict(
                kind="stale", severity=WARNING, destination=str(destination), node=None, routes=described,
                fix={"add": [], "remove": [dict(destination=r["destination"], nexthop=r["nexthop"]) for r in group]},
                message="no node has pod CIDR %s; %s" % (destination, "; ".join(
                    "%s points at %s" % (route_text(r), "node %s" % r["node"] if r["node"] else
                                         "no current node") for r in described))))
            continue
        right = [r for r in group if _is_right(r, want)]
        others = [dict(destination=r["destination"], nexthop=r["nexthop"]) for r in group
                  if not _is_right(r, want) and not kept.holds(r)]
        fix = {"add": [] if right else [dict(want["route"])], "remove": others}
        if len(group) > 1:
            kind, message = "duplicate", "%d routes for %s (%s); the right one is %s (node %s)%s%s" % (
                len(group), destination, ", ".join(route_text(r) for r in group), route_text(want["route"]),
                want["node"], "" if right else ", which is not there", _kept_words(group, want, kept))
        elif group:
            kind = "wrong_nexthop"
            message = "the only route for %s is %s (%s); node %s needs %s%s" % (
                destination, route_text(group[0]), _role_text(described[0]), want["node"], route_text(want["route"]),
                _kept_words(group, want, kept))
        else:
            kind, message = "missing", "node %s has no route: %s is not on the router" % (
                want["node"], route_text(want["route"]))
        finding = dict(kind=kind, severity=ERROR, destination=str(destination), node=want["node"],
                       routes=described, fix=fix, message=message)
        if fix["add"] and reachable is not None and not reachable(want["nexthop"]):
            finding["note"] = ("%s is on no subnet of the router that this user can see; Neutron will likely "
                               "refuse the route (attach the node's subnet to the router)" % want["nexthop"])
        findings.append(finding)
    return findings + [_incomplete_finding(node, kept_by_node[node["name"]]) for node in incomplete]


def _not_kept(group, incomplete, kept_by_node, kept):
    """The routes of ``group`` (a destination no node routes) that are neither kept (``keep_routes``) nor an
    incomplete node's (those are added to ``kept_by_node``)."""
    group = [r for r in group if not kept.holds(r)]
    return _keep_incomplete(group, incomplete, kept_by_node) if incomplete and group else group


def _kept_words(group, want, kept):
    held = [route_text(r) for r in group if kept.holds(r) and not _is_right(r, want)]
    return "; %s %s in keep_routes and never removed" % (", ".join(held), "is" if len(held) == 1 else "are") \
        if held else ""


def _keep_incomplete(group, incomplete, kept):
    """The routes of ``group`` (a destination no node routes) that belong to no incomplete node; the others
    are added to ``kept`` (node name -> routes)."""
    rest = []
    for route in group:
        node = left_alone(route, route_key(route), incomplete)
        if node is None:
            rest.append(route)
        else:
            kept[node["name"]].append(route)
    return rest


def _incomplete_finding(node, routes):
    described = [dict(destination=r["destination"], nexthop=r["nexthop"], role="kept", node=node["name"])
                 for r in sorted(routes, key=lambda r: (r["destination"], r["nexthop"]))]
    return dict(
        kind="incomplete_node", severity=WARNING, destination=str(node["pod_cidrs"][0]) if node["pod_cidrs"] else None,
        node=node["name"], routes=described, fix={}, reason=node["reason"],
        message="node %s exists but cannot be routed: %s; %s" % (
            node["name"], node["reason"], "its routes are left alone: %s" % ", ".join(route_text(r) for r in described)
            if described else "it has no route on the router"))


def _role_text(route):
    return {
        "stale": "its nexthop is no current node",
        "wrong": "its nexthop is node %s" % route.get("node"),
        "unused": "unused",
        "not_canonical": "its destination has host bits set, which no router can install",
        "kept": "it is in keep_routes",
    }.get(route["role"], route["role"])


def pair_covers(pairs, cidr, mac=None):
    for pair in pairs or []:
        # parsed once per text and run (mostly a node's pod CIDR, parsed already)
        network = cidr_cache.destination(pair.get("ip_address"))
        if network is None:
            continue
        if network.version == cidr.version and cidr.subnet_of(network) and \
                (not pair.get("mac_address") or mac is None or pair["mac_address"].lower() == mac.lower()):
            return True
    return False


def pair_findings(nodes, node_ports):
    """address_pair_missing findings. ``node_ports``: node name -> port dict (Neutron fields) or None."""
    findings = []
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
                message="port %s of node %s lacks %s in allowed_address_pairs, so port security drops its pods' "
                        "traffic" % (port.get("name") or port["id"], node["name"], cidr)))
    return findings


def limit_info(routes, nodes, cluster_cidrs, limit, source, warn_ratio=DEFAULT_WARN_RATIO, kept=NO_KEPT):
    """The route count against the router's limit (None: unlimited) and the finding, if any. The routes a repair
    leaves besides the needed ones (an incomplete node's, ``kept``) count as staying."""
    cluster, foreign = split_routes(routes, cluster_cidrs)
    needed_map = needed_routes(nodes)
    needed = len(needed_map)
    staying = _staying(cluster, needed_map, incomplete_nodes(nodes), kept)
    info = dict(limit=limit, source=source, current=len(routes), foreign=len(foreign), cluster=len(cluster),
                needed=needed, after_repair=needed + len(foreign) + staying)
    if limit is None or limit < 0:
        info["limit"] = None
        return info, None
    info["free_after_repair"] = limit - info["after_repair"]
    if info["after_repair"] > limit:
        return info, dict(
            kind="limit", severity=ERROR, destination=None, node=None, routes=[],
            fix={"raise_limit_to": info["after_repair"]},
            message="the cluster needs %d routes and %d foreign routes share the router, %d in all, but the "
                    "router's limit is %d (%s): raise it to at least %d (Neutron 2026.2 and later: the project's "
                    "router_route quota; before: max_routes in neutron.conf)" % (
                        needed, len(foreign), info["after_repair"], limit, source, info["after_repair"]))
    threshold = limit * warn_ratio
    if info["after_repair"] >= threshold or len(routes) > limit:
        return info, dict(
            kind="limit", severity=WARNING, destination=None, node=None, routes=[],
            fix={"raise_limit_to": None},
            message="%d of the router's %d routes (%s) are used%s; room for %d more node route(s)" % (
                info["after_repair"], limit, source,
                " after repair (%d now)" % len(routes) if len(routes) != info["after_repair"] else "",
                max(0, limit - info["after_repair"])))
    return info, None


def _staying(cluster, needed_map, incomplete, kept_routes):
    """How many cluster routes a repair leaves besides the needed ones: kept routes that are not a node's right
    route, and, of destinations no node has, the routes of incomplete nodes."""
    count = 0
    for route in cluster:
        destination = route_key(route)[0]
        want = needed_map.get(destination)
        if kept_routes.holds(route):
            count += 0 if want is not None and _is_right(route, want) else 1
        elif want is None and incomplete and left_alone(route, route_key(route), incomplete):
            count += 1
    return count


def count_kinds(findings):
    counts = dict((kind, 0) for kind in KINDS)
    for finding in findings:
        counts[finding["kind"]] = counts.get(finding["kind"], 0) + 1
    return counts


# -- repair -------------------------------------------------------------------------------------

def apply_routes(routes, add=(), remove=()):
    """What Neutron's add_extraroutes / remove_extraroutes make of ``routes`` (exact string matches)."""
    result = [dict(destination=r["destination"], nexthop=r["nexthop"]) for r in routes]
    present = set((r["destination"], r["nexthop"]) for r in result)
    for route in add:
        if (route["destination"], route["nexthop"]) not in present:
            present.add((route["destination"], route["nexthop"]))
            result.append(dict(destination=route["destination"], nexthop=route["nexthop"]))
    drop = set((r["destination"], r["nexthop"]) for r in remove)
    return [r for r in result if (r["destination"], r["nexthop"]) not in drop]


def step_applied(step, routes):
    """Whether ``routes`` hold what the route step asked for: every route it adds, none it removes."""
    present = set((r["destination"], r["nexthop"]) for r in routes)
    wanted = set((r["destination"], r["nexthop"]) for r in step["routes"])
    return wanted <= present if step["action"] == "add_routes" else not wanted & present


def _dest_order(destination, has_others):
    # Destinations whose traffic goes astray (a wrong route is there) first, then the missing ones.
    return (0 if has_others else 1,) + network_order(destination)


def _cap(items, *limits):
    """The first items, as many as the smallest of ``limits`` (None: no limit) allows."""
    size = len(items)
    for value in limits:
        if value is not None:
            size = min(size, value)
    return items[:max(0, size)]


def next_step(routes, nodes, cluster_cidrs, limit=None, budget=None, failed=(), pending_pairs=(), removable=None,
              controlled=None, kept=NO_KEPT):
    """The next repair step for the current ``routes``, or None when there is nothing left to do.

    A step is ``{"action": "add_routes"|"remove_routes"|"address_pairs", "routes": [...], "reason":
    ..., "items": [...]}``; ``failed`` are adds Neutron refused (not retried, and the other routes of
    their destination are kept); ``pending_pairs`` are address-pair fixes still to make. ``budget`` (the
    changes still allowed, None for no cap) limits the step's size; with budget 0 and work left the
    step is ``{"action": "stop", "reason": "max_changes"}``. When the route limit blocks every add and
    nothing may be removed, the step is ``{"action": "stop", "reason": "limit"}``.

    Never removed: a route of an incomplete node (``left_alone``), and, when ``removable`` (a set of
    ``(destination, nexthop)`` strings: the routes the plan was made on) is given, a route not in it (it appeared
    after the plan was made). ``controlled`` (a predicate on destination networks, ``ownership``): the
    destinations the cloud controller reconciles: their right routes are not added (room is kept for them under
    the limit), their wrong routes are left to it; what it never adds back (duplicates, stale routes) is removed.
    ``kept`` (``KeptRoutes``, the ``keep_routes`` option): never removed by any step; ``guard_removals`` holds that
    over every step planned here, whatever produced it.
    """
    step = _next_step(routes, nodes, cluster_cidrs, limit, budget, failed, pending_pairs, _may_remove(removable, kept),
                      controlled)
    guard_removals(step, kept)
    return step


def _next_step(routes, nodes, cluster_cidrs, limit, budget, failed, pending_pairs, may_go, controlled):
    cluster, _foreign = split_routes(routes, cluster_cidrs)
    needed = needed_routes(nodes)
    groups = _by_destination(cluster)
    present_right = set(d for d, want in needed.items() if any(_is_right(r, want) for r in groups.get(d, [])))
    pending_adds, reserved = _pending_adds(needed, groups, present_right, failed, controlled)
    fixable = [r for d in sorted(present_right, key=network_order) for r in groups.get(d, [])
               if not _is_right(r, needed[d]) and may_go(r)]
    incomplete = incomplete_nodes(nodes)
    stale = [r for d in sorted(groups, key=network_order) if d not in needed for r in groups[d]
             if may_go(r) and not (incomplete and left_alone(r, route_key(r), incomplete))]
    waiting = [r for d in pending_adds for r in groups.get(d, []) if may_go(r)]
    pairs = list(pending_pairs)
    headroom = None if limit is None or limit < 0 else limit - len(routes) - reserved

    work = pending_adds or fixable or pairs or stale
    if not work:
        return None
    if budget is not None and budget <= 0:
        return {"action": "stop", "reason": "max_changes"}

    if pending_adds and (headroom is None or headroom > 0):
        chosen = _cap(pending_adds, headroom, budget)
        return {"action": "add_routes", "routes": [dict(needed[d]["route"]) for d in chosen],
                "nodes": [needed[d]["node"] for d in chosen], "reason": "right route missing"}
    if fixable:
        return {"action": "remove_routes", "routes": _plain(_cap(fixable, budget)),
                "reason": "the destination's right route is in place"}
    if pending_adds:  # no room left for an add
        if stale:
            return {"action": "remove_routes", "routes": _plain(_cap(stale, len(pending_adds), budget)),
                    "reason": "stale, removed first to make room under the route limit"}
        if waiting:
            return {"action": "remove_routes", "routes": _plain(_cap(waiting, len(pending_adds), budget)),
                    "reason": "wrong, removed before the right route is added: the route limit leaves no room"}
        if not pairs:
            return {"action": "stop", "reason": "limit"}
    if pairs:
        return {"action": "address_pairs", "items": _cap(pairs, budget), "reason": "address pair missing"}
    if stale:
        return {"action": "remove_routes", "routes": _plain(_cap(stale, budget)), "reason": "stale"}
    return {"action": "stop", "reason": "limit"}


def _pending_adds(needed, groups, present_right, failed, controlled):
    """(the destinations whose right route this repair adds, in order; how many the other writer will add: room
    is kept for them)."""
    failed = set((r["destination"], r["nexthop"]) for r in failed)
    pending = sorted((d for d in needed if d not in present_right
                      and (needed[d]["route"]["destination"], needed[d]["route"]["nexthop"]) not in failed),
                     key=lambda d: _dest_order(d, bool(groups.get(d))))
    if controlled is None:
        return pending, 0
    return [d for d in pending if not controlled(d)], sum(1 for d in pending if controlled(d))


def _may_remove(removable, kept=NO_KEPT):
    """The predicate of the routes a plan may remove: read before the plan (``removable``, None: any) and not kept."""
    if removable is None:
        return lambda route: not kept.holds(route)
    return lambda route: (route["destination"], route["nexthop"]) in removable and not kept.holds(route)


def route_pairs(routes):
    """The ``(destination, nexthop)`` strings of ``routes``: what ``removable`` holds."""
    return frozenset((r["destination"], r["nexthop"]) for r in routes)


def _plain(routes):
    return [dict(destination=r["destination"], nexthop=r["nexthop"]) for r in routes]


def step_size(step):
    if step["action"] in ("add_routes", "remove_routes"):
        return len(step["routes"])
    if step["action"] == "address_pairs":
        return len(step["items"])
    return 0


def simulate(routes, nodes, cluster_cidrs, limit=None, budget=None, pending_pairs=(), max_steps=10000,
             removable=None, controlled=None, kept=NO_KEPT):
    """Run ``next_step`` to the end assuming every request succeeds (check mode's plan).
    Returns (steps, final routes, stop reason or None)."""
    steps = []
    pairs = list(pending_pairs)
    current = [dict(r) for r in routes]
    for _step in range(max_steps):
        step = next_step(current, nodes, cluster_cidrs, limit=limit, budget=budget, pending_pairs=pairs,
                         removable=removable, controlled=controlled, kept=kept)
        if step is None:
            return steps, current, None
        if step["action"] == "stop":
            return steps, current, step["reason"]
        steps.append(step)
        if step["action"] == "add_routes":
            current = apply_routes(current, add=step["routes"])
        elif step["action"] == "remove_routes":
            current = apply_routes(current, remove=step["routes"])
        else:
            done = set(id(item) for item in step["items"])
            pairs = [p for p in pairs if id(p) not in done]
        if budget is not None:
            budget -= step_size(step)
    raise RuntimeError("repair plan did not converge")  # pragma: no cover (next_step always shrinks the work)


# -- guards: what a repair may never do ---------------------------------------------------------

def cidr_scope_problem(cluster_cidrs, router_subnets, what="cluster_cidr"):
    """Why ``cluster_cidrs`` (the option ``what``) is too broad to manage, or None: a pod network never contains the
    router's own subnets (the nodes' and the gateway's), so one that does would make their routes the cluster's."""
    clashes = []
    for cidr in cluster_cidrs:
        if cidr.prefixlen == 0:
            return whole_family(what, cidr)
        for subnet in router_subnets:
            if subnet.version == cidr.version and (subnet.subnet_of(cidr) or cidr.subnet_of(subnet)):
                clashes.append("%s overlaps the router's subnet %s" % (cidr, subnet))
    if clashes:
        return ("%s is wider than the cluster's pod network: %s. Pod routes never lie inside the "
                "router's own subnets; give the pod network only (kube-controller-manager's --cluster-cidr)"
                % (what, "; ".join(clashes)))
    return None


def removal_refusal(findings, cluster_routes, node_count, source, max_share):
    """Why a repair must not run, or None: it would leave more than ``max_share`` of the pod CIDRs that
    have a route today without one (stale routes removed), or it would remove any route on the word of an
    empty node list. ``max_share`` 1 lifts the guard."""
    lost = sorted(set(f["destination"] for f in findings if f["kind"] == "stale"))
    routed = set()
    for route in cluster_routes:
        key = route_key(route)
        if key is not None:
            routed.add(str(key[0]))
    return _refusal(lost, len(routed), node_count, source, max_share, "Nothing was changed.")


def removal_refusal_now(routes, nodes, cluster_cidrs, source, max_share, removable=None, kept=NO_KEPT):
    """``removal_refusal`` judged on ``routes`` as read just before a removal: the pod CIDRs the rest of the plan
    would leave without any route (every route of a destination no node has, that the plan may remove) against
    the pod CIDRs routed now. A route the plan may not remove (``removable``, ``kept``, ``left_alone``) keeps its
    destination routed."""
    cluster, _foreign = split_routes(routes, cluster_cidrs)
    groups = _by_destination(cluster)
    needed = needed_routes(nodes)
    may_go = _may_remove(removable, kept)
    incomplete = incomplete_nodes(nodes)
    lost = sorted(str(d) for d, group in groups.items() if d not in needed and all(
        may_go(r) and not (incomplete and left_alone(r, route_key(r), incomplete)) for r in group))
    return _refusal(lost, len(groups), len(nodes), source, max_share,
                    "The changes made before this check are in changes; nothing more was written.")


def unsafe_removals(routes, removals, cluster_cidrs, removable=None, kept=NO_KEPT):
    """The routes of a removal step that it must not make on ``routes`` as read: not there any more, foreign
    (outside the cluster CIDRs), kept (``keep_routes``), or not removable by this plan. Empty when the step is
    safe."""
    cluster = route_pairs(split_routes(routes, cluster_cidrs)[0])
    may_go = _may_remove(removable, kept)
    return [r for r in removals if (r["destination"], r["nexthop"]) not in cluster or not may_go(r)]


def _refusal(lost, routed_count, node_count, source, max_share, tail):
    if not lost or max_share >= 1:
        return None
    share = float(len(lost)) / max(1, routed_count)
    if node_count and share <= max_share:
        return None
    why = ("the node view is empty (%s): an empty list, a node_selector that matched nothing or a Kubernetes API "
           "that listed no node is a wrong view far more often than a cluster without nodes" % (
               "the nodes option" if source == "nodes" else "the Kubernetes API") if not node_count else
           "that is more than max_removal_share %s allows; a partial node list or a too wide cluster_cidr looks "
           "like this" % max_share)
    named = ", ".join(lost[:10]) + (", ..." if len(lost) > 10 else "")
    return ("refusing to repair: it would remove the routes of %d of the %d pod CIDRs routed today (%s), leaving "
            "them without a route; %s. %s If these nodes are really gone, run again with "
            "max_removal_share: 1" % (len(lost), routed_count, named, why, tail))
