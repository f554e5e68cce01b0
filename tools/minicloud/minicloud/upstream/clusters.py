"""Clusters on the real control plane: the Cluster API objects (written once; the real controllers do the rest)
and the OpenStack side CAPO would have made for them.

A cluster here is a Cluster (v1beta2) whose infrastructure is a DevCluster with CAPD's in-memory backend (a
fake workload API server and etcd, enough for the real KubeadmControlPlane to scale and roll out), a
KubeadmControlPlane of ``control_plane`` replicas over a DevMachineTemplate that provisions in about a
second, and the annotation ``minicloud.test/openstack`` naming the API load balancer (listener 6443, pool,
optional TCP health monitor, no member yet), network and subnet that minicloud created as CAPO does: the
control-plane Machines get their servers and members from :mod:`minicloud.upstream.capo_lb` as KCP makes them.

With ``class_name``, the cluster is a ClusterClass cluster instead (:mod:`minicloud.upstream.classes`): the class and
its templates are applied in the cluster's namespace (kept when the cluster is deleted: other clusters may use
them), the Cluster carries ``spec.topology`` and the same annotation, and the real topology controller makes the
DevCluster and the KubeadmControlPlane (named ``<cluster>-<random>``, found through ``spec.controlPlaneRef``).
"""

from __future__ import annotations

import json
import urllib.error

from minicloud.kube.controllers import capo
from minicloud.seeding import cluster_network
from minicloud.seeding import openstack as seed
from minicloud.upstream import capo_lb, classes

KUBERNETES_VERSION = "v1.34.0"
POD_NETWORK = "10.244.0.0/16"
SERVICE_NETWORK = "10.96.0.0/12"
PROVISIONING = {"startupDuration": "1s", "startupJitter": "0.2"}
CRI_SOCKET = {"nodeRegistration": {"criSocket": "unix:///var/run/containerd/containerd.sock"}}


def kcp_name(cluster: str) -> str:
    return f"{cluster}-control-plane"


def _meta(name: str, namespace: str, **extra) -> dict:
    return {"name": name, "namespace": namespace, **extra}


def cluster_objects(name: str, namespace: str, control_plane: int, openstack: dict,
                    version: str = KUBERNETES_VERSION) -> list[dict]:
    """The objects to apply, in order; ``openstack``: ``lb_id``, ``pool_id``, ``network``, ``subnet_id``."""
    labels = {capo_lb.CLUSTER_LABEL: name}
    template = {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DevMachineTemplate",
                "metadata": _meta(kcp_name(name), namespace),
                "spec": {"template": {"spec": {"backend": {"inMemory": {
                    "vm": {"provisioning": PROVISIONING}, "node": {"provisioning": PROVISIONING},
                    "apiServer": {"provisioning": PROVISIONING}, "etcd": {"provisioning": PROVISIONING}}}}}}}
    # CAPD v1.12.5's in-memory backend writes into the DevCluster's annotations without making the map: a
    # DevCluster with none makes it panic (objects from a ClusterClass always have some), so it gets one
    infra = {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DevCluster",
             "metadata": _meta(name, namespace, labels=labels, annotations={"minicloud.test/backend": "in-memory"}),
             "spec": {"backend": {"inMemory": {}}}}
    kcp = {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlane",
           "metadata": _meta(kcp_name(name), namespace, labels=labels),
           "spec": {"replicas": control_plane, "version": version,
                    "machineTemplate": {"spec": {"infrastructureRef": {
                        "apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DevMachineTemplate",
                        "name": kcp_name(name)}}},
                    "kubeadmConfigSpec": {
                        "clusterConfiguration": {"apiServer": {"certSANs": ["localhost", "127.0.0.1"]}},
                        "initConfiguration": CRI_SOCKET, "joinConfiguration": CRI_SOCKET}}}
    cluster = {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
               "metadata": _meta(name, namespace, annotations={capo_lb.ANNOTATION: json.dumps(openstack)}),
               "spec": {"clusterNetwork": {"pods": {"cidrBlocks": [POD_NETWORK]},
                                           "services": {"cidrBlocks": [SERVICE_NETWORK]}},
                        "controlPlaneRef": {"apiGroup": "controlplane.cluster.x-k8s.io",
                                            "kind": "KubeadmControlPlane", "name": kcp_name(name)},
                        "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DevCluster",
                                              "name": name}}}
    namespace_object = [] if namespace == "default" else [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}]
    return [*namespace_object, template, infra, kcp, cluster]


def class_cluster_objects(name: str, namespace: str, control_plane: int, openstack: dict, class_name: str,
                          version: str = KUBERNETES_VERSION) -> list[dict]:
    """A ClusterClass cluster's objects, in order: its namespace, the class and its templates, the Cluster."""
    namespace_object = [] if namespace == "default" else [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}]
    cluster = classes.topology_cluster(
        name, namespace, class_name, version, control_plane,
        {"pods": {"cidrBlocks": [POD_NETWORK]}, "services": {"cidrBlocks": [SERVICE_NETWORK]}},
        {capo_lb.ANNOTATION: json.dumps(openstack)})
    sans = ["localhost", "127.0.0.1"]
    return [*namespace_object, *classes.class_objects(class_name, namespace, PROVISIONING, CRI_SOCKET, sans), cluster]


def _apply(plane, obj: dict) -> dict:
    """Server-side apply, as the plane's ``apply`` does, with the ClusterClass's plural (``clusterclasses``)."""
    if obj["kind"] != "ClusterClass":
        return plane.apply(obj)
    meta = obj["metadata"]
    path = f"{capo_lb.CAPI}/namespaces/{meta['namespace']}/clusterclasses/{meta['name']}?fieldManager=minicloud&force=true"
    return plane.request("PATCH", path, obj, content_type="application/apply-patch+yaml")


