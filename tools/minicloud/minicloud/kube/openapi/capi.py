"""Schemas of Cluster API's kinds in both served contracts (v1beta1 and v1beta2).

Cluster, Machine, MachineSet, MachineDeployment (cluster.x-k8s.io), KubeadmControlPlane
(controlplane.cluster.x-k8s.io) and KubeadmConfig (bootstrap.cluster.x-k8s.io), trimmed to what the
emulator serves and seeds (see :mod:`minicloud.kube.convert` for where the two contracts differ)
plus the fields operators commonly write. Large provider-specific parts (kubeadm configuration,
topology, remediation) are free-form. Like every custom resource, each kind is one inline schema.
"""

from __future__ import annotations

from minicloud.kube.openapi.builders import (
    array,
    boolean,
    date_time,
    free,
    int_or_string,
    integer,
    kind,
    obj,
    string,
    string_map,
    strings,
)
from minicloud.kube.resources import BOOTSTRAP_GROUP, CAPI_GROUP, CONTROLPLANE_GROUP

V1BETA1, V1BETA2 = "v1beta1", "v1beta2"


def definition_name(group: str, version: str, kind_name: str) -> str:
    """How kube-apiserver names a custom resource's definition: the group reversed (``io.x-k8s.cluster``)."""
    return ".".join(reversed(group.split("."))) + f".{version}.{kind_name}"


# -- shared parts ----------------------------------------------------------------------------------------------

def new_conditions(what: str = "") -> dict:
    """metav1.Condition list (v1beta2 status.conditions, v1beta1 status.v1beta2.conditions)."""
    return array(obj("One aspect of the object's state.", ("lastTransitionTime", "reason", "status", "type"),
                     lastTransitionTime=date_time("When the status last changed."),
                     message=string("Human-readable details."),
                     observedGeneration=integer("The metadata.generation it was computed for.", "int64"),
                     reason=string("CamelCase reason of the last transition."),
                     status=string("True, False or Unknown."),
                     type=string("The aspect (Available, Ready, Paused...).")),
                 what or "Conditions (Available, Ready, Paused, ...), newest contract style.")


def old_conditions(what: str = "") -> dict:
    """CAPI's own v1beta1 Condition list, with severity."""
    return array(obj("One aspect of the object's state (CAPI v1beta1 style).", ("lastTransitionTime", "status", "type"),
                     lastTransitionTime=date_time("When the status last changed."),
                     message=string("Human-readable details."),
                     reason=string("CamelCase reason."),
                     severity=string("Error, Warning or Info, when status is False."),
                     status=string("True, False or Unknown."),
                     type=string("The aspect (Ready, InfrastructureReady...).")),
                 what or "Conditions in CAPI's v1beta1 style (with severity).")


def contract_ref(what: str) -> dict:
    """v1beta2 reference to a provider object: group, kind, name (same namespace)."""
    return obj(what, ("apiGroup", "kind", "name"), apiGroup=string("API group of the referent."),
               kind=string("Kind of the referent."), name=string("Name of the referent, in the same namespace."))


def object_ref(what: str) -> dict:
    """v1beta1 reference: a corev1.ObjectReference."""
    return obj(what, apiVersion=string("API version of the referent."), fieldPath=string("Unused."),
               kind=string("Kind of the referent."), name=string("Name of the referent."),
               namespace=string("Namespace of the referent."), resourceVersion=string("Unused."),
               uid=string("UID of the referent."))


def failure(status_kind: str) -> dict:
    return {"failureMessage": string(f"Deprecated: a terminal problem reconciling the {status_kind}, in words."),
            "failureReason": string(f"Deprecated: a terminal problem reconciling the {status_kind}.")}


def deprecated(*extra: str) -> dict:
    """v1beta2 ``status.deprecated``: where the v1beta1 fields live on in the newest contract."""
    counts = {name: integer(f"v1beta1's {name}.") for name in extra}
    return obj("Fields of the v1beta1 contract, kept until it is removed.",
               v1beta1=obj("The v1beta1 fields.", conditions=old_conditions(), **failure("object"), **counts))


def v1beta2_status(*counts: str, **more: dict) -> dict:
    """v1beta1 ``status.v1beta2``: the newest contract's fields, previewed in the old one."""
    return obj("Fields of the v1beta2 contract, previewed in v1beta1.", conditions=new_conditions(),
               **{name: integer(f"v1beta2's {name}.") for name in counts}, **more)


