"""ClusterClass clusters on the real control plane: the class, its templates and a Cluster with ``spec.topology``.

The class is CAPD's in-memory ClusterClass (``test/infrastructure/docker/templates/clusterclass-in-memory.yaml`` of
Cluster API's test module, the same in v1.12.5 and v1.13.7) cut to what minicloud's plain clusters use: a
DevClusterTemplate (in-memory backend), a KubeadmControlPlaneTemplate, a DevMachineTemplate for the control plane
that provisions in about a second, no workers and no MachineHealthCheck (a check would remediate Machines while the
collection's tests hold them). The real topology controller (the core manager's ``ClusterTopology`` feature gate,
which the plane enables) makes the DevCluster and the KubeadmControlPlane from them and owns the KCP's spec: a
rollout starts through the Cluster (``spec.topology.controlPlane.rollout.after`` from Cluster API v1.13, a
Kubernetes upgrade through ``spec.topology.version``). Pure functions over plain data.
"""

from __future__ import annotations

import re

INFRA = "infrastructure.cluster.x-k8s.io"
INFRA_VERSION = f"{INFRA}/v1beta2"
CONTROL_PLANE_VERSION = "controlplane.cluster.x-k8s.io/v1beta2"
CAPI_VERSION = "cluster.x-k8s.io/v1beta2"
# the topology controller's label on what it made (and the owner reference to the Cluster)
OWNED_LABEL = "topology.cluster.x-k8s.io/owned"
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
MAX_CLASS_NAME = 40  # the templates add up to 22 characters; object names stay under 63


def check_class_name(name: str) -> str:
    """A class name minicloud can make its templates from; ValueError naming the rule otherwise."""
    if not name or len(name) > MAX_CLASS_NAME or not _NAME.match(name):
        raise ValueError(f"class {name!r}: a ClusterClass name here is lower-case letters, digits and '-', "
                         f"starting and ending with a letter or digit, at most {MAX_CLASS_NAME} characters")
    return name


def template_names(name: str) -> dict[str, str]:
    return {"cluster": f"{name}-cluster", "control_plane": f"{name}-control-plane",
            "machine": f"{name}-control-plane-machine"}


def _meta(name: str, namespace: str) -> dict:
    return {"name": name, "namespace": namespace}


def class_objects(name: str, namespace: str, provisioning: dict, cri_socket: dict, cert_sans: list[str]) -> list[dict]:
    """The templates and the ClusterClass, in the order to apply them (the class's webhook wants its templates)."""
    names = template_names(name)
    backend = {"vm": {"provisioning": provisioning}, "node": {"provisioning": provisioning},
               "apiServer": {"provisioning": provisioning}, "etcd": {"provisioning": provisioning}}
    cluster_template = {"apiVersion": INFRA_VERSION, "kind": "DevClusterTemplate",
                        "metadata": _meta(names["cluster"], namespace),
                        "spec": {"template": {"spec": {"backend": {"inMemory": {}}}}}}
    kcp_template = {"apiVersion": CONTROL_PLANE_VERSION, "kind": "KubeadmControlPlaneTemplate",
                    "metadata": _meta(names["control_plane"], namespace),
                    "spec": {"template": {"spec": {"kubeadmConfigSpec": {
                        "clusterConfiguration": {"apiServer": {"certSANs": cert_sans}},
                        "initConfiguration": cri_socket, "joinConfiguration": cri_socket}}}}}
    machine_template = {"apiVersion": INFRA_VERSION, "kind": "DevMachineTemplate",
                        "metadata": _meta(names["machine"], namespace),
                        "spec": {"template": {"spec": {"backend": {"inMemory": backend}}}}}
    cluster_class = {"apiVersion": CAPI_VERSION, "kind": "ClusterClass", "metadata": _meta(name, namespace),
                     "spec": {"controlPlane": {
                         "templateRef": {"apiVersion": CONTROL_PLANE_VERSION, "kind": "KubeadmControlPlaneTemplate",
                                         "name": names["control_plane"]},
                         "machineInfrastructure": {"templateRef": {
                             "apiVersion": INFRA_VERSION, "kind": "DevMachineTemplate", "name": names["machine"]}}},
                         "infrastructure": {"templateRef": {"apiVersion": INFRA_VERSION, "kind": "DevClusterTemplate",
                                                            "name": names["cluster"]}}}}
    return [cluster_template, kcp_template, machine_template, cluster_class]


def topology_cluster(name: str, namespace: str, class_name: str, version: str, control_plane: int,
                     cluster_network: dict, annotations: dict) -> dict:
    """A Cluster managed through ``spec.topology`` (v1beta2: ``classRef``); no controlPlaneRef or
    infrastructureRef: the topology controller makes both objects and sets the references."""
    return {"apiVersion": CAPI_VERSION, "kind": "Cluster",
            "metadata": {"name": name, "namespace": namespace, "annotations": annotations},
            "spec": {"clusterNetwork": cluster_network,
                     "topology": {"classRef": {"name": class_name}, "version": version,
                                  "controlPlane": {"replicas": control_plane}}}}
