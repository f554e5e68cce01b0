"""A Machine's objects in the store, as CAPI's controllers write them: shared by KCP and the
MachineSet controller (:mod:`.replicas`) and by the rollout controller on OpenStack (:mod:`.kcp`).

- :func:`create_machine`: a new Machine (CAPI's finalizer), its KubeadmConfig and its
  OpenStackMachine (CAPO's finalizer), as KCP or a MachineSet creates them: ``Provisioning``.
- :func:`machine_ready`: what CAPO and the Machine controller write once the server is up:
  the OpenStackMachine ready, a Node, the Machine ``Running`` with its ``nodeRef``.
- :func:`drain` / :func:`drained`: the Machine controller's drain (cordoning the Node).
- :func:`remove_machine`: the end of a deletion: the OpenStackMachine (CAPO's finalizer off),
  the KubeadmConfig and the Node go, then CAPI's finalizer comes off the Machine.

A Machine's Node lives in its cluster's own API (:mod:`minicloud.kube.workloads`), or in the management
store for a cluster without one: :func:`node_store` says which; the functions touching Nodes take it.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from minicloud.kube import errors, seed
from minicloud.kube.controllers import capo_fields, rollout
from minicloud.kube.controllers import paused
from minicloud.kube.controllers.paused import CLUSTER_NAME_LABEL
from minicloud.kube.resources import BOOTSTRAP_GROUP, INFRA_GROUP, by_kind
from minicloud.kube.store import Store, rfc3339, utc_now

MACHINE = by_kind("Machine")
KCP = by_kind("KubeadmControlPlane")
MACHINE_SET = by_kind("MachineSet")
MACHINE_DEPLOYMENT = by_kind("MachineDeployment")
CLUSTER = by_kind("Cluster")
OSC = by_kind("OpenStackCluster")
OSM = by_kind("OpenStackMachine")
CONFIG = by_kind("KubeadmConfig")
NODE = by_kind("Node")
CONTROL_PLANE_NODE_LABEL = "node-role.kubernetes.io/control-plane"
ROLLOUT_ANNOTATION = "minicloud.test/rollout"


# -- reading -------------------------------------------------------------------------------

def is_control_plane(machine: dict) -> bool:
    return seed.CONTROL_PLANE_LABEL in (machine["metadata"].get("labels") or {})


def node_name(machine: dict) -> str | None:
    return (machine.get("status", {}).get("nodeRef") or {}).get("name")


def is_deleting(obj: dict | None) -> bool:
    return bool(obj and obj["metadata"].get("deletionTimestamp"))


def has_openstack(osc: dict | None) -> bool:
    """Whether the cluster was seeded with real OpenStack resources (its control plane has real servers)."""
    return bool(osc) and seed.OPENSTACK_ANNOTATION in (osc["metadata"].get("annotations") or {})


def is_seeding(owner: dict) -> bool:
    """Whether seeding is still writing the Machines of this KCP or MachineSet (``seed.SEEDING_ANNOTATION``):
    until it is done, the controllers create none for it."""
    return seed.SEEDING_ANNOTATION in (owner["metadata"].get("annotations") or {})


def rollout_number(obj: dict) -> int:
    """The rollout a KCP asks for, or a Machine was created in (``minicloud.test/rollout``; none: 0)."""
    try:
        return int((obj["metadata"].get("annotations") or {}).get(ROLLOUT_ANNOTATION, 0))
    except ValueError:
        return 0


def machine_view(machine: dict, current: int, after: str | None = None) -> rollout.MachineView:
    """The plain view the decisions take: up to date in rollout ``current`` and not created before a
    passed rollout time ``after``; ready once it has a Node."""
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


def node_store(store: Store, workloads, machine: dict) -> Store:
    """Where the Machine's Node lives: its cluster's workload API (``workloads``: a
    :class:`~minicloud.kube.workloads.WorkloadRegistry`, or None), else the management ``store``."""
    if workloads is None:
        return store
    return workloads.node_store(machine["metadata"].get("namespace", ""), paused.cluster_name(machine), store)


def drained(nodes: Store, machine: dict) -> bool:
    """Whether the Machine's Node (in ``nodes``) is cordoned (or there is no Node to drain)."""
    name = node_name(machine)
    node = nodes.find(NODE, None, name) if name else None
    return node is None or bool(node.get("spec", {}).get("unschedulable"))


