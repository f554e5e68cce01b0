# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""route_audit's repair: make (or, in check mode, plan) the steps ``steps.next_step`` gives, one at a time,
recording each change, until nothing is left, the budget (max_changes) or the route limit stops it.

Each step is judged on the router as it stands when the step is written, not as it was when the audit read it:
a removal (and, without ``revision-if-match``, every plain update of the whole list) is planned again on a read
of the router made just before it, and the removal guard, the empty-view guard and the cluster-only rule are
checked on that read; a plain update with ``If-Match`` is conditional on the revision it was planned on. A route
that was not on the router when the plan was made (another writer added it since) is never removed: the
repair only ever removes routes it read before its first write (``removable``)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import (
    DeadlineExceeded,
    KeptChanging,
    ModuleFailure,
    PlanError,
    RouteLimitReached,
    RouteRejected,
    RouterChanged,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.http import is_sdk_error
from ansible_collections.flightcontrol.openstack.plugins.module_utils.neutron.revisions import (
    IF_MATCH_ATTEMPTS,
    update_with_reread,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.http import (
    describe_fault,
    service_message,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import findings as route_findings
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import guards as route_guards
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import inputs as route_inputs
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import nodes as route_nodes
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import routes as route_routes
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import steps as route_steps

if TYPE_CHECKING:
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.neutron.route_service import RouterService

# Plain router updates (no extraroute-atomic) lost to a concurrent change before the repair gives up.
ROUTER_UPDATE_ATTEMPTS = IF_MATCH_ATTEMPTS


def route_dest(route: dict[str, Any]) -> str:
    try:
        return str(ipaddress.ip_network(route["destination"], strict=False))
    except ValueError:
        return route["destination"]


@dataclass
class RepairInput:
    """What the repair works on: the router as read, the checked nodes and cluster CIDRs, the nodes'
    ports, the audit's findings, and how the router can be written."""

    router: dict[str, Any]
    nodes: list[route_nodes.Node]
    cidrs: list[route_routes.IPNetwork]
    node_ports: dict[str, Any]
    findings: list[dict[str, Any]]
    limit: int | None
    atomic: bool  # extraroute-atomic: add / remove routes without replacing the list
    if_match: bool  # plain updates guarded by the router's revision
    node_source: str = "nodes"  # where the nodes came from (the empty-view guard's words)
    max_removal_share: float = 1.0  # the removal guard, checked again before each removal
    controlled: route_steps.Controlled | None = None  # destinations another writer reconciles (``ownership``), or None
    kept: route_inputs.KeptRoutes = route_inputs.NO_KEPT  # keep_routes (``inputs.KeptRoutes``): never removed by any step


@dataclass
class RepairState:
    """Where the repair is: the router's routes and revision now, the nodes' ports now, what is left."""

    routes: list[dict[str, Any]]
    revision: int | None
    ports: dict[str, Any]
    pending_pairs: list[dict[str, Any]]
    budget: int
    failed: list[dict[str, Any]] = field(default_factory=list)  # adds Neutron refused
    races: int = 0
    rejected: list[dict[str, Any]] = field(default_factory=list)  # the refused changes, as recorded
    limit_error: str | None = None


class RouteRepair:
    def __init__(self, api: RouterService, what: RepairInput, check_pairs: bool, max_changes: int, check_mode: bool,
                 deadline: Deadline, result: dict[str, Any]) -> None:
        self.api = api
        self.what = what
        self.check_mode = check_mode
        self.deadline = deadline
        self.result = result
        self.status = "planned" if check_mode else "done"
        self.reasons = dict((f["destination"], f["kind"]) for f in what.findings if f["destination"])
        self.owners = dict((str(d), w["node"]) for d, w in route_nodes.needed_routes(what.nodes).items())
        ports = dict(what.node_ports)
        self.known = route_routes.route_pairs(what.router.get("routes") or [])  # the only routes it may remove
        self.added: set[tuple[str, str]] = set()
        self.state = RepairState(
            routes=[dict(r) for r in what.router.get("routes") or []],
            revision=what.router.get("revision_number") if what.if_match else None, ports=ports,
            pending_pairs=pair_fixes(what.nodes, ports, what.controlled) if check_pairs else [], budget=max_changes)

    @property
    def changes(self) -> list[dict[str, Any]]:
        return self.result["changes"]

    def record(self, action: str, route: dict[str, Any], extra: dict[str, Any] | None = None) -> dict[str, Any]:
        key = route_dest(route)
        entry = dict(action=action, destination=route["destination"], nexthop=route["nexthop"],
                     node=self.owners.get(key), reason=self.reasons.get(key, "stale"), status=self.status)
        entry.update(extra or {})
        self.changes.append(entry)
        return entry

    def run(self) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Run the repair steps (in check mode: plan them). Returns (routes, node ports) at the end. The whole plan
        on the router as read is made first: a plan that would remove a kept route (``steps.guard_removals``) stops
        the repair before its first write."""
        self.preflight()
        try:
            self.steps()
        except Exception as exc:  # pylint: disable=broad-except
            self.note_appeared()
            self.stopped_by_error(exc)
        self.note_appeared()
        return self.state.routes, self.state.ports

    def preflight(self) -> None:
        what, state = self.what, self.state
        try:
            route_steps.simulate(state.routes, what.nodes, what.cidrs, limit=what.limit, budget=state.budget,
                                 pending_pairs=state.pending_pairs, removable=self.known, controlled=what.controlled,
                                 kept=what.kept)
        except PlanError as exc:
            raise ModuleFailure(f'router {what.router["id"]}: {exc}', **dict(self.result, changed=False))

    def plan(self) -> route_steps.Step | None:
        what, state = self.what, self.state
        return route_steps.next_step(state.routes, what.nodes, what.cidrs, limit=what.limit, budget=state.budget,
                                     failed=state.failed, pending_pairs=state.pending_pairs, removable=self.known,
                                     controlled=what.controlled, kept=what.kept)

    def fresh_step(self) -> route_steps.Step | None:
        """The next step, judged on the router as it stands: a removal (every plain update without If-Match) is
        planned again on a read made just before it and checked against the guards on that read."""
        step = self.plan()
        if self.check_mode or step is None or step["action"] not in ("add_routes", "remove_routes"):
            return step
        unconditional = not self.what.atomic and not self.what.if_match
        if unconditional or (self.what.atomic and step["action"] == "remove_routes"):
            fresh = self.api.get_router(self.what.router["id"], self.deadline)
            self.state.routes = fresh.get("routes") or []
            if self.what.if_match:
                self.state.revision = fresh.get("revision_number")
            step = self.plan()
        if step is not None and step["action"] == "remove_routes":
            self.check_removal(step)
        return step

    def check_removal(self, step: route_steps.Step) -> None:
        """The guards, on the routes the removal will change: refuse (and stop) when they do not hold now."""
        what, state = self.what, self.state
        unsafe = route_guards.unsafe_removals(state.routes, step["routes"], what.cidrs, removable=self.known,
                                              kept=what.kept)
        if unsafe:  # next_step never plans these; a plan that did must not be written
            raise ModuleFailure(f"router {what.router['id']}: refusing to remove "
                                f"{', '.join(map(route_routes.route_text, unsafe))}: not a route of the cluster read "
                                "before the repair, or in keep_routes")
        refusal = route_guards.removal_refusal_now(state.routes, what.nodes, what.cidrs, what.node_source,
                                                   what.max_removal_share, removable=self.known, kept=what.kept)
        if refusal:
            self.stop("max_removal_share")
            raise ModuleFailure(f'router {what.router["id"]} changed during the repair: {refusal}')

    def note_appeared(self) -> None:
        """List in ``conflicts`` the cluster routes on the router now that were not there when the plan was
        made and that the repair did not add: another writer's, left alone."""
        cluster, _foreign = route_routes.split_routes(self.state.routes, self.what.cidrs)
        noted = set((c.get("destination"), c.get("nexthop")) for c in self.result["conflicts"]
                    if c["kind"] == "route_appeared")
        for route in cluster:
            pair = (route["destination"], route["nexthop"])
            if pair not in self.known and pair not in self.added and pair not in noted:
                self.result["conflicts"].append(dict(kind="route_appeared", router=self.what.router["id"],
                                                     destination=pair[0], nexthop=pair[1]))

    def steps(self) -> None:
        state = self.state
        while True:
            step = self.fresh_step()
            if step is None:
                return
            if step["action"] == "stop":
                return self.stop(step["reason"])
            if step["action"] == "address_pairs":
                self.fix_address_pairs(step)
            elif self.check_mode:
                self.plan_routes(step)
            elif not self.write_step(step):
                return

    def stop(self, reason: str) -> None:
        self.result["stopped_by"] = reason
        self.result["pending"] = self.pending()

    def stopped_by_error(self, exc: Exception) -> None:
        """A request failed: fail with what was done so far (in ``changes``) and the service's own words."""
        changed = any(c["status"] == "done" for c in self.changes)
        if isinstance(exc, ModuleFailure):
            exc.data.update(self.result, changed=changed)
            raise exc
        if not isinstance(exc, DeadlineExceeded) and describe_fault(exc) is None and not is_sdk_error(exc):
            raise exc
        self.result["changed"] = changed
        raise ModuleFailure(f'the repair of router {self.what.router["id"]} stopped: {service_message(exc)} (the changes made before it are in changes; a '
                            "re-run repairs the rest)",
                            **self.result)

    # -- the steps ---------------------------------------------------------------------

    def fix_address_pairs(self, step: route_steps.Step) -> None:
        state = self.state
        for item in step["items"]:
            port = self.apply_pairs(item)
            self.changes.append(dict(action="add_address_pairs", port=item["port"], node=item["node"],
                                     address_pairs=item["cidrs"], reason="address_pair_missing", status=self.status))
            state.ports[item["node"]] = port
            state.budget -= 1
        done = set(id(i) for i in step["items"])
        state.pending_pairs = [p for p in state.pending_pairs if id(p) not in done]

    def plan_routes(self, step: route_steps.Step) -> None:
        """Check mode: what the step would do to the routes, recorded as planned."""
        adding = step["action"] == "add_routes"
        self.state.routes = route_steps.apply_routes(self.state.routes, add=step["routes"]) if adding else \
            route_steps.apply_routes(self.state.routes, remove=step["routes"])
        for route in step["routes"]:
            self.record("add_route" if adding else "remove_route", route)
        self.state.budget -= len(step["routes"])

    def write_step(self, step: route_steps.Step) -> bool:
        """Make one route step; False when the route limit stops the repair."""
        state, router_id = self.state, self.what.router["id"]
        adding = step["action"] == "add_routes"
        try:
            state.routes, state.revision, made = self.write_routes(step)
        except RouterChanged as exc:
            fresh = self.api.get_router(router_id, self.deadline)
            fresh_routes = fresh.get("routes") or []
            if exc.after_lost_answer and route_steps.step_applied(step, fresh_routes):
                # our own update: its answer was lost and the replay met the revision it made
                state.routes, state.revision = fresh_routes, fresh.get("revision_number")
                made = [(route, None) for route in step["routes"]]
            else:
                state.races += 1
                self.result["conflicts"].append(dict(kind="router_changed", router=router_id,
                                                     revision=state.revision))
                if state.races >= ROUTER_UPDATE_ATTEMPTS:
                    raise ModuleFailure(f"router {router_id} kept changing under the update ({state.races} times HTTP "
                                        "412)", **self.result)
                state.routes, state.revision = fresh_routes, fresh.get("revision_number")
                return True
        except RouteLimitReached as exc:
            state.limit_error = str(exc)
            self.stop("limit")
            return False
        for route, error in made:
            entry = self.record("add_route" if adding else "remove_route", route,
                                dict(status="rejected", error=error) if error else None)
            if error:
                state.failed.append(route)
                state.rejected.append(entry)
            else:
                state.budget -= 1
                if adding:
                    self.added.add((route["destination"], route["nexthop"]))
        return True

    def send_routes(self, adding: bool, batch: list[dict[str, Any]], current: list[dict[str, Any]],
                    revision: int | None) -> tuple[list[dict[str, Any]], int | None]:
        router_id = self.what.router["id"]
        if self.what.atomic:
            call = self.api.add_routes if adding else self.api.remove_routes
            return call(router_id, batch, self.deadline), revision
        new = route_steps.apply_routes(current, add=batch) if adding else route_steps.apply_routes(current, remove=batch)
        return self.api.replace_routes(router_id, new, revision, self.deadline)

    def write_routes(self, step: route_steps.Step) -> tuple[list[dict[str, Any]], int | None, list[tuple[dict[str, Any], str | None]]]:
        """Make one step; returns (routes, revision, [(route, error or None)]). A batch Neutron refuses
        is sent again one route at a time, so only the refused routes are left out."""
        adding = step["action"] == "add_routes"
        routes, revision = self.state.routes, self.state.revision
        try:
            routes, revision = self.send_routes(adding, step["routes"], routes, revision)
            return routes, revision, [(r, None) for r in step["routes"]]
        except RouteRejected as exc:
            if len(step["routes"]) == 1:
                return routes, revision, [(step["routes"][0], str(exc))]
        made: list[tuple[dict[str, Any], str | None]] = []
        for route in step["routes"]:
            try:
                routes, revision = self.send_routes(adding, [route], routes, revision)
                made.append((route, None))
            except RouteRejected as exc:
                made.append((route, str(exc)))
        return routes, revision, made

    def apply_pairs(self, item: dict[str, Any]) -> dict[str, Any]:
        """Add the item's pod CIDRs to the port's allowed_address_pairs (If-Match, re-read on 412)."""
        def compute(port: dict[str, Any]) -> list[dict[str, Any]] | None:
            pairs = list(port.get("allowed_address_pairs") or [])
            wanted = [c for c in item["cidrs"]
                      if not route_findings.pair_covers(pairs, ipaddress.ip_network(c), port.get("mac_address"))]
            return pairs + [{"ip_address": c} for c in wanted] if wanted else None

        port = self.state.ports[item["node"]]
        if self.check_mode:
            return dict(port, allowed_address_pairs=compute(port) or list(port.get("allowed_address_pairs") or []))
        try:
            port, _sent, _attempts = update_with_reread(
                port, compute,
                lambda p, pairs: self.api.update_address_pairs(p["id"], pairs, p.get("revision_number"),
                                                               self.deadline),
                lambda p: self.api.get_port(p["id"], self.deadline))
        except KeptChanging as exc:
            raise ModuleFailure(f"port {exc.current['id']} of node {item['node']} kept changing under the update (HTTP "
                                f"412 {exc.attempts} times)")
        return port

    def pending(self) -> list[dict[str, Any]]:
        """The changes still needed, planned from the current routes with no cap."""
        state, what = self.state, self.what
        steps, _final, _stop = route_steps.simulate(state.routes, what.nodes, what.cidrs, limit=None,
                                                    pending_pairs=state.pending_pairs, removable=self.known,
                                                    controlled=what.controlled, kept=what.kept)
        left: list[dict[str, Any]] = []
        refused = set((r["destination"], r["nexthop"]) for r in state.failed)
        for step in steps:
            if step["action"] == "address_pairs":
                left += [dict(action="add_address_pairs", port=i["port"], node=i["node"], address_pairs=i["cidrs"],
                              reason="address_pair_missing") for i in step["items"]]
                continue
            for route in step["routes"]:
                if (route["destination"], route["nexthop"]) in refused:
                    continue
                key = route_dest(route)
                left.append(dict(action="add_route" if step["action"] == "add_routes" else "remove_route",
                                 destination=route["destination"], nexthop=route["nexthop"],
                                 node=self.owners.get(key), reason=self.reasons.get(key, "stale")))
        return left


def pair_fixes(nodes: Iterable[route_nodes.Node], ports: dict[str, Any],
               controlled: route_steps.Controlled | None = None) -> list[dict[str, Any]]:
    """The address-pair fixes the nodes' ports need, one per port with every pod CIDR it lacks (not those of pod
    CIDRs another writer reconciles: the cloud controller sets a node's address pairs with its route)."""
    fixes: list[dict[str, Any]] = []
    for finding in route_findings.pair_findings(nodes, ports):
        if controlled is not None and controlled(ipaddress.ip_network(finding["destination"])):
            continue
        for fix in fixes:
            if fix["port"] == finding["port"]:
                fix["cidrs"].append(finding["destination"])
                break
        else:
            fixes.append(dict(port=finding["port"], node=finding["node"], cidrs=[finding["destination"]]))
    return fixes
