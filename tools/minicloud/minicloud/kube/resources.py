"""The kinds the emulated API server serves.

Each :class:`Kind` says where it lives (group, versions, plural, scope) and how the
server treats it. CAPI kinds are served in several versions that are views of one
stored object (see :mod:`minicloud.kube.convert`); ``hub`` is the version objects
are stored in.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

CORE_GROUP = ""
CAPI_GROUP = "cluster.x-k8s.io"
CONTROLPLANE_GROUP = "controlplane.cluster.x-k8s.io"
BOOTSTRAP_GROUP = "bootstrap.cluster.x-k8s.io"
INFRA_GROUP = "infrastructure.cluster.x-k8s.io"
EVENTS_GROUP = "events.k8s.io"

VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update"]


@dataclass(frozen=True)
class Kind:
    kind: str
    plural: str
    group: str
    versions: tuple[str, ...]
    namespaced: bool = True
    status_subresource: bool = True
    custom: bool = True  # a CRD: generation, 415 on strategic merge, object returned on delete
    short_names: tuple[str, ...] = ()
    # Field selectors besides metadata.name / metadata.namespace (dotted paths).
    selectable_fields: tuple[str, ...] = ()
    categories: tuple[str, ...] = field(default=())
    # Served through another kind's storage (events.k8s.io/v1 Event is a view of core/v1 Event):
    # objects are kept under that kind's name and converted on the way in and out.
    stored_as: str | None = None

    @property
    def storage(self) -> str:
        """The kind name objects of this kind are stored under."""
        return self.stored_as or self.kind

    @property
    def hub(self) -> str:
        """The version objects are stored in (the newest)."""
        return self.versions[-1]

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def resource(self) -> str:
        """``plural.group``, as in Status messages (``clusters.cluster.x-k8s.io``)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def api_version(self, version: str) -> str:
        return f"{self.group}/{version}" if self.group else version

    @property
    def list_kind(self) -> str:
        return self.kind + "List"


CAPI_CONTRACT = ("v1beta1", "v1beta2")

KINDS: tuple[Kind, ...] = (
    Kind("Namespace", "namespaces", CORE_GROUP, ("v1",), namespaced=False, custom=False, short_names=("ns",),
         selectable_fields=("status.phase",)),
    Kind("Secret", "secrets", CORE_GROUP, ("v1",), status_subresource=False, custom=False,
         selectable_fields=("type",)),
    Kind("Node", "nodes", CORE_GROUP, ("v1",), namespaced=False, custom=False, short_names=("no",),
         selectable_fields=("spec.unschedulable",)),
    Kind("ConfigMap", "configmaps", CORE_GROUP, ("v1",), status_subresource=False, custom=False,
         short_names=("cm",)),
    Kind("Event", "events", CORE_GROUP, ("v1",), status_subresource=False, custom=False, short_names=("ev",),
         selectable_fields=("involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                            "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
                            "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type")),
    Kind("Event", "events", EVENTS_GROUP, ("v1",), status_subresource=False, custom=False, short_names=("ev",),
         stored_as="Event"),
    Kind("Cluster", "clusters", CAPI_GROUP, CAPI_CONTRACT, short_names=("cl",), categories=("cluster-api",)),
    Kind("Machine", "machines", CAPI_GROUP, CAPI_CONTRACT, short_names=("ma",), categories=("cluster-api",)),
    Kind("MachineSet", "machinesets", CAPI_GROUP, CAPI_CONTRACT, short_names=("ms",), categories=("cluster-api",)),
    Kind("MachineDeployment", "machinedeployments", CAPI_GROUP, CAPI_CONTRACT, short_names=("md",),
         categories=("cluster-api",)),
    Kind("KubeadmControlPlane", "kubeadmcontrolplanes", CONTROLPLANE_GROUP, CAPI_CONTRACT, short_names=("kcp",),
         categories=("cluster-api",)),
    Kind("KubeadmConfig", "kubeadmconfigs", BOOTSTRAP_GROUP, CAPI_CONTRACT, categories=("cluster-api",)),
    Kind("OpenStackCluster", "openstackclusters", INFRA_GROUP, ("v1beta1",), short_names=("osc",),
         categories=("cluster-api",)),
    Kind("OpenStackMachine", "openstackmachines", INFRA_GROUP, ("v1beta1",), short_names=("osm",),
         categories=("cluster-api",)),
    # clusterctl's inventory and the providers' controllers (seeded by minicloud.kube.providers)
    Kind("Provider", "providers", "clusterctl.cluster.x-k8s.io", ("v1alpha3",), status_subresource=False),
    Kind("Deployment", "deployments", "apps", ("v1",), custom=False, short_names=("deploy",)),
    # leader election and flightcontrol's one-actor-per-cluster lock: optimistic concurrency on resourceVersion
    Kind("Lease", "leases", "coordination.k8s.io", ("v1",), status_subresource=False, custom=False),
)

# The kinds CAPI core (and its kubeadm providers) reconcile: they get the Paused condition.
CAPI_CORE_KINDS = ("Cluster", "Machine", "MachineSet", "MachineDeployment", "KubeadmControlPlane", "KubeadmConfig")
# The kinds the infrastructure provider reconciles.
INFRA_KINDS = ("OpenStackCluster", "OpenStackMachine")


# The versions of CAPO's kinds: v1beta1 (CAPO v0.14, what a plane serves until told otherwise) and v1beta2 with
# v1beta1 (CAPO v0.15's CRDs: see :mod:`minicloud.kube.capo_crds`).
CAPO_V1BETA1 = ("v1beta1",)
CAPO_V1BETA2 = ("v1beta1", "v1beta2")


def served_kinds(capo_versions: tuple[str, ...] = CAPO_V1BETA1) -> tuple[Kind, ...]:
    """The kinds a plane serves when its CAPO CRDs serve ``capo_versions``."""
    if capo_versions == CAPO_V1BETA1:
        return KINDS
    return tuple(replace(k, versions=capo_versions) if k.kind in INFRA_KINDS and not k.stored_as else k
                 for k in KINDS)


def by_plural(group: str, plural: str, kinds: tuple[Kind, ...] = KINDS) -> Kind | None:
    for kind in kinds:
        if kind.group == group and kind.plural == plural:
            return kind
    return None


def by_kind(name: str) -> Kind:
    """The kind named ``name`` that owns its storage (core/v1 Event, not its events.k8s.io view)."""
    for kind in KINDS:
        if kind.kind == name and kind.stored_as is None:
            return kind
    raise KeyError(name)


def groups(kinds: tuple[Kind, ...] = KINDS) -> dict[str, tuple[str, ...]]:
    """Named API groups (not the core group) and the versions served, oldest first."""
    result: dict[str, tuple[str, ...]] = {}
    for kind in kinds:
        if kind.group:
            seen = result.get(kind.group, ())
            result[kind.group] = tuple(sorted(set(seen) | set(kind.versions)))
    return result


def in_group_version(group: str, version: str, kinds: tuple[Kind, ...] = KINDS) -> list[Kind]:
    return [k for k in kinds if k.group == group and version in k.versions]
