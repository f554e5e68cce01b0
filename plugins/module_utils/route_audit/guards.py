# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure decisions of route_audit: what a repair may never do (a cluster CIDR wider than the pod network, removals
that leave too many pod CIDRs without a route, a removal step no longer safe on the routes as read).
"""

from __future__ import annotations

from typing import Any, Collection, Iterable, Sequence

from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit.routes import (
    by_destination,
    cluster_key,
    route_key,
    route_pairs,
    split_routes,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit.cidr_cache import IPNetwork
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit.inputs import NO_KEPT, KeptRoutes, whole_family
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit.nodes import (
    incomplete_nodes,
    left_alone,
    Node,
    needed_routes,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit.routes import Route
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit.steps import may_remove


def cidr_scope_problem(cluster_cidrs: Iterable[IPNetwork], router_subnets: Iterable[IPNetwork],
                       what: str = "cluster_cidr") -> str | None:
    """Why ``cluster_cidrs`` (the option ``what``) is too broad to manage, or None: a pod network never contains the
    router's own subnets (the nodes' and the gateway's), so one that does would make their routes the cluster's."""
    clashes: list[str] = []
    for cidr in cluster_cidrs:
        if cidr.prefixlen == 0:
            return whole_family(what, cidr)
        for subnet in router_subnets:
            if subnet.version == cidr.version and (subnet.subnet_of(cidr) or cidr.subnet_of(subnet)):  # type: ignore[arg-type]
                clashes.append(f"{cidr} overlaps the router's subnet {subnet}")
    if clashes:
        return (f"{what} is wider than the cluster's pod network: {'; '.join(clashes)}. Pod routes never lie inside "
                "the router's own subnets; give the pod network only (kube-controller-manager's --cluster-cidr)")
    return None


def removal_refusal(findings: Iterable[dict[str, Any]], cluster_routes: Iterable[Route], node_count: int, source: str,
                    max_share: float) -> str | None:
    """Why a repair must not run, or None: it would leave more than ``max_share`` of the pod CIDRs that
    have a route today without one (stale routes removed), or it would remove any route on the word of an
    empty node list. ``max_share`` 1 lifts the guard."""
    lost = sorted(set(f["destination"] for f in findings if f["kind"] == "stale"))
    routed: set[str] = set()
    for route in cluster_routes:
        key = route_key(route)
        if key is not None:
            routed.add(str(key[0]))
    return _refusal(lost, len(routed), node_count, source, max_share, "Nothing was changed.")


def removal_refusal_now(routes: list[Route], nodes: Sequence[Node], cluster_cidrs: Iterable[IPNetwork], source: str,
                        max_share: float, removable: Collection[tuple[str, str]] | None = None,
                        kept: KeptRoutes = NO_KEPT) -> str | None:
    """``removal_refusal`` judged on ``routes`` as read just before a removal: the pod CIDRs the rest of the plan
    would leave without any route (every route of a destination no node has, that the plan may remove) against
    the pod CIDRs routed now. A route the plan may not remove (``removable``, ``kept``, ``left_alone``) keeps its
    destination routed."""
    cluster, _foreign = split_routes(routes, cluster_cidrs)
    groups = by_destination(cluster)
    needed = needed_routes(nodes)
    may_go = may_remove(removable, kept)
    incomplete = incomplete_nodes(nodes)
    lost = sorted(str(d) for d, group in groups.items() if d not in needed and all(
        may_go(r) and not (incomplete and left_alone(r, cluster_key(r), incomplete)) for r in group))
    return _refusal(lost, len(groups), len(nodes), source, max_share,
                    "The changes made before this check are in changes; nothing more was written.")


def unsafe_removals(routes: list[Route], removals: Iterable[Route], cluster_cidrs: Iterable[IPNetwork],
                    removable: Collection[tuple[str, str]] | None = None, kept: KeptRoutes = NO_KEPT) -> list[Route]:
    """The routes of a removal step that it must not make on ``routes`` as read: not there any more, foreign
    (outside the cluster CIDRs), kept (``keep_routes``), or not removable by this plan. Empty when the step is
    safe."""
    cluster = route_pairs(split_routes(routes, cluster_cidrs)[0])
    may_go = may_remove(removable, kept)
    return [r for r in removals if (r["destination"], r["nexthop"]) not in cluster or not may_go(r)]


def _refusal(lost: list[str], routed_count: int, node_count: int, source: str, max_share: float,
             tail: str) -> str | None:
    if not lost or max_share >= 1:
        return None
    share = float(len(lost)) / max(1, routed_count)
    if node_count and share <= max_share:
        return None
    why = (f"the node view is empty ({'the nodes option' if source == 'nodes' else 'the Kubernetes API'}): an empty "
           "list, a node_selector that matched nothing or a Kubernetes API that listed no node is a wrong view far "
           "more often than a cluster without nodes" if not node_count else
           f"that is more than max_removal_share {max_share} allows; a partial node list or a too wide cluster_cidr looks "
           "like this")
    named = ", ".join(lost[:10]) + (", ..." if len(lost) > 10 else "")
    return (f"refusing to repair: it would remove the routes of {len(lost)} of the {routed_count} pod CIDRs routed "
            f"today ({named}), leaving them without a route; {why}. {tail} If these nodes are really gone, run again "
            "with max_removal_share: 1")