def replicas_summary(what: str) -> dict:
    return obj(f"Counts of the {what} machines.",
               availableReplicas=integer("Machines with Available true."),
               desiredReplicas=integer("Machines wanted."),
               readyReplicas=integer("Machines with Ready true."),
               replicas=integer("Machines that exist."),
               upToDateReplicas=integer("Machines with UpToDate true."))


PAUSED = boolean("If true, the controllers stop reconciling this cluster and every object that belongs to it "
                 "(a cluster is paused during clusterctl move, for example).")

CLUSTER_NETWORK = obj(
    "The cluster's networking configuration.",
    apiServerPort=integer("Port the API server binds to (default 6443)."),
    pods=obj("The pod network.", ("cidrBlocks",), cidrBlocks=strings("CIDR blocks pod IPs are taken from.")),
    serviceDomain=string("Domain name of services (cluster.local)."),
    services=obj("The service network.", ("cidrBlocks",), cidrBlocks=strings("CIDR blocks service IPs are taken "
                                                                             "from.")),
)

ENDPOINT = obj("Where the control plane's API server is reached.", host=string("Host name or IP of the endpoint."),
               port=integer("Port of the endpoint."))

LABEL_SELECTOR = obj(
    "Selects objects by their labels (all rules must match).",
    matchExpressions=array(obj("A rule.", ("key", "operator"), key=string("Label key."),
                               operator=string("In, NotIn, Exists or DoesNotExist."),
                               values=strings("Values for In and NotIn.")), "Label rules."),
    matchLabels=string_map("Labels that must be present with these values."),
)

OBJECT_META = obj("Labels and annotations given to the objects made from the template.",
                  annotations=string_map("Annotations."), labels=string_map("Labels."))

ADDRESSES = array(obj("One address.", ("address", "type"), address=string("The address."),
                      type=string("Hostname, InternalIP, ExternalIP, InternalDNS or ExternalDNS.")),
                  "Addresses of the machine, as the infrastructure provider reports them.")

MACHINE_PHASE = string("Pending, Provisioning, Provisioned, Running, Deleting, Deleted, Failed or Unknown.")


# -- Cluster -----------------------------------------------------------------------------------------------------

def cluster(version: str) -> dict:
    new = version == V1BETA2
    reference = contract_ref if new else object_ref
    spec = obj(
        "The desired state of the cluster.",
        availabilityGates=array(free("A condition type that must be True for the cluster to be Available."),
                                "Extra conditions the cluster's availability depends on."),
        clusterNetwork=CLUSTER_NETWORK,
        controlPlaneEndpoint=ENDPOINT,
        controlPlaneRef=reference("The control-plane provider's object (a KubeadmControlPlane)."),
        infrastructureRef=reference("The infrastructure provider's object (an OpenStackCluster)."),
        paused=PAUSED,
        topology=free("Managed topology from a ClusterClass: class, version, control plane, workers, variables.",
                      version=string("The Kubernetes version of the cluster.")),
    )
    if new:
        status = obj(
            "The observed state of the cluster.",
            conditions=new_conditions(),
            controlPlane=replicas_summary("control-plane"),
            deprecated=deprecated(),
            failureDomains=array(free("A failure domain (name, controlPlane, attributes)."),
                                 "Failure domains the infrastructure offers."),
            initialization=obj("Provisioning milestones.",
                               controlPlaneInitialized=boolean("The control plane's API server answers."),
                               infrastructureProvisioned=boolean("The infrastructure is ready.")),
            observedGeneration=integer("The metadata.generation last reconciled.", "int64"),
            phase=string("Pending, Provisioning, Provisioned, Deleting, Failed or Unknown."),
            workers=replicas_summary("worker"),
        )
    else:
        status = obj(
            "The observed state of the cluster.",
            conditions=old_conditions(),
            controlPlaneReady=boolean("The control plane is ready (v1beta2: initialization."
                                      "controlPlaneInitialized)."),
            failureDomains=free("Failure domains the infrastructure offers, by name."),
            infrastructureReady=boolean("The infrastructure is ready (v1beta2: initialization."
                                        "infrastructureProvisioned)."),
            observedGeneration=integer("The metadata.generation last reconciled.", "int64"),
            phase=string("Pending, Provisioning, Provisioned, Deleting, Failed or Unknown."),
            v1beta2=v1beta2_status(controlPlane=replicas_summary("control-plane"),
                                   workers=replicas_summary("worker")),
            **failure("cluster"),
        )
    return kind("A Kubernetes cluster managed by Cluster API: its network, endpoint and providers.",
                CAPI_GROUP, version, "Cluster", spec=spec, status=status)


