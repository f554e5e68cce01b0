"""KCP, CAPI's Machine controller and CAPO rolling a control plane on the real Octavia.

Only the control planes of clusters seeded with real OpenStack resources (``capi cluster create
--openstack``: their OpenStackCluster carries ``minicloud.test/openstack``) are handled here; the
rest (workers, clusters without OpenStack) is :mod:`.replicas`'. Like the real controllers, they
keep reconciling: KCP keeps ``spec.replicas`` Machines (a Machine deleted by hand is replaced once
it is gone), a deleted Machine goes through hooks, drain, member and server, and nothing is done
while the cluster is paused. A cluster with nothing to do costs no pass until the store changes
(or a rollout time comes). A rollout is asked for
with the KCP annotation ``minicloud.test/rollout`` (a number, bumped by ``capi rollout``) and
``minicloud.test/capo-wait`` (``member`` or ``lb``); a Machine is up to date when its own
``minicloud.test/rollout`` annotation equals the KCP's (seeded Machines have none: 0). Like the
real KCP, a rollout time that has passed (v1beta1 ``spec.rolloutAfter``, v1beta2
``spec.rollout.after``) also outdates every Machine created before it; such a rollout is
numbered one above the annotation's in the status and the history.

Each tick reads the store and OpenStack into plain views, asks :mod:`.rollout` what to do
and does at most one step per Machine; slow steps (booting a server: a Nova seed process)
block only this controller's thread. Steps leave Events (:mod:`.reasons`).
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from pathlib import Path

from minicloud.kube import seed
from minicloud.kube.controllers import capo, capo_fields, events, history, machines, paused, reasons, rollout
from minicloud.kube.controllers.machines import ROLLOUT_ANNOTATION, machine_view, rollout_number  # noqa: F401
from minicloud.kube.controllers.paused import CLUSTER_NAME_LABEL
from minicloud.kube.resources import by_kind
from minicloud.kube.store import Store, utc_now

CAPO_WAIT_ANNOTATION = "minicloud.test/capo-wait"
DEFAULT_CAPO_WAIT = rollout.WAIT_MEMBER

MACHINE = by_kind("Machine")
KCP = by_kind("KubeadmControlPlane")
OSC = by_kind("OpenStackCluster")
OSM = by_kind("OpenStackMachine")
CLUSTER = by_kind("Cluster")


class ClusterContext:
    """One cluster's objects and OpenStack ids, as read at the start of a tick."""

    def __init__(self, store: Store, kcp: dict, osc: dict):
        meta = kcp["metadata"]
        self.namespace = meta["namespace"]
        self.kcp = kcp
        self.cluster = osc["metadata"]["name"]
        cluster = store.find(CLUSTER, self.namespace, self.cluster)
        # like the real controllers: nothing without a live Cluster, nothing while paused
        self.paused = cluster is None or machines.is_deleting(cluster) or paused.is_paused(cluster, kcp)
        self.rollout = rollout_number(kcp)
        after = rollout.rollout_after(kcp.get("spec"))
        self.rollout_after = after if rollout.rollout_after_due(after, utc_now()) else None
        # a rollout time still ahead: the real KCP requeues itself for then (and so does this controller)
        self.rollout_due_at = None if self.rollout_after or not after else rollout.parse_time(after)
        # what the status and the history call this rollout: a passed rollout time counts as one more
        self.number = self.rollout + (1 if self.rollout_after else 0)
        annotations = meta.get("annotations") or {}
        self.capo_wait = annotations.get(CAPO_WAIT_ANNOTATION, DEFAULT_CAPO_WAIT)
        self.replicas = int(kcp.get("spec", {}).get("replicas", 1))
        status = osc.get("status", {})
        lb = capo_fields.load_balancer(osc)  # v1beta1 apiServerLoadBalancer, v1beta2 apiServerManagedLoadBalancer
        self.lb_id = lb["id"]
        self.lb_name = lb["name"]
        self.network = status["network"]["name"]
        self.subnet_id = status["network"]["subnets"][0]["id"]
        self.pool_id = osc["metadata"]["annotations"][seed.POOL_ANNOTATION]
        selector = f"{CLUSTER_NAME_LABEL}={self.cluster},{seed.CONTROL_PLANE_LABEL}"
        self.machines = store.list(MACHINE, self.namespace, label_selector=selector)[0]
        self.views = [machine_view(m, self.rollout, self.rollout_after) for m in self.machines]
        self.adopted = not machines.is_seeding(kcp)  # no Machine is made while seeding writes them

    def settled(self) -> bool:
        """Nothing to reconcile: paused, or KCP has its replicas, all ready and up to date."""
        return self.paused or rollout.kcp_settled(self.replicas, self.views, self.adopted)

    def summary(self) -> dict:
        return {"namespace": self.namespace, "cluster": self.cluster, "rollout": self.number,
                "capoWait": self.capo_wait, "replicas": self.replicas, "lb_id": self.lb_id, "pool_id": self.pool_id,
                "phase": "Idle" if self.number == 0 else rollout.phase(self.views, self.replicas),
                "old": sorted(v.name for v in self.views if not v.up_to_date),
                "new": sorted(v.name for v in self.views if v.up_to_date),
                "released": sorted(v.name for v in self.views if v.deleting)}