# -- writing -------------------------------------------------------------------------------

def new_name(store: Store, namespace: str, prefix: str) -> str:
    """``<prefix>-<5 random letters>``, not taken by any Machine of the namespace (CAPI's naming)."""
    taken = {m["metadata"]["name"] for m in store.list(MACHINE, namespace)[0]}
    return next(n for n in (f"{prefix}-{_random_suffix()}" for _ in range(100)) if n not in taken)


def create_machine(store: Store, namespace: str, cluster: str, name: str, labels: dict, owner: dict,
                   version: str, annotations: dict | None = None, template: str = "") -> dict:
    """The Machine, its KubeadmConfig and its OpenStackMachine (cloned from ``template``), Provisioning. A
    KubeadmControlPlane's Machine carries KCP's own pre-terminate hook."""
    meta = seed._meta(name, namespace, cluster, **labels)
    meta.update(finalizers=[seed.MACHINE_FINALIZER], ownerReferences=[owner_ref(owner)])
    annotations = dict(annotations or {})
    if owner["kind"] == "KubeadmControlPlane":
        annotations[rollout.KCP_CLEANUP_HOOK] = ""
    if annotations:
        meta["annotations"] = annotations
    machine = store.create(MACHINE, {
        "apiVersion": MACHINE.api_version(MACHINE.hub), "kind": "Machine", "metadata": meta,
        "spec": {"clusterName": cluster, "version": version,
                 "bootstrap": {"configRef": seed._ref(BOOTSTRAP_GROUP, "KubeadmConfig", name), "dataSecretName": name},
                 "infrastructureRef": seed._ref(INFRA_GROUP, "OpenStackMachine", name)}})
    store.update(MACHINE, namespace, name, status_set(
        phase="Provisioning", initialization={"bootstrapDataSecretCreated": True, "infrastructureProvisioned": False},
        conditions=[{"type": "Ready", "status": "False", "reason": "NotReady", "message": "",
                     "lastTransitionTime": rfc3339(utc_now()), "observedGeneration": 1}]), subresource="status")
    owned = dict(seed._meta(name, namespace, cluster, **labels), ownerReferences=[owner_ref(machine)])
    store.create(CONFIG, {"apiVersion": CONFIG.api_version(CONFIG.hub), "kind": "KubeadmConfig",
                          "metadata": owned, "spec": {}})
    store.update(CONFIG, namespace, name, status_set(
        initialization={"dataSecretCreated": True}, dataSecretName=name,
        conditions=ready_now("Ready", "DataSecretAvailable")), subresource="status")
    osc = store.find(OSC, namespace, cluster)  # CAPO makes the machine in its cluster's version
    osm = store.create(OSM, capo_fields.at_version({
        "kind": "OpenStackMachine", "metadata": dict(owned, finalizers=[seed.OSM_FINALIZER],
                                                     annotations={"cluster.x-k8s.io/cloned-from-name": template}),
        "spec": {"flavor": "m1.medium", "image": {"filter": {"name": "ubuntu-2404-kube"}}}}, "OpenStackMachine", osc))
    store.update(OSM, namespace, name, status_set(**capo_fields.ready_fields(osm, False), instanceState="BUILD"),
                 subresource="status")
    return machine


def server_up(store: Store, namespace: str, name: str, server_id: str, address: str) -> None:
    """CAPO once the server is ACTIVE: the OpenStackMachine's instance, addresses and providerID, and the
    Machine's providerID and addresses (``Provisioned``)."""
    provider_id = f"openstack:///{server_id}"
    addresses = [{"type": "InternalIP", "address": address}]
    store.update(OSM, namespace, name, status_set(instanceID=server_id, instanceState="ACTIVE", addresses=addresses),
                 subresource="status")
    store.update(OSM, namespace, name, spec_set(providerID=provider_id))
    store.update(MACHINE, namespace, name, spec_set(providerID=provider_id))
    update_status(store, MACHINE, namespace, name, lambda s: s.update(phase="Provisioned", addresses=addresses))


