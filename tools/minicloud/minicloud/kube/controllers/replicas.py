"""KCP, the MachineSet controller and the Machine controller for Machines without a real server.

Runs in the controller loop's pass (on every store change, never at rest) and keeps reconciling, as
the real controllers do:

- KCP (clusters without OpenStack resources) keeps ``spec.replicas`` control-plane Machines, one at
  a time, and rolls on a passed rollout time (:func:`.rollout.kcp_next`); the control planes of
  clusters with OpenStack resources are :mod:`.kcp`'s.
- A MachineSet keeps ``spec.replicas`` Machines (:func:`.rollout.machineset_next`); its status and its
  MachineDeployment's follow. Workers never have real servers (seeding makes none), on any cluster.
- A new Machine is provisioned at once by the emulated infrastructure (made-up server id, a free
  address, its Node); a deleted one goes through pre-drain hooks, drain, pre-terminate hooks, then
  its OpenStackMachine, KubeadmConfig and Node go and CAPI's finalizer comes off.

Nothing is done for a cluster that is paused (``spec.paused`` or the paused annotation), being
deleted or gone. Every step leaves an Event (:mod:`.reasons`); a pass that finds nothing to do
writes nothing, so the controller loop goes quiet again after its own writes.
"""

from __future__ import annotations

from minicloud.kube import seed
from minicloud.kube.controllers import events, machines, paused, reasons, rollout
from minicloud.kube.controllers.machines import (
    CLUSTER,
    KCP,
    MACHINE,
    MACHINE_DEPLOYMENT,
    MACHINE_SET,
    OSC,
    OSM,
    ROLLOUT_ANNOTATION,
    machine_view,
    rollout_number,
)
from minicloud.kube.store import Store, utc_now


