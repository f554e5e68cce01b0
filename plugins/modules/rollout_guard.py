#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: rollout_guard
short_description: Roll a control plane without ever leaving the API load balancer short of serving members
version_added: 0.2.0
description:
  - Guards a control-plane rollout of a Cluster API cluster on OpenStack (I(mode=capi)), or the replacement
    of Octavia pool members managed outside Cluster API (I(mode=direct)).
  - I(kubernetes) reaches the management cluster's Kubernetes API, where the Cluster API objects are
    (I(mode=capi) only).
  - I(mode=capi) holds every old control-plane Machine with a Cluster API deletion hook
    (annotation C(pre-drain.delete.hook.machine.cluster.x-k8s.io/<hook_name>)), optionally starts the rollout
    (I(start)), and then, on every poll, reads the Machines and the pool together. It releases (removes the hook
    from) one old Machine, the one the control plane chose to delete, only when a replacement of its own
    serves (member C(ACTIVE) and C(ONLINE) with a health monitor, C(NO_MONITOR) without one) and the pool keeps
    at least I(min_healthy_members) serving members without it; it then waits until that Machine's member and
    the Machine are gone before it releases the next.
  - Members are matched to Machines by Cluster API Provider OpenStack's name C(<pool>-<machine>) (the pool is
    C(<load balancer>-<port>)) and by address (the Machine's addresses).
  - When a new member is in C(ERROR), or is not serving within I(member_timeout), the module fails naming the
    member, its statuses and the Machine, and keeps every hold, so nothing else is deleted while a person looks.
  - I(mode=direct) waits for each I(replace) pair's new member to serve, deletes the old member only when the
    pool keeps I(min_healthy_members) serving members without it, and waits for it to be gone, one at a time.
  - In check mode nothing is written; the module reports what it would do first.
author:
  - flightcontrol.openstack maintainers (@flightcontrol)
options:
  mode:
    description:
      - C(capi) rolls a Cluster API control plane; C(direct) replaces pool members given in I(replace).
    type: str
    choices: [capi, direct]
    default: capi
  cluster:
    description:
      - Name of the Cluster API Cluster. Required with I(mode=capi).
    type: str
  namespace:
    description: Namespace of the Cluster.
    type: str
    default: default
  api_version:
    description:
      - Cluster API contract version to read the objects in. By default v1beta2 when served, else v1beta1.
    type: str
    choices: [v1beta1, v1beta2]
  pool:
    description:
      - Name or id of the Octavia pool of the API load balancer.
      - With I(mode=capi) it defaults to C(<load balancer>-6443), the load balancer being the one in the
        OpenStackCluster's C(status.apiServerLoadBalancer). Required with I(mode=direct).
    type: str
  loadbalancer:
    description:
      - Name or id of the load balancer, when the pool name is not unique. With I(mode=capi) it defaults to the
        OpenStackCluster's API load balancer.
    type: str
  min_healthy_members:
    description:
      - The pool never gets fewer serving members than this through the module's doing.
      - By default, with I(mode=capi), the control plane's desired replicas (C(spec.replicas)); with I(mode=direct),
        the members serving at the start that are not a I(replace) C(new) member. That is, never fewer serving
        members than before the rollout, also when a run resumes one that a previous run stopped.
    type: int
  hook_name:
    description:
      - The name part of the deletion hook annotation (C(pre-drain.delete.hook.machine.cluster.x-k8s.io/<hook_name>)).
    type: str
    default: flightcontrol-rollout
  start:
    description:
      - With I(mode=capi), start the rollout after the holds are in place, by setting the control plane's rollout
        time to now (KubeadmControlPlane v1beta1 C(spec.rolloutAfter), v1beta2 C(spec.rollout.after)).
      - C(false) follows a rollout someone else started (or finishes one a previous run stopped).
    type: bool
    default: false
  replace:
    description:
      - With I(mode=direct), the members to replace, one pair at a time, in order. C(old) and C(new) are a member
        id, name, address or address:port, as M(flightcontrol.openstack.lb_member_wait) accepts.
    type: list
    elements: dict
    suboptions:
      old:
        description: The member to delete once I(new) serves.
        type: str
        required: true
      new:
        description: The member that replaces it (created by someone else; the module waits for it).
        type: str
        required: true
  member_timeout:
    description:
      - Seconds a new member (or a new Machine's missing member) may take to serve, and a released member to go,
        before the module stops as stuck. A member in C(ERROR) stops it at once.
    type: int
    default: 600
  timeout:
    description:
      - Seconds the whole rollout may take before the module fails (the holds stay).
    type: int
    default: 3600
  poll_interval:
    description: Seconds between two polls.
    type: float
    default: 5
extends_documentation_fragment:
  - flightcontrol.openstack.openstack_auth
  - flightcontrol.openstack.kubernetes_dict
attributes:
  check_mode:
    support: full
    description: Nothing is written; the result says what the module would do first, and C(changed) whether that
      first step is a write (a hold, a release, the start or a member deletion).
  diff_mode:
    support: none
    description: The changes are reported in C(actions).
notes:
  - The hook holds a Machine only before it is drained; a Machine the control plane deleted before the module
    held it is waited for, not held.
  - The module makes one Machines list, one control plane read, one members list and one load balancer read per
    poll, plus one write per hold, release, start or member deletion.
'''

EXAMPLES = r'''
- name: Roll the control plane of prod-eu-1, never with fewer than 3 serving API members
  flightcontrol.openstack.rollout_guard:
    cloud: production
    cluster: prod-eu-1
    namespace: clusters
    kubernetes:
      kubeconfig: /etc/flightcontrol/management.kubeconfig
    start: true
    min_healthy_members: 3
    member_timeout: 600

- name: Follow a rollout that someone else started
  flightcontrol.openstack.rollout_guard:
    cloud: production
    cluster: prod-eu-1
    namespace: clusters
  register: rollout

- name: Replace API members managed outside Cluster API
  flightcontrol.openstack.rollout_guard:
    cloud: production
    mode: direct
    pool: kubeapi-6443
    replace:
      - {old: 10.6.0.11:6443, new: 10.6.0.21:6443}
      - {old: 10.6.0.12:6443, new: 10.6.0.22:6443}
    min_healthy_members: 2
'''

RETURN = r'''
actions:
  description: What the module did (or, in check mode, would do first), in order.
  returned: always
  type: list
  elements: dict
  contains:
    action:
      description: C(hold), C(release), C(start), C(member_gone), C(machine_gone) or C(delete_member).
      type: str
    machines:
      description: The Machines concerned.
      type: list
      elements: str
    member:
      description: The member concerned, if any.
      type: str
    at:
      description: Seconds since the module started.
      type: float
  sample:
    - {action: hold, machines: [prod-cp-a, prod-cp-b, prod-cp-c], member: null, at: 0.4}
    - {action: start, machines: [], member: null, at: 0.5}
    - {action: release, machines: [prod-cp-a], member: null, at: 31.2}
held:
  description: Machines that carry the hook at the end (after a failure, what is still held).
  returned: mode=capi
  type: list
  elements: str
released:
  description: Machines (mode=capi) or old members (mode=direct) released by this run.
  returned: always
  type: list
  elements: str
members_gone:
  description: Members this run saw leave the pool after their release.
  returned: always
  type: list
  elements: str
machines:
  description: The control-plane Machines at the last poll.
  returned: mode=capi
  type: list
  elements: dict
  contains:
    name:
      description: Machine name.
      type: str
    up_to_date:
      description: Whether the Machine is new (up to date) and why (C(up_to_date_reason)).
      type: bool
    deleting:
      description: Whether the Machine is being deleted.
      type: bool
    held:
      description: Whether it carries the hook.
      type: bool
    member:
      description: Name of its pool member, null without one.
      type: str
    member_state:
      description: The member's C(provisioning_status/operating_status), or C(absent).
      type: str
    serving:
      description: Whether its member serves.
      type: bool
members:
  description: The pool members at the last poll (id, name, address, protocol_port, provisioning_status,
    operating_status, serving).
  returned: when the pool was found
  type: list
  elements: dict
plan:
  description: The last decision (action, machines, member, state, since, reason).
  returned: when a poll completed
  type: dict
stuck:
  description: The stuck member (member, state, machines, since, reason) when the module stopped on it.
  returned: failure
  type: dict
min_healthy_members:
  description: The floor used.
  returned: when the pool was found
  type: int
serving_members:
  description: Members serving at the last poll.
  returned: when the pool was found
  type: int
rollout_started:
  description: Whether this run set the rollout time.
  returned: mode=capi
  type: bool
pool:
  description: The pool (id, name, healthmonitor_id).
  returned: when the pool was found
  type: dict
elapsed:
  description: Seconds the module ran.
  returned: always
  type: float
api_calls:
  description: HTTP requests sent to OpenStack and Kubernetes, retries included.
  returned: always
  type: int
retried_faults:
  description: Transient faults that were retried (HTTP status or C(connection)).
  returned: always
  type: list
  elements: raw
'''

import datetime

from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia import members as lb_members
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout import plan
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.objects import (
    CLUSTER_NAME_LABEL,
    CONTROL_PLANE_LABEL,
    CORE_GROUP,
    dig,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.service import CapiService, choose_version
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.client import is_status
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.module_base import (
    OpenStackKubernetesModule,
    check_object_names,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.module_base import (
    POLL_SECONDS,
    SECONDS,
    ModuleFailure,
    NumberRange,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.service import (
    OctaviaService,
    pool_loadbalancer_ids,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout.machines import (
    kcp_replicas,
    machine_data,
    rollout_after_patch,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import DeadlineExceeded
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.waiter import (
    DONE,
    FAILED,
    WAITING,
    Verdict,
    wait_for,
)

HOOK_VALUE = "flightcontrol.openstack"
MEMBER_FIELDS = ("id", "name", "address", "protocol_port", "provisioning_status", "operating_status")
# Holds and releases done inside one poll before the module looks again.
ACTS_PER_POLL = 4


def _utc_now():
    return datetime.datetime.now(datetime.timezone.utc)


class RolloutGuard(OpenStackKubernetesModule):
    argument_spec = dict(
        mode=dict(type="str", default="capi", choices=["capi", "direct"]),
        cluster=dict(type="str"),
        namespace=dict(type="str", default="default"),
        api_version=dict(type="str", choices=["v1beta1", "v1beta2"]),
        pool=dict(type="str"),
        loadbalancer=dict(type="str"),
        min_healthy_members=dict(type="int"),
        hook_name=dict(type="str", default=plan.DEFAULT_HOOK_NAME),
        start=dict(type="bool", default=False),
        replace=dict(type="list", elements="dict", options=dict(
            old=dict(type="str", required=True),
            new=dict(type="str", required=True),
        )),
        member_timeout=dict(type="int", default=600),
        timeout=dict(type="int", default=3600),
        poll_interval=dict(type="float", default=5),
    )
    number_ranges = dict(timeout=SECONDS, member_timeout=SECONDS, poll_interval=POLL_SECONDS,
                         min_healthy_members=NumberRange(minimum=0, maximum=1000))
    module_kwargs = dict(required_if=[("mode", "capi", ["cluster"]), ("mode", "direct", ["pool", "replace"])])

    def __init__(self, clock=None):
        super(RolloutGuard, self).__init__(clock=clock)
        self.actions = []
        self.released = []
        self.members_gone = []
        self.kube = None

    # -- plumbing ------------------------------------------------------------------------

    def record(self, action, machines=(), member=None):
        self.actions.append({"action": action, "machines": list(machines), "member": member,
                             "at": round(self.clock.monotonic() - self.started, 3)})

    def validate(self):
        params = self.params
        if not params["hook_name"] or "/" in params["hook_name"]:
            raise ModuleFailure("hook_name must be a non-empty name without '/', got %r" % params["hook_name"])
        check_object_names(params, dict(cluster="subdomain", namespace="label", hook_name="qualified"))
        if params["mode"] == "direct":
            if params["start"]:
                raise ModuleFailure("start applies to mode=capi only")
            try:
                pairs = [(lb_members.parse_selector(p["old"]), lb_members.parse_selector(p["new"]))
                         for p in params["replace"]]
            except ValueError as exc:
                raise ModuleFailure(str(exc))
            if not pairs:
                raise ModuleFailure("replace is empty; give the members to replace, each {old, new}")
            refuse_pairs(plan.pair_problems(pairs))
            return pairs
        if params["replace"]:
            raise ModuleFailure("replace applies to mode=direct only")
        return None

    def find_pool(self, octavia, pool_name, lb_name_or_id, deadline):
        loadbalancer = octavia.find_loadbalancer(lb_name_or_id, deadline) if lb_name_or_id else None
        pool = octavia.find_pool(pool_name, deadline, loadbalancer)
        lb_ids = pool_loadbalancer_ids(pool)
        if not lb_ids:
            raise ModuleFailure("pool %s belongs to no load balancer" % lb_members.label(pool))
        return pool, (loadbalancer["id"] if loadbalancer else lb_ids[0])

    def run(self):
        pairs = self.validate()
        deadline = self.started + self.params["timeout"]
        if self.params["mode"] == "direct":
            return self.run_direct(pairs, deadline)
        return self.run_capi(deadline)

    # -- mode=capi -----------------------------------------------------------------------

    def run_capi(self, deadline):
        params = self.params
        self.kube = self.connect_kubernetes()
        capi = CapiService(self.kube)
        capi.discover(deadline)
        contract = choose_version(capi.served, params["api_version"])
        cluster = capi.get_cluster(params["cluster"], params["namespace"], contract, deadline)
        namespace = cluster["metadata"]["namespace"]
        cp_ref = dig(cluster, "spec", "controlPlaneRef")
        kcp = capi.get_ref(cp_ref, namespace, contract, deadline)
        if kcp is None:
            raise ModuleFailure("Cluster %s/%s has no control plane object (spec.controlPlaneRef %s)" % (
                namespace, params["cluster"], cp_ref))
        infra = capi.get_ref(dig(cluster, "spec", "infrastructureRef"), namespace, contract, deadline)
        lb = dig(infra or {}, "status", "apiServerLoadBalancer") or {}
        pool_name = params["pool"] or (("%s-6443" % lb["name"]) if lb.get("name") else None)
        if not pool_name:
            raise ModuleFailure("the infrastructure cluster of %s/%s reports no API load balancer "
                                "(status.apiServerLoadBalancer); give pool" % (namespace, params["cluster"]))
        self.connect()
        octavia = OctaviaService(self.client)
        pool, lb_id = self.find_pool(octavia, pool_name, params["loadbalancer"] or lb.get("id"), deadline)
        has_monitor = bool(pool.get("healthmonitor_id"))
        member_prefix = "%s-" % pool.get("name") if pool.get("name") else None
        selector = "%s=%s,%s" % (CLUSTER_NAME_LABEL, params["cluster"], CONTROL_PLANE_LABEL)
        kcp_meta = kcp["metadata"]
        kcp_group, kcp_version = kcp["apiVersion"].rsplit("/", 1)
        kcp_plural = capi.plural(kcp_group, kcp_version, kcp["kind"], deadline)
        machine_plural = capi.plural(CORE_GROUP, contract, "Machine", deadline)
        state = {"baseline": None, "since": {}, "started_after": None, "min_healthy": params["min_healthy_members"],
                 "last": None, "snapshot": None, "polls": 0, "known": {}}
        if params["start"]:
            state["started_after"] = _utc_now().replace(microsecond=0)
        hook = plan.hook_key(params["hook_name"])

        def observe(probe_deadline):
            current_kcp = self.kube.call(
                lambda: self.kube.custom.get_namespaced_custom_object(
                    kcp_group, kcp_version, namespace, kcp_plural, kcp_meta["name"]),
                "reading %s %s/%s" % (kcp["kind"], namespace, kcp_meta["name"]), probe_deadline)
            machines = capi.list_kind(CORE_GROUP, contract, "Machine", namespace, selector, probe_deadline)
            members = octavia.list_members(pool["id"], probe_deadline)
            lb_now = octavia.get_loadbalancer(lb_id, probe_deadline)
            for machine in machines:
                machine.setdefault("apiVersion", "%s/%s" % (CORE_GROUP, contract))
            if state["baseline"] is None:
                state["baseline"] = set(m["metadata"]["name"] for m in machines)
                if state["min_healthy"] is None:
                    state["min_healthy"] = kcp_replicas(current_kcp)
                if state["min_healthy"] is None:
                    state["min_healthy"] = sum(1 for m in members if plan.serving(m, has_monitor))
            now = _utc_now()
            data = [machine_data(m, current_kcp, state["baseline"], now, state["started_after"]) for m in machines]
            snapshot = plan.Snapshot(
                data, members, has_monitor, state["min_healthy"], params["hook_name"], member_prefix,
                released=self.released, not_serving_since=state["since"], now=self.clock.monotonic(),
                member_timeout=params["member_timeout"], replicas=kcp_replicas(current_kcp),
                lb_status=lb_now.get("provisioning_status"))
            state["since"] = plan.track(snapshot)
            snapshot.not_serving_since = state["since"]
            self.note_gone(snapshot, state)
            return snapshot, current_kcp

        def patch_machine(name, value, probe_deadline):
            body = {"metadata": {"annotations": {hook: value}}}
            try:
                self.kube.call(lambda: self.kube.custom.patch_namespaced_custom_object(
                    CORE_GROUP, contract, namespace, machine_plural, name, body),
                    "%s Machine %s/%s" % ("holding" if value else "releasing", namespace, name), probe_deadline)
            except Exception as exc:  # pylint: disable=broad-except
                if not is_status(exc, 404):
                    raise
                return False
            return True

        def probe(probe_deadline):
            snapshot, current_kcp = observe(probe_deadline)
            for _round in range(ACTS_PER_POLL):
                action = plan.decide(snapshot)
                if action.kind == plan.HOLD:
                    if self.ansible.check_mode:
                        break
                    done = [n for n in action.machines if patch_machine(n, HOOK_VALUE, probe_deadline)]
                    self.record("hold", done)
                elif action.kind == plan.RELEASE:
                    if self.ansible.check_mode:
                        break
                    for name in action.machines:
                        if patch_machine(name, None, probe_deadline):
                            machine = [m for m in snapshot.machines if m["name"] == name]
                            if machine and not machine[0].get("up_to_date"):
                                self.released.append(name)
                    self.record("release", action.machines)
                else:
                    break
                snapshot, current_kcp = observe(probe_deadline)
            else:
                action = plan.decide(snapshot)
            if (params["start"] and action.kind not in (plan.HOLD, plan.STUCK) and not state.get("started")
                    and not self.ansible.check_mode):
                self.kube.call(lambda: self.kube.custom.patch_namespaced_custom_object(
                    kcp_group, kcp_version, namespace, kcp_plural, kcp_meta["name"],
                    rollout_after_patch(current_kcp, state["started_after"])),
                    "starting the rollout of %s %s/%s" % (kcp["kind"], namespace, kcp_meta["name"]), probe_deadline)
                state["started"] = True
                self.record("start")
                snapshot, current_kcp = observe(probe_deadline)
                action = plan.decide(snapshot)
            state["snapshot"], state["last"] = snapshot, action
            state["polls"] += 1
            return action

        def decide(action, _elapsed):
            if self.ansible.check_mode:
                return Verdict(DONE, action.reason)
            if action.kind == plan.DONE:
                return Verdict(DONE, action.reason)
            if action.kind == plan.STUCK:
                return Verdict(FAILED, action.reason)
            return Verdict(WAITING, action.reason)

        try:
            outcome = wait_for(probe, decide, params["timeout"], params["poll_interval"], clock=self.clock,
                               start=self.started)
        except DeadlineExceeded as exc:
            raise ModuleFailure("%s. %s" % (exc, self.held_text(state)), **self.capi_result(state, pool))
        data = self.capi_result(state, pool)
        if self.ansible.check_mode:
            would = state["last"].to_dict() if state["last"] else None
            would_start = params["start"] and not state.get("started")
            if would_start:
                data["actions"].append({"action": "start (check mode: not done)", "machines": [], "member": None,
                                        "at": 0})
            data["changed"] = would_start or (state["last"] is not None
                                              and state["last"].kind in (plan.HOLD, plan.RELEASE))
            self.exit(msg="check mode: next step would be %s" % (would or {}).get("action"), **data)
        if outcome.succeeded:
            self.exit(msg="rollout of %s/%s finished: %s" % (namespace, params["cluster"], outcome.verdict.message),
                      **data)
        action = state["last"]
        if outcome.timed_out:
            self.fail("Timed out after %.0f s (timeout %s s) guarding the rollout of %s/%s; still waiting for %s. %s"
                      % (outcome.elapsed, params["timeout"], namespace, params["cluster"], action.reason,
                         self.held_text(state)), **data)
        data["stuck"] = {"member": action.member, "state": action.state, "machines": list(action.machines),
                         "since": action.since, "reason": action.reason}
        self.fail(self.stuck_text(state, action, namespace, has_monitor), **data)

    def note_gone(self, snapshot, state):
        """Record released Machines whose member (and the Machine) left."""
        present = dict((m["name"], m) for m in snapshot.machines)
        for name in self.released:
            known = state["known"].setdefault(name, {"member": None, "member_gone": False, "machine_gone": False})
            machine = present.get(name)
            member = snapshot.member_of(machine) if machine else None
            if member is not None:
                known["member"] = member.get("name")
            elif not known["member_gone"]:
                known["member_gone"] = True
                self.members_gone.append(known["member"] or name)
                self.record("member_gone", [name], known["member"])
            if machine is None and not known["machine_gone"]:
                known["machine_gone"] = True
                self.record("machine_gone", [name])

    @staticmethod
    def held_text(state):
        snapshot = state["snapshot"]
        if snapshot is None:
            return "No poll completed."
        held = [m["name"] for m in snapshot.machines if snapshot.held(m)]
        return "Held (deletion hook kept): %s." % (", ".join(held) or "none")

    def stuck_text(self, state, action, namespace, has_monitor):
        snapshot = state["snapshot"]
        machine = action.machine or "?"
        member = action.member or "(no member)"
        parts = ["Rollout stopped: %s of Machine %s/%s: %s (provisioning/operating status %s)." % (
            member, namespace, machine, action.reason, action.state)]
        parts.append(self.held_text(state))
        parts.append("Pool serving members: %d (min_healthy_members %d)." % (
            sum(1 for m in snapshot.members if snapshot.serving(m)), snapshot.min_healthy))
        if action.state and action.state.startswith("PENDING_"):
            parts.append("Check: the Octavia worker and amphora of the load balancer (a member left %s while the "
                         "load balancer is ACTIVE is the amphora v2 failure); once the member serves, run again with "
                         "start=false to go on; to give up, delete the member and the new Machine, then remove the "
                         "annotation %s from the held Machines." % (action.state.split("/")[0], snapshot.hook))
        elif action.state and action.state.startswith("ERROR"):
            parts.append("Check: the Octavia worker logs for the member; delete it so that the provider creates it "
                         "again, then run again with start=false.")
        elif action.state == "absent":
            parts.append("Check: the infrastructure provider (CAPO) logs and the OpenStackMachine of %s: it never "
                         "added the member." % machine)
        else:
            parts.append("Check: the member's backend (%s): is the API server on the node up and reachable from "
                         "the load balancer?" % ("health monitor ONLINE expected" if has_monitor else "NO_MONITOR"))
        return " ".join(parts)

    def capi_result(self, state, pool):
        snapshot = state["snapshot"]
        data = {"actions": self.actions, "released": self.released, "members_gone": self.members_gone,
                "changed": any(a["action"] in ("hold", "release", "start") for a in self.actions),
                "rollout_started": bool(state.get("started")),
                "pool": dict((k, pool.get(k)) for k in ("id", "name", "healthmonitor_id"))}
        if snapshot is not None:
            data["held"] = [m["name"] for m in snapshot.machines if snapshot.held(m)]
            data["machines"] = []
            for machine in snapshot.machines:
                member = snapshot.member_of(machine)
                data["machines"].append({
                    "name": machine["name"], "up_to_date": machine["up_to_date"],
                    "up_to_date_reason": machine.get("up_to_date_reason"), "deleting": machine["deleting"],
                    "held": snapshot.held(machine), "node_name": machine.get("node_name"),
                    "member": member.get("name") if member else None, "member_state": plan.member_state(member),
                    "serving": snapshot.serving(member)})
            data["members"] = [dict(dict((k, m.get(k)) for k in MEMBER_FIELDS), serving=snapshot.serving(m))
                               for m in snapshot.members]
            data["serving_members"] = sum(1 for m in snapshot.members if snapshot.serving(m))
            data["min_healthy_members"] = snapshot.min_healthy
            data["plan"] = state["last"].to_dict() if state["last"] else None
        return data

    # -- mode=direct ---------------------------------------------------------------------

    def run_direct(self, pairs, deadline):
        params = self.params
        self.connect()
        octavia = OctaviaService(self.client)
        pool, lb_id = self.find_pool(octavia, params["pool"], params["loadbalancer"], deadline)
        has_monitor = bool(pool.get("healthmonitor_id"))
        refuse_pairs(plan.pair_problems(pairs, octavia.list_members(pool["id"], deadline)))
        state = {"since": {}, "deleted": set(), "min_healthy": params["min_healthy_members"], "last": None,
                 "members": [], "gone": set()}

        def probe(probe_deadline):
            members = octavia.list_members(pool["id"], probe_deadline)
            lb_now = octavia.get_loadbalancer(lb_id, probe_deadline)
            if state["min_healthy"] is None:
                state["min_healthy"] = sum(1 for m in members if plan.serving(m, has_monitor)
                                           and not any(new.matches(m) for _old, new in pairs))
            for index in state["deleted"] - state["gone"]:
                if not any(pairs[index][0].matches(m) for m in members):
                    state["gone"].add(index)
                    self.members_gone.append(pairs[index][0].text)
                    self.record("member_gone", member=pairs[index][0].text)
            action, state["since"] = plan.direct_next(
                pairs, members, has_monitor, state["min_healthy"], state["deleted"], state["since"],
                self.clock.monotonic(), params["member_timeout"])
            if lb_now.get("provisioning_status") == "ERROR":
                action = plan.Action(plan.STUCK, state="ERROR", reason="load balancer %s is in provisioning_status "
                                     "ERROR" % lb_id)
            if action.kind == plan.RELEASE and not self.ansible.check_mode:
                if lb_now.get("provisioning_status") != "ACTIVE":
                    action = plan.Action(plan.WAIT, reason="load balancer to be ACTIVE before deleting %s (is %s)" % (
                        action.member, lb_now.get("provisioning_status")))
                elif self.delete_members(pool, action.targets, probe_deadline):
                    state["deleted"].add(action.pair)
                    self.released.append(pairs[action.pair][0].text)
                    self.record("delete_member", member=pairs[action.pair][0].text)
                    action = plan.Action(plan.WAIT, member=action.member, reason="old member %s to be gone" %
                                         pairs[action.pair][0].text)
                else:
                    action = plan.Action(plan.WAIT, reason="the load balancer to accept the deletion of %s (409)" %
                                         action.member)
            state["last"], state["members"] = action, members
            return action

        def decide(action, _elapsed):
            if self.ansible.check_mode or action.kind == plan.DONE:
                return Verdict(DONE, action.reason)
            if action.kind == plan.STUCK:
                return Verdict(FAILED, action.reason)
            return Verdict(WAITING, action.reason)

        try:
            outcome = wait_for(probe, decide, params["timeout"], params["poll_interval"], clock=self.clock,
                               start=self.started)
        except DeadlineExceeded as exc:
            raise ModuleFailure(str(exc), **self.direct_result(state, pool, has_monitor))
        data = self.direct_result(state, pool, has_monitor)
        if self.ansible.check_mode:
            data["changed"] = state["last"].kind == plan.RELEASE
            self.exit(msg="check mode: next step would be %s" % state["last"].kind, **data)
        if outcome.succeeded:
            self.exit(msg=outcome.verdict.message, **data)
        action = state["last"]
        if outcome.timed_out:
            self.fail("Timed out after %.0f s (timeout %s s) replacing members of pool %s; still waiting for %s" % (
                outcome.elapsed, params["timeout"], lb_members.label(pool), action.reason), **data)
        data["stuck"] = {"member": action.member, "state": action.state, "machines": [], "since": action.since,
                         "reason": action.reason}
        self.fail("Replacement stopped on pool %s: %s (member %s, provisioning/operating status %s). Old members not "
                  "yet replaced are kept. Check: the Octavia worker and amphora of the load balancer; run again "
                  "once the member serves." % (lb_members.label(pool), action.reason, action.member, action.state),
                  **data)

    def delete_members(self, pool, members, deadline):
        for member in members:
            try:
                self.client.call(lambda m=member: self.client.conn.load_balancer.delete_member(m["id"], pool["id"]),
                                 "DELETE member %s" % member.get("name"), deadline)
            except Exception as exc:  # pylint: disable=broad-except
                if getattr(exc, "status_code", None) == 409:
                    return False
                if not getattr(exc, "status_code", None) == 404:
                    raise
        return True

    def direct_result(self, state, pool, has_monitor):
        return {"actions": self.actions, "released": self.released, "members_gone": self.members_gone,
                "changed": bool(self.released),
                "pool": dict((k, pool.get(k)) for k in ("id", "name", "healthmonitor_id")),
                "members": [dict(dict((k, m.get(k)) for k in MEMBER_FIELDS), serving=plan.serving(m, has_monitor))
                            for m in state["members"]],
                "serving_members": sum(1 for m in state["members"] if plan.serving(m, has_monitor)),
                "min_healthy_members": state["min_healthy"],
                "plan": state["last"].to_dict() if state["last"] else None}


def refuse_pairs(problems):
    if problems:
        raise ModuleFailure("replace cannot be run: %s; nothing was changed" % "; ".join(problems))


def main():
    RolloutGuard()()


if __name__ == "__main__":
    main()