# -- Machine -----------------------------------------------------------------------------------------------------

def machine_spec(version: str) -> dict:
    new = version == V1BETA2
    reference = contract_ref if new else object_ref
    fields = dict(
        bootstrap=obj("How the machine gets its bootstrap data.",
                      configRef=reference("The bootstrap provider's object (a KubeadmConfig)."),
                      dataSecretName=string("The Secret holding the bootstrap data, once made.")),
        clusterName=string("The Cluster this machine belongs to."),
        failureDomain=string("The failure domain the machine is placed in."),
        infrastructureRef=reference("The infrastructure provider's object (an OpenStackMachine)."),
        providerID=string("The machine's id in the infrastructure (openstack:///SERVER-ID), matching its Node."),
        readinessGates=array(free("A condition type."), "Extra conditions the machine's readiness depends on."),
        version=string("The Kubernetes version the machine runs (v1.31.4)."),
    )
    if new:
        fields.update(
            deletion=obj("How the machine is deleted.",
                         nodeDeletionTimeoutSeconds=integer("Seconds to retry deleting the Node."),
                         nodeDrainTimeoutSeconds=integer("Seconds to drain the Node before giving up."),
                         nodeVolumeDetachTimeoutSeconds=integer("Seconds to wait for volumes to detach.")),
            minReadySeconds=integer("Seconds a machine must be Ready before it counts as Available."),
            taints=array(free("A taint (key, value, effect, propagation)."), "Taints for the Node."))
    else:
        fields.update(
            nodeDeletionTimeout=string("How long to retry deleting the Node (a duration)."),
            nodeDrainTimeout=string("How long to drain the Node before giving up (a duration)."),
            nodeVolumeDetachTimeout=string("How long to wait for volumes to detach (a duration)."))
    return obj("The desired state of the machine.", ("clusterName",), **fields)


def machine(version: str) -> dict:
    new = version == V1BETA2
    fields = dict(
        addresses=ADDRESSES,
        certificatesExpiryDate=date_time("When the machine's certificates expire (control-plane machines)."),
        deletion=obj("Progress of the machine's deletion.",
                     nodeDrainStartTime=date_time("When draining the Node started."),
                     waitForNodeVolumeDetachStartTime=date_time("When waiting for volumes started.")),
        lastUpdated=date_time("When the phase last changed."),
        nodeInfo=free("The Node's software versions."),
        observedGeneration=integer("The metadata.generation last reconciled.", "int64"),
        phase=MACHINE_PHASE,
    )
    if new:
        fields.update(
            conditions=new_conditions(),
            deprecated=deprecated(),
            failureDomain=string("The failure domain the machine is in."),
            initialization=obj("Provisioning milestones.",
                               bootstrapDataSecretCreated=boolean("The bootstrap data Secret exists."),
                               infrastructureProvisioned=boolean("The infrastructure (server) is ready.")),
            nodeRef=obj("The Node of this machine.", ("name",), name=string("Name of the Node.")))
    else:
        fields.update(
            bootstrapReady=boolean("The bootstrap data is ready (v1beta2: initialization.bootstrapDataSecretCreated)."),
            conditions=old_conditions(),
            infrastructureReady=boolean("The infrastructure is ready (v1beta2: initialization."
                                        "infrastructureProvisioned)."),
            nodeRef=object_ref("The Node of this machine."),
            v1beta2=v1beta2_status(),
            **failure("machine"))
    return kind("One machine (a server and its Node) of a cluster.", CAPI_GROUP, version, "Machine",
                spec=machine_spec(version), status=obj("The observed state of the machine.", **fields))


# -- MachineSet, MachineDeployment ---------------------------------------------------------------------------------

def template(version: str) -> dict:
    return obj("The machines to make.", metadata=OBJECT_META, spec=machine_spec(version))


OLD_COUNTS = ("readyReplicas", "availableReplicas", "updatedReplicas", "unavailableReplicas", "fullyLabeledReplicas")


