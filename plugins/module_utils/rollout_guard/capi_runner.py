# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rollout_guard in mode=capi: hold the old control-plane Machines with a deletion hook and release each
one only when its replacement's member serves.

Each poll of the wait is three steps: ``look`` reads (the control plane, its Machines, the pool's members
and the load balancer) and writes nothing; ``act`` makes the holds, releases and the rollout's start that
``plan.next_action`` calls for, reading again after each; ``judge`` turns the last action into a verdict.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Optional, cast

from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi import topology
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.objects import (
    CLUSTER_NAME_LABEL,
    CONTROL_PLANE_LABEL,
    CORE_GROUP,
    dig,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.service import CapiService, choose_version
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capo import cluster as capo
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import (
    DeadlineExceeded,
    ModuleFailure,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.options import ModuleRunner
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.waiter import Verdict, WaitResult, wait_for
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.client import is_status
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.openstack_module_base import (
    OpenStackKubernetesModule,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.nova.server_service import (
    STOP_CONFLICT,
    ServerService,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.watch import (
    Feed,
    ObjectWatch,
    given_up,
    start_following,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia import provider as providers
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia import serving_reads
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.serving import (
    ServingHistory,
    ServingRule,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.service import OctaviaService
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.connection import OpenStackClient
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard import plan, terminate
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.drainer import Drainer
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.machines import (
    etcd_healthy,
    kcp_replicas,
    machine_data,
    rollout_after_patch,
    rollout_time,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.report import (
    RolloutLog,
    judge_action,
    member_rows,
    pool_view,
    stuck_view,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.stopper import (
    RELEASE_SECONDS,
    Stopper,
)
# by its name: ``terminate`` in the runner's annotations would be its method
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.terminate import TerminateStep
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.topology_start import TopologyStart

if TYPE_CHECKING:  # runner.py imports this file
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.runner import RolloutOptions

HOOK_VALUE = "flightcontrol.openstack"
# Holds and releases done inside one poll before the module looks again.
ACTS_PER_POLL = 4
# Why a stopped run's release of pre-terminate hooks may go past the run's deadline (``Deadline.extended``): a
# Machine whose server was asked to stop, kept by its hook, would keep a dead etcd member.
RELEASE_REASON = "releasing the Machines whose server a stopped run asked to stop"


@dataclass
class CapiTargets:
    """What the rollout works on, resolved once before the first poll."""

    namespace: str
    cluster: str
    contract: str
    kcp: dict[str, Any]
    kcp_plural: str
    machine_plural: str
    pool: dict[str, Any]
    lb_id: str

    @property
    def kcp_group_version(self) -> tuple[str, ...]:
        return tuple(self.kcp["apiVersion"].rsplit("/", 1))

    @property
    def kcp_name(self) -> str:
        return self.kcp["metadata"]["name"]

    @property
    def kcp_label(self) -> str:
        return f"{self.kcp['kind']} {self.namespace}/{self.kcp_name}"

    @property
    def selector(self) -> str:
        return f"{CLUSTER_NAME_LABEL}={self.cluster},{CONTROL_PLANE_LABEL}"

    @property
    def has_monitor(self) -> bool:
        return bool(self.pool.get("healthmonitor_id"))

    @property
    def member_prefix(self) -> Optional[str]:
        return f"{self.pool.get('name')}-" if self.pool.get("name") else None


@dataclass
class MachineFate:
    """What became of a released Machine: its member's name, and whether member and Machine are gone."""

    member: Optional[str] = None
    member_gone: bool = False
    machine_gone: bool = False


@dataclass
class CapiProgress:
    """What the run remembers between polls."""

    min_healthy: Optional[int] = None
    started_after: Optional[datetime.datetime] = None
    baseline: Optional[set[str]] = None  # names of the Machines at the first look
    not_serving_since: dict[str, float] = field(default_factory=dict)
    fates: dict[str, MachineFate] = field(default_factory=dict)  # released Machine -> MachineFate
    snapshot: Optional[plan.Snapshot] = None
    last: Optional[plan.Action] = None  # the last plan.Action
    polls: int = 0
    started: bool = False


KCP_FEED, MACHINE_FEED = 0, 1


def api_pool(options: RolloutOptions, infra: Optional[dict[str, Any]], cluster: str) -> tuple[str, Optional[str]]:
    """(pool, load balancer or None) to guard: ``pool`` and ``loadbalancer`` as given, else CAPO's API pool of the
    infrastructure cluster and its load balancer, read in either CAPO API version (``capo.cluster``)."""
    if options.pool and options.loadbalancer:
        return options.pool, options.loadbalancer
    try:
        lb = capo.api_load_balancer(infra) or {}
        pool = options.pool or capo.api_pool_name(infra)
    except capo.CapoError as exc:
        raise ModuleFailure(f"Cluster {cluster}: {exc}; or give pool and loadbalancer")
    if not pool and lb:
        raise ModuleFailure(f"Cluster {cluster}: {capo.identity(infra)} reports its API load balancer (id "
                            f"{lb.get('id')}) without a name, so CAPO's pool cannot be named; give pool")
    if not pool:
        raise ModuleFailure(f"Cluster {cluster}: {capo.no_load_balancer(infra)}; give pool")
    return pool, options.loadbalancer or lb.get("id")


class CapiRollout(ModuleRunner):
    module: OpenStackKubernetesModule
    options: RolloutOptions

    def __init__(self, module: OpenStackKubernetesModule, options: RolloutOptions, log: RolloutLog) -> None:
        super().__init__(module, options)
        self.check_mode = options.check_mode
        self.log = log
        self.hook = plan.hook_key(self.options.hook_name)
        self.terminate_hook = plan.terminate_hook_key(self.options.hook_name)
        self.stopper = Stopper(options, self.clock, log, None, False, "no server stop asked (drain_stop_server)")
        self.server_stop: dict[str, Any] = {"asked": False, "holds_pre_terminate": False,
                                            "reason": self.stopper.disabled_why}
        self.progress = CapiProgress(min_healthy=self.options.min_healthy_members)
        # set by resolve(): the Kubernetes client, CapiService, OctaviaService, TopologyStart and CapiTargets
        self.kube: Any = None
        self.capi: Any = None
        self.octavia: Any = None
        self.targets: Any = None
        self.starter: Any = None
        self._drainer: Optional[Drainer] = None
        self.provider: Optional[str] = None  # the load balancer's provider, read at the start when draining
        # octavia.serving.ServingHistory: what serving means on the pool's provider (read_provider, else the first
        # look)
        self.history: Any = None
        # the control plane (feed KCP_FEED) and its Machines (MACHINE_FEED), while watched
        self.watch: Optional[ObjectWatch] = None
        self.observed_with: Optional[dict[str, Any]] = None

    # -- before the first poll ---------------------------------------------------------

    def resolve(self, deadline: Deadline) -> CapiTargets:
        """The Cluster, its control plane and its API pool; fails with what is missing."""
        options = self.options
        self.kube = self.module.connect_kubernetes()
        self.capi = CapiService(self.kube)
        self.capi.discover(deadline)
        contract = choose_version(self.capi.served, options.api_version)
        cluster = self.capi.get_cluster(options.cluster, options.namespace, contract, deadline)
        namespace = cluster["metadata"]["namespace"]
        self.starter = TopologyStart(self.capi, cluster)  # a ClusterClass cluster starts through the Cluster
        if options.start:
            self.starter.check(self.clock.utc_now(), deadline)
        cp_ref = dig(cluster, "spec", "controlPlaneRef")
        kcp = self.capi.get_ref(cp_ref, namespace, contract, deadline)
        if kcp is None:
            raise ModuleFailure(f"Cluster {namespace}/{options.cluster} has no control plane object "
                                f"(spec.controlPlaneRef {cp_ref})")
        infra = self.capi.get_ref(dig(cluster, "spec", "infrastructureRef"), namespace, contract, deadline)
        pool_name, lb_given = api_pool(options, infra, f"{namespace}/{options.cluster}")
        self.octavia = OctaviaService(self.module.connect())
        pool, lb_id = self.octavia.resolve_pool(pool_name, lb_given, deadline)
        self.read_provider(pool, lb_id, deadline)
        self.plan_server_stop(kcp)
        kcp_group, kcp_version = kcp["apiVersion"].rsplit("/", 1)
        return CapiTargets(
            namespace=namespace, cluster=cast(str, options.cluster), contract=contract, kcp=kcp,  # mode=capi needs it
            kcp_plural=self.capi.plural(kcp_group, kcp_version, kcp["kind"], deadline),
            machine_plural=self.capi.plural(CORE_GROUP, contract, "Machine", deadline), pool=pool, lb_id=lb_id)

    def read_provider(self, pool: dict[str, Any], lb_id: str, deadline: Deadline) -> None:
        """The load balancer's provider: what serving means there (``octavia.serving``: on ovn, ONLINE only after a
        full monitor window since the member's creation) and, with ``drain``, whether it honours a drain (refused
        before any write when it does not)."""
        provider = self.octavia.get_loadbalancer(lb_id, deadline).get("provider")
        if self.options.drain:
            self.provider = provider
            refusal = providers.drain_refusal(provider)
            if refusal:
                raise ModuleFailure(f"load balancer {lb_id}: {refusal}; nothing was changed", changed=False)
        rule = serving_reads.read_rule(self.octavia, pool, lb_id, deadline, provider or "")
        self.history = ServingHistory(rule)
        if rule.finding:
            self.module.warn(rule.finding)
        if rule.window is not None and self.options.member_timeout <= rule.window:
            self.module.warn(f"member_timeout ({self.options.member_timeout} s) is not longer than the ovn monitor "
                             f"window ({rule.window:.0f} s): a new member cannot be judged serving before the run "
                             "stops on it")

    def plan_server_stop(self, kcp: dict[str, Any]) -> None:
        """Whether old Machines get the pre-terminate hook too: the stop is asked (``drain`` and
        ``drain_stop_server``) and KCP of this version keeps the etcd member while another pre-terminate hook
        holds a Machine (1.31.0 on); otherwise the result says why not, with a warning when it was asked."""
        options = self.options
        if not (options.drain and options.drain_stop_server):
            return
        waits, why = terminate.kcp_waits_for_other_hooks(dig(kcp, "spec", "version"))
        servers = ServerService(cast(OpenStackClient, self.module.client))  # resolve() connected
        self.stopper = Stopper(options, self.clock, self.log, servers, waits, why)
        self.server_stop = {"asked": True, "holds_pre_terminate": waits, "reason": why}
        if not waits:
            self.module.warn(f"drain_stop_server: {why}; kept-alive clients of the old API servers can see errors "
                             "between the etcd member's removal and the server's deletion")

    @property
    def drainer(self) -> Drainer:
        """Drain before release (``drainer.py``), made on first use."""
        if self._drainer is None:
            self._drainer = Drainer(self.options, self.clock, self.log, self.octavia,
                                    self.targets.pool if self.targets else None, self.provider)
        return self._drainer

    # -- one poll: look (reads only), act (writes), judge ------------------------------

    def follow(self, deadline: Deadline) -> None:
        """Follow the control plane and its Machines by watch where served (``observed_with`` says how)."""
        targets: CapiTargets = self.targets
        group, version = targets.kcp_group_version
        feeds = [Feed(group, version, targets.kcp_plural, targets.kcp["kind"], targets.namespace,
                      field_selector=f"metadata.name={targets.kcp_name}"),
                 Feed(CORE_GROUP, targets.contract, targets.machine_plural, "Machine", targets.namespace,
                      label_selector=targets.selector)]
        self.watch, self.observed_with = start_following(self.kube, feeds, self.clock, lambda obj, now: None,
                                                         self.options.use_watch, deadline)

    def read_control_plane(self, deadline: Deadline) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The control plane object and its Machines: from the watch while it runs, else read now."""
        targets: CapiTargets = self.targets
        stopped = given_up(self.watch)
        if stopped is not None:
            self.observed_with, self.watch = stopped, None
        if self.watch is not None:
            kcps = self.watch.feed_objects(KCP_FEED)
            if not kcps:
                raise ModuleFailure(f"{targets.kcp_label} was deleted during the rollout", **self.result())
            machines = sorted(self.watch.feed_objects(MACHINE_FEED), key=lambda m: m["metadata"]["name"])
            return kcps[0], machines
        group, version = targets.kcp_group_version
        current_kcp = self.capi.get_object(group, version, targets.namespace, targets.kcp_plural, targets.kcp_name,
                                           f"reading {targets.kcp_label}", deadline)
        machines = self.capi.list_kind(CORE_GROUP, targets.contract, "Machine", targets.namespace, targets.selector,
                                       deadline)
        return current_kcp, machines

    def look(self, deadline: Deadline) -> tuple[plan.Snapshot, dict[str, Any]]:
        """Read the control plane, its Machines (from the watch while it runs), the pool's members and the load
        balancer (no write); returns (Snapshot, the control plane object)."""
        targets: CapiTargets = self.targets
        progress = self.progress
        current_kcp, machines = self.read_control_plane(deadline)
        members, lb_now = self.octavia.pool_state(targets.pool["id"], targets.lb_id, deadline)
        if self.history is None:  # targets given without resolve(): the rule every provider but ovn's follows
            self.history = ServingHistory(ServingRule(None, None, has_monitor=targets.has_monitor))
        serving_reads.observe(self.octavia, self.history, targets.pool["id"], members, self.clock.time(), deadline)
        for machine in machines:
            machine.setdefault("apiVersion", f"{CORE_GROUP}/{targets.contract}")
        if progress.baseline is None:
            self.remember_start(machines, members, current_kcp)
        now = self.clock.utc_now()
        # remember_start set the baseline and the floor at the first look
        baseline, min_healthy = cast("set[str]", progress.baseline), cast(int, progress.min_healthy)
        wanted_kcp = self.control_plane_as_wanted(current_kcp, [dig(m, "spec", "version") for m in machines], deadline)
        data = [machine_data(m, wanted_kcp, baseline, now, progress.started_after) for m in machines]
        snapshot = plan.Snapshot(
            data, members, targets.has_monitor, min_healthy, self.options.hook_name,
            targets.member_prefix, released=self.log.released, not_serving_since=progress.not_serving_since,
            now=self.clock.monotonic(), member_timeout=self.options.member_timeout,
            replicas=kcp_replicas(current_kcp), lb_status=lb_now.get("provisioning_status"),
            hold_terminate=self.stopper.enabled, judge=self.history.serving)
        progress.not_serving_since = plan.track(snapshot)
        snapshot.not_serving_since = progress.not_serving_since
        self.note_gone(snapshot)
        return snapshot, current_kcp

    def control_plane_as_wanted(self, current_kcp: dict[str, Any], machine_versions: list[Optional[str]],
                                deadline: Deadline) -> dict[str, Any]:
        """On a ClusterClass cluster, the Cluster read again at each look: a new ``spec.topology.version`` or
        rollout time counts from the Cluster's change, before the topology controller and KCP have shown it (a guard
        started by that change, in follow mode, sees the old Machines as old from its first look)."""
        if self.starter is None or not self.starter.managed:
            return current_kcp
        targets: CapiTargets = self.targets
        cluster = self.capi.get_cluster(targets.cluster, targets.namespace, targets.contract, deadline)
        self.starter.cluster = cluster
        return cast("dict[str, Any]", topology.control_plane_as_wanted(cluster, current_kcp, machine_versions))

    def remember_start(self, machines: list[dict[str, Any]], members: list[dict[str, Any]],
                       current_kcp: dict[str, Any]) -> None:
        """At the first look: the Machines there before the rollout, and the pool's floor of serving members
        (min_healthy_members, else the control plane's replicas, else the members serving now)."""
        progress = self.progress
        progress.baseline = set(m["metadata"]["name"] for m in machines)
        if progress.min_healthy is None:
            progress.min_healthy = kcp_replicas(current_kcp)
        if progress.min_healthy is None:
            progress.min_healthy = sum(1 for m in members if self.history.serving(m))

    def act(self, seen: tuple[plan.Snapshot, dict[str, Any]], deadline: Deadline) -> plan.Action:
        """Make the holds and releases the plan calls for (up to ACTS_PER_POLL, looking again after each),
        then start the rollout when asked; returns the action to judge."""
        snapshot, current_kcp = seen
        for _round in range(ACTS_PER_POLL):
            action = self.drained_first(plan.next_action(snapshot), snapshot, deadline)
            if action.kind == plan.TERMINATE:
                after = self.terminate(action, snapshot, current_kcp, deadline)
                if after is None:  # its hook went: look again
                    snapshot, current_kcp = self.look(deadline)
                    continue
                action = after
            if action.kind not in (plan.HOLD, plan.RELEASE) or self.check_mode:
                break
            if action.kind == plan.HOLD:
                self.hold(action.machines, deadline)
            else:
                self.release(action.machines, snapshot, deadline)
            snapshot, current_kcp = self.look(deadline)
        else:
            action = plan.next_action(snapshot)
        if self.should_start(action):
            self.start_rollout(current_kcp, deadline)
            snapshot, current_kcp = self.look(deadline)
            action = plan.next_action(snapshot)
        self.progress.snapshot, self.progress.last = snapshot, action
        self.progress.polls += 1
        return action

    def judge(self, action: plan.Action, _elapsed: float) -> Verdict:
        return judge_action(action, self.check_mode)

    def drained_first(self, action: plan.Action, snapshot: plan.Snapshot, deadline: Deadline) -> plan.Action:
        """A release waits until the released Machines' members are drained (``drain``); drained members get
        their weight back when the pool cannot carry its floor without them."""
        self.drainer.keep_floor(snapshot.members, snapshot.serving, snapshot.min_healthy, deadline)
        if action.kind != plan.RELEASE:
            return action
        machines = [m for m in snapshot.machines if m["name"] in action.machines]
        releasing = [member for member in (snapshot.member_of(m) for m in machines) if member is not None]
        drained, reason = self.drainer.ready_all(releasing, snapshot.lb_status, deadline)
        if drained:
            return action
        return plan.Action(plan.WAIT, action.machines, member=action.member, state=action.state,
                           reason=cast(str, reason))  # not drained: says why

    # -- the pre-terminate hold: stop the old server, then release the Machine to KCP ---

    def terminate(self, action: plan.Action, snapshot: plan.Snapshot, current_kcp: dict[str, Any],
                  deadline: Deadline) -> Optional[plan.Action]:
        """One step of the pre-terminate hold of ``action.machine`` (``terminate.terminate_next``): stop its
        server, release its hook (returns None: look again), or the action to judge (wait, stuck; in check mode
        what a run would do)."""
        machine = [m for m in snapshot.machines if m["name"] == action.machine][0]
        member = snapshot.member_of(machine)
        record = self.stopper.records.get(machine["name"])
        safety = self.stop_safety(machine, member, snapshot, current_kcp, deadline) if self.stopper.enabled and \
            machine.get("deleting") else {}
        status = self.stopper.server_status(machine, deadline)
        step = terminate.terminate_next(self.stopper.view(machine, safety, status), record)
        if self.check_mode:
            return self.terminate_check_mode(action, step)
        if step.kind == terminate.STOP:
            record = self.stopper.record_of(machine, member)
            if self.stopper.stop(record, status, self.drainer.connections(deadline), deadline) == STOP_CONFLICT:
                self.log.record("stop server: 409, already stopping or stopped", [machine["name"]])
            return plan.Action(plan.WAIT, [machine["name"]], member=action.member,
                               reason=f"server {record.server_id} of Machine {machine['name']} asked to stop")
        if step.kind == terminate.RELEASE:
            self.release_terminate(machine, member, step, deadline)
            return None
        kind = plan.STUCK if step.kind == terminate.FAIL else plan.WAIT
        return plan.Action(kind, [machine["name"]], member=action.member, state=f"server {status}",
                           reason=step.reason)

    def stop_safety(self, machine: dict[str, Any], member: Optional[dict[str, Any]], snapshot: plan.Snapshot,
                    current_kcp: dict[str, Any], deadline: Deadline) -> dict[str, Any]:
        """What a stop of the Machine's server depends on (``terminate.TerminateView``'s safety fields)."""
        if member is None:
            member_out = True
        else:
            member_out = self.drainer.out_of_rotation(member, snapshot.lb_status, deadline)[0]
        leaving = set(plan.member_key(m) for m in (snapshot.member_of(x) for x in snapshot.machines
                                                   if x.get("deleting")) if m is not None)
        drained = self.drainer.drained_ids()
        serving_without = sum(1 for m in snapshot.members if snapshot.serving(m) and plan.member_key(m) not in
                              leaving and m.get("id") not in drained)
        not_ready = [m["name"] for m in snapshot.machines
                     if m["name"] != machine["name"] and not m.get("deleting") and not m.get("ready")]
        return dict(member_out=member_out, serving_without=serving_without, min_healthy=snapshot.min_healthy,
                    not_ready=not_ready, etcd_healthy=etcd_healthy(current_kcp))

    def release_terminate(self, machine: dict[str, Any], member: Optional[dict[str, Any]], step: TerminateStep,
                          deadline: Deadline) -> None:
        """Take our pre-terminate hook off: the Machine goes on to KCP's kcp-cleanup and CAPO."""
        record = self.stopper.record_of(machine, member)
        connections = self.drainer.connections(deadline) if self.drainer.enabled else None
        gone = not self.patch_machine(machine["name"], None, deadline, [self.terminate_hook])
        self.stopper.released(record, step, connections)
        self.log.record(f"release pre-terminate hook ({step.outcome})", [machine["name"]], record.member)
        if step.outcome == "timed_out":
            self.module.warn(step.reason)
        if not machine.get("up_to_date") and machine.get("deleting") and not gone \
                and machine["name"] not in self.log.released:
            self.log.released.append(machine["name"])

    def terminate_check_mode(self, action: plan.Action, step: TerminateStep) -> plan.Action:
        if step.kind in (terminate.STOP, terminate.RELEASE):
            what = "stop server" if step.kind == terminate.STOP else "release pre-terminate hook"
            self.log.record(f"{what} (check mode: not done)", [action.machine], action.member)
            return plan.Action(plan.TERMINATE, action.machines, member=action.member, reason=step.reason)
        return plan.Action(plan.WAIT, action.machines, member=action.member, reason=step.reason)

    def release_after_stop(self) -> None:
        """A run that stops: Machines whose server it asked to stop are released to KCP (the server is going
        down; holding it would keep a dead etcd member); a failure to do so is recorded, never raised."""
        deadline = self.deadline.extended(RELEASE_SECONDS, RELEASE_REASON)
        for record in self.stopper.to_release_after_stop():
            try:
                self.patch_machine(record.machine, None, deadline, [self.terminate_hook])
                self.stopper.released(record, terminate.TerminateStep(terminate.RELEASE, "the run stopped",
                                                                      "released_on_stop"), None)
                self.log.record("release pre-terminate hook (run stopped)", [record.machine], record.member)
            except Exception as exc:  # pylint: disable=broad-except
                self.log.record(f"release pre-terminate hook failed: {exc}", [record.machine])

    # -- the writes --------------------------------------------------------------------

    def patch_machine(self, name: str, value: Optional[str], deadline: Deadline,
                      hooks: Optional[list[str]] = None) -> bool:
        """Set (``value``) or remove (None) our hooks (``hooks``, default the pre-drain one) on a Machine; False
        when the Machine is gone."""
        targets: CapiTargets = self.targets
        body = {"metadata": {"annotations": dict((hook, value) for hook in (hooks or [self.hook]))}}
        try:
            patched = self.capi.patch_object(
                CORE_GROUP, targets.contract, targets.namespace, targets.machine_plural, name, body,
                f"{'holding' if value else 'releasing'} Machine {targets.namespace}/{name}", deadline)
        except Exception as exc:  # pylint: disable=broad-except
            if not is_status(exc, 404):
                raise
            return False
        self.saw_own_write(MACHINE_FEED, patched)
        return True

    def saw_own_write(self, feed: int, obj: Any) -> None:
        """The object our write returned, for the next look (before its watch event arrives)."""
        if self.watch is not None and isinstance(obj, dict) and obj.get("metadata"):
            self.watch.offer(feed, obj)

    def hold(self, names: Iterable[str], deadline: Deadline) -> None:
        hooks = [self.hook, self.terminate_hook] if self.stopper.enabled else [self.hook]
        done = [n for n in names if self.patch_machine(n, HOOK_VALUE, deadline, hooks)]
        self.log.record("hold" if len(hooks) == 1 else "hold (pre-drain and pre-terminate)", done)

    def release(self, names: Iterable[str], snapshot: plan.Snapshot, deadline: Deadline) -> None:
        for name in names:
            machine = [m for m in snapshot.machines if m["name"] == name]
            hooks = [self.hook, self.terminate_hook] if machine and machine[0].get("up_to_date") else [self.hook]
            if self.patch_machine(name, None, deadline, hooks):
                self.drainer.released(snapshot.member_of(machine[0]) if machine else None)
                if machine and not machine[0].get("up_to_date"):
                    self.log.released.append(name)
        self.log.record("release", names)

    def should_start(self, action: plan.Action) -> bool:
        return (self.options.start and action.kind not in (plan.HOLD, plan.STUCK) and not self.progress.started
                and not self.check_mode)

    def start_rollout(self, current_kcp: dict[str, Any], deadline: Deadline) -> None:
        self.until_rollout_time()
        targets: CapiTargets = self.targets
        moment = cast(datetime.datetime, self.progress.started_after)  # run() sets it when start is asked
        through, dummy = self.starter.start(current_kcp, moment, deadline)
        if through != "cluster":
            group, version = targets.kcp_group_version
            patched = self.capi.patch_object(
                group, version, targets.namespace, targets.kcp_plural, targets.kcp_name,
                rollout_after_patch(current_kcp, moment),
                f"starting the rollout of {targets.kcp_label}", deadline)
            self.saw_own_write(KCP_FEED, patched)
        self.progress.started = True
        self.log.record("start")

    def until_rollout_time(self) -> None:
        """Wait (a second at most) until the rollout time has passed. KubeadmControlPlane rolls the Machines
        created before ``rollout.after`` only once that time is past, and does not requeue for a time still to
        come: written early and reconciled at once, the rollout would wait for the next event or the controller's
        resync (10 minutes by default)."""
        started_after = cast(datetime.datetime, self.progress.started_after)  # run() sets it when start is asked
        for dummy in range(10):
            ahead = (started_after - self.clock.utc_now()).total_seconds()
            if ahead < 0:
                return
            self.clock.sleep(min(ahead + 0.05, 1.1))

    def note_gone(self, snapshot: plan.Snapshot) -> None:
        """Record released Machines whose member (and the Machine) left."""
        present = dict((m["name"], m) for m in snapshot.machines)
        for name in self.log.released:
            fate = self.progress.fates.setdefault(name, MachineFate())
            machine = present.get(name)
            member = snapshot.member_of(machine) if machine else None
            if member is not None:
                fate.member = member.get("name")
            elif not fate.member_gone:
                fate.member_gone = True
                self.log.members_gone.append(fate.member or name)
                self.log.record("member_gone", [name], fate.member)
            if machine is None and not fate.machine_gone:
                fate.machine_gone = True
                self.log.record("machine_gone", [name])

    # -- the run -----------------------------------------------------------------------

    def run(self, deadline: Deadline) -> None:
        options = self.options
        self.targets = self.resolve(deadline)
        if options.start:
            self.progress.started_after = rollout_time(self.clock.utc_now())
        self.follow(deadline)
        outcome: Optional[WaitResult] = None
        try:
            outcome = wait_for(self.look, self.judge, deadline, options.poll_interval, act=self.act)
        except DeadlineExceeded as exc:
            raise ModuleFailure(f"{exc}. {self.held_text()}", **self.result())
        finally:
            if outcome is None or not outcome.succeeded:
                self.drainer.restore_after_stop(self.deadline)
                if not self.check_mode:
                    self.release_after_stop()
            if self.watch is not None:
                self.watch.stop()
        data = self.result()
        if self.check_mode:
            self.exit_check_mode(data)
        targets: CapiTargets = self.targets
        if outcome.succeeded:
            self.module.exit(msg=f"rollout of {targets.namespace}/{targets.cluster} finished: "
                                 f"{outcome.verdict.message}", **data)
        action = cast(plan.Action, self.progress.last)  # wait_for polls at least once
        if outcome.timed_out:
            self.module.fail(f"Timed out after {outcome.elapsed:.0f} s (timeout {options.timeout} s) guarding the "
                             f"rollout of {targets.namespace}/{targets.cluster}; still waiting for {action.reason}. "
                             f"{self.held_text()}{outcome.interrupted_text}", **data)
        data["stuck"] = stuck_view(action, action.machines)
        self.module.fail(self.stuck_text(action), **data)

    def exit_check_mode(self, data: dict[str, Any]) -> None:
        last = self.progress.last
        would = last.to_dict() if last else None
        would_start = self.options.start and not self.progress.started
        if would_start:
            data["actions"].append({"action": "start (check mode: not done)", "machines": [], "member": None,
                                    "at": 0})
        data["changed"] = would_start or (last is not None and last.kind in (plan.HOLD, plan.RELEASE, plan.TERMINATE))
        self.module.exit(msg=f"check mode: next step would be {(would or {}).get('action')}", **data)

    # -- the words and the result ------------------------------------------------------

    def held_text(self) -> str:
        snapshot = self.progress.snapshot
        if snapshot is None:
            return "No poll completed."
        held = [m["name"] for m in snapshot.machines if snapshot.held(m)]
        terminating = [m["name"] for m in snapshot.machines if snapshot.held_terminate(m) and not snapshot.held(m)]
        words = f"Held (deletion hook kept): {', '.join(held) or 'none'}."
        if terminating:
            words += (f" Held at their pre-terminate hook {self.terminate_hook} (drained, the etcd member kept; remove "
                      f"the annotation to let the control plane go on): {', '.join(terminating)}.")
        return words

    def stuck_text(self, action: plan.Action) -> str:
        snapshot = cast(plan.Snapshot, self.progress.snapshot)  # a stuck action comes from a poll
        machine = action.machine or "?"
        member = action.member or "(no member)"
        parts = [f"Rollout stopped: {member} of Machine {self.targets.namespace}/{machine}: {action.reason} "
                 f"(provisioning/operating status {action.state})."]
        parts.append(self.held_text())
        serving = sum(1 for m in snapshot.members if snapshot.serving(m))
        parts.append(f"Pool serving members: {serving} (min_healthy_members {snapshot.min_healthy}).")
        parts.append(self.what_to_check(action, snapshot.hook))
        return " ".join(parts)

    def what_to_check(self, action: plan.Action, hook: str) -> str:
        if action.state and action.state.startswith("PENDING_"):
            return (f"Check: the Octavia worker and amphora of the load balancer (a member left "
                    f"{action.state.split('/')[0]} while the load balancer is ACTIVE is the amphora v2 failure); once "
                    "the member serves, run again with start=false to go on; to give up, delete the member and the new "
                    f"Machine, then remove the annotation {hook} from the held Machines.")
        if action.state and action.state.startswith("ERROR"):
            return ("Check: the Octavia worker logs for the member; delete it so that the provider creates it "
                    "again, then run again with start=false.")
        if action.state == "absent":
            return (f"Check: the infrastructure provider (CAPO) logs and the OpenStackMachine of "
                    f"{action.machine or '?'}: it never added the member.")
        expected = "health monitor ONLINE expected" if self.targets.has_monitor else "NO_MONITOR"
        return (f"Check: the member's backend ({expected}): is the API server on the node up and reachable from the "
                "load balancer?")

    def result(self) -> dict[str, Any]:
        snapshot, last = self.progress.snapshot, self.progress.last
        data = self.log.data(changed=any(a["action"].split(" (")[0] in ("hold", "release", "start", "stop server",
                                                                        "release pre-terminate hook")
                                         and "check mode" not in a["action"] for a in self.log.actions))
        data.update(rollout_started=bool(self.progress.started), pool=pool_view(self.targets.pool),
                    drained=self.stopper.enrich(self.drainer.report()), provider=self.provider,
                    server_stop=dict(self.server_stop, servers=self.stopper.report()),
                    polled_with=self.octavia.polled_with if self.octavia else None)
        if self.observed_with is not None:
            data["observed_with"] = dict(self.observed_with, **(self.watch.summary() if self.watch else {}))
        if snapshot is None:
            return data
        data["held"] = [m["name"] for m in snapshot.machines if snapshot.held_any(m)]
        data["machines"] = [self.machine_row(machine, snapshot) for machine in snapshot.machines]
        data["members"] = [dict(row, **self.history.judged(member))
                           for row, member in zip(member_rows(snapshot.members, snapshot.serving), snapshot.members)]
        data["serving_rule"] = self.history.rule.view()
        data["serving_members"] = sum(1 for m in snapshot.members if snapshot.serving(m))
        data["min_healthy_members"] = snapshot.min_healthy
        data["plan"] = last.to_dict() if last else None
        return data

    @staticmethod
    def machine_row(machine: dict[str, Any], snapshot: plan.Snapshot) -> dict[str, Any]:
        member = snapshot.member_of(machine)
        return {"name": machine["name"], "up_to_date": machine["up_to_date"],
                "up_to_date_reason": machine.get("up_to_date_reason"), "deleting": machine["deleting"],
                "held": snapshot.held(machine), "held_pre_terminate": snapshot.held_terminate(machine),
                "node_name": machine.get("node_name"),
                "member": member.get("name") if member else None, "member_state": plan.member_state(member),
                "serving": snapshot.serving(member)}
