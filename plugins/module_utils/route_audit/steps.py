# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure decisions of route_audit: the repair order (``next_step``) and check mode's plan (``simulate``).

Repair order, so that a failure at any point leaves no destination worse off:
adds of the right routes first (never more than the route limit leaves room for), then removal of the
other routes of destinations whose right route is in place, then address pairs, then routes to pod
CIDRs no node has (stale). Only when the limit leaves no room for an add are stale routes removed
first, and only when no stale route is left the wrong routes of the destinations still waiting
(they carry no working traffic).
"""

from __future__ import annotations

from typing import Any, Callable, Collection, Iterable, Sequence

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import PlanError
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit.routes import (
    by_destination,
    cluster_key,
    is_right,
    network_order,
    plain_routes,
    route_text,
    split_routes,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit.cidr_cache import IPNetwork
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit.inputs import NO_KEPT, KeptRoutes
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit.nodes import (
    incomplete_nodes,
    left_alone,
    Needed,
    Node,
    needed_routes,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit.routes import Route

#: a step of a repair: ``{"action", "routes" or "items", "reason", ...}``
Step = dict[str, Any]
#: the destinations the cloud controller reconciles (``ownership.Ownership.controlled``)
Controlled = Callable[[IPNetwork], bool]


def guard_removals(step: Step | None, kept: KeptRoutes) -> None:
    """The final guard over a planned step: removing a kept route is an internal error (PlanError), raised before
    the step is written. None when the step is safe."""
    if step is None or step.get("action") != "remove_routes" or not kept:
        return None
    held = [route_text(route) for route in step["routes"] if kept.holds(route)]
    if held:
        raise PlanError(f'internal error: the repair planned to remove {", ".join(held)}, which keep_routes keeps ({step.get("reason")}); nothing of '
                        "this step was written")
    return None


def apply_routes(routes: Iterable[Route], add: Iterable[Route] = (), remove: Iterable[Route] = ()) -> list[Route]:
    """What Neutron's add_extraroutes / remove_extraroutes make of ``routes`` (exact string matches)."""
    result = [dict(destination=r["destination"], nexthop=r["nexthop"]) for r in routes]
    present = set((r["destination"], r["nexthop"]) for r in result)
    for route in add:
        if (route["destination"], route["nexthop"]) not in present:
            present.add((route["destination"], route["nexthop"]))
            result.append(dict(destination=route["destination"], nexthop=route["nexthop"]))
    drop = set((r["destination"], r["nexthop"]) for r in remove)
    return [r for r in result if (r["destination"], r["nexthop"]) not in drop]


def step_applied(step: Step, routes: Iterable[Route]) -> bool:
    """Whether ``routes`` hold what the route step asked for: every route it adds, none it removes."""
    present = set((r["destination"], r["nexthop"]) for r in routes)
    wanted = set((r["destination"], r["nexthop"]) for r in step["routes"])
    return wanted <= present if step["action"] == "add_routes" else not wanted & present


def _dest_order(destination: IPNetwork, has_others: bool) -> tuple[int, ...]:
    # Destinations whose traffic goes astray (a wrong route is there) first, then the missing ones.
    return (0 if has_others else 1,) + network_order(destination)


def _cap(items: list[Any], *limits: int | None) -> list[Any]:
    """The first items, as many as the smallest of ``limits`` (None: no limit) allows."""
    size = len(items)
    for value in limits:
        if value is not None:
            size = min(size, value)
    return items[:max(0, size)]


def next_step(routes: list[Route], nodes: Sequence[Node], cluster_cidrs: Iterable[IPNetwork], limit: int | None = None,
              budget: int | None = None, failed: Iterable[Route] = (), pending_pairs: Iterable[Any] = (),
              removable: Collection[tuple[str, str]] | None = None, controlled: Controlled | None = None,
              kept: KeptRoutes = NO_KEPT) -> Step | None:
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
    step = _next_step(routes, nodes, cluster_cidrs, limit, budget, failed, pending_pairs, may_remove(removable, kept),
                      controlled)
    guard_removals(step, kept)
    return step


