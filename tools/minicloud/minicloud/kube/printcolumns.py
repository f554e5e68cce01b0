"""The printer columns of the custom resources, per served version, after CAPI v1.11 and CAPO v0.14.

(name, type, JSONPath, priority, description). Priority 0 columns are what ``kubectl get`` shows,
priority > 0 ones only with ``-o wide``. Every table starts with NAME (added by :mod:`.tables`).
"""

from __future__ import annotations

from dataclasses import dataclass

from minicloud.kube.resources import BOOTSTRAP_GROUP, CAPI_GROUP, CONTROLPLANE_GROUP, INFRA_GROUP


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # string, integer, boolean, number, date
    path: str
    priority: int = 0
    description: str = ""


def _condition(name: str, condition: str, description: str, priority: int = 0) -> Column:
    return Column(name, "string", f'.status.conditions[?(@.type=="{condition}")].status', priority, description)


AGE = Column("Age", "date", ".metadata.creationTimestamp", 0, "Time since the object was created.")
CLUSTER_LABEL = Column("Cluster", "string", r".metadata.labels['cluster\.x-k8s\.io/cluster-name']", 0,
                       "The Cluster the object belongs to.")
CLUSTER_NAME = Column("Cluster", "string", ".spec.clusterName", 0, "The Cluster the object belongs to.")
PAUSED = _condition("Paused", "Paused", "Whether reconciliation is paused.", 10)
TEMPLATE_VERSION = Column("Version", "string", ".spec.template.spec.version", 0,
                          "Kubernetes version of the machines.")


def _counts(desired: str, prefix: str = "", current_priority: int = 0) -> list[Column]:
    status = f".status.{prefix}"
    return [Column(f"{_short(prefix)}Desired", "integer", desired, 0, "Machines wanted."),
            Column(f"{_short(prefix)}Current", "integer", f"{status}replicas", current_priority,
                   "Machines that exist."),
            Column(f"{_short(prefix)}Ready", "integer", f"{status}readyReplicas", current_priority,
                   "Machines with Ready true."),
            Column(f"{_short(prefix)}Available", "integer", f"{status}availableReplicas", 0,
                   "Machines with Available true."),
            Column(f"{_short(prefix)}Up-to-date", "integer", f"{status}upToDateReplicas", 0,
                   "Machines with UpToDate true.")]


def _short(prefix: str) -> str:
    return {"controlPlane.": "CP ", "workers.": "W "}.get(prefix, "")


V1BETA2: dict[tuple[str, str], list[Column]] = {
    (CAPI_GROUP, "Cluster"): [
        Column("ClusterClass", "string", ".spec.topology.classRef.name", 0, "The ClusterClass, if any."),
        _condition("Available", "Available", "Whether the cluster passes its availability checks."),
        *_counts(".status.controlPlane.desiredReplicas", "controlPlane.", 10),
        *_counts(".status.workers.desiredReplicas", "workers.", 10),
        PAUSED,
        Column("Phase", "string", ".status.phase", 0, "Pending, Provisioning, Provisioned, Deleting, Failed."),
        AGE,
        Column("Version", "string", ".spec.topology.version", 0, "Kubernetes version of a managed topology."),
    ],
    (CAPI_GROUP, "Machine"): [
        CLUSTER_NAME,
        Column("Node Name", "string", ".status.nodeRef.name", 0, "The Node of the machine."),
        Column("Provider ID", "string", ".spec.providerID", 10, "The machine's id in the infrastructure."),
        _condition("Ready", "Ready", "Whether the machine passes its readiness checks."),
        _condition("Available", "Available", "Whether the machine has been Ready long enough."),
        _condition("Up-to-date", "UpToDate", "Whether the machine matches its owner's spec."),
        Column("Internal-IP", "string", '.status.addresses[?(@.type=="InternalIP")].address', 10, "Internal IP."),
        Column("External-IP", "string", '.status.addresses[?(@.type=="ExternalIP")].address', 10, "External IP."),
        Column("OS-Image", "string", ".status.nodeInfo.osImage", 10, "OS image of the Node."),
        PAUSED,
        Column("Phase", "string", ".status.phase", 0, "Pending, Provisioning, Running, Deleting, Failed..."),
        AGE,
        Column("Version", "string", ".spec.version", 0, "Kubernetes version of the machine."),
    ],
    (CAPI_GROUP, "MachineSet"): [
        CLUSTER_NAME, *_counts(".spec.replicas"), PAUSED, AGE, TEMPLATE_VERSION,
    ],
    (CAPI_GROUP, "MachineDeployment"): [
        CLUSTER_NAME, _condition("Available", "Available", "Whether enough machines are available."),
        *_counts(".spec.replicas"), PAUSED,
        Column("Phase", "string", ".status.phase", 0, "ScalingUp, ScalingDown, Running, Failed or Unknown."),
        AGE, TEMPLATE_VERSION,
    ],
    (CONTROLPLANE_GROUP, "KubeadmControlPlane"): [
        CLUSTER_LABEL, _condition("Available", "Available", "Whether the control plane is available."),
        *_counts(".spec.replicas"), PAUSED,
        Column("Initialized", "boolean", ".status.initialization.controlPlaneInitialized", 0,
               "Whether the control plane accepts requests."),
        AGE, Column("Version", "string", ".spec.version", 0, "Kubernetes version of the control plane."),
    ],
    (BOOTSTRAP_GROUP, "KubeadmConfig"): [
        CLUSTER_LABEL, PAUSED,
        Column("Data secret created", "string", ".status.initialization.dataSecretCreated", 0,
               "Whether the bootstrap data Secret exists."),
        AGE,
    ],
}