def replica_status(contract: str, what: str, **more: dict) -> dict:
    common = dict(observedGeneration=integer("The metadata.generation last reconciled.", "int64"),
                  replicas=integer("Machines that exist."),
                  selector=string("The label selector of the machines, as a string."), **more)
    if contract == V1BETA2:
        return obj(f"The observed state of the {what}.", availableReplicas=integer("Machines with Available true."),
                   conditions=new_conditions(), deprecated=deprecated(*OLD_COUNTS),
                   readyReplicas=integer("Machines with Ready true."),
                   upToDateReplicas=integer("Machines with UpToDate true."), **common)
    return obj(f"The observed state of the {what}.", conditions=old_conditions(),
               v1beta2=v1beta2_status("readyReplicas", "availableReplicas", "upToDateReplicas"),
               **{name: integer(f"Machines counted as {name[:-8]}.") for name in OLD_COUNTS},
               **failure(what), **common)


def machine_set(version: str) -> dict:
    fields = dict(clusterName=string("The Cluster this MachineSet belongs to."),
                  replicas=integer("How many machines are wanted."),
                  selector=LABEL_SELECTOR, template=template(version))
    if version == V1BETA2:
        fields.update(deletion=obj("How machines are chosen for deletion.",
                                   order=string("Random, Newest or Oldest.")),
                      machineNaming=obj("How machines are named.", template=string("The name template.")))
    else:
        fields.update(deletePolicy=string("Random, Newest or Oldest: which machines go first."),
                      minReadySeconds=integer("Seconds a machine must be Ready to count as available."))
    return kind("A set of identical machines kept at a count.", CAPI_GROUP, version, "MachineSet",
                spec=obj("The desired state of the MachineSet.", ("clusterName", "selector"), **fields),
                status=replica_status(version, "MachineSet"))


def machine_deployment(version: str) -> dict:
    new = version == V1BETA2
    rolling = obj("Rolling update parameters.", deletePolicy=string("Which machines go first."),
                  maxSurge=int_or_string("Machines above the wanted count during a rollout."),
                  maxUnavailable=int_or_string("Machines that may be unavailable during a rollout."))
    strategy = obj("How machines are replaced.", rollingUpdate=rolling,
                   type=string("RollingUpdate or OnDelete."))
    fields = dict(clusterName=string("The Cluster this MachineDeployment belongs to."),
                  paused=boolean("If true, the MachineDeployment is not rolled out."),
                  replicas=integer("How many machines are wanted."),
                  selector=LABEL_SELECTOR, template=template(version))
    if new:
        fields.update(
            deletion=obj("How machines are chosen for deletion.", order=string("Random, Newest or Oldest.")),
            machineNaming=obj("How machines are named.", template=string("The name template.")),
            remediation=free("How unhealthy machines are remediated."),
            rollout=obj("How and when machines are replaced.",
                        after=date_time("Replace every machine created before this time."), strategy=strategy))
    else:
        fields.update(
            machineNamingStrategy=obj("How machines are named.", template=string("The name template.")),
            minReadySeconds=integer("Seconds a machine must be Ready to count as available."),
            progressDeadlineSeconds=integer("Seconds before a stalled rollout is reported."),
            revisionHistoryLimit=integer("Old MachineSets kept for rollback."),
            rolloutAfter=date_time("Replace every machine created before this time."),
            strategy=strategy)
    return kind("Declarative updates of machines through MachineSets, like a Deployment for pods.",
                CAPI_GROUP, version, "MachineDeployment",
                spec=obj("The desired state of the MachineDeployment.", ("clusterName",), **fields),
                status=replica_status(version, "MachineDeployment",
                                      phase=string("ScalingUp, ScalingDown, Running, Failed or Unknown.")))


# -- KubeadmControlPlane, KubeadmConfig ----------------------------------------------------------------------------

KUBEADM_CONFIG_SPEC = free(
    "kubeadm's configuration: clusterConfiguration, initConfiguration, joinConfiguration, files, "
    "preKubeadmCommands, postKubeadmCommands, users, ...",
    clusterConfiguration=free("kubeadm's ClusterConfiguration."),
    files=array(free("A file written on the machine."), "Files to write on the machine."),
    initConfiguration=free("kubeadm's InitConfiguration."),
    joinConfiguration=free("kubeadm's JoinConfiguration."),
    postKubeadmCommands=strings("Commands run after kubeadm."),
    preKubeadmCommands=strings("Commands run before kubeadm."),
)