def machine_ready(store: Store, namespace: str, cluster: str, name: str, control_plane: bool,
                  nodes: Store | None = None) -> None:
    """The OpenStackMachine ready (its server up, see :func:`server_up`), the Node registered (in ``nodes``,
    default ``store``), the Machine ``Running`` with its ``nodeRef`` and Ready conditions."""
    nodes = store if nodes is None else nodes
    osm = store.get(OSM, namespace, name)
    osm_status = osm.get("status", {})
    address = osm_status["addresses"][0]["address"]
    provider_id = f"openstack:///{osm_status['instanceID']}"
    store.update(OSM, namespace, name, status_set(**capo_fields.ready_fields(
        osm, True, seed._old_ready("Ready", "InstanceReady", "APIServerIngressReadyCondition"))),
        subresource="status")
    labels = {CONTROL_PLANE_NODE_LABEL: ""} if control_plane else {}
    labels[CLUSTER_NAME_LABEL] = cluster
    if nodes.find(NODE, None, name) is None:
        index = seed.free_pod_indexes(nodes.list(NODE)[0], 1)
        nodes.create(NODE, seed.node(name, seed.pod_cidr(index), address, labels, provider_id))

    def ready(status: dict) -> None:
        status.update(phase="Running", nodeRef={"name": name},
                      initialization={"bootstrapDataSecretCreated": True, "infrastructureProvisioned": True},
                      conditions=ready_now("Available", "Ready", "BootstrapConfigReady", "InfrastructureReady",
                                           "NodeReady"),
                      deprecated={"v1beta1": {"conditions": seed._old_ready(
                          "Ready", "BootstrapReady", "InfrastructureReady", "NodeHealthy")}})

    update_status(store, MACHINE, namespace, name, ready)


def emulated_server(nodes: Store, name: str) -> tuple[str, str]:
    """A made-up server id and a node address free among ``nodes`` for a Machine without a real server."""
    index = seed.free_pod_indexes(nodes.list(NODE)[0], 1)
    return seed._uuid("emulated", name, rfc3339(utc_now()), _random_suffix()), seed.node_address(index)


def mark_deleting(store: Store, machine: dict) -> None:
    """The Machine's phase ``Deleting`` (once)."""
    if machine.get("status", {}).get("phase") != "Deleting":
        meta = machine["metadata"]
        update_status(store, MACHINE, meta["namespace"], meta["name"], lambda s: s.update(phase="Deleting"))


def remove_annotation(store: Store, machine: dict, key: str) -> None:
    """Take annotation ``key`` off the Machine (one gone meanwhile is fine)."""
    meta = machine["metadata"]

    def change(obj: dict) -> dict:
        (obj["metadata"].get("annotations") or {}).pop(key, None)
        return obj

    ignore_missing(lambda: store.update(MACHINE, meta["namespace"], meta["name"], change))


def drain(nodes: Store, machine: dict) -> bool:
    """Cordon the Machine's Node in ``nodes`` (pods are not emulated: the drain is done then). True when it did."""
    name = node_name(machine)
    if not name or drained(nodes, machine):
        return False
    ignore_missing(lambda: nodes.update(NODE, None, name, spec_set(unschedulable=True)))
    return True


