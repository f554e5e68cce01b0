#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: route_audit
short_description: Find and repair duplicate, stale and missing pod routes on a Neutron router
version_added: 0.1.0
description:
  - With cloud routes, every Kubernetes node's pod CIDR is a static route on the Neutron router pointing
    at the node. This module compares the router's routes with what the cluster needs and reports (or,
    with I(state=repaired), fixes) what is wrong.
  - Findings, one per destination. C(duplicate) - one destination, several nexthops (the right one is
    named; the first one often wins, so a recycled pod CIDR goes to a dead node). C(wrong_nexthop) - the
    only route of a node's pod CIDR points elsewhere (a node that is gone, another node, or a destination
    with host bits set). C(missing) - a node's pod CIDR has no route. C(stale) - a route inside the
    cluster CIDR to a pod CIDR no node has. C(address_pair_missing) - the node's port lacks its pod CIDR
    in C(allowed_address_pairs), so port security drops its pods' traffic. C(limit) - the route count
    against the router's limit, a warning near it and an error when what the cluster needs does not fit.
  - Only routes whose destination lies inside I(cluster_cidr) are the cluster's. Every other route is
    reported as foreign and never changed, in any mode (routers are shared).
  - Repairs are ordered so that a failure at any point leaves no destination worse off. The right routes
    are added first; the other routes of a destination are removed only once its right route is in place;
    then address pairs; stale routes last. When the route limit leaves no room for an add, stale routes
    are removed first, then the wrong routes of the destinations still waiting. A re-run repairs the
    rest.
  - Uses Neutron's atomic C(add_extraroutes) / C(remove_extraroutes) calls when the C(extraroute-atomic)
    extension is there (they merge on the server, so a concurrent route controller is never
    overwritten); otherwise a router update of the whole list with C(If-Match) on the revision number,
    read again on HTTP 412.
  - Neutron refusing a route (HTTP 400, for example a nexthop on no subnet of the router) is terminal for
    that route only. The other changes are still made (each destination is a different node), the
    destination keeps the routes it had, and the task fails at the end naming what was refused.
  - Cost. An audit reads the router, the extensions, the router's ports, their subnets, the ports of
    those networks and the project's quota (six requests plus authentication) however many nodes;
    a repair adds one request per step (a batch of routes), or one per route when Neutron refuses a
    batch, and one per port whose address pairs change.
  - All input (CIDRs, addresses, the node list and the options) is checked before the first request.
author:
  - flightcontrol.openstack maintainers (@flightcontrol)
