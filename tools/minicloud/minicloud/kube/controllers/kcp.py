"""KCP, CAPI's Machine controller and CAPO rolling a control plane on the real Octavia.

Only clusters seeded with real OpenStack resources (``capi cluster create --openstack``: their
OpenStackCluster carries ``minicloud.test/openstack``) are handled. A rollout is asked for
with the KCP annotation ``minicloud.test/rollout`` (a number, bumped by ``capi rollout``) and
``minicloud.test/capo-wait`` (``member`` or ``lb``); a Machine is up to date when its own
``minicloud.test/rollout`` annotation equals the KCP's (seeded Machines have none: 0). Like the
real KCP, a rollout time that has passed (v1beta1 ``spec.rolloutAfter``, v1beta2
``spec.rollout.after``) also outdates every Machine created before it; such a rollout is
numbered one above the annotation's in the status and the history.

Each tick reads the store and OpenStack into plain views, asks :mod:`.rollout` what to do
and does at most one step per Machine; slow steps (booting a server: a Nova seed process)
block only this controller's thread.
"""

from __future__ import annotations

import random
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from minicloud.kube import errors, seed
from minicloud.kube.controllers import capo, history, rollout
from minicloud.kube.controllers.paused import CLUSTER_NAME_LABEL
from minicloud.kube.resources import BOOTSTRAP_GROUP, INFRA_GROUP, by_kind
from minicloud.kube.store import Store, rfc3339, utc_now

ROLLOUT_ANNOTATION = "minicloud.test/rollout"
CAPO_WAIT_ANNOTATION = "minicloud.test/capo-wait"
DEFAULT_CAPO_WAIT = rollout.WAIT_MEMBER

MACHINE = by_kind("Machine")
KCP = by_kind("KubeadmControlPlane")
OSC = by_kind("OpenStackCluster")
OSM = by_kind("OpenStackMachine")
CONFIG = by_kind("KubeadmConfig")
NODE = by_kind("Node")


def rollout_number(obj: dict) -> int:
    try:
        return int((obj["metadata"].get("annotations") or {}).get(ROLLOUT_ANNOTATION, 0))
    except ValueError:
        return 0


def machine_view(machine: dict, current: int, after: str | None = None) -> rollout.MachineView:
    meta = machine["metadata"]
    annotations = meta.get("annotations") or {}
    outdated = rollout.outdated_by_time(meta.get("creationTimestamp"), after, utc_now())
    return rollout.MachineView(
        name=meta["name"], order=(meta.get("creationTimestamp", ""), meta["name"]),
        up_to_date=rollout_number(machine) == current and not outdated,
        ready=bool(machine.get("status", {}).get("nodeRef")),
        deleting=bool(meta.get("deletionTimestamp")),
        pre_drain=tuple(rollout.hooks(annotations, rollout.PRE_DRAIN_HOOK_PREFIX)),
        pre_terminate=tuple(rollout.hooks(annotations, rollout.PRE_TERMINATE_HOOK_PREFIX)))


class ClusterContext:
    """One cluster's objects and OpenStack ids, as read at the start of a tick."""

    def __init__(self, store: Store, kcp: dict, osc: dict):
        meta = kcp["metadata"]
        self.namespace = meta["namespace"]
        self.kcp = kcp
        self.cluster = osc["metadata"]["name"]
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
        self.lb_id = status["apiServerLoadBalancer"]["id"]
        self.lb_name = status["apiServerLoadBalancer"]["name"]
        self.network = status["network"]["name"]
        self.subnet_id = status["network"]["subnets"][0]["id"]
        self.pool_id = osc["metadata"]["annotations"][seed.POOL_ANNOTATION]
        selector = f"{CLUSTER_NAME_LABEL}={self.cluster},{seed.CONTROL_PLANE_LABEL}"
        self.machines = store.list(MACHINE, self.namespace, label_selector=selector)[0]
        self.views = [machine_view(m, self.rollout, self.rollout_after) for m in self.machines]

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
        if osc and seed.OPENSTACK_ANNOTATION in (osc["metadata"].get("annotations") or {}):
            result.append(ClusterContext(store, kcp, osc))
    return result


