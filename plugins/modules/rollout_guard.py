#!/usr/bin/python
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
module: rollout_guard
short_description: Roll a control plane without ever leaving the API load balancer short of serving members
version_added: 0.1.0
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
    The deletion is judged again on a read of the members made just before it; when that read no longer allows
    it (a member or the replacement stopped serving), nothing is deleted and the module waits.
  - In I(mode=direct), a pair whose old member is not in the pool at the start fails the task before any write
    when its new member is not in the pool either, or does not serve (a typo, or another pool). When its new member
    serves, the pair is taken as replaced by an earlier run (so re-running a task finishes a rollout); the module
    warns naming the pair, lists it in RV(replaced_before), and never says that it replaced it.
  - An API error names the call and the member it concerned (C(deleting old member ... (DELETE member <id>))).
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
      - With I(mode=capi) it defaults to CAPO's API pool, C(<load balancer name>-<port>), the load balancer being
        the one the OpenStackCluster reports (C(status.apiServerManagedLoadBalancer) in CAPO's v1beta2 API,
        C(status.apiServerLoadBalancer) in v1beta1) and the port CAPO's API server port (the OpenStackCluster's
        C(spec.controlPlaneEndpoint.port), else C(spec.apiServer.port) or C(spec.apiServerPort), else 6443). See
        C(docs/fleet.md). An OpenStackCluster reporting two different load balancers is refused unless I(pool) and
        I(loadbalancer) are both given.
      - Required with I(mode=direct).
    type: str
  loadbalancer:
    description:
      - Name or id of the load balancer, when the pool name is not unique. With I(mode=capi) it defaults to the
        OpenStackCluster's API load balancer.
    type: str
  min_healthy_members:
    description:
      - The pool never gets fewer serving members than this through the module's doing.
      - By default, with I(mode=capi), the control plane's desired replicas (C(spec.replicas); when it has none, the
        members serving at the first poll); with I(mode=direct),
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
      - On a Cluster managed through a ClusterClass (C(spec.topology)) the topology controller owns the control
        plane's spec, so the rollout starts through the Cluster's C(spec.topology.controlPlane.rollout.after) instead
        (Cluster API v1.13 and later), which the topology controller copies to the control plane. Where Cluster API
        has no such field (v1.12; told by a server-side dry run of the patch) the run is refused before any write;
        roll such a cluster with a Kubernetes upgrade (change C(spec.topology.version), then guard it with
        C(start=false)) or upgrade Cluster API.
      - C(false) follows a rollout someone else started (or finishes one a previous run stopped).
    type: bool
    default: false
  replace:
    description:
      - With I(mode=direct), the members to replace, one pair at a time, in order. Required with
        I(mode=direct) (with I(pool)). C(old) and C(new) are a member
        id, name, address or address:port, as M(flightcontrol.openstack.lb_member_wait) accepts. An entry that is
        exactly the name of a member in the pool at the start means that member, also when it looks like an
        address; there are no patterns (see the notes).
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
  drain:
    description:
      - Before an old member is released (its Machine's hook removed in I(mode=capi), the member deleted in
        I(mode=direct)), take it out of rotation and wait (I(drain_timeout)), so that requests in flight on it
        finish and no new request reaches it while its node goes away.
      - How depends on the load balancer's C(provider), read at the start. C(amphora) (and C(octavia),
        C(amphorav2), minicloud's C(minicloud)) weight C(0), not C(admin_state_up=false), because the amphora
        (HAProxy) then sends the member no new connection while its established ones go on, and keeps checking
        its health (it stays C(ONLINE)). C(ovn) ignores weights, so the drain there is C(admin_state_up=false)
        (the member leaves OVN's backends and shows C(OFFLINE)) and the restore C(admin_state_up=true).
      - Any other provider is refused before any write, naming it (a drain that the provider ignores would release
        a member that still takes new connections).
      - Neither way closes an established (keep-alive) connection; see the collection's control_plane_rollout
        guide for what each kind of client sees.
      - Only members the plan releases are drained, so a pool whose other members would not keep
        I(min_healthy_members) serving is never drained. A run that stops before releasing a drained member puts
        its weight (or admin state) back.
    type: bool
    default: false
  drain_timeout:
    description:
      - Seconds a drained member stays out of rotation before it is released, counted from when the load balancer
        is C(ACTIVE) again after the weight change. The drain ends earlier when the pool's listeners report no
        active connection (Octavia counts connections per listener, not per member).
    type: int
    default: 30
  drain_stop_server:
    description:
      - With I(drain) in I(mode=capi), also hold every old Machine with the pre-terminate hook
        C(pre-terminate.delete.hook.machine.cluster.x-k8s.io/<hook_name>). Once a released Machine waits for its
        pre-terminate hooks (drained; Cluster API's C(Deleting) condition C(WaitingForPreTerminateHook), v1beta1
        C(PreTerminateDeleteHookSucceeded) C(False) C(WaitingExternalHook)), its member is out of rotation, the pool
        keeps I(min_healthy_members) without it, every other control-plane Machine is ready and the control plane's
        C(EtcdClusterHealthy) is not C(False), the module stops its server through Nova (C(os-stop), an orderly
        shutdown in which kube-apiserver ends its kept-alive connections), waits for C(SHUTOFF), and only then removes the
        hook, so KubeadmControlPlane removes the etcd member only after the old API server let its clients go.
      - Default C(true), because the server is deleted by CAPO right after in any case. C(false) keeps the drain of
        earlier versions (kept-alive clients of the old server can get errors between the etcd member's removal and the
        server's deletion).
      - Only on Kubernetes 1.31.0 and later (the control plane's C(spec.version)); below it KubeadmControlPlane
        removes the etcd member while other pre-terminate hooks hold the Machine, so no such hook is held (a hook
        of ours left by an earlier run is removed at once) and the module warns; RV(server_stop) says why.
      - Needs the Nova API (compute) with the same credentials; a server already C(SHUTOFF) or gone is not stopped.
    type: bool
    default: true
  drain_stop_timeout:
    description:
      - Seconds the stopped server may take to reach C(SHUTOFF). Nova itself powers a guest off after its
        C(shutdown_timeout) (60 s by default) and kube-apiserver's graceful termination lasts up to about a minute;
        180 leaves room for both and a busy hypervisor.
    type: int
    default: 180
  drain_stop_timeout_action:
    description:
      - What happens when the server is not C(SHUTOFF) within I(drain_stop_timeout).
      - C(release) (default) takes the hook off anyway (as without I(drain_stop_server)), warns and reports the
        server as not stopped. Safe for the cluster, because a half shut down server's etcd member is likely down already,
        and keeping it listed leaves etcd with no failure to spare while the rollout has a surge member.
      - C(fail) stops the run with the Machine still held at its pre-terminate hook, naming it and its server.
    type: str
    choices: [release, fail]
    default: release
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
  - flightcontrol.openstack.kubernetes_watch
  - flightcontrol.openstack.names
attributes:
  check_mode:
    support: full
    description: Nothing is written; the result says what the module would do first, and C(changed) whether that
      first step is a write (a hold, a release, the start or a member deletion).
  diff_mode:
    support: none
    description: The changes are reported in C(actions).
notes:
  - The pre-drain hook holds a Machine only before it is drained; a Machine the control plane deleted before the
    module held it is waited for, not held. The pre-terminate hook (I(drain_stop_server)) holds it after its
    drain, before its etcd member and server go.
  - A pre-terminate hook of ours found on a Machine being deleted (an interrupted run) is finished (the server
    stopped when needed, then the hook removed); on a Machine not being deleted it is removed, and
    RV(server_stop) says so. A run that stops after asking Nova to stop a server removes that Machine's hook.
  - Each poll reads the pool (one request with Octavia's status tree, see C(polled_with) in the result). In C(capi)
    mode the control plane and its Machines are followed by watch (I(use_watch)), one list and one watch each for
    the whole run; without a watch, one control plane read and one Machines list per poll. Plus one write per hold,
    release, start or member deletion, per server stopped one C(os-stop) and one Nova read per poll until
    C(SHUTOFF), and per drained member a member read, a weight (or admin state) write and, while it drains, one
    statistics read per listener of the pool per poll. I(use_watch) has no effect in C(direct) mode.
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
extends_documentation_fragment:
  - flightcontrol.openstack.pool_polls
  - flightcontrol.openstack.kubernetes_watch
actions:
  description: What the module did (or, in check mode, would do first), in order.
  returned: success, and a failure once the guard began to poll
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
  description: Machines that carry a hook of ours (pre-drain or pre-terminate) at the end (after a failure, what is
    still held; C(machines[].held_pre_terminate) says which hold the pre-terminate one).
  returned: mode=capi
  type: list
  elements: str
released:
  description: Machines (mode=capi) or old members (mode=direct) released by this run.
  returned: success, and a failure once the guard began to poll
  type: list
  elements: str
members_gone:
  description: Members this run saw leave the pool after their release.
  returned: success, and a failure once the guard began to poll
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
  description:
    - The pool members at the last poll (id, name, address, protocol_port, provisioning_status, operating_status,
      serving).
    - Also C(serving_since), when the member was judged serving (UTC; null while it is not), and
      C(serving_after), why, for example C(ONLINE for 35 s since creation (created_at), the full monitor window of
      35 s) on C(ovn) (see RV(serving_rule)).
  returned: when the pool was found
  type: list
  elements: dict
serving_rule:
  description:
    - What serving means on the pool's load balancer (both modes). C(provider); C(health_monitor), whether the
      pool has one; C(window), on C(ovn) with a monitor the seconds a member must have been ONLINE since its creation
      before it counts (C(delay) x C(max_retries_down) + C(timeout); ovn-octavia-provider reports a new member ONLINE
      before OVN has checked it), else null; C(rule) in words; C(finding), a warning where nothing checks the
      members (C(ovn) without a monitor), else null.
  returned: when a poll completed
  type: dict
plan:
  description: The last decision (action, machines, member, state, since, reason).
  returned: when a poll completed
  type: dict
stuck:
  description: The stuck member (member, state, machines, since, reason) when the module stopped on it.
  returned: failure
  type: dict
replaced_before:
  description:
    - With I(mode=direct), the pairs whose old member was not in the pool at the start while their new member
      served, taken as replaced by an earlier run (the module warned about each; a typo in C(old) looks the same).
  returned: mode=direct, once the pool was read
  type: list
  elements: dict
  sample: [{old: 10.6.0.11:6443, new: 10.6.0.21:6443}]
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
drained:
  description:
    - The old members this run took out of rotation before releasing them (I(drain)), in the order drained. In
      check mode nothing is drained; C(actions) names the members a run would drain now.
  returned: when the pool was found
  type: list
  elements: dict
  contains:
    member:
      description: The member's name (or address:port).
      type: str
    member_id:
      description: The member's id.
      type: str
    method:
      description: How it was taken out of rotation, by the load balancer's provider, C(weight) (weight C(0)) or
        C(admin_state) (C(admin_state_up=false)).
      type: str
    value_before:
      description: Its weight (method C(weight)) or admin_state_up (method C(admin_state)) before the drain, put
        back if the run stops before releasing it.
      type: raw
    weight_before:
      description: Its weight before the drain (method C(weight)); null for method C(admin_state).
      type: int
    drained_at:
      description: Seconds since the module started when it was taken out of rotation.
      type: float
    connections_at_release:
      description: Active connections of the pool's listeners when it was released (null when not released or
        not reported).
      type: int
    released_at:
      description: Seconds since the module started when it was released (null if it was not).
      type: float
    restored:
      description: Whether its weight (or admin state) was put back because the run stopped before releasing it.
      type: bool
    applied_at:
      description: Seconds since the module started when the load balancer was ACTIVE again after the change.
      type: float
    machine:
      description: Its Machine, when this run held it at its pre-terminate hook (I(drain_stop_server)).
      type: str
    server_stopped:
      description: Whether this run saw its server C(SHUTOFF) (or gone) after stopping it.
      type: bool
    stop_seconds:
      description: Seconds from the stop request to C(SHUTOFF) seen.
      type: float
    connections_at_stop:
      description: The pool's listeners' active connections when the stop was asked.
      type: int
    hook_released_at:
      description: Seconds since the module started when its pre-terminate hook was removed.
      type: float
    connections_at_hook_release:
      description: The pool's listeners' active connections then.
      type: int
    out_of_rotation_seconds:
      description: Seconds from out of rotation (applied) to the Machine's release to the control plane (its
        pre-terminate hook, else its pre-drain hook).
      type: float
server_stop:
  description:
    - The pre-terminate hold (I(drain_stop_server)), with C(asked), C(holds_pre_terminate) (false below Kubernetes
      1.31.0 or when not asked), C(reason), and C(servers), one row per Machine whose pre-terminate hook this run
      handled.
  returned: mode=capi, when the control plane was read
  type: dict
  contains:
    servers:
      description: Each with C(machine), C(server_id), C(member), C(server_status_before), C(stop_requested_at),
        C(shutoff_at), C(stop_seconds), C(server_stopped), C(released_at), C(connections_at_stop),
        C(connections_at_release) (the pool's listeners' active connections; Octavia does not count them per
        member), C(outcome) (C(stopped), C(already_shutoff), C(server_gone), C(no_server), C(timed_out),
        C(not_stopped), C(left_over), C(released_on_stop)) and C(reason).
      type: list
      elements: dict
provider:
  description: The load balancer's provider, read when I(drain) is set (it decides the drain's method); null
    otherwise.
  returned: when the pool was found
  type: str
pool:
  description: The pool (id, name, healthmonitor_id).
  returned: when the pool was found
  type: dict
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
    NumberRange,
    POLL_SECONDS,
    SECONDS,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.plan import DEFAULT_HOOK_NAME
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.openstack_module_base import (
    OpenStackKubernetesModule,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.runner import (
    RolloutGuardRunner,
    RolloutOptions,
)


class RolloutGuard(OpenStackKubernetesModule):
    """The options; the work is the runner's, given what was asked."""

    argument_spec = dict(
        mode=dict(type="str", default="capi", choices=["capi", "direct"]),
        cluster=dict(type="str"),
        namespace=dict(type="str", default="default"),
        api_version=dict(type="str", choices=["v1beta1", "v1beta2"]),
        pool=dict(type="str"),
        loadbalancer=dict(type="str"),
        min_healthy_members=dict(type="int"),
        hook_name=dict(type="str", default=DEFAULT_HOOK_NAME),
        start=dict(type="bool", default=False),
        replace=dict(type="list", elements="dict", options=dict(
            old=dict(type="str", required=True),
            new=dict(type="str", required=True),
        )),
        drain=dict(type="bool", default=False),
        drain_timeout=dict(type="int", default=30),
        drain_stop_server=dict(type="bool", default=True),
        drain_stop_timeout=dict(type="int", default=180),
        drain_stop_timeout_action=dict(type="str", default="release", choices=["release", "fail"]),
        member_timeout=dict(type="int", default=600),
        timeout=dict(type="int", default=3600),
        poll_interval=dict(type="float", default=5),
        use_watch=dict(type="bool", default=True),
    )
    number_ranges = dict(timeout=SECONDS, member_timeout=SECONDS, drain_timeout=SECONDS, drain_stop_timeout=SECONDS,
                         poll_interval=POLL_SECONDS,
                         min_healthy_members=NumberRange(minimum=0, maximum=1000))
    module_kwargs = dict(required_if=[("mode", "capi", ["cluster"]), ("mode", "direct", ["pool", "replace"])])

    def run(self) -> None:
        RolloutGuardRunner(self, RolloutOptions.from_params(self.params, check_mode=self.ansible.check_mode)).run()


def main() -> None:
    RolloutGuard()()


if __name__ == "__main__":
    main()