def remove_machine(store: Store, machine: dict, nodes: Store | None = None) -> None:
    """The last steps of a deletion, once the infrastructure is gone: the OpenStackMachine (CAPO takes its
    finalizer off), the KubeadmConfig and the Node (in ``nodes``, default ``store``) are deleted, and CAPI's
    finalizer leaves the Machine."""
    meta = machine["metadata"]
    namespace, name = meta["namespace"], meta["name"]
    nodes = store if nodes is None else nodes
    for where, kind, ns, obj in ((store, OSM, namespace, name), (store, CONFIG, namespace, name),
                                 (nodes, NODE, None, node_name(machine))):
        if obj:
            ignore_missing(lambda w=where, k=kind, n=ns, o=obj: _remove(w, k, n, o))
    ignore_missing(lambda: store.update(MACHINE, namespace, name, without_finalizer))


def delete(store: Store, kind, namespace: str | None, name: str) -> None:
    """Ask for the deletion (finalizers hold the object); gone already is fine."""
    ignore_missing(lambda: store.delete(kind, namespace, name))


def kcp_status(store: Store, kcp: dict, views: list[rollout.MachineView]) -> None:
    """KCP's replica counts in both contracts' places (no write when they are right already)."""
    counts = rollout.kcp_counts(views)

    def change(obj: dict) -> dict:
        status = obj.setdefault("status", {})
        status.update(counts)
        old = status.setdefault("deprecated", {}).setdefault("v1beta1", {})
        old.update(readyReplicas=counts["readyReplicas"], updatedReplicas=counts["upToDateReplicas"],
                   unavailableReplicas=max(0, counts["replicas"] - counts["readyReplicas"]))
        return obj

    ignore_missing(lambda: store.update(KCP, kcp["metadata"]["namespace"], kcp["metadata"]["name"], change,
                                        subresource="status"))


def replica_status(store: Store, kind, obj: dict, views: list[rollout.MachineView]) -> None:
    """A MachineSet's or MachineDeployment's replica counts in both contracts' places (no write when right)."""
    counts = rollout.kcp_counts(views)

    def change(current: dict) -> dict:
        status = current.setdefault("status", {})
        status.update(counts)
        old = status.setdefault("deprecated", {}).setdefault("v1beta1", {})
        old.update(readyReplicas=counts["readyReplicas"], availableReplicas=counts["availableReplicas"],
                   updatedReplicas=counts["upToDateReplicas"],
                   unavailableReplicas=max(0, counts["replicas"] - counts["readyReplicas"]))
        return current

    ignore_missing(lambda: store.update(kind, obj["metadata"]["namespace"], obj["metadata"]["name"], change,
                                        subresource="status"))


# -- helpers -------------------------------------------------------------------------------

def update_status(store: Store, kind, namespace: str, name: str, mutate: Callable[[dict], None]) -> None:
    def change(obj: dict) -> dict:
        mutate(obj.setdefault("status", {}))
        return obj

    ignore_missing(lambda: store.update(kind, namespace, name, change, subresource="status"))


def _remove(store: Store, kind, namespace, name) -> None:
    store.update(kind, namespace, name, without_finalizer)
    store.delete(kind, namespace, name)


def ignore_missing(action) -> None:
    """Run a write; an object gone meanwhile is fine."""
    try:
        action()
    except errors.ApiError as exc:
        if exc.code != 404:
            raise


def owner_ref(obj: dict) -> dict:
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": obj["metadata"]["name"],
            "uid": obj["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}


def ready_now(*types: str) -> list[dict]:
    now = rfc3339(utc_now())
    return [dict(c, lastTransitionTime=now) for c in seed._ready(*types)]


def status_set(**fields) -> Callable[[dict], dict]:
    """A change setting ``status`` fields (None removes one)."""
    def change(obj: dict) -> dict:
        status = obj.setdefault("status", {})
        for key, value in fields.items():
            if value is None:
                status.pop(key, None)
            else:
                status[key] = value
        return obj

    return change


def spec_set(**fields) -> Callable[[dict], dict]:
    def change(obj: dict) -> dict:
        obj.setdefault("spec", {}).update(fields)
        return obj

    return change


def without_finalizer(obj: dict) -> dict:
    obj["metadata"]["finalizers"] = []
    return obj


def _random_suffix() -> str:
    return "".join(random.choices("bcdfghjklmnpqrstvwxz2456789", k=5))