def kubeadm_control_plane(version: str) -> dict:
    new = version == V1BETA2
    rolling = obj("Rolling update parameters.", maxSurge=int_or_string("Machines above the wanted count (0 or 1)."))
    fields = dict(kubeadmConfigSpec=KUBEADM_CONFIG_SPEC,
                  replicas=integer("How many control-plane machines are wanted (1, 3, 5...)."),
                  version=string("The Kubernetes version of the control plane (v1.31.4)."))
    if new:
        fields.update(
            machineNaming=obj("How machines are named.", template=string("The name template.")),
            machineTemplate=obj("The control-plane machines to make.", metadata=OBJECT_META, spec=obj(
                "Their spec.", infrastructureRef=contract_ref("The infrastructure template (an "
                                                              "OpenStackMachineTemplate)."),
                deletion=free("How the machines are deleted."), readinessGates=array(free("A condition type."),
                                                                                     "Readiness gates."))),
            remediation=free("How unhealthy control-plane machines are remediated."),
            rollout=obj("How and when control-plane machines are replaced.",
                        after=date_time("Replace every control-plane machine created before this time."),
                        before=obj("Replace machines ahead of an event.",
                                   certificatesExpiryDays=integer("Days before certificates expire.")),
                        strategy=obj("How machines are replaced.", rollingUpdate=rolling,
                                     type=string("RollingUpdate."))))
    else:
        fields.update(
            machineNamingStrategy=obj("How machines are named.", template=string("The name template.")),
            machineTemplate=obj("The control-plane machines to make.", metadata=OBJECT_META,
                                infrastructureRef=object_ref("The infrastructure template (an "
                                                             "OpenStackMachineTemplate)."),
                                nodeDeletionTimeout=string("A duration."), nodeDrainTimeout=string("A duration."),
                                nodeVolumeDetachTimeout=string("A duration.")),
            remediationStrategy=free("How unhealthy control-plane machines are remediated."),
            rolloutAfter=date_time("Replace every control-plane machine created before this time."),
            rolloutBefore=obj("Replace machines ahead of an event.",
                              certificatesExpiryDays=integer("Days before certificates expire.")),
            rolloutStrategy=obj("How machines are replaced.", rollingUpdate=rolling, type=string("RollingUpdate.")))
    more = dict(lastRemediation=free("The last remediation."), version=string("The lowest version the machines run."))
    if new:
        more["initialization"] = obj("Provisioning milestones.", controlPlaneInitialized=boolean(
            "The control plane's API server answers."))
    else:
        more.update(initialized=boolean("The control plane was initialized (v1beta2: initialization."
                                        "controlPlaneInitialized)."),
                    ready=boolean("The API server answers."))
    return kind("A control plane of machines made with kubeadm, kept at a count and version.", CONTROLPLANE_GROUP,
                version, "KubeadmControlPlane",
                spec=obj("The desired state of the control plane.", ("version",), **fields),
                status=replica_status(version, "KubeadmControlPlane", **more))


def kubeadm_config(version: str) -> dict:
    fields = dict(dataSecretName=string("The Secret holding the bootstrap data, once made."),
                  observedGeneration=integer("The metadata.generation last reconciled.", "int64"))
    if version == V1BETA2:
        fields.update(conditions=new_conditions(), deprecated=deprecated(),
                      initialization=obj("Provisioning milestones.",
                                         dataSecretCreated=boolean("The bootstrap data Secret exists.")))
    else:
        fields.update(conditions=old_conditions(), ready=boolean("The bootstrap data is ready (v1beta2: "
                                                                 "initialization.dataSecretCreated)."),
                      v1beta2=v1beta2_status(), **failure("KubeadmConfig"))
    return kind("The kubeadm bootstrap configuration of one machine.", BOOTSTRAP_GROUP, version, "KubeadmConfig",
                spec=KUBEADM_CONFIG_SPEC, status=obj("The observed state of the KubeadmConfig.", **fields))


BUILDERS = ((CAPI_GROUP, "Cluster", cluster), (CAPI_GROUP, "Machine", machine),
            (CAPI_GROUP, "MachineSet", machine_set), (CAPI_GROUP, "MachineDeployment", machine_deployment),
            (CONTROLPLANE_GROUP, "KubeadmControlPlane", kubeadm_control_plane),
            (BOOTSTRAP_GROUP, "KubeadmConfig", kubeadm_config))

KINDS = tuple(((group, version, name), definition_name(group, version, name), build(version))
              for group, name, build in BUILDERS for version in (V1BETA1, V1BETA2))