options:
  router:
    description:
      - Name or id of the Neutron router that carries the cluster's routes.
    type: str
    required: true
  cluster_cidr:
    description:
      - The cluster's pod network(s). Only routes whose destination lies inside one of them are managed.
      - In network form; C(198.19.1.5/16) is refused (Neutron refuses host bits in a route destination).
      - A CIDR that overlaps one of the router's own subnets (the nodes' or the gateway's), or that is every
        address of its family (C(0.0.0.0/0)), is refused in every state. Pod routes never lie there, and the
        module would treat the router's other routes as the cluster's.
    type: list
    elements: str
    required: true
  nodes:
    description:
      - The nodes the cluster has, each with its pod CIDR(s) and address(es).
      - When omitted, the nodes are read from the Kubernetes API given by I(kubernetes) (every node's
        C(spec.podCIDRs) to its InternalIP; a node without a pod CIDR yet needs no route and is left out).
      - An empty list means the cluster has no nodes, so every route inside I(cluster_cidr) is stale. A repair
        refuses to remove them unless I(max_removal_share=1) (see there).
    type: list
    elements: dict
    suboptions:
      name:
        description: Node name.
        type: str
        required: true
      pod_cidr:
        description:
          - The node's pod CIDR, or several (dual stack, one route each). Inside I(cluster_cidr), in
            network form.
        type: list
        elements: str
        required: true
        aliases: [pod_cidrs]
      address:
        description:
          - The node's internal address, or one per family. An IPv6 pod CIDR needs an IPv6 address.
        type: list
        elements: str
        required: true
        aliases: [addresses]
  node_selector:
    description:
      - Label selector of the Kubernetes nodes whose pod CIDRs route through this router (default all),
        for clusters whose nodes are spread over several routers.
    type: str
  state:
    description:
      - C(audited) reports and changes nothing.
      - C(repaired) makes the fixes of the route and address pair findings, at most I(max_changes).
    type: str
    choices: [audited, repaired]
    default: audited
  max_changes:
    description:
      - The most changes (a route added, a route removed, a port's address pairs updated) one run makes.
        When more are needed the run stops there and fails, listing what is still to do in RV(pending).
      - Drift comes a few routes at a time; a run that wants to change many routes more likely has wrong
        input (a partial node list, a too wide I(cluster_cidr)) and would cut working nodes off. Raise it
        for a planned big change.
    type: int
    default: 10
  max_removal_share:
    description:
      - The largest share (0 to 1) of the pod CIDRs routed today that one repair may leave without any route,
        by removing their stale routes. A repair that would remove more, or that would remove any route while
        the node view is empty (C(nodes=[]), a I(node_selector) that matched nothing, a Kubernetes API that
        listed no node), refuses before its first write, names what it would have removed and changes nothing.
      - Duplicate and wrong routes are not counted (their destination keeps its right route), nor are routes
        outside I(cluster_cidr) (never touched).
      - C(1) lifts the guard, for a cluster that really lost most or all of its nodes. Audits are not affected.
    type: float
    default: 0.5
  check_address_pairs:
    description:
      - Check (and with I(state=repaired) fix) that each node's Neutron port has its pod CIDRs in
        C(allowed_address_pairs). Ports with port security disabled need none.
      - The node's port is the port on one of the router's networks with the node's address.
    type: bool
    default: true
  route_limit:
    description:
      - The router's route limit. When omitted, the project's C(router_route) quota (Neutron 2026.2 and
        later) is read; when the cloud has none, Neutron's default C(max_routes) of 30 is assumed (a
        cloud's C(max_routes) setting is not visible through the API, so give it here).
    type: int
  limit_warning_ratio:
    description:
      - A C(limit) warning is reported when the routes the router needs reach this share of the limit.
    type: float
    default: 0.9
  fail_on_findings:
    description:
      - Fail the task when findings (of any severity) remain at the end, after the repair with
        I(state=repaired). For CI and AWX gating.
    type: bool
    default: false
  timeout:
    description:
      - Seconds the whole task may take, retries of transient API faults included.
    type: int
    default: 300
extends_documentation_fragment:
  - flightcontrol.openstack.openstack_auth
  - flightcontrol.openstack.kubernetes_dict
attributes:
  check_mode:
    support: full
    description: Reads everything and reports the changes a repair would make; makes no write request at all.
  diff_mode:
    support: full
    description: Shows the router's routes and the nodes' address pairs before and after.
notes:
  - Neutron's C(add_extraroutes) stores a destination with host bits set (C(198.19.1.5/24)) as given, though a
    router update refuses one. Such a route is matched to its network but never counts as the right route;
    a repair replaces it.
  - Neutron 2026.2 replaced the C(max_routes) option (HTTP 400 C(RoutesExhausted)) with the C(router_route)
    quota (HTTP 409 C(OverQuota)). Both are understood.
'''

EXAMPLES = r'''
- name: Audit the cluster's routes (changes nothing)
  flightcontrol.openstack.route_audit:
    cloud: production
    router: kubernikus-prod
    cluster_cidr: 198.19.0.0/16
    nodes:
      - name: prod-node-1
        pod_cidr: 198.19.1.0/24
        address: 10.180.0.5
      - name: prod-node-2
        pod_cidr: [198.19.2.0/24, "fd00:10:0:2::/64"]
        address: [10.180.0.6, "fd00:180::6"]
  register: routes

- name: Show what is wrong
  ansible.builtin.debug:
    msg: "{{ routes.findings | map(attribute='message') | list }}"

- name: Repair, at most 20 changes, and fail if anything is left
  flightcontrol.openstack.route_audit:
    cloud: production
    router: kubernikus-prod
    cluster_cidr: 198.19.0.0/16
    nodes: "{{ cluster_nodes }}"
    state: repaired
    max_changes: 20
    fail_on_findings: true

- name: What would a repair do
  flightcontrol.openstack.route_audit:
    cloud: production
    router: kubernikus-prod
    cluster_cidr: 198.19.0.0/16
    nodes: "{{ cluster_nodes }}"
    state: repaired
  check_mode: true
  diff: true
'''

RETURN = r'''
findings:
  description: What the audit found, before any repair.
  returned: always
  type: list
  elements: dict
  contains:
    kind:
      description: C(duplicate), C(stale), C(missing), C(wrong_nexthop), C(address_pair_missing) or C(limit).
      type: str
    severity:
      description: C(error) (traffic goes astray or is dropped now) or C(warning).
      type: str
    destination:
      description: The destination (pod CIDR) concerned; null for C(limit).
      type: str
    node:
      description: The node that owns the destination, if any.
      type: str
    routes:
      description:
        - The routes of the destination, each with its C(role) (C(right), C(stale) - the nexthop is no current
          node, C(wrong) - another node's address, C(unused), C(not_canonical) - host bits set) and the C(node)
          its nexthop belongs to.
      type: list
      elements: dict
    fix:
      description: The fix a repair makes - C(add) and C(remove) route lists, C(add_address_pairs) on C(port), or
        C(raise_limit_to).
      type: dict
    message:
      description: The finding in words.
      type: str
    note:
      description: Present when Neutron is expected to refuse the fix (the nexthop is on no subnet of the router).
      type: str
  sample:
    - kind: duplicate
      severity: error
      destination: 198.19.1.0/24
      node: prod-node-5
      routes:
        - {destination: 198.19.1.0/24, nexthop: 10.180.0.3, role: stale, node: null}
        - {destination: 198.19.1.0/24, nexthop: 10.180.0.5, role: right, node: prod-node-5}
      fix:
        add: []
        remove: [{destination: 198.19.1.0/24, nexthop: 10.180.0.3}]
      message: 2 routes for 198.19.1.0/24 (...); the right one is 198.19.1.0/24 -> 10.180.0.5 (node prod-node-5)
remaining:
  description: The findings still true at the end (after the repair; in check mode, after the planned repair).
  returned: always
  type: list
  elements: dict
counts:
  description: Number of findings (of RV(findings)) by kind.
  returned: always
  type: dict
  sample: {duplicate: 1, stale: 2, missing: 0, wrong_nexthop: 0, address_pair_missing: 0, limit: 0}
healthy:
  description: No finding of severity C(error) in the cloud at the end (in check mode and with I(state=audited),
    the state found).
  returned: always
  type: bool
changes:
  description:
    - The changes made (in check mode, planned), in order. C(action) is C(add_route), C(remove_route) or
      C(add_address_pairs); C(status) is C(done), C(planned) or C(rejected) (with C(error), Neutron's message).
  returned: always
  type: list
  elements: dict
  sample:
    - {action: remove_route, destination: 198.19.1.0/24, nexthop: 10.180.0.3, node: null, reason: duplicate,
       status: done}
pending:
  description: Changes still needed when the run stopped early (I(max_changes) or the route limit).
  returned: always
  type: list
  elements: dict
stopped_by:
  description: C(max_changes) or C(limit) when the repair stopped before the end, else null.
  returned: always
  type: str
conflicts:
  description:
    - Concurrent changes met and resolved, each C(router_changed) (without extraroute-atomic, a router update
      answered 412 because someone changed the router since it was read; the router was read again and the
      repair planned anew from its current routes), with the C(router) id and the C(revision) the update expected.
  returned: always
  type: list
  elements: dict
routes:
  description: Route counts on the router - C(total), C(cluster), C(foreign) at the start, C(needed) by the nodes,
    C(total_after) at the end.
  returned: always
  type: dict
limit:
  description:
    - The router's route limit (C(limit), null for unlimited), where it came from (C(source) - C(route_limit),
      C(quota router_route) or C(Neutron default max_routes)), routes C(current), C(foreign), C(cluster),
      C(needed), C(after_repair) and C(free_after_repair).
  returned: always
  type: dict
router:
  description: The router - C(id), C(name), C(atomic) (extraroute-atomic used) and the C(subnets) its interfaces
    are on.
  returned: always
  type: dict
nodes:
  description: The nodes checked, with their Neutron C(port) (null when none was found) and C(port_security).
  returned: always
  type: list
  elements: dict
node_source:
  description: C(nodes) (the option) or C(kubernetes).
  returned: always
  type: str
elapsed:
  description: Seconds the task took.
  returned: always
  type: float
api_calls:
  description: HTTP requests made to OpenStack (authentication included).
  returned: always
  type: int
retried_faults:
  description: Transient faults that were retried (HTTP status or C(connection)).
  returned: always
  type: list
  elements: raw
'''

import ipaddress

from ansible_collections.flightcontrol.openstack.plugins.module_utils.routes import plan as rp
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.identifiers import is_uuid
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.module_base import (
    SECONDS,
    ModuleFailure,
    NumberRange,
    is_sdk_error,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.http import (
    describe_fault,
    service_message,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import DeadlineExceeded
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.module_base import OpenStackKubernetesModule
from ansible_collections.flightcontrol.openstack.plugins.module_utils.routes.nodes import node_source
from ansible_collections.flightcontrol.openstack.plugins.module_utils.neutron.route_service import (
    RouteLimitReached,
    RouteRejected,
    RouterChanged,
    RouterService,
)

NEUTRON_DEFAULT_MAX_ROUTES = 30
PORT_UPDATE_ATTEMPTS = 5
ROUTER_UPDATE_ATTEMPTS = 5
ROUTER_OWNERS = ("network:router_interface", "network:router_interface_distributed",
                 "network:ha_router_replicated_interface", "network:router_centralized_snat",
                 "network:router_gateway")


class RouteAudit(OpenStackKubernetesModule):
    argument_spec = dict(
        router=dict(type="str", required=True),
        cluster_cidr=dict(type="list", elements="str", required=True),
        nodes=dict(type="list", elements="dict", options=dict(
            name=dict(type="str", required=True),
            pod_cidr=dict(type="list", elements="str", required=True, aliases=["pod_cidrs"]),
            address=dict(type="list", elements="str", required=True, aliases=["addresses"]),
        )),
        node_selector=dict(type="str"),
        state=dict(type="str", default="audited", choices=["audited", "repaired"]),
        max_changes=dict(type="int", default=10),
        max_removal_share=dict(type="float", default=rp.DEFAULT_MAX_REMOVAL_SHARE),
        check_address_pairs=dict(type="bool", default=True),
        route_limit=dict(type="int"),
        limit_warning_ratio=dict(type="float", default=0.9),
        fail_on_findings=dict(type="bool", default=False),
        timeout=dict(type="int", default=300),
    )
    number_ranges = dict(
        timeout=SECONDS,
        max_changes=NumberRange(minimum=1, maximum=100000, hint="use state=audited to change nothing"),
        route_limit=NumberRange(minimum=1, maximum=100000),
        limit_warning_ratio=NumberRange(above=0, maximum=1),
        max_removal_share=NumberRange(minimum=0, maximum=1),
    )

    # -- input -------------------------------------------------------------------------

    def validate(self):
        params = self.params
        try:
            cidrs = rp.normalize_cluster_cidrs(params["cluster_cidr"])
            if params["nodes"] is not None:  # the explicit list is checked before anything is read
                rp.normalize_nodes(node_source(params, None)[1], cidrs)
        except rp.PlanError as exc:
            raise ModuleFailure(str(exc))
        return cidrs

    def load_nodes(self, cidrs, deadline):
        source, raw = node_source(self.params, deadline, self.connect_kubernetes)
        try:
            return source, rp.normalize_nodes(raw, cidrs, source=source)
        except rp.PlanError as exc:
            raise ModuleFailure(str(exc))

    # -- reading -----------------------------------------------------------------------

    def read(self, api, deadline):
        ref = self.params["router"]
        router = api.find_router(ref, deadline, is_id=is_uuid(ref))
        aliases = api.extension_aliases(deadline)
        router_ports = api.router_ports(router["id"], deadline)
        subnet_ids = set(ip["subnet_id"] for p in router_ports for ip in p.get("fixed_ips") or [])
        subnets = api.subnets(subnet_ids, deadline)
        network_ids = set(s["network_id"] for s in subnets) | set(p["network_id"] for p in router_ports)
        ports = api.network_ports(network_ids, deadline) if self.params["check_address_pairs"] else []
        limit, source = self.params["route_limit"], "route_limit"
        if limit is None:
            quota = api.route_quota(router.get("project_id") or router.get("tenant_id"), deadline)
            if quota is not None:
                limit, source = (None if quota < 0 else quota), "quota router_route"
            else:
                limit, source = NEUTRON_DEFAULT_MAX_ROUTES, "Neutron default max_routes"
        router_ips = set(ipaddress.ip_address(ip["ip_address"]) for p in router_ports for ip in p.get("fixed_ips") or [])
        return router, aliases, subnets, router_ips, ports, limit, source

    @staticmethod
    def match_ports(nodes, ports):
        by_address = {}
        for port in ports:
            if port.get("device_owner") in ROUTER_OWNERS:
                continue
            for ip in port.get("fixed_ips") or []:
                by_address.setdefault(ipaddress.ip_address(ip["ip_address"]), port)
        result = {}
        for node in nodes:
            result[node["name"]] = next((by_address[a] for a in node["addresses"] if a in by_address), None)
        return result

    # -- run ---------------------------------------------------------------------------

    def run(self):
        cidrs = self.validate()
        params = self.params
        deadline = self.started + params["timeout"]
        check = self.ansible.check_mode
        repair = params["state"] == "repaired"
        source, nodes = self.load_nodes(cidrs, deadline)
        self.connect()
        api = RouterService(self.client)
        router, aliases, subnets, router_ips, ports, limit, limit_source = self.read(api, deadline)
        subnet_networks = [ipaddress.ip_network(s["cidr"], strict=False) for s in subnets]
        scope_problem = rp.cidr_scope_problem(cidrs, subnet_networks)
        if scope_problem:
            raise ModuleFailure("router %s: %s; nothing was changed" % (router.get("name") or router["id"],
                                                                        scope_problem))

        def reachable(address):
            return address not in router_ips and any(address in n for n in subnet_networks)

        node_ports = self.match_ports(nodes, ports) if params["check_address_pairs"] else {}
        before_routes = router.get("routes") or []
        findings = self.audit(before_routes, nodes, cidrs, node_ports, limit, limit_source, reachable)
        cluster, foreign = rp.split_routes(before_routes, cidrs)
        atomic = "extraroute-atomic" in aliases
        result = dict(
            node_source=source,
            router=dict(id=router["id"], name=router.get("name"), atomic=atomic,
                        subnets=sorted(s["cidr"] for s in subnets)),
            nodes=[dict(name=n["name"], pod_cidrs=[str(c) for c in n["pod_cidrs"]],
                        addresses=[str(a) for a in n["addresses"]],
                        port=(node_ports.get(n["name"]) or {}).get("id"),
                        port_security=(node_ports.get(n["name"]) or {}).get("port_security_enabled"))
                   for n in nodes],
            findings=findings, counts=rp.count_kinds(findings), changes=[], pending=[], stopped_by=None, conflicts=[],
        )
        if params["check_address_pairs"]:
            for node in nodes:
                if node_ports.get(node["name"]) is None:
                    self.ansible.warn("node %s: no port with address %s on the router's networks, so its address "
                                      "pairs were not checked" % (node["name"], ", ".join(map(str, node["addresses"]))))

        final_routes, final_ports = before_routes, node_ports
        repair_state = dict(rejected=[], limit_error=None)
        refusal = rp.removal_refusal(findings, cluster, len(nodes), source, params["max_removal_share"]) \
            if repair else None
        if refusal:
            result.update(remaining=findings, healthy=not any(f["severity"] == rp.ERROR for f in findings),
                          changed=False, routes=dict(
                total=len(before_routes), cluster=len(cluster), foreign=len(foreign),
                needed=len(rp.needed_routes(nodes)), total_after=len(before_routes)),
                limit=rp.limit_info(before_routes, nodes, cidrs, limit, limit_source,
                                    params["limit_warning_ratio"])[0])
            raise ModuleFailure("router %s: %s" % (router.get("name") or router["id"], refusal), **result)
        if repair:
            final_routes, final_ports = self.repair(api, router, nodes, cidrs, node_ports, findings, limit, atomic,
                                                    "revision-if-match" in aliases, check, deadline, result,
                                                    repair_state)
        remaining = findings if not repair else self.audit(final_routes, nodes, cidrs, final_ports, limit,
                                                           limit_source, reachable)
        now = findings if check or not repair else remaining
        _info = rp.limit_info(before_routes, nodes, cidrs, limit, limit_source, params["limit_warning_ratio"])[0]
        result.update(
            remaining=remaining,
            healthy=not any(f["severity"] == rp.ERROR for f in now),
            routes=dict(total=len(before_routes), cluster=len(cluster), foreign=len(foreign),
                        needed=len(rp.needed_routes(nodes)), total_after=len(final_routes)),
            limit=_info,
            changed=any(c["status"] in ("done", "planned") for c in result["changes"]),
        )
        if self.ansible._diff:
            result["diff"] = dict(before=self.diff_view(before_routes, nodes, node_ports),
                                  after=self.diff_view(final_routes, nodes, final_ports))
        self.finish(result, repair_state, remaining)

    def audit(self, routes, nodes, cidrs, node_ports, limit, limit_source, reachable):
        findings = rp.route_findings(routes, nodes, cidrs, reachable=reachable)
        if self.params["check_address_pairs"]:
            findings += rp.pair_findings(nodes, node_ports)
        _info, limit_finding = rp.limit_info(routes, nodes, cidrs, limit, limit_source,
                                             self.params["limit_warning_ratio"])
        if limit_finding:
            findings.append(limit_finding)
        return findings

    @staticmethod
    def diff_view(routes, nodes, node_ports):
        view = dict(routes=sorted(rp.route_text(r) for r in routes))
        pairs = {}
        for node in nodes:
            port = node_ports.get(node["name"])
            if port:
                pairs[node["name"]] = sorted(p.get("ip_address") for p in port.get("allowed_address_pairs") or [])
        if pairs:
            view["address_pairs"] = pairs
        return view

    def finish(self, result, repair_state, remaining):
        params = self.params
        problems = []
        if repair_state["rejected"]:
            problems.append("Neutron refused %d change(s) on router %s: %s; the other changes were made and those "
                            "destinations keep the routes they had" % (
                                len(repair_state["rejected"]), result["router"]["name"] or result["router"]["id"],
                                "; ".join("%s %s -> %s: %s" % (c["action"], c["destination"], c["nexthop"], c["error"])
                                          for c in repair_state["rejected"])))
        if result["stopped_by"] == "max_changes":
            problems.append("stopped after %d change(s) (max_changes %d) with %d more needed (see pending); run "
                            "again or raise max_changes" % (
                                sum(1 for c in result["changes"] if c["status"] in ("done", "planned")),
                                params["max_changes"], len(result["pending"])))
        elif result["stopped_by"] == "limit":
            limit_msgs = [f["message"] for f in remaining if f["kind"] == "limit" and f["severity"] == rp.ERROR]
            problems.append("the router's route limit leaves no room for %d route(s) the cluster needs%s" % (
                len(result["pending"]),
                ": " + (repair_state["limit_error"] or "; ".join(limit_msgs)) if (
                    repair_state["limit_error"] or limit_msgs) else ""))
        if params["fail_on_findings"] and remaining:
            problems.append("%d finding(s) %s: %s" % (
                len(remaining), "remain after the repair" if params["state"] == "repaired" else "found",
                "; ".join("%s: %s" % (f["kind"], f["message"]) for f in remaining)))
        if problems:
            raise ModuleFailure("; ".join(problems), **result)
        self.exit(**result)

    # -- repair ------------------------------------------------------------------------

    def repair(self, api, router, nodes, cidrs, node_ports, findings, limit, atomic, if_match, check, deadline,
               result, repair_state):
        """Run the repair steps (in check mode: plan them). Returns (routes, node ports) at the end."""
        reasons = dict((f["destination"], f["kind"]) for f in findings if f["destination"])
        owners = dict((str(d), w["node"]) for d, w in rp.needed_routes(nodes).items())
        routes = [dict(r) for r in router.get("routes") or []]
        revision = router.get("revision_number") if if_match else None
        ports = dict(node_ports)
        pending_pairs = self.pair_fixes(nodes, ports) if self.params["check_address_pairs"] else []
        budget = self.params["max_changes"]
        failed = []
        races = 0
        changes = result["changes"]
        status = "planned" if check else "done"

        def record(action, route, extra=None):
            key = route_dest(route)
            entry = dict(action=action, destination=route["destination"], nexthop=route["nexthop"],
                         node=owners.get(key), reason=reasons.get(key, "stale"), status=status)
            entry.update(extra or {})
            changes.append(entry)
            return entry

        try:
            while True:
                step = rp.next_step(routes, nodes, cidrs, limit=limit, budget=budget, failed=failed,
                                    pending_pairs=pending_pairs)
                if step is None:
                    break
                if step["action"] == "stop":
                    result["stopped_by"] = step["reason"]
                    result["pending"] = self.pending(routes, nodes, cidrs, limit, failed, pending_pairs, owners,
                                                     reasons)
                    break
                if step["action"] == "address_pairs":
                    for item in step["items"]:
                        port = self.apply_pairs(api, item, ports, check, deadline)
                        changes.append(dict(action="add_address_pairs", port=item["port"], node=item["node"],
                                            address_pairs=item["cidrs"], reason="address_pair_missing",
                                            status=status))
                        ports[item["node"]] = port
                        budget -= 1
                    done = set(id(i) for i in step["items"])
                    pending_pairs = [p for p in pending_pairs if id(p) not in done]
                    continue
                adding = step["action"] == "add_routes"
                if check:
                    routes = rp.apply_routes(routes, add=step["routes"]) if adding else \
                        rp.apply_routes(routes, remove=step["routes"])
                    for route in step["routes"]:
                        record("add_route" if adding else "remove_route", route)
                    budget -= len(step["routes"])
                    continue
                try:
                    routes, revision, made = self.write_routes(api, router["id"], routes, revision, step, atomic,
                                                               deadline)
                except RouterChanged:
                    races += 1
                    result["conflicts"].append(dict(kind="router_changed", router=router["id"], revision=revision))
                    if races >= ROUTER_UPDATE_ATTEMPTS:
                        raise ModuleFailure("router %s kept changing under the update (%d times HTTP 412)" % (
                            router["id"], races), **result)
                    fresh = api.get_router(router["id"], deadline)
                    routes, revision = fresh.get("routes") or [], fresh.get("revision_number")
                    continue
                except RouteLimitReached as exc:
                    repair_state["limit_error"] = str(exc)
                    result["stopped_by"] = "limit"
                    result["pending"] = self.pending(routes, nodes, cidrs, limit, failed, pending_pairs, owners,
                                                     reasons)
                    break
                for route, error in made:
                    entry = record("add_route" if adding else "remove_route", route,
                                   dict(status="rejected", error=error) if error else None)
                    if error:
                        failed.append(route)
                        repair_state["rejected"].append(entry)
                    else:
                        budget -= 1
        except Exception as exc:  # pylint: disable=broad-except
            if isinstance(exc, ModuleFailure):
                exc.data.update(result, changed=any(c["status"] == "done" for c in changes))
                raise
            if not isinstance(exc, DeadlineExceeded) and describe_fault(exc) is None and not is_sdk_error(exc):
                raise
            result["changed"] = any(c["status"] == "done" for c in changes)
            raise ModuleFailure("the repair of router %s stopped: %s (the changes made before it are in changes; a "
                                "re-run repairs the rest)" % (router["id"], service_message(exc)), **result)
        return routes, ports

    def write_routes(self, api, router_id, routes, revision, step, atomic, deadline):
        """Make one step; returns (routes, revision, [(route, error or None)]). A batch Neutron refuses
        is sent again one route at a time, so only the refused routes are left out."""
        adding = step["action"] == "add_routes"

        def send(batch, current, rev):
            if atomic:
                call = api.add_routes if adding else api.remove_routes
                return call(router_id, batch, deadline), rev
            new = rp.apply_routes(current, add=batch) if adding else rp.apply_routes(current, remove=batch)
            return api.replace_routes(router_id, new, rev, deadline)

        try:
            routes, revision = send(step["routes"], routes, revision)
            return routes, revision, [(r, None) for r in step["routes"]]
        except RouteRejected as exc:
            if len(step["routes"]) == 1:
                return routes, revision, [(step["routes"][0], str(exc))]
        made = []
        for route in step["routes"]:
            try:
                routes, revision = send([route], routes, revision)
                made.append((route, None))
            except RouteRejected as exc:
                made.append((route, str(exc)))
        return routes, revision, made

    @staticmethod
    def pair_fixes(nodes, ports):
        fixes = []
        for finding in rp.pair_findings(nodes, ports):
            for fix in fixes:
                if fix["port"] == finding["port"]:
                    fix["cidrs"].append(finding["destination"])
                    break
            else:
                fixes.append(dict(port=finding["port"], node=finding["node"], cidrs=[finding["destination"]]))
        return fixes

    def apply_pairs(self, api, item, ports, check, deadline):
        """Add the item's pod CIDRs to the port's allowed_address_pairs (If-Match, re-read on 412)."""
        port = ports[item["node"]]
        for _attempt in range(PORT_UPDATE_ATTEMPTS):
            pairs = list(port.get("allowed_address_pairs") or [])
            wanted = [c for c in item["cidrs"]
                      if not rp.pair_covers(pairs, ipaddress.ip_network(c), port.get("mac_address"))]
            new = pairs + [{"ip_address": c} for c in wanted]
            if check or not wanted:
                return dict(port, allowed_address_pairs=new)
            updated = api.update_address_pairs(port["id"], new, port.get("revision_number"), deadline)
            if updated is not None:
                return updated
            port = api.get_port(port["id"], deadline)
        raise ModuleFailure("port %s of node %s kept changing under the update (HTTP 412 %d times)" % (
            port["id"], item["node"], PORT_UPDATE_ATTEMPTS))

    @staticmethod
    def pending(routes, nodes, cidrs, limit, failed, pending_pairs, owners, reasons):
        """The changes still needed, planned from the current routes with no cap."""
        steps, _final, _stop = rp.simulate(routes, nodes, cidrs, limit=None, pending_pairs=pending_pairs)
        left = []
        refused = set((r["destination"], r["nexthop"]) for r in failed)
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
                                 destination=route["destination"], nexthop=route["nexthop"], node=owners.get(key),
                                 reason=reasons.get(key, "stale")))
        return left


def route_dest(route):
    try:
        return str(ipaddress.ip_network(route["destination"], strict=False))
    except ValueError:
        return route["destination"]


def main():
    RouteAudit()()


if __name__ == "__main__":
    main()