def _next_step(routes: list[Route], nodes: Sequence[Node], cluster_cidrs: Iterable[IPNetwork], limit: int | None,
               budget: int | None, failed: Iterable[Route], pending_pairs: Iterable[Any], may_go: Callable[[Route], bool],
               controlled: Controlled | None) -> Step | None:
    cluster, _foreign = split_routes(routes, cluster_cidrs)
    needed = needed_routes(nodes)
    groups = by_destination(cluster)
    present_right = set(d for d, want in needed.items() if any(is_right(r, want) for r in groups.get(d, [])))
    pending_adds, reserved = _pending_adds(needed, groups, present_right, failed, controlled)
    fixable = [r for d in sorted(present_right, key=network_order) for r in groups.get(d, [])
               if not is_right(r, needed[d]) and may_go(r)]
    incomplete = incomplete_nodes(nodes)
    stale = [r for d in sorted(groups, key=network_order) if d not in needed for r in groups[d]
             if may_go(r) and not (incomplete and left_alone(r, cluster_key(r), incomplete))]
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
        return {"action": "remove_routes", "routes": plain_routes(_cap(fixable, budget)),
                "reason": "the destination's right route is in place"}
    if pending_adds:  # no room left for an add
        if stale:
            return {"action": "remove_routes", "routes": plain_routes(_cap(stale, len(pending_adds), budget)),
                    "reason": "stale, removed first to make room under the route limit"}
        if waiting:
            return {"action": "remove_routes", "routes": plain_routes(_cap(waiting, len(pending_adds), budget)),
                    "reason": "wrong, removed before the right route is added: the route limit leaves no room"}
        if not pairs:
            return {"action": "stop", "reason": "limit"}
    if pairs:
        return {"action": "address_pairs", "items": _cap(pairs, budget), "reason": "address pair missing"}
    if stale:
        return {"action": "remove_routes", "routes": plain_routes(_cap(stale, budget)), "reason": "stale"}
    return {"action": "stop", "reason": "limit"}


def _pending_adds(needed: Needed, groups: dict[IPNetwork, list[Route]], present_right: set[IPNetwork],
                  failed: Iterable[Route], controlled: Controlled | None) -> tuple[list[IPNetwork], int]:
    """(the destinations whose right route this repair adds, in order; how many the other writer will add: room
    is kept for them)."""
    failed_pairs = set((r["destination"], r["nexthop"]) for r in failed)
    pending = sorted((d for d in needed if d not in present_right
                      and (needed[d]["route"]["destination"], needed[d]["route"]["nexthop"]) not in failed_pairs),
                     key=lambda d: _dest_order(d, bool(groups.get(d))))
    if controlled is None:
        return pending, 0
    return [d for d in pending if not controlled(d)], sum(1 for d in pending if controlled(d))


def may_remove(removable: Collection[tuple[str, str]] | None, kept: KeptRoutes = NO_KEPT) -> Callable[[Route], bool]:
    """The predicate of the routes a plan may remove: read before the plan (``removable``, None: any) and not kept."""
    if removable is None:
        return lambda route: not kept.holds(route)
    return lambda route: (route["destination"], route["nexthop"]) in removable and not kept.holds(route)


def step_size(step: Step) -> int:
    if step["action"] in ("add_routes", "remove_routes"):
        return len(step["routes"])
    if step["action"] == "address_pairs":
        return len(step["items"])
    return 0


def simulate(routes: Iterable[Route], nodes: Sequence[Node], cluster_cidrs: Iterable[IPNetwork], limit: int | None = None,
             budget: int | None = None, pending_pairs: Iterable[Any] = (), max_steps: int = 10000,
             removable: Collection[tuple[str, str]] | None = None, controlled: Controlled | None = None,
             kept: KeptRoutes = NO_KEPT) -> tuple[list[Step], list[Route], str | None]:
    """Run ``next_step`` to the end assuming every request succeeds (check mode's plan).
    Returns (steps, final routes, stop reason or None)."""
    steps: list[Step] = []
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
