#!/usr/bin/python
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

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
    C(incomplete_node) (nodes read from Kubernetes) - a node that exists but cannot be routed yet (no pod
    CIDR, or no usable InternalIP for its pod CIDR); its routes are left alone.
  - Only routes whose destination lies inside I(cluster_cidr) are the cluster's. Every other route is
    reported as foreign and never changed, in any mode (routers are shared).
  - Repairs are ordered so that a failure at any point leaves no destination worse off. The right routes
    are added first; the other routes of a destination are removed only once its right route is in place;
    then address pairs; stale routes last. When the route limit leaves no room for an add, stale routes
    are removed first, then the wrong routes of the destinations still waiting. A re-run repairs the
    rest.
  - Uses Neutron's atomic C(add_extraroutes) / C(remove_extraroutes) calls when the C(extraroute-atomic)
    extension is there (they merge on the server); otherwise a router update of the whole list with
    C(If-Match) on the revision number, read again on HTTP 412.
  - Another writer (a route controller) changing the router while the repair runs is never overwritten.
    Each removal is planned again on a read of the router made just before it (with C(If-Match), on the
    revision the conditional update is made on), and I(max_removal_share), the empty-view refusal and the
    cluster-only rule are checked on that read. A route that was not on the router when the repair's plan
    was made is never removed by it; it is listed in RV(conflicts) as C(route_appeared) (a re-run judges it).
    Without C(revision-if-match) (very old Neutron) the router is read again before every update; a change
    made between that read and the update cannot be seen by any client.
  - Neutron refusing a route (HTTP 400, for example a nexthop on no subnet of the router) is terminal for
    that route only. The other changes are still made (each destination is a different node), the
    destination keeps the routes it had, and the task fails at the end naming what was refused.
  - Cost. An audit reads the router, the extensions, the router's ports, their subnets, the ports of
    those networks and the project's quota (six requests plus authentication) however many nodes;
    a repair adds one request per step (a batch of routes), or one per route when Neutron refuses a
    batch, one read of the router before each removal step (before each update without
    C(revision-if-match)), and one per port whose address pairs change.
  - Results of large clusters are summarised. RV(findings), RV(remaining), RV(pending), RV(nodes) and
    RV(incomplete_nodes) list at most 200 entries each (findings with severity error first), RV(omitted)
    counts what each list left out, and RV(counts) counts every finding. Warnings of one kind (nodes without a
    port, incomplete nodes) are given one by one for 20 nodes, then one warning counts the rest.
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
        C(spec.podCIDRs) to its InternalIP). A node that exists but cannot be routed yet (no pod CIDR yet,
        no InternalIP of its pod CIDR's family, or two of one family) is no error and never taken for gone; it
        is reported (an C(incomplete_node) finding, RV(incomplete_nodes), a warning), and routes to its pod
        CIDRs or via its addresses are left alone. A malformed pod CIDR, one outside I(cluster_cidr) or one two
        nodes claim still fails the run.
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
  route_owner:
    description:
      - Who owns the cluster's pod routes on the router.
      - C(flightcontrol) - this module; a repair fixes every route finding (the behaviour before this option).
      - C(cloud-controller) - cloud-provider-openstack's route controller (C([Route] router-id) with
        C(--configure-cloud-routes)) reconciles them. A repair then adds none of the routes it reconciles and
        removes only routes it never adds back - the other routes of a destination whose right route is in place
        (duplicates) and routes to pod CIDRs no node has (stale, which it keeps when it cannot resolve their
        nexthop), stale ones first when the route limit leaves it no room. Missing and wrong routes and the nodes'
        address pairs are left to it and reported, each finding with C(repaired_by) and C(controller_fault).
      - C(none) - another tool owns them; findings are reported and a repair writes nothing.
      - When omitted, C(cloud-controller) if I(cloud_controller) is given or a node read from Kubernetes carries
        the condition the route controller sets on the nodes it routed (C(NetworkUnavailable) false with reason
        C(RouteCreated)), with a warning naming the evidence; else C(flightcontrol). RV(route_owner) says which
        and why.
    type: str
    choices: [flightcontrol, cloud-controller, none]
  cloud_controller:
    description:
      - The cloud controller's route configuration, for I(route_owner=cloud-controller) (given, it also selects
        that owner when I(route_owner) is omitted).
    type: dict
    suboptions:
      cluster_cidr:
        description:
          - The controller's C(--cluster-cidr). Destinations inside it are the controller's; destinations inside
            I(cluster_cidr) but outside it are repaired by this module as with C(flightcontrol). Default
            I(cluster_cidr).
          - Checked by the rule of I(cluster_cidr) - a whole family (C(0.0.0.0/0), C(::/0)) or host bits are refused
            before any request, an overlap with the router's own subnets before any write.
        type: list
        elements: str
  keep_routes:
    description:
      - Routes that must stay on the router besides the cluster's (another cluster's, an operator's). One that is
        gone is reported as a C(foreign_dropped) finding (error), in every mode; it is never added back by this
        module (a cloud controller that drops routes it does not own would drop it again at its next reconcile).
      - A kept route is never removed by any step of a repair (stale, duplicate, wrong nexthop, room under the route
        limit, beside the cloud controller), also when it lies inside I(cluster_cidr). A kept route to a pod CIDR no
        node has is no finding; beside a node's route it is reported with the role C(kept) and no removal in the fix.
      - An entry whose nexthop is not of its destination's family, or whose destination is malformed or has host
        bits set, is refused before any request.
    type: list
    elements: dict
    suboptions:
      destination:
        description: The route's destination CIDR.
        type: str
        required: true
      nexthop:
        description: The route's nexthop address.
        type: str
        required: true
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