V1BETA1: dict[tuple[str, str], list[Column]] = {
    (CAPI_GROUP, "Cluster"): [
        Column("ClusterClass", "string", ".spec.topology.class", 0, "The ClusterClass, if any."),
        Column("Phase", "string", ".status.phase", 0, "Pending, Provisioning, Provisioned, Deleting, Failed."),
        AGE, Column("Version", "string", ".spec.topology.version", 0, "Kubernetes version of a managed topology."),
    ],
    (CAPI_GROUP, "Machine"): [
        CLUSTER_NAME, Column("NodeName", "string", ".status.nodeRef.name", 0, "The Node of the machine."),
        Column("ProviderID", "string", ".spec.providerID", 0, "The machine's id in the infrastructure."),
        Column("Phase", "string", ".status.phase", 0, "Pending, Provisioning, Running, Deleting, Failed..."),
        AGE, Column("Version", "string", ".spec.version", 0, "Kubernetes version of the machine."),
    ],
    (CAPI_GROUP, "MachineSet"): [
        CLUSTER_NAME, Column("Desired", "integer", ".spec.replicas", 10, "Machines wanted."),
        Column("Replicas", "integer", ".status.replicas", 0, "Machines that exist."),
        Column("Ready", "integer", ".status.readyReplicas", 0, "Ready machines."),
        Column("Available", "integer", ".status.availableReplicas", 0, "Available machines."),
        AGE, TEMPLATE_VERSION,
    ],
    (CAPI_GROUP, "MachineDeployment"): [
        CLUSTER_NAME, Column("Desired", "integer", ".spec.replicas", 10, "Machines wanted."),
        Column("Replicas", "integer", ".status.replicas", 0, "Machines that exist."),
        Column("Ready", "integer", ".status.readyReplicas", 0, "Ready machines."),
        Column("Updated", "integer", ".status.updatedReplicas", 0, "Machines matching the template."),
        Column("Unavailable", "integer", ".status.unavailableReplicas", 0, "Unavailable machines."),
        Column("Phase", "string", ".status.phase", 0, "ScalingUp, ScalingDown, Running, Failed or Unknown."),
        AGE, TEMPLATE_VERSION,
    ],
    (CONTROLPLANE_GROUP, "KubeadmControlPlane"): [
        CLUSTER_LABEL,
        Column("Initialized", "boolean", ".status.initialized", 0, "Whether the control plane was initialized."),
        Column("API Server Available", "boolean", ".status.ready", 0, "Whether the API server answers."),
        Column("Desired", "integer", ".spec.replicas", 10, "Machines wanted."),
        Column("Replicas", "integer", ".status.replicas", 0, "Machines that exist."),
        Column("Ready", "integer", ".status.readyReplicas", 0, "Ready machines."),
        Column("Updated", "integer", ".status.updatedReplicas", 0, "Machines matching the spec."),
        Column("Unavailable", "integer", ".status.unavailableReplicas", 0, "Unavailable machines."),
        AGE, Column("Version", "string", ".spec.version", 0, "Kubernetes version of the control plane."),
    ],
    (BOOTSTRAP_GROUP, "KubeadmConfig"): [CLUSTER_LABEL, AGE],
    (INFRA_GROUP, "OpenStackCluster"): [
        Column("Cluster", "string", r".metadata.labels.cluster\.x-k8s\.io/cluster-name", 0,
               "The Cluster the object belongs to."),
        Column("Ready", "string", ".status.ready", 0, "Whether the infrastructure is ready."),
        Column("Network", "string", ".status.network.id", 0, "The cluster's network."),
        Column("Endpoint", "string", ".spec.controlPlaneEndpoint.host", 1, "The API endpoint."),
        Column("Bastion IP", "string", ".status.bastion.floatingIP", 0, "The bastion's address."),
        AGE,
    ],
    (INFRA_GROUP, "OpenStackMachine"): [
        Column("Cluster", "string", r".metadata.labels.cluster\.x-k8s\.io/cluster-name", 0,
               "The Cluster the object belongs to."),
        Column("Ready", "string", ".status.ready", 0, "Whether the server is ready."),
        Column("ProviderID", "string", ".spec.providerID", 0, "The server's id."),
        Column("Machine", "string", '.metadata.ownerReferences[?(@.kind=="Machine")].name', 0,
               "The Machine that owns it."),
        AGE,
    ],
}


def columns(group: str, version: str, kind: str) -> list[Column] | None:
    """The columns after NAME of a custom resource at ``version``, or None when it declares none."""
    return {"v1beta1": V1BETA1, "v1beta2": V1BETA2}.get(version, {}).get((group, kind))