def openstack_clusters(store: Store) -> list[ClusterContext]:
    """The clusters with real OpenStack resources and a KCP."""
    result = []
    for kcp in store.list(KCP)[0]:
        cluster = (kcp["metadata"].get("labels") or {}).get(CLUSTER_NAME_LABEL)
        osc = store.find(OSC, kcp["metadata"]["namespace"], cluster) if cluster else None
        if osc and seed.OPENSTACK_ANNOTATION in (osc["metadata"].get("annotations") or {}) \
                and capo_fields.load_balancer(osc):  # one whose status lost its load balancer: nothing to roll
            result.append(ClusterContext(store, kcp, osc))
    return result


class RolloutController:
    def __init__(self, store: Store, root: Path, openstack: Callable[[], capo.OpenStack],
                 clock: Callable[[], float] = time.time, workloads=None):
        self.store = store
        self.workloads = workloads  # the workload APIs, where the Machines' Nodes live (None: all here)
        self.root = Path(root)
        self.openstack = openstack
        self.clock = clock
        self._written: dict[tuple[str, str], dict] = {}
        self._idle_at = None  # the store revision of the last pass that had nothing to reconcile
        self._wake_at = None  # the earliest rollout time still ahead (epoch seconds), when a pass is due anyway

    def tick(self) -> None:
        revision = self.store.revision
        if revision == self._idle_at and (self._wake_at is None or self.clock() < self._wake_at):
            return  # nothing rolls or is deleted, nothing changed since, and no rollout time has come
        busy = False
        self._wake_at = None
        for ctx in openstack_clusters(self.store):
            if ctx.rollout_due_at is not None:
                due = ctx.rollout_due_at.timestamp()
                self._wake_at = due if self._wake_at is None else min(self._wake_at, due)
            waiting: list[str] = []
            error = None
            try:
                if not ctx.settled():
                    busy = True
                    self._reconcile(ctx, waiting)
                    ctx = ClusterContext(self.store, self.store.get(KCP, ctx.namespace, ctx.kcp["metadata"]["name"]),
                                         self.store.get(OSC, ctx.namespace, ctx.cluster))
            except Exception as exc:  # reported in the rollout status; the next tick retries
                error = f"{type(exc).__name__}: {exc}"
                busy = True
                traceback.print_exc()
            self._report(ctx, waiting, error)
        self._idle_at = None if busy else revision

    # -- one cluster ---------------------------------------------------------------------

    def _reconcile(self, ctx: ClusterContext, waiting: list[str]) -> None:
        osms = {o["metadata"]["name"]: o for o in self.store.list(OSM, ctx.namespace)[0]}
        for machine, view in zip(ctx.machines, ctx.views, strict=True):
            if view.deleting:
                self._delete_step(ctx, machine, view, osms.get(view.name), waiting)
            elif not view.ready:
                self._provision_step(ctx, machine, osms.get(view.name), waiting)
        found = self.store.list(MACHINE, ctx.namespace, label_selector=f"{CLUSTER_NAME_LABEL}={ctx.cluster},"
                                                                        f"{seed.CONTROL_PLANE_LABEL}")[0]
        views = [machine_view(m, ctx.rollout, ctx.rollout_after) for m in found]
        action = rollout.kcp_next(ctx.replicas, views, ctx.adopted)
        if action.kind == "create":
            self._create_machine(ctx)
        elif action.kind == "delete":
            machines.delete(self.store, MACHINE, ctx.namespace, action.machine)
            self._event(ctx.kcp, reasons.SUCCESSFUL_DELETE, reasons.deleted_machine(action.machine),
                        reasons.KCP_CONTROLLER)
        elif action.kind == "wait" and action.reason == "machine deletion" and not waiting:
            waiting.append(f"deletion of {', '.join(action.names)}")
        machines.kcp_status(self.store, ctx.kcp, views)

    def _delete_step(self, ctx, machine: dict, view: rollout.MachineView, osm: dict | None, waiting) -> None:
        """The Machine controller: hooks and drain, then it deletes the OpenStackMachine, whose finalizer
        CAPO holds while it removes the member and the server; then the rest goes and the finalizer."""
        name = view.name
        machines.mark_deleting(self.store, machine)
        early = rollout.deletion_next(view, False, None, False, machines.drained(self._nodes(machine), machine))
        if early.kind == "wait" and rollout.kcp_cleanup_due(view, ctx.views,
                                                            (ctx.kcp.get("spec") or {}).get("version")):
            machines.remove_annotation(self.store, machine, rollout.KCP_CLEANUP_HOOK)
            waiting.append(f"{name}: etcd member removed, {rollout.KCP_CLEANUP_HOOK} taken off")
            return
        if early.kind == "wait":
            waiting.append(f"{name}: {early.reason} {', '.join(early.names)}")
            return
        if early.kind == "drain":
            self._drain(machine)
            waiting.append(f"{name}: node drained")
            return
        if osm is not None and not machines.is_deleting(osm):
            machines.delete(self.store, OSM, ctx.namespace, name)
        server_id = (osm or {}).get("status", {}).get("instanceID")
        conn = self.openstack()
        member = conn.member(ctx.pool_id, capo.member_name(ctx.lb_name, name))
        action = rollout.deletion_next(view, member is not None, member.provisioning_status if member else None,
                                       bool(server_id))
        if action.kind == "delete-member":
            if not conn.delete_member(ctx.pool_id, member.id):
                waiting.append(f"{name}: member deletion refused for now (409), retrying")
            else:
                self._event(osm or machine, reasons.MEMBER_DELETED,
                            f"Deleted load balancer member {member.name} with id {member.id}", reasons.CAPO_CONTROLLER)
                waiting.append(f"{name}: member {member.name} to be gone")
        elif action.kind == "wait":
            waiting.append(f"{name}: {action.reason}")
        elif action.kind == "delete-server":
            if conn.server_exists(server_id):
                conn.delete_server(server_id)
            machines.ignore_missing(lambda: self.store.update(OSM, ctx.namespace, name, machines.status_set(
                instanceState="DELETED", instanceID=None, **capo_fields.ready_fields(osm, False)),
                subresource="status"))
            self._event(osm, reasons.SUCCESSFUL_DELETE_SERVER, f"Deleted server {name} with id {server_id}",
                        reasons.CAPO_CONTROLLER)
            waiting.append(f"{name}: server deleted")
        else:
            machines.remove_machine(self.store, machine, self._nodes(machine))

    def _provision_step(self, ctx, machine: dict, osm: dict | None, waiting) -> None:
        name = machine["metadata"]["name"]
        if osm is None:
            waiting.append(f"{name}: OpenStackMachine missing")
            return
        conn = self.openstack()
        status = osm.get("status", {})
        server_id = status.get("instanceID")
        member = conn.member(ctx.pool_id, capo.member_name(ctx.lb_name, name)) if server_id else None
        lb_status = conn.lb_status(ctx.lb_id) if member is not None or server_id else None
        action = rollout.provision_next(ctx.capo_wait, bool(server_id), member, lb_status)
        if action.kind == "create-server":
            server = conn.create_server(name, ctx.network)
            machines.server_up(self.store, ctx.namespace, name, server["id"], server["address"])
            self._event(osm, reasons.SUCCESSFUL_CREATE_SERVER, f"Created server {name} with id {server['id']}",
                        reasons.CAPO_CONTROLLER)
            waiting.append(f"{name}: server {server['id']} created")
        elif action.kind == "create-member":
            if lb_status != rollout.ACTIVE:
                waiting.append(f"{name}: load balancer to be ACTIVE before adding the member (is {lb_status})")
                return
            address = status["addresses"][0]["address"]
            member_name = capo.member_name(ctx.lb_name, name)
            if conn.create_member(ctx.pool_id, member_name, address, ctx.subnet_id):
                self._event(osm, reasons.MEMBER_CREATED, f"Created load balancer member {member_name} for {address}",
                            reasons.CAPO_CONTROLLER)
                waiting.append(f"{name}: member created")
            else:
                waiting.append(f"{name}: member creation refused for now (409), retrying")
        elif action.kind == "wait":
            waiting.append(f"{name}: {action.reason}")
        else:
            if member is not None and ctx.capo_wait == rollout.WAIT_MEMBER:
                self._event(osm, reasons.MEMBER_ACTIVE, f"Load balancer member {member.name} is "
                            f"{member.provisioning_status}", reasons.CAPO_CONTROLLER)
            machines.machine_ready(self.store, ctx.namespace, ctx.cluster, name, control_plane=True,
                                   nodes=self._nodes(machine))

    def _create_machine(self, ctx: ClusterContext) -> None:
        kcp_name = ctx.kcp["metadata"]["name"]
        name = machines.new_name(self.store, ctx.namespace, kcp_name)
        template = ctx.kcp.get("spec", {}).get("machineTemplate", {}).get("spec", {}).get("infrastructureRef", {})
        machines.create_machine(self.store, ctx.namespace, ctx.cluster, name, {seed.CONTROL_PLANE_LABEL: ""},
                                ctx.kcp, ctx.kcp.get("spec", {}).get("version", seed.KUBERNETES_VERSION),
                                annotations={ROLLOUT_ANNOTATION: str(ctx.rollout)},
                                template=template.get("name", ""))
        self._event(ctx.kcp, reasons.SUCCESSFUL_CREATE, reasons.created_machine(name), reasons.KCP_CONTROLLER)

    def _drain(self, machine: dict) -> None:
        if machines.drain(self._nodes(machine), machine):
            self._event(machine, reasons.SUCCESSFUL_DRAIN_NODE, reasons.drained_node(machines.node_name(machine)),
                        reasons.MACHINE_CONTROLLER)

    def _nodes(self, machine: dict) -> Store:
        return machines.node_store(self.store, self.workloads, machine)

    def _event(self, regarding: dict, reason: str, message: str, component: str) -> None:
        events.record(self.store, regarding, reason, message, component)

    # -- status ----------------------------------------------------------------------------

    def _report(self, ctx: ClusterContext, waiting: list[str], error: str | None) -> None:
        summary = ctx.summary()
        data = {k: summary[k] for k in ("namespace", "cluster", "rollout", "capoWait", "replicas", "phase")}
        data.update(machines={"old": summary["old"], "new": summary["new"], "deleting": summary["released"]},
                    waitingFor=waiting, error=error)
        key = (ctx.namespace, ctx.cluster)
        if self._written.get(key) != data:
            history.write_status(self.root, ctx.namespace, ctx.cluster, dict(data, time=round(self.clock(), 3)))
            self._written[key] = data