class ReplicaController:
    def __init__(self, store: Store, workloads=None):
        self.store = store
        self.workloads = workloads  # the workload APIs, where the Machines' Nodes live (None: all here)

    def tick(self) -> None:
        """One pass over every live, unpaused cluster."""
        by_cluster: dict[tuple[str, str], list[dict]] = {}
        for machine in self.store.list(MACHINE)[0]:
            key = (machine["metadata"]["namespace"], paused.cluster_name(machine))
            by_cluster.setdefault(key, []).append(machine)
        for cluster in self.store.list(CLUSTER)[0]:
            if machines.is_deleting(cluster) or paused.is_paused(cluster, cluster):
                continue
            meta = cluster["metadata"]
            osc = self.store.find(OSC, meta["namespace"], meta["name"])
            self._cluster(cluster, osc, by_cluster.get((meta["namespace"], meta["name"]), []))

    # -- one cluster ---------------------------------------------------------------------

    def _cluster(self, cluster: dict, osc: dict | None, found: list[dict]) -> None:
        namespace, name = cluster["metadata"]["namespace"], cluster["metadata"]["name"]
        openstack = machines.has_openstack(osc)
        control_plane = [machine_view(m, 0) for m in found if machines.is_control_plane(m)]
        for machine in found:
            if (openstack and machines.is_control_plane(machine)) or paused.has_paused_annotation(machine):
                continue  # a real server's Machine (the rollout controller's), or paused by itself
            if machines.is_deleting(machine):
                self._delete_step(machine, control_plane)
            elif not machines.node_name(machine):
                self._provision(name, machine)
        selector = f"{paused.CLUSTER_NAME_LABEL}={name}"
        if not openstack:
            for kcp in self.store.list(KCP, namespace, label_selector=selector)[0]:
                if not paused.has_paused_annotation(kcp):
                    self._kcp(name, kcp, [m for m in found if machines.is_control_plane(m)])
        for machine_set in self.store.list(MACHINE_SET, namespace, label_selector=selector)[0]:
            if not paused.has_paused_annotation(machine_set):
                self._machine_set(name, machine_set, found)
        for deployment in self.store.list(MACHINE_DEPLOYMENT, namespace, label_selector=selector)[0]:
            owned = [machine_view(m, 0) for m in found
                     if _label(m, seed.DEPLOYMENT_LABEL) == deployment["metadata"]["name"]]
            if len(owned) >= int(deployment.get("spec", {}).get("replicas", 1)):  # not while seeding writes them
                machines.replica_status(self.store, MACHINE_DEPLOYMENT, deployment, owned)

    # -- the Machine controller, with the emulated infrastructure -------------------------------

    def _provision(self, cluster: str, machine: dict) -> None:
        """A Machine without a Node: its (emulated) server boots at once, the Node registers."""
        meta = machine["metadata"]
        osm = self.store.find(OSM, meta["namespace"], meta["name"])
        if osm is None or machines.is_deleting(osm):
            return  # nothing to provision it with (yet)
        if not osm.get("status", {}).get("instanceID"):
            server_id, address = machines.emulated_server(self._nodes(machine), meta["name"])
            machines.server_up(self.store, meta["namespace"], meta["name"], server_id, address)
        machines.machine_ready(self.store, meta["namespace"], cluster, meta["name"],
                               control_plane=machines.is_control_plane(machine), nodes=self._nodes(machine))

    def _delete_step(self, machine: dict, control_plane: list[rollout.MachineView]) -> None:
        """Hooks hold it (KCP takes its own off last: ``control_plane`` are the cluster's control-plane Machines);
        the Node is drained; then everything of it goes and the finalizer comes off."""
        machines.mark_deleting(self.store, machine)
        view = machine_view(machine, 0)
        action = rollout.deletion_next(view, False, None, False, machines.drained(self._nodes(machine), machine))
        if action.kind == "wait" and rollout.kcp_cleanup_due(view, control_plane):
            machines.remove_annotation(self.store, machine, rollout.KCP_CLEANUP_HOOK)
        elif action.kind == "drain":
            if machines.drain(self._nodes(machine), machine):
                self._event(machine, reasons.SUCCESSFUL_DRAIN_NODE,
                            reasons.drained_node(machines.node_name(machine)), reasons.MACHINE_CONTROLLER)
        elif action.kind == "remove-finalizer":
            meta = machine["metadata"]
            machines.delete(self.store, OSM, meta["namespace"], meta["name"])
            machines.remove_machine(self.store, machine, self._nodes(machine))

    # -- KCP and MachineSets ---------------------------------------------------------------

    def _kcp(self, cluster: str, kcp: dict, control_plane: list[dict]) -> None:
        after = rollout.rollout_after(kcp.get("spec"))
        after = after if rollout.rollout_after_due(after, utc_now()) else None
        views = [machine_view(m, rollout_number(kcp), after) for m in control_plane]
        replicas = int(kcp.get("spec", {}).get("replicas", 1))
        adopted = not machines.is_seeding(kcp)
        action = rollout.kcp_next(replicas, views, adopted)
        if action.kind == "create":
            name = machines.new_name(self.store, kcp["metadata"]["namespace"], kcp["metadata"]["name"])
            self._create(cluster, kcp, name, {seed.CONTROL_PLANE_LABEL: ""}, kcp.get("spec", {}),
                         (kcp.get("spec", {}).get("machineTemplate", {}).get("spec") or {}).get("infrastructureRef"),
                         reasons.KCP_CONTROLLER, {ROLLOUT_ANNOTATION: str(rollout_number(kcp))})
        elif action.kind == "delete":
            self._delete(kcp, [action.machine], reasons.KCP_CONTROLLER)
        if adopted:  # seeding writes the status of what it is still creating
            machines.kcp_status(self.store, kcp, views)

    def _machine_set(self, cluster: str, machine_set: dict, found: list[dict]) -> None:
        name = machine_set["metadata"]["name"]
        owned = [m for m in found if _label(m, seed.SET_LABEL) == name and not machines.is_control_plane(m)]
        views = [machine_view(m, 0) for m in owned]
        replicas = int(machine_set.get("spec", {}).get("replicas", 1))
        adopted = not machines.is_seeding(machine_set)
        action = rollout.machineset_next(replicas, views, adopted)
        template = machine_set.get("spec", {}).get("template", {})
        if action.kind == "create":
            labels = {k: v for k, v in (template.get("metadata", {}).get("labels") or {}).items()
                      if k != paused.CLUSTER_NAME_LABEL}
            for _ in action.names:
                self._create(cluster, machine_set, machines.new_name(self.store, machine_set["metadata"]["namespace"],
                                                                     name),
                             labels, template.get("spec", {}), (template.get("spec") or {}).get("infrastructureRef"),
                             reasons.MACHINESET_CONTROLLER)
        elif action.kind == "delete":
            self._delete(machine_set, list(action.names), reasons.MACHINESET_CONTROLLER)
        if adopted:
            machines.replica_status(self.store, MACHINE_SET, machine_set, views)

    def _create(self, cluster: str, owner: dict, name: str, labels: dict, spec: dict, template: dict | None,
                component: str, annotations: dict | None = None) -> None:
        machines.create_machine(self.store, owner["metadata"]["namespace"], cluster, name, labels, owner,
                                spec.get("version", seed.KUBERNETES_VERSION), annotations=annotations,
                                template=(template or {}).get("name", ""))
        self._event(owner, reasons.SUCCESSFUL_CREATE, reasons.created_machine(name), component)

    def _delete(self, owner: dict, names: list[str], component: str) -> None:
        for name in names:
            machines.delete(self.store, MACHINE, owner["metadata"]["namespace"], name)
            self._event(owner, reasons.SUCCESSFUL_DELETE, reasons.deleted_machine(name), component)

    def _nodes(self, machine: dict) -> Store:
        return machines.node_store(self.store, self.workloads, machine)

    def _event(self, regarding: dict, reason: str, message: str, component: str) -> None:
        events.record(self.store, regarding, reason, message, component)


def _label(obj: dict, key: str) -> str | None:
    return (obj["metadata"].get("labels") or {}).get(key)