class RolloutController:
    def __init__(self, store: Store, root: Path, openstack: Callable[[], capo.OpenStack],
                 clock: Callable[[], float] = time.time):
        self.store = store
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
                if ctx.number or any(v.deleting for v in ctx.views):
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
        machines = self.store.list(MACHINE, ctx.namespace, label_selector=f"{CLUSTER_NAME_LABEL}={ctx.cluster},"
                                                                          f"{seed.CONTROL_PLANE_LABEL}")[0]
        views = [machine_view(m, ctx.rollout, ctx.rollout_after) for m in machines]
        action = rollout.kcp_next(ctx.replicas, views)
        if action.kind == "create":
            self._create_machine(ctx)
        elif action.kind == "delete":
            self.store.delete(MACHINE, ctx.namespace, action.machine)
        elif action.kind == "wait" and action.reason == "machine deletion" and not waiting:
            waiting.append(f"deletion of {', '.join(action.names)}")
        self._kcp_status(ctx, views)

    def _delete_step(self, ctx, machine: dict, view: rollout.MachineView, osm: dict | None, waiting) -> None:
        name = view.name
        if machine.get("status", {}).get("phase") != "Deleting":
            self._machine_status(ctx, name, lambda s: s.update(phase="Deleting"))
        if view.pre_drain or view.pre_terminate:
            action = rollout.deletion_next(view, False, None, False)
            waiting.append(f"{name}: {action.reason} {', '.join(action.names)}")
            return
        node_name = (machine.get("status", {}).get("nodeRef") or {}).get("name")
        if node_name:
            self._cordon(node_name)
        server_id = (osm or {}).get("status", {}).get("instanceID")
        conn = self.openstack()
        member = conn.member(ctx.pool_id, capo.member_name(ctx.lb_name, name))
        action = rollout.deletion_next(view, member is not None, member.provisioning_status if member else None,
                                       bool(server_id))
        if action.kind == "delete-member":
            if not conn.delete_member(ctx.pool_id, member.id):
                waiting.append(f"{name}: member deletion refused for now (409), retrying")
            else:
                waiting.append(f"{name}: member {member.name} to be gone")
        elif action.kind == "wait":
            waiting.append(f"{name}: {action.reason}")
        elif action.kind == "delete-server":
            if conn.server_exists(server_id):
                conn.delete_server(server_id)
            self._try(lambda: self.store.update(OSM, ctx.namespace, name, _status_set(instanceState="DELETED",
                                                                                         instanceID=None, ready=False),
                                                subresource="status"))
            waiting.append(f"{name}: server deleted")
        else:
            for kind, ns, obj_name in ((OSM, ctx.namespace, name), (CONFIG, ctx.namespace, name),
                                       (NODE, None, node_name)):
                if obj_name:
                    self._try(lambda k=kind, n=ns, o=obj_name: self._remove(k, n, o))
            self._try(lambda: self.store.update(MACHINE, ctx.namespace, name, _without_finalizer))

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
            provider_id = f"openstack:///{server['id']}"
            addresses = [{"type": "InternalIP", "address": server["address"]}]
            self.store.update(OSM, ctx.namespace, name, _status_set(instanceID=server["id"], instanceState="ACTIVE",
                                                                     addresses=addresses), subresource="status")
            self.store.update(OSM, ctx.namespace, name, _spec_set(providerID=provider_id))
            self.store.update(MACHINE, ctx.namespace, name, _spec_set(providerID=provider_id))
            self._machine_status(ctx, name, lambda s: s.update(phase="Provisioned", addresses=addresses))
            waiting.append(f"{name}: server {server['id']} created")
        elif action.kind == "create-member":
            if lb_status != rollout.ACTIVE:
                waiting.append(f"{name}: load balancer to be ACTIVE before adding the member (is {lb_status})")
                return
            address = status["addresses"][0]["address"]
            if conn.create_member(ctx.pool_id, capo.member_name(ctx.lb_name, name), address, ctx.subnet_id):
                waiting.append(f"{name}: member created")
            else:
                waiting.append(f"{name}: member creation refused for now (409), retrying")
        elif action.kind == "wait":
            waiting.append(f"{name}: {action.reason}")
        else:
            self._machine_ready(ctx, name, status)

    def _machine_ready(self, ctx, name: str, osm_status: dict) -> None:
        address = osm_status["addresses"][0]["address"]
        provider_id = f"openstack:///{osm_status['instanceID']}"
        self.store.update(OSM, ctx.namespace, name, _status_set(
            ready=True, conditions=seed._old_ready("Ready", "InstanceReady", "APIServerIngressReadyCondition")),
            subresource="status")
        nodes = self.store.list(NODE)[0]
        index = seed.free_pod_indexes(nodes, 1)
        labels = {"node-role.kubernetes.io/control-plane": "", CLUSTER_NAME_LABEL: ctx.cluster}
        if self.store.find(NODE, None, name) is None:
            self.store.create(NODE, seed.node(name, seed.pod_cidr(index), address, labels, provider_id))

        def ready(status: dict) -> None:
            status.update(phase="Running", nodeRef={"name": name},
                          initialization={"bootstrapDataSecretCreated": True, "infrastructureProvisioned": True},
                          conditions=_ready_now("Available", "Ready", "BootstrapConfigReady", "InfrastructureReady",
                                                "NodeReady"),
                          deprecated={"v1beta1": {"conditions": seed._old_ready(
                              "Ready", "BootstrapReady", "InfrastructureReady", "NodeHealthy")}})

        self._machine_status(ctx, name, ready)

    def _create_machine(self, ctx: ClusterContext) -> None:
        kcp_name = ctx.kcp["metadata"]["name"]
        taken = {m["metadata"]["name"] for m in self.store.list(MACHINE, ctx.namespace)[0]}
        name = next(n for n in (f"{kcp_name}-{_random_suffix()}" for _ in range(100)) if n not in taken)
        labels = {seed.CONTROL_PLANE_LABEL: ""}
        meta = seed._meta(name, ctx.namespace, ctx.cluster, **labels)
        meta.update(annotations={ROLLOUT_ANNOTATION: str(ctx.rollout)}, finalizers=[seed.MACHINE_FINALIZER],
                    ownerReferences=[_owner(ctx.kcp)])
        version = ctx.kcp.get("spec", {}).get("version", seed.KUBERNETES_VERSION)
        machine = self.store.create(MACHINE, {
            "apiVersion": MACHINE.api_version(MACHINE.hub), "kind": "Machine", "metadata": meta,
            "spec": {"clusterName": ctx.cluster, "version": version,
                     "bootstrap": {"configRef": seed._ref(BOOTSTRAP_GROUP, "KubeadmConfig", name),
                                   "dataSecretName": name},
                     "infrastructureRef": seed._ref(INFRA_GROUP, "OpenStackMachine", name)}})
        self.store.update(MACHINE, ctx.namespace, name, _status_set(
            phase="Provisioning", initialization={"bootstrapDataSecretCreated": True,
                                                  "infrastructureProvisioned": False},
            conditions=[{"type": "Ready", "status": "False", "reason": "NotReady", "message": "",
                         "lastTransitionTime": rfc3339(utc_now()), "observedGeneration": 1}]), subresource="status")
        owned = dict(seed._meta(name, ctx.namespace, ctx.cluster, **labels), ownerReferences=[_owner(machine)])
        config = self.store.create(CONFIG, {"apiVersion": CONFIG.api_version(CONFIG.hub), "kind": "KubeadmConfig",
                                            "metadata": owned, "spec": {}})
        self.store.update(CONFIG, ctx.namespace, config["metadata"]["name"], _status_set(
            initialization={"dataSecretCreated": True}, dataSecretName=name,
            conditions=_ready_now("Ready", "DataSecretAvailable")), subresource="status")
        template = ctx.kcp.get("spec", {}).get("machineTemplate", {}).get("spec", {}).get("infrastructureRef", {})
        self.store.create(OSM, {"apiVersion": OSM.api_version(OSM.hub), "kind": "OpenStackMachine",
                                "metadata": dict(owned, annotations={
                                    "cluster.x-k8s.io/cloned-from-name": template.get("name", "")}),
                                "spec": {"flavor": "m1.medium", "image": {"filter": {"name": "ubuntu-2404-kube"}}}})
        self.store.update(OSM, ctx.namespace, name, _status_set(ready=False, instanceState="BUILD"),
                          subresource="status")

    # -- status ----------------------------------------------------------------------------

    def _kcp_status(self, ctx: ClusterContext, views: list[rollout.MachineView]) -> None:
        counts = rollout.kcp_counts(views)

        def change(obj: dict) -> dict:
            status = obj.setdefault("status", {})
            status.update(counts)
            old = status.setdefault("deprecated", {}).setdefault("v1beta1", {})
            old.update(readyReplicas=counts["readyReplicas"], updatedReplicas=counts["upToDateReplicas"],
                       unavailableReplicas=max(0, counts["replicas"] - counts["readyReplicas"]))
            return obj

        self._try(lambda: self.store.update(KCP, ctx.namespace, ctx.kcp["metadata"]["name"], change,
                                            subresource="status"))

    def _report(self, ctx: ClusterContext, waiting: list[str], error: str | None) -> None:
        summary = ctx.summary()
        data = {k: summary[k] for k in ("namespace", "cluster", "rollout", "capoWait", "replicas", "phase")}
        data.update(machines={"old": summary["old"], "new": summary["new"], "deleting": summary["released"]},
                    waitingFor=waiting, error=error)
        key = (ctx.namespace, ctx.cluster)
        if self._written.get(key) != data:
            history.write_status(self.root, ctx.namespace, ctx.cluster, dict(data, time=round(self.clock(), 3)))
            self._written[key] = data

    # -- store helpers -----------------------------------------------------------------------

    def _machine_status(self, ctx, name: str, mutate: Callable[[dict], None]) -> None:
        def change(obj: dict) -> dict:
            mutate(obj.setdefault("status", {}))
            return obj

        self._try(lambda: self.store.update(MACHINE, ctx.namespace, name, change, subresource="status"))

    def _cordon(self, node_name: str) -> None:
        self._try(lambda: self.store.update(NODE, None, node_name, _spec_set(unschedulable=True)))

    def _remove(self, kind, namespace, name) -> None:
        self.store.update(kind, namespace, name, _without_finalizer)
        self.store.delete(kind, namespace, name)

    @staticmethod
    def _try(action) -> None:
        try:
            action()
        except errors.ApiError as exc:
            if exc.status != 404:  # gone meanwhile is fine
                raise


def _random_suffix() -> str:
    return "".join(random.choices("bcdfghjklmnpqrstvwxz2456789", k=5))


def _owner(obj: dict) -> dict:
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": obj["metadata"]["name"],
            "uid": obj["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}


def _ready_now(*types: str) -> list[dict]:
    now = rfc3339(utc_now())
    return [dict(c, lastTransitionTime=now) for c in seed._ready(*types)]


def _status_set(**fields) -> Callable[[dict], dict]:
    def change(obj: dict) -> dict:
        status = obj.setdefault("status", {})
        for key, value in fields.items():
            if value is None:
                status.pop(key, None)
            else:
                status[key] = value
        return obj

    return change


def _spec_set(**fields) -> Callable[[dict], dict]:
    def change(obj: dict) -> dict:
        obj.setdefault("spec", {}).update(fields)
        return obj

    return change


def _without_finalizer(obj: dict) -> dict:
    obj["metadata"]["finalizers"] = []
    return obj
