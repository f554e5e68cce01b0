# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The runner of route_audit: the nodes (the ``nodes`` option or the Kubernetes API), the router as
Neutron has it (a constant number of requests), the audit (``route_audit.findings``) and, with state=repaired, the
repair (``route_audit.repair``, in the order of ``route_audit.steps``). The module file gives the argument spec
and builds the runner's options (``RouteAuditOptions``) from its parameters. A run's parses live for the run
(``cidr_cache.one_run``)."""

from __future__ import annotations

import functools
import ipaddress
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, cast

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.options import ModuleOptions, ModuleRunner
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import (
    FlightcontrolError,
    ModuleFailure,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.identifiers import is_uuid
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.nodes import list_nodes
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.openstack_module_base import (
    OpenStackKubernetesModule,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.neutron.route_service import RouterService
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import ownership as route_owner
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import cidr_cache
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import findings as route_findings
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import guards as route_guards
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import inputs as route_inputs
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import nodes as route_nodes
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import routes as route_routes
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit.repair import (
    RepairInput,
    RepairState,
    RouteRepair,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit.cidr_cache import IPAddress, IPNetwork

NEUTRON_DEFAULT_MAX_ROUTES = 30
# A result lists at most this many findings, remaining findings, pending changes, nodes and incomplete nodes
# (errors first); ``omitted`` counts the rest of each list and ``counts`` counts every finding by kind.
RESULT_LIST_CAP = 200
CAPPED_LISTS = ("findings", "remaining", "pending", "nodes", "incomplete_nodes")
# Warnings of one kind (nodes without a port, incomplete nodes) shown one by one; the rest in one warning.
WARNINGS_SHOWN = 20
# Findings named in the message of fail_on_findings.
MESSAGES_SHOWN = 10
ROUTER_OWNERS = ("network:router_interface", "network:router_interface_distributed",
                 "network:ha_router_replicated_interface", "network:router_centralized_snat",
                 "network:router_gateway")


@dataclass
class RouterView:
    """The router and what surrounds it, as read once before the audit."""

    router: dict[str, Any]
    aliases: set[str]
    subnets: list[dict[str, Any]]
    router_ips: set[IPAddress]
    ports: list[dict[str, Any]]
    limit: int | None
    limit_source: str

    @property
    def label(self) -> str:
        return self.router.get("name") or self.router["id"]

    @functools.cached_property
    def networks(self) -> list[IPNetwork]:
        return [ipaddress.ip_network(s["cidr"], strict=False) for s in self.subnets]

    def reachable(self, address: IPAddress) -> bool:
        """Whether the router can use ``address`` as a nexthop: on one of its subnets, not its own."""
        return address not in self.router_ips and any(address in n for n in self.networks)


@dataclass
class Audited:
    """The audit's input and first findings: where the nodes came from, the checked nodes and cluster CIDRs,
    each node's port as first read, and the findings before any repair."""

    source: str
    nodes: list[route_nodes.Node]
    cidrs: list[IPNetwork]
    node_ports: dict[str, Any]
    findings: Any = None  # the findings' list, once audited
    owner: Any = None  # ownership.Ownership: who repairs what


@dataclass(frozen=True)
class RouteAuditOptions(ModuleOptions):
    """What route_audit was asked (its options, with check mode and diff): the runner reads nothing else."""

    router: str
    cluster_cidr: list[str]
    nodes: Optional[list[dict[str, Any]]]
    node_selector: Optional[str]
    state: str
    max_changes: int
    max_removal_share: float
    check_address_pairs: bool
    route_limit: Optional[int]
    limit_warning_ratio: float
    fail_on_findings: bool
    timeout: int
    route_owner: Optional[str] = None
    cloud_controller: Optional[dict[str, Any]] = None
    keep_routes: Optional[list[dict[str, Any]]] = None
    check_mode: bool = False
    diff: bool = False


def explicit_nodes(nodes: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"name": node.get("name"), "pod_cidrs": node.get("pod_cidr"), "address": node.get("address")}
            for node in nodes]


