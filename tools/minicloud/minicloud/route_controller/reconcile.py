"""The decisions of the emulated route controller, on plain data (no Neutron, no clock).

As cloud-provider-openstack's route controller with the Kubernetes route controller around it: every node it
knows needs ``pod CIDR -> InternalIP`` on the router (added when the exact pair is missing); a route whose
destination lies inside its cluster CIDR and that is no such pair (a nexthop that is no node: a "blackhole"
route; or another node's address) is deleted. Its reported bugs, as modes:

- ``drops-foreign``: every route is taken for its own, whatever the destination, so routes it does not own
  (another cluster's, an operator's) are deleted too (cloud-provider-openstack issue 3128).
- ``keeps-stale``: a route whose nexthop is no node is never deleted (orphaned routes kept; issue 2256, the
  atomic delete without a nexthop), so stale routes and duplicates to gone nodes stay.
- ``non-atomic``: the new list is computed on a read and written as the router's whole list later, whatever
  happened in between (the classic update without extraroute-atomic; issues 2089 and PR 2134): a change made
  in the window is lost.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

MODES = ("drops-foreign", "keeps-stale", "non-atomic")


def check_modes(modes) -> list[str]:
    unknown = sorted(set(modes) - set(MODES))
    if unknown:
        raise ValueError(f"unknown route controller mode(s) {', '.join(unknown)}; choose from {', '.join(MODES)}")
    return sorted(set(modes))


@dataclass
class Plan:
    """One period's outcome: the list to write (None: nothing to change), what it adds and removes."""

    routes: list[dict] | None
    added: list[dict] = field(default_factory=list)
    removed: list[dict] = field(default_factory=list)


def _network(text):
    try:
        return ipaddress.ip_network(text, strict=False)
    except (TypeError, ValueError):
        return None


def _address(text):
    try:
        return ipaddress.ip_address(text)
    except (TypeError, ValueError):
        return None


def wanted_routes(nodes: list[dict]) -> list[dict]:
    """``pod CIDR -> address`` of every node (``{"name", "pod_cidr", "address"}``) that has both."""
    return [{"destination": n["pod_cidr"], "nexthop": n["address"]} for n in nodes
            if n.get("pod_cidr") and n.get("address")]


def _responsible(route: dict, cluster: list, modes) -> bool:
    if "drops-foreign" in modes:
        return True
    network = _network(route.get("destination"))
    return network is not None and any(network.version == c.version and network.subnet_of(c) for c in cluster)


def plan(routes: list[dict], nodes: list[dict], cluster_cidrs: list[str], modes=()) -> Plan:
    """What one reconcile period makes of ``routes`` (the router's, as read)."""
    cluster = [ipaddress.ip_network(c) for c in cluster_cidrs]
    wanted = wanted_routes(nodes)
    wanted_pairs = {(w["destination"], w["nexthop"]) for w in wanted}
    known = {_address(n.get("address")) for n in nodes} - {None}
    kept, removed = [], []
    for route in routes:
        pair = (route.get("destination"), route.get("nexthop"))
        if pair in wanted_pairs or not _responsible(route, cluster, modes):
            kept.append(route)
        elif _address(route.get("nexthop")) not in known and "keeps-stale" in modes:
            kept.append(route)  # a blackhole route it fails to delete
        else:
            removed.append(route)
    present = {(r.get("destination"), r.get("nexthop")) for r in kept}
    added = [w for w in wanted if (w["destination"], w["nexthop"]) not in present]
    if not added and not removed:
        return Plan(routes=None)
    return Plan(routes=[{"destination": r["destination"], "nexthop": r["nexthop"]} for r in kept] + added,
                added=added, removed=[{"destination": r["destination"], "nexthop": r["nexthop"]} for r in removed])
