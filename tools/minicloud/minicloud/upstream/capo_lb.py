"""CAPO's load-balancer part for clusters on the real control plane (``--kubernetes upstream``).

The real Cluster API controllers run such clusters on CAPD's in-memory backend (DevCluster, DevMachine), which
has no OpenStack side. This controller adds what CAPO does there for the control plane, against the real API
server, with the OpenStack half of minicloud real:

- a Cluster annotated ``minicloud.test/openstack`` (the load balancer, pool, network and subnet
  :mod:`minicloud.upstream.clusters` created for it) has its control-plane Machines behind that load balancer;
- when such a Machine's DevMachine exists, this controller puts its finalizer on the DevMachine (the way an
  infrastructure provider holds its machine), boots a server named after the Machine (a real Nova server with a
  real port) and adds the member ``<lb>-6443-<machine>``, waiting for the load balancer only (CAPO before
  v0.14): a member the Octavia emulator loses stays PENDING_CREATE while the load balancer is ACTIVE;
- when the DevMachine is deleted (after CAPI's pre-drain hooks, drain, pre-terminate hooks: the infrastructure
  deletion), it removes the member, then the server, then its finalizer;
- while a KubeadmControlPlane rolls out, it samples the pool into the cluster's history (what
  ``python -m minicloud capi history`` reads), as the emulated controllers do.

The steps are the emulation's pure decisions (:func:`minicloud.kube.controllers.rollout.provision_next` and
:func:`~minicloud.kube.controllers.rollout.deletion_next`).
"""

from __future__ import annotations

import json
import time
import traceback
import urllib.error
from collections.abc import Callable
from pathlib import Path

from minicloud.kube.controllers import capo, history, rollout

ANNOTATION = "minicloud.test/openstack"
FINALIZER = "minicloud.test/capo-load-balancer"
CONTROL_PLANE_LABEL = "cluster.x-k8s.io/control-plane"
CLUSTER_LABEL = "cluster.x-k8s.io/cluster-name"
CAPI = "/apis/cluster.x-k8s.io/v1beta2"
CONTROL_PLANE = "/apis/controlplane.cluster.x-k8s.io/v1beta2"
INFRA = "/apis/infrastructure.cluster.x-k8s.io/v1beta2"
INTERVAL = 0.25  # between passes while a Machine is being provisioned or deleted, or a control plane rolls out
# between passes while every cluster is at rest (CAPO itself waits for a watch event; four LISTs every INTERVAL
# cost a cloud's API server, etcd and this process about a tenth of a core)
AT_REST_INTERVAL = 2.0


def _key(obj: dict) -> tuple[str, str]:
    return obj["metadata"].get("namespace", ""), obj["metadata"]["name"]