- name: Beside cloud-provider-openstack's route controller - repair only what it cannot see
  flightcontrol.openstack.route_audit:
    cloud: production
    router: capo-prod
    cluster_cidr: 198.19.0.0/16
    kubernetes:
      kubeconfig: ~/.kube/prod-workload.yaml
    route_owner: cloud-controller
    keep_routes:
      - {destination: 10.50.0.0/16, nexthop: 10.180.0.200}
    state: repaired
  register: routes

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
  description:
    - What the audit found, before any repair.
    - At most 200 (those of severity C(error) first); RV(omitted) says how many more there are and RV(counts)
      counts them all.
  returned: success, and a failure once the router was read and its routes audited
  type: list
  elements: dict
  contains:
    kind:
      description: C(duplicate), C(stale), C(missing), C(wrong_nexthop), C(address_pair_missing), C(limit),
        C(incomplete_node) or C(foreign_dropped) (a route of I(keep_routes) that is gone).
      type: str
    repaired_by:
      description:
        - Who repairs the finding under RV(route_owner) - C(flightcontrol) (this module, with I(state=repaired)),
          C(cloud-controller) (left to the route controller) or C(nobody) (reported only).
      type: str
    controller_fault:
      description:
        - With I(route_owner=cloud-controller), on a destination the controller reconciles, what it got wrong -
          C(kept_stale) (a stale route it keeps), C(duplicate) (a second route beside the right one),
          C(dropped_foreign) (a route of I(keep_routes) gone), C(not_reconciled) (a missing or wrong route or
          address pair it has not fixed yet).
      type: str
      returned: when route_owner is cloud-controller
    severity:
      description: C(error) (traffic goes astray or is dropped now) or C(warning).
      type: str
    destination:
      description: The destination (pod CIDR) concerned; null for C(limit) and for an C(incomplete_node) without
        a pod CIDR.
      type: str
    node:
      description: The node that owns the destination, if any.
      type: str
    routes:
      description:
        - The routes of the destination, each with its C(role) (C(right), C(stale) - the nexthop is no current
          node, C(wrong) - another node's address, C(unused), C(not_canonical) - host bits set, C(kept) - a route of
          an incomplete node or of I(keep_routes), left alone) and the C(node) its nexthop belongs to.
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
    reason:
      description: For C(incomplete_node), why the node cannot be routed (no pod CIDR yet, no usable address).
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
  description: The findings still true at the end (after the repair; in check mode, after the planned repair); at
    most 200, as RV(findings).
  returned: success, and failures at the end of the run or by the removal guard (I(max_removal_share))
  type: list
  elements: dict