class RouteAuditRunner(ModuleRunner):
    """route_audit's work. ``module`` is the module base it runs in (an ``OpenStackKubernetesModule``: the
    connections, the start time, warnings); ``options`` what was asked."""

    module: OpenStackKubernetesModule
    options: RouteAuditOptions

    def __init__(self, module: OpenStackKubernetesModule, options: RouteAuditOptions) -> None:
        super().__init__(module, options)
        self.explicit_nodes: route_nodes.CheckedNodes | None = None
        self.controller_cidrs: list[IPNetwork] | None = None  # the cloud_controller option's cluster CIDRs, checked
        self.kept = route_inputs.NO_KEPT  # keep_routes, checked: never removed by any step

    # -- input -------------------------------------------------------------------------

    def validate(self) -> list[IPNetwork]:
        """The checked cluster CIDRs; the explicit node list is checked too (kept for ``load_nodes``), before
        anything is read."""
        options = self.options
        cidrs = route_inputs.normalize_cluster_cidrs(options.cluster_cidr)
        if options.nodes is not None:
            self.explicit_nodes = route_nodes.normalize_nodes(explicit_nodes(options.nodes), cidrs)
        controller = options.cloud_controller
        if controller is not None:  # [] when given without cluster_cidr: route_audit's
            self.controller_cidrs = route_inputs.normalize_cluster_cidrs(
                controller["cluster_cidr"], "cloud_controller.cluster_cidr") \
                if controller.get("cluster_cidr") else []
        self.kept = route_inputs.normalize_keep_routes(options.keep_routes)
        return cidrs

    def load_nodes(self, cidrs: list[IPNetwork],
                   deadline: Deadline) -> tuple[str, route_nodes.CheckedNodes, route_owner.Ownership]:
        """(source name, checked nodes, who owns the routes). ``nodes`` given (even empty): that list, every node
        complete; omitted: the Kubernetes API, where a Node that cannot be routed yet (no pod CIDR: it just joined;
        no usable address) is incomplete: reported, and its routes left alone (``CheckedNodes.incomplete``). The
        owner (``route_owner``) is the option's, else detected on the Nodes read."""
        if self.options.nodes is not None:
            # checked by validate()
            return "nodes", cast(route_nodes.CheckedNodes, self.explicit_nodes), self.ownership(cidrs, ())
        records = list_nodes(self.module.connect_kubernetes(), deadline, label_selector=self.options.node_selector)
        return ("kubernetes", route_nodes.normalize_nodes(records, cidrs, source="kubernetes", lenient=True),
                self.ownership(cidrs, records))

    def ownership(self, cidrs: list[IPNetwork], records: Sequence[dict[str, Any]]) -> route_owner.Ownership:
        return route_owner.decide(self.options.route_owner, self.controller_cidrs, cidrs, records)

    # -- reading -----------------------------------------------------------------------

    def read(self, api: RouterService, deadline: Deadline) -> RouterView:
        ref = self.options.router
        router = api.find_router(ref, deadline, is_id=is_uuid(ref))
        aliases = api.extension_aliases(deadline)
        router_ports = api.router_ports(router["id"], deadline)
        subnet_ids = set(ip["subnet_id"] for p in router_ports for ip in p.get("fixed_ips") or [])
        subnets = api.subnets(subnet_ids, deadline)
        network_ids = set(s["network_id"] for s in subnets) | set(p["network_id"] for p in router_ports)
        ports = api.network_ports(network_ids, deadline) if self.options.check_address_pairs else []
        limit, source = self.options.route_limit, "route_limit"
        if limit is None:
            quota = api.route_quota(router.get("project_id") or router.get("tenant_id"), deadline)
            if quota is not None:
                limit, source = (None if quota < 0 else quota), "quota router_route"
            else:
                limit, source = NEUTRON_DEFAULT_MAX_ROUTES, "Neutron default max_routes"
        router_ips = set(ipaddress.ip_address(ip["ip_address"]) for p in router_ports for ip in p.get("fixed_ips") or [])
        return RouterView(router=router, aliases=aliases, subnets=subnets, router_ips=router_ips, ports=ports,
                          limit=limit, limit_source=source)

    @staticmethod
    def match_ports(nodes: Sequence[route_nodes.Node],
                    ports: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any] | None]:
        by_address: dict[IPAddress, dict[str, Any]] = {}
        for port in ports:
            if port.get("device_owner") in ROUTER_OWNERS:
                continue
            for ip in port.get("fixed_ips") or []:
                by_address.setdefault(ipaddress.ip_address(ip["ip_address"]), port)
        result: dict[str, dict[str, Any] | None] = {}
        for node in nodes:
            result[node["name"]] = next((by_address[a] for a in node["addresses"] if a in by_address), None)
        return result

    # -- run ---------------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        """The result of the audit (and repair): the long lists cut (``summarise``), on a failure too. The parses
        of the run are kept for the run only (``cidr_cache.one_run``)."""
        try:
            with cidr_cache.one_run():
                return summarise(self.audit_router())
        except FlightcontrolError as exc:
            exc.data = summarise(exc.data)
            raise

    def audit_router(self) -> dict[str, Any]:
        cidrs = self.validate()
        options = self.options
        deadline = self.deadline
        source, nodes, owner = self.load_nodes(cidrs, deadline)
        api = RouterService(self.module.connect())
        view = self.read(api, deadline)
        scope_problem = route_guards.cidr_scope_problem(cidrs, view.networks) or route_guards.cidr_scope_problem(
            self.controller_cidrs or [], view.networks, "cloud_controller.cluster_cidr")
        if scope_problem:
            raise ModuleFailure(f"router {view.label}: {scope_problem}; nothing was changed")
        node_ports: dict[str, Any] = self.match_ports(nodes, view.ports) if options.check_address_pairs else {}
        audited = Audited(source=source, nodes=nodes, cidrs=cidrs, node_ports=node_ports, owner=owner)
        audited.findings = self.audit(view.router.get("routes") or [], node_ports, view, audited)
        result = self.first_result(view, audited)
        self.warn_nodes(nodes, node_ports)
        self.warn_owner(owner)
        if options.state != "repaired" or not owner.writes_routes:
            self.add_outcome(result, view, audited, audited.findings, view.router.get("routes") or [], node_ports)
            return self.conclude(result, None, audited.findings)
        self.refuse_removals(result, view, audited)
        repair = RouteRepair(api, RepairInput(
            router=view.router, nodes=nodes, cidrs=cidrs, node_ports=node_ports, findings=audited.findings,
            limit=view.limit, atomic="extraroute-atomic" in view.aliases,
            if_match="revision-if-match" in view.aliases, node_source=source,
            max_removal_share=options.max_removal_share, controlled=owner.controlled if owner.restricted else None,
            kept=self.kept),
            options.check_address_pairs, options.max_changes, options.check_mode, deadline, result)
        final_routes, final_ports = repair.run()
        remaining = self.audit(final_routes, final_ports, view, audited)
        self.add_outcome(result, view, audited, remaining, final_routes, final_ports)
        return self.conclude(result, repair.state, remaining)

    def audit(self, routes: list[dict[str, Any]], node_ports: dict[str, Any], view: RouterView,
              audited: Audited) -> list[dict[str, Any]]:
        findings = route_findings.route_findings(routes, audited.nodes, audited.cidrs, reachable=view.reachable,
                                                 kept=self.kept)
        if self.options.check_address_pairs:
            findings += route_findings.pair_findings(audited.nodes, node_ports)
        _info, limit_finding = route_findings.limit_info(routes, audited.nodes, audited.cidrs, view.limit,
                                                         view.limit_source, self.options.limit_warning_ratio, self.kept)
        if limit_finding:
            findings.append(limit_finding)
        findings += route_owner.kept_route_findings(routes, self.options.keep_routes, audited.owner)
        return route_owner.annotate(findings, audited.owner)

    def warn_owner(self, owner: route_owner.Ownership) -> None:
        if owner.source == "detected":
            self.module.warn(f"the router's pod routes are taken for the cloud controller's ({owner.evidence}): route_audit adds "
                             "none of them and removes only duplicates and stale routes; give route_owner to "
                             "choose")
        if owner.owner == route_owner.NONE and self.options.state == "repaired":
            self.module.warn("route_owner none: the findings are reported and nothing is repaired")

    def warn_nodes(self, nodes: Sequence[route_nodes.Node], node_ports: dict[str, Any]) -> None:
        if self.options.check_address_pairs:
            self.warn_each([node for node in nodes if node_ports.get(node["name"]) is None], lambda node: (
                f"node {node['name']}: no port with address {', '.join(map(str, node['addresses']))} on the router's "
                "networks, so its address pairs were not checked"),
                "node(s) have no port on the router's networks, so their address pairs were not checked")
        self.warn_each(route_nodes.incomplete_nodes(nodes), lambda node: (
            f'node {node["name"]} exists but cannot be routed ({node["reason"]}); its routes are left alone'),
            "more node(s) exist but cannot be routed; their routes are left alone (see incomplete_nodes)")

    def warn_each(self, items: list[Any], say: Callable[[Any], str], rest: str) -> None:
        """One warning per item, at most WARNINGS_SHOWN, and one for the rest."""
        for item in items[:WARNINGS_SHOWN]:
            self.module.warn(say(item))
        if len(items) > WARNINGS_SHOWN:
            self.module.warn(f"{len(items) - WARNINGS_SHOWN} more {rest}")

    # -- guards ------------------------------------------------------------------------

    def refuse_removals(self, result: dict[str, Any], view: RouterView, audited: Audited) -> None:
        """Fail before any write when the repair would remove too many of the routes there are."""
        before, findings = view.router.get("routes") or [], audited.findings
        cluster, _foreign = route_routes.split_routes(before, audited.cidrs)
        refusal = route_guards.removal_refusal(findings, cluster, len(audited.nodes), audited.source,
                                               self.options.max_removal_share)
        if not refusal:
            return
        result.update(remaining=findings, healthy=not any(f["severity"] == route_findings.ERROR for f in findings),
                      changed=False, routes=self.route_counts(before, before, audited),
                      limit=self.limit_view(before, view, audited))
        raise ModuleFailure(f"router {view.label}: {refusal}", **result)

    # -- the result --------------------------------------------------------------------

    @staticmethod
    def first_result(view: RouterView, audited: Audited) -> dict[str, Any]:
        router, node_ports = view.router, audited.node_ports
        return dict(
            node_source=audited.source,
            router=dict(id=router["id"], name=router.get("name"), atomic="extraroute-atomic" in view.aliases,
                        subnets=sorted(s["cidr"] for s in view.subnets)),
            nodes=[dict(name=n["name"], pod_cidrs=[str(c) for c in n["pod_cidrs"]],
                        addresses=[str(a) for a in n["addresses"]],
                        port=(node_ports.get(n["name"]) or {}).get("id"),
                        port_security=(node_ports.get(n["name"]) or {}).get("port_security_enabled"))
                   for n in audited.nodes],
            incomplete_nodes=[dict(name=n["name"], pod_cidrs=[str(c) for c in n["pod_cidrs"]],
                                   addresses=[str(a) for a in n["addresses"]], reason=n["reason"])
                              for n in route_nodes.incomplete_nodes(audited.nodes)],
            findings=audited.findings, counts=route_findings.count_kinds(audited.findings), changes=[], pending=[],
            stopped_by=None, conflicts=[], route_owner=audited.owner.summary(),
        )

    @staticmethod
    def route_counts(before: list[dict[str, Any]], final: list[dict[str, Any]], audited: Audited) -> dict[str, int]:
        cluster, foreign = route_routes.split_routes(before, audited.cidrs)
        return dict(total=len(before), cluster=len(cluster), foreign=len(foreign),
                    needed=len(route_nodes.needed_routes(audited.nodes)), total_after=len(final))

    def limit_view(self, routes: list[dict[str, Any]], view: RouterView, audited: Audited) -> dict[str, Any]:
        return route_findings.limit_info(routes, audited.nodes, audited.cidrs, view.limit, view.limit_source,
                                         self.options.limit_warning_ratio, self.kept)[0]

    def add_outcome(self, result: dict[str, Any], view: RouterView, audited: Audited, remaining: list[dict[str, Any]],
                    final_routes: list[dict[str, Any]], final_ports: dict[str, Any]) -> None:
        before = view.router.get("routes") or []
        repair = self.options.state == "repaired"
        now = audited.findings if self.options.check_mode or not repair else remaining
        result.update(
            remaining=remaining,
            healthy=not any(f["severity"] == route_findings.ERROR for f in now),
            routes=self.route_counts(before, final_routes, audited),
            limit=self.limit_view(before, view, audited),
            changed=any(c["status"] in ("done", "planned") for c in result["changes"]),
        )
        if self.options.diff:
            result["diff"] = dict(before=self.diff_view(before, audited.nodes, audited.node_ports),
                                  after=self.diff_view(final_routes, audited.nodes, final_ports))

    @staticmethod
    def diff_view(routes: list[dict[str, Any]], nodes: Sequence[route_nodes.Node],
                  node_ports: dict[str, Any]) -> dict[str, Any]:
        view: dict[str, Any] = dict(routes=sorted(route_routes.route_text(r) for r in routes))
        pairs = {}
        for node in nodes:
            port = node_ports.get(node["name"])
            if port:
                pairs[node["name"]] = sorted(p.get("ip_address") for p in port.get("allowed_address_pairs") or [])
        if pairs:
            view["address_pairs"] = pairs
        return view

    def conclude(self, result: dict[str, Any], repair_state: RepairState | None,
                 remaining: list[dict[str, Any]]) -> dict[str, Any]:
        """The result, or fail naming what was refused, where the repair stopped, or the findings (fail_on_findings)."""
        problems: list[str] = []
        if repair_state is not None and repair_state.rejected:
            refused = "; ".join(f'{c["action"]} {c["destination"]} -> {c["nexthop"]}: {c["error"]}'
                                for c in repair_state.rejected)
            problems.append(f"Neutron refused {len(repair_state.rejected)} change(s) on router "
                            f"{result['router']['name'] or result['router']['id']}: {refused}; the other changes were "
                            "made and those destinations keep the routes they had")
        if result["stopped_by"] == "max_changes":
            made = sum(1 for c in result["changes"] if c["status"] in ("done", "planned"))
            problems.append(f"stopped after {made} change(s) (max_changes {self.options.max_changes}) with "
                            f"{len(result['pending'])} more needed (see pending); run again or raise max_changes")
        elif result["stopped_by"] == "limit":
            limit_error = repair_state.limit_error if repair_state is not None else None
            limit_msgs = [f["message"] for f in remaining if f["kind"] == "limit" and f["severity"] == route_findings.ERROR]
            why = ": " + (limit_error or "; ".join(limit_msgs)) if (limit_error or limit_msgs) else ""
            problems.append(f"the router's route limit leaves no room for {len(result['pending'])} route(s) the "
                            f"cluster needs{why}")
        if self.options.fail_on_findings and remaining:
            shown = errors_first(remaining)[:MESSAGES_SHOWN]
            state = "remain after the repair" if self.options.state == "repaired" else "found"
            more = f"; and {len(remaining) - len(shown)} more (see remaining)" if len(remaining) > len(shown) else ""
            listed = "; ".join(f'{f["kind"]}: {f["message"]}' for f in shown)
            problems.append(f"{len(remaining)} finding(s) {state}: {listed}{more}")
        if problems:
            raise ModuleFailure("; ".join(problems), **result)
        return result


def errors_first(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(findings, key=lambda f: 0 if f.get("severity") == route_findings.ERROR else 1)


def summarise(data: dict[str, Any]) -> dict[str, Any]:
    """The result with each long list cut to RESULT_LIST_CAP entries (findings: errors first) and ``omitted``
    counting what was left out of each (only for a result that has findings: the audit ran)."""
    if "findings" not in data:
        return data
    data = dict(data)
    omitted: dict[str, int] = {}
    for key in CAPPED_LISTS:
        items = data.get(key)
        omitted[key] = 0
        if isinstance(items, list) and len(items) > RESULT_LIST_CAP:
            omitted[key] = len(items) - RESULT_LIST_CAP
            data[key] = (errors_first(items) if key in ("findings", "remaining") else items)[:RESULT_LIST_CAP]
    data["omitted"] = omitted
    return data