class CapoLoadBalancer:
    """One pass at a time (:meth:`tick`); ``request(method, path, body=None, content_type=...)`` is the API
    (:meth:`minicloud.upstream.control_plane.UpstreamControlPlane.request`), ``openstack()`` gives a
    :class:`minicloud.kube.controllers.capo.OpenStack`."""

    def __init__(self, request: Callable, openstack: Callable[[], capo.OpenStack], root: Path,
                 clock: Callable[[], float] = time.time):
        self.request = request
        self.openstack = openstack
        self.root = Path(root)
        self.clock = clock
        self.done: set[str] = set()  # uids of DevMachines whose server and member are in place

    def tick(self) -> bool:
        """One pass; True when it found work under way (a Machine being provisioned or deleted, a control plane
        rolling out), False when every cluster is at rest."""
        clusters = {_key(c): json.loads(c["metadata"]["annotations"][ANNOTATION])
                    for c in self._list(f"{CAPI}/clusters")
                    if ANNOTATION in (c["metadata"].get("annotations") or {})}
        if not clusters:
            return False
        busy = False
        machines = self._list(f"{CAPI}/machines?labelSelector={CONTROL_PLANE_LABEL}")
        infra = {_key(d): d for d in self._list(f"{INFRA}/devmachines")}
        for machine in machines:
            namespace = machine["metadata"]["namespace"]
            cluster = (namespace, machine["metadata"]["labels"].get(CLUSTER_LABEL, ""))
            dev = infra.pop((namespace, machine["spec"]["infrastructureRef"]["name"]), None)
            if cluster in clusters and dev is not None:
                busy |= self._reconcile(dev, machine["metadata"]["name"], cluster, clusters[cluster])
        for (namespace, _name), dev in infra.items():  # their Machine is gone already
            owner = dev["metadata"].get("labels", {}).get(CLUSTER_LABEL, "")
            if FINALIZER in (dev["metadata"].get("finalizers") or []) and (namespace, owner) in clusters:
                busy |= self._reconcile(dev, dev["metadata"]["name"], (namespace, owner),
                                        clusters[(namespace, owner)])
        return self._sample(clusters, machines) or busy

    def _reconcile(self, dev: dict, machine: str, cluster: tuple[str, str], lb: dict) -> bool:
        """A step for the DevMachine; False when there was none to take."""
        if dev["metadata"].get("deletionTimestamp"):
            if FINALIZER not in (dev["metadata"].get("finalizers") or []):
                return False
            self._delete(dev, machine, cluster, lb)
        elif dev["metadata"]["uid"] in self.done:
            return False
        else:
            self._provision(dev, machine, cluster, lb)
        return True

    def _provision(self, dev: dict, machine: str, cluster: tuple[str, str], lb: dict) -> None:
        finalizers = dev["metadata"].get("finalizers") or []
        if FINALIZER not in finalizers and not self._set_finalizers(dev, [*finalizers, FINALIZER]):
            return
        conn = self.openstack()
        name = capo.member_name(capo.lb_name(*cluster), machine)
        server = conn.conn.compute.find_server(machine, ignore_missing=True)
        member = conn.member(lb["pool_id"], name)
        step = rollout.provision_next(rollout.WAIT_LB, server is not None, member, conn.lb_status(lb["lb_id"]))
        if step.kind == "create-server":
            conn.create_server(machine, lb["network"])
        elif step.kind == "create-member":
            address = next(iter(conn.conn.compute.find_server(machine).addresses.values()))[0]["addr"]
            conn.create_member(lb["pool_id"], name, address, lb["subnet_id"])
        elif step.kind == "ready":
            self.done.add(dev["metadata"]["uid"])

    def _delete(self, dev: dict, machine: str, cluster: tuple[str, str], lb: dict) -> None:
        conn = self.openstack()
        member = conn.member(lb["pool_id"], capo.member_name(capo.lb_name(*cluster), machine))
        server = conn.conn.compute.find_server(machine, ignore_missing=True)
        view = rollout.MachineView(machine, order=(), up_to_date=False, ready=False, deleting=True)
        step = rollout.deletion_next(view, member is not None, member and member.provisioning_status,
                                     server is not None)
        if step.kind == "delete-member":
            conn.delete_member(lb["pool_id"], member.id)
        elif step.kind == "delete-server":
            conn.delete_server(server.id)
        elif step.kind == "remove-finalizer":
            self._set_finalizers(dev, [f for f in dev["metadata"]["finalizers"] if f != FINALIZER])
            self.done.discard(dev["metadata"]["uid"])

    def _set_finalizers(self, obj: dict, finalizers: list[str]) -> bool:
        """A merge patch conditional on the object's resourceVersion: False when someone wrote it meanwhile
        (409; the next pass reads it again)."""
        namespace, name = _key(obj)
        body = {"metadata": {"finalizers": finalizers, "resourceVersion": obj["metadata"]["resourceVersion"]}}
        try:
            self.request("PATCH", f"{INFRA}/namespaces/{namespace}/devmachines/{name}", body,
                         content_type="application/merge-patch+json")
        except urllib.error.HTTPError as exc:
            if exc.code in (404, 409):
                return False
            raise
        return True

    def _sample(self, clusters: dict, machines: list[dict]) -> bool:
        """One history record per cluster whose control plane is rolling out (a Machine not up to date, being
        deleted, or other than as many Machines as replicas); False when none is."""
        rolling = False
        kcps = {_key(k): k for k in self._list(f"{CONTROL_PLANE}/kubeadmcontrolplanes")}
        for (namespace, name), lb in clusters.items():
            mine = [m for m in machines if m["metadata"]["namespace"] == namespace
                    and m["metadata"]["labels"].get(CLUSTER_LABEL) == name]
            kcp = next((k for (ns, _), k in kcps.items() if ns == namespace
                        and k["metadata"].get("labels", {}).get(CLUSTER_LABEL) == name), None)
            if kcp is None:
                continue
            old = [m["metadata"]["name"] for m in mine if not _up_to_date(m)]
            released = [m["metadata"]["name"] for m in mine if m["metadata"].get("deletionTimestamp")]
            if not old and not released and len(mine) == kcp["spec"].get("replicas", 1):
                continue
            rolling = True
            conn = self.openstack()
            history.append(self.root, namespace, name, history.record(
                self.clock(), kcp["metadata"]["generation"], rollout.WAIT_LB, "RollingOut",
                conn.lb_status(lb["lb_id"]), conn.members(lb["pool_id"]), old,
                [m["metadata"]["name"] for m in mine if _up_to_date(m)], released))
        return rolling

    def _list(self, path: str) -> list[dict]:
        return self.request("GET", path).get("items", [])


def _up_to_date(machine: dict) -> bool:
    conditions = machine.get("status", {}).get("conditions") or []
    return any(c.get("type") == "UpToDate" and c.get("status") == "True" for c in conditions)


def run(request: Callable, openstack: Callable[[], capo.OpenStack], root: Path) -> None:
    """The controller's process: a pass every INTERVAL seconds while there is work, every AT_REST_INTERVAL while
    every cluster is at rest, for ever; a failed pass is logged and retried."""
    controller = CapoLoadBalancer(request, openstack, root)
    while True:
        busy = True
        try:
            busy = controller.tick()
        except Exception:  # noqa: BLE001  (a controller keeps going, like CAPO's)
            traceback.print_exc()
        time.sleep(INTERVAL if busy else AT_REST_INTERVAL)