def _control_plane_name(plane, name: str, namespace: str, class_name: str | None) -> str | None:
    """The KubeadmControlPlane's name: fixed for a plain cluster, the topology controller's for a class cluster
    (None until it has set ``spec.controlPlaneRef``)."""
    if class_name is None:
        return kcp_name(name)
    cluster = plane.request("GET", f"{capo_lb.CAPI}/namespaces/{namespace}/clusters/{name}")
    return ((cluster.get("spec") or {}).get("controlPlaneRef") or {}).get("name")


def create(plane, conn, write_instances, name: str, namespace: str = "default", control_plane: int = 1,
           monitor: bool = False, timeout: float = 300.0, provider: str | None = None,
           class_name: str | None = None) -> dict:
    """Create the OpenStack side (network, subnet, router, security groups, the API load balancer without
    members) and the Cluster API objects (with ``class_name``: a ClusterClass of that name and a Cluster with
    ``spec.topology``), then wait until KCP has ``control_plane`` ready replicas and the pool as many ACTIVE
    members. ``plane``: an :class:`~minicloud.upstream.control_plane.UpstreamControlPlane`."""
    if class_name is not None:
        classes.check_class_name(class_name)
    external = cluster_network.external_network(conn)
    spec = {"namespace": namespace, "cluster": name, "machines": [], "workers": []}
    [resources] = capo.seed_networks(conn, [spec], write_instances, external)
    key = f"{namespace}/{name}"
    steps = {key: capo.load_balancer_steps(conn, namespace, name, resources, [], monitor, provider)}
    resources.update(capo.run_load_balancer_steps(conn, steps, timeout)[key])
    openstack = {"lb_id": resources["loadbalancer"]["id"], "pool_id": resources["pool_id"],
                 "network": resources["network"]["name"], "subnet_id": resources["network"]["subnets"][0]["id"]}
    objects = (cluster_objects(name, namespace, control_plane, openstack) if class_name is None
               else class_cluster_objects(name, namespace, control_plane, openstack, class_name))
    for obj in objects:
        _apply(plane, obj)
    found = {}

    def settled() -> bool:
        found["kcp"] = found.get("kcp") or _control_plane_name(plane, name, namespace, class_name)
        if not found["kcp"]:
            return False
        path = f"{capo_lb.CONTROL_PLANE}/namespaces/{namespace}/kubeadmcontrolplanes/{found['kcp']}"
        try:
            status = plane.request("GET", path).get("status", {})
        except urllib.error.HTTPError as exc:
            if exc.code == 404:  # the topology controller has named it, not made it yet
                return False
            raise
        members = list(conn.load_balancer.members(openstack["pool_id"]))
        found["status"], found["members"] = status, members
        active = [m for m in members if m.provisioning_status == "ACTIVE"]
        return status.get("readyReplicas") == control_plane and len(active) == control_plane

    seed.wait_until(f"cluster {key}: {control_plane} ready control-plane Machine(s) with ACTIVE members", settled,
                    timeout, interval=0.5, last_seen=lambda: _progress(plane, namespace, name, found))
    result = {"name": name, "namespace": namespace, "kcp": found["kcp"], "openstack": resources,
              "annotation": openstack}
    if class_name is not None:
        result["class"] = class_name
        result["version"] = KUBERNETES_VERSION
    return result


def _progress(plane, namespace: str, name: str, found: dict) -> str:
    """What a cluster's creation has come to (for the error of a wait that timed out): the control plane's
    replica counts and its conditions that are not True, each Machine's phase and whether it has a Node, and the
    pool's members with their statuses."""
    if not found.get("kcp"):
        return "no KubeadmControlPlane named on the Cluster yet"
    status = found.get("status") or {}
    counts = ", ".join(f"{k} {status[k]}" for k in ("replicas", "readyReplicas", "upToDateReplicas",
                                                       "availableReplicas") if k in status)
    pending = "; ".join(f"{c.get('type')}={c.get('status')} ({c.get('reason')}: {(c.get('message') or '')[:200]})"
                        for c in status.get("conditions") or [] if c.get("status") != "True")
    try:
        machines = plane.request("GET", f"{capo_lb.CAPI}/namespaces/{namespace}/machines?labelSelector="
                                        f"cluster.x-k8s.io/cluster-name%3D{name}").get("items", [])
        described = ", ".join(f"{m['metadata']['name']} {(m.get('status') or {}).get('phase')}"
                              f"{'' if (m.get('status') or {}).get('nodeRef') else ' (no Node)'}" for m in machines)
    except (OSError, urllib.error.URLError) as exc:
        described = f"unread ({exc})"
    members = ", ".join(f"{m.address} {m.provisioning_status}/{m.operating_status}"
                        for m in found.get("members") or [])
    return (f"KubeadmControlPlane {found['kcp']}: {counts or 'no status'}; not True: {pending or 'none'}; "
            f"Machines: {described or 'none'}; pool members: {members or 'none'}")


def delete(plane, conn, admin, write_instances, name: str, namespace: str = "default",
           timeout: float = 180.0) -> list[str]:
    """Delete the Cluster (the real controllers delete its Machines; the CAPO controller their members and
    servers), wait until it is gone, then remove the rest of the OpenStack side."""
    path = f"{capo_lb.CAPI}/namespaces/{namespace}/clusters/{name}"
    try:
        plane.request("DELETE", path)
    except urllib.error.HTTPError as exc:
        if exc.code != 404:
            raise

    def gone() -> bool:
        try:
            plane.request("GET", path)
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return True
            raise
        return False

    seed.wait_until(f"cluster {namespace}/{name} to be deleted", gone, timeout, interval=0.5)
    return [f"Cluster/{name}", *capo.delete_openstack(conn, admin, namespace, name, write_instances)]