counts:
  description: Number of findings (of RV(findings)) by kind.
  returned: success, and a failure once the router was read and its routes audited
  type: dict
  sample: {duplicate: 1, stale: 2, missing: 0, wrong_nexthop: 0, address_pair_missing: 0, limit: 0,
           incomplete_node: 0, foreign_dropped: 0}
route_owner:
  description:
    - Who owns the pod routes in this run - C(owner) (C(flightcontrol), C(cloud-controller) or C(none)), C(source)
      (C(route_owner), C(cloud_controller), C(detected) or C(default)), the C(evidence) of a detection, and the
      C(controller_cluster_cidr) whose destinations the controller reconciles.
  returned: success, and a failure once the router was read and its routes audited
  type: dict
  sample: {owner: cloud-controller, source: route_owner, evidence: null, controller_cluster_cidr: [198.19.0.0/16]}
healthy:
  description: No finding of severity C(error) in the cloud at the end (in check mode and with I(state=audited),
    the state found).
  returned: success, and failures at the end of the run or by the removal guard (I(max_removal_share))
  type: bool
changes:
  description:
    - The changes made (in check mode, planned), in order. C(action) is C(add_route), C(remove_route) or
      C(add_address_pairs); C(status) is C(done), C(planned) or C(rejected) (with C(error), Neutron's message).
  returned: success, and a failure once the router was read and its routes audited
  type: list
  elements: dict
  sample:
    - {action: remove_route, destination: 198.19.1.0/24, nexthop: 10.180.0.3, node: null, reason: duplicate,
       status: done}
pending:
  description: Changes still needed when the run stopped early (I(max_changes), the route limit or a refusal);
    at most 200.
  returned: success, and a failure once the router was read and its routes audited
  type: list
  elements: dict
stopped_by:
  description: C(max_changes), C(limit) or C(max_removal_share) (the removal guard refused on the router as read
    before a removal) when the repair stopped before the end, else null.
  returned: success, and a failure once the router was read and its routes audited
  type: str
conflicts:
  description:
    - Concurrent changes met and resolved, each C(router_changed) (without extraroute-atomic, a router update
      answered 412 because someone changed the router since it was read; the router was read again and the
      repair planned anew from its current routes), with the C(router) id and the C(revision) the update expected.
    - C(route_appeared) - a route of the cluster that was not on the router when the repair's plan was made and
      that the repair did not add (another writer's), with its C(destination) and C(nexthop). It was left alone
      (even if it is stale by the nodes given; a re-run judges it).
  returned: success, and a failure once the router was read and its routes audited
  type: list
  elements: dict
routes:
  description: Route counts on the router - C(total), C(cluster), C(foreign) at the start, C(needed) by the nodes,
    C(total_after) at the end.
  returned: success, and failures at the end of the run or by the removal guard (I(max_removal_share))
  type: dict
limit:
  description:
    - The router's route limit (C(limit), null for unlimited), where it came from (C(source) - C(route_limit),
      C(quota router_route) or C(Neutron default max_routes)), routes C(current), C(foreign), C(cluster),
      C(needed), C(after_repair) and C(free_after_repair).
  returned: success, and failures at the end of the run or by the removal guard (I(max_removal_share))
  type: dict
router:
  description: The router - C(id), C(name), C(atomic) (extraroute-atomic used) and the C(subnets) its interfaces
    are on.
  returned: success, and a failure once the router was read and its routes audited
  type: dict
nodes:
  description: The nodes checked, with their Neutron C(port) (null when none was found) and C(port_security); at
    most 200.
  returned: success, and a failure once the router was read and its routes audited
  type: list
  elements: dict
incomplete_nodes:
  description: Nodes read from Kubernetes that exist but cannot be routed yet, each with C(name), the C(pod_cidrs)
    and C(addresses) it has, and the C(reason). Their routes were left alone. At most 200.
  returned: success, and a failure once the router was read and its routes audited
  type: list
  elements: dict
  sample:
    - {name: prod-node-9, pod_cidrs: [], addresses: [10.180.0.9],
       reason: "it has no pod CIDR yet (spec.podCIDR is empty, still being set up, or the CIDR allocator lags)"}
omitted:
  description: How many entries each capped list left out - C(findings), C(remaining), C(pending), C(nodes),
    C(incomplete_nodes) (0 when it lists them all).
  returned: success, and a failure once the router was read and its routes audited
  type: dict
  sample: {findings: 0, remaining: 0, pending: 0, nodes: 0, incomplete_nodes: 0}
node_source:
  description: C(nodes) (the option) or C(kubernetes).
  returned: success, and a failure once the router was read and its routes audited
  type: str
elapsed:
  description: Seconds the task took.
  returned: always
  type: float
api_calls:
  description: HTTP requests sent to OpenStack and Kubernetes, retries and authentication requests included.
  returned: always
  type: int
retried_faults:
  description: Transient faults that were retried (HTTP status or C(connection)).
  returned: always
  type: list
  elements: raw
writes:
  description:
    - When the task failed after writing, each write request it made (C(call)) and its C(outcome) (C(done), or
      C(unknown) when its answer was lost); at most 200 (RV(writes_total) counts them all when there are more).
    - Such a failed task also says C(changed=true).
  returned: on failure after a write
  type: list
  elements: dict
writes_total:
  description: How many writes the failed task made, when there are more than RV(writes) lists (200).
  returned: on failure after more than 200 writes
  type: int
'''

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.module_base import (
    DEFAULT_MAX_REMOVAL_SHARE,
    NumberRange,
    SECONDS,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.openstack_module_base import (
    OpenStackKubernetesModule,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit.runner import (
    RouteAuditOptions,
    RouteAuditRunner,
)


class RouteAudit(OpenStackKubernetesModule):
    """The options; the work is the runner's, given what was asked."""

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
        max_removal_share=dict(type="float", default=DEFAULT_MAX_REMOVAL_SHARE),
        check_address_pairs=dict(type="bool", default=True),
        route_limit=dict(type="int"),
        limit_warning_ratio=dict(type="float", default=0.9),
        fail_on_findings=dict(type="bool", default=False),
        timeout=dict(type="int", default=300),
        route_owner=dict(type="str", choices=["flightcontrol", "cloud-controller", "none"]),
        cloud_controller=dict(type="dict", options=dict(
            cluster_cidr=dict(type="list", elements="str"),
        )),
        keep_routes=dict(type="list", elements="dict", options=dict(
            destination=dict(type="str", required=True),
            nexthop=dict(type="str", required=True),
        )),
    )
    number_ranges = dict(
        timeout=SECONDS,
        max_changes=NumberRange(minimum=1, maximum=100000, hint="use state=audited to change nothing"),
        route_limit=NumberRange(minimum=1, maximum=100000),
        limit_warning_ratio=NumberRange(above=0, maximum=1),
        max_removal_share=NumberRange(minimum=0, maximum=1),
    )

    def run(self) -> None:
        options = RouteAuditOptions.from_params(self.params, check_mode=self.ansible.check_mode,
                                                diff=self.ansible._diff)
        self.exit(**RouteAuditRunner(self, options).run())


def main() -> None:
    RouteAudit()()


if __name__ == "__main__":
    main()
