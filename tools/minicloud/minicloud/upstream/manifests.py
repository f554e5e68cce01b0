"""Cluster API's CRDs and webhook configurations, as its releases install them, for managers on loopback.

Each provider ships ``config/crd/bases/*.yaml`` (the CRDs), ``config/crd/kustomization.yaml`` (labels such as
``cluster.x-k8s.io/v1beta2: v1beta2``, which tell the core controllers which version of a provider's kind
fulfils which contract, and one ``patches/webhook_in_<plural>.yaml`` per CRD converted by a webhook) and
``config/webhook/manifests.yaml`` (the defaulting and validating webhooks). Its release manifests point the
webhooks at a Service in the cluster; here the managers run on loopback, so each ``clientConfig`` becomes a
``url`` with the CA bundle of their serving certificate. Pure functions over parsed YAML: no I/O but reading
the module's files.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path

import yaml

CONVERSION_REVIEW_VERSIONS = ["v1", "v1beta1"]


@dataclass(frozen=True)
class Provider:
    """One Cluster API manager: where its manifests are in its Go module, and its name in minicloud."""

    name: str           # the process name: cluster-api, kubeadm-control-plane, kubeadm-bootstrap, capd
    binary: str         # in the build cache (tools/upstream/build.sh)
    config: Path        # the provider's config/ folder in the module cache
    kind: str = ""      # clusterctl's provider type: CoreProvider, ControlPlaneProvider, ...
    provider: str = ""  # clusterctl's provider name: cluster-api, kubeadm, docker
    namespace: str = ""  # where clusterctl init installs it

    @property
    def manifest_label(self) -> str:
        """clusterctl's name for the provider (``cluster.x-k8s.io/provider`` and its Provider object)."""
        prefix = _TYPE_PREFIXES[self.kind]
        return f"{prefix}-{self.provider}" if prefix else self.provider

    @property
    def crd_folder(self) -> Path:
        return self.config / "crd"

    @property
    def webhook_manifest(self) -> Path:
        return self.config / "webhook" / "manifests.yaml"


# name, binary, module ("core" or "test"), the folder of its config/ in the module; clusterctl's type, name and
# namespace of the provider
PROVIDERS = (
    ("cluster-api", "cluster-api-manager", "core", ".", "CoreProvider", "cluster-api", "capi-system"),
    ("kubeadm-control-plane", "kubeadm-control-plane-manager", "core", "controlplane/kubeadm", "ControlPlaneProvider",
     "kubeadm", "capi-kubeadm-control-plane-system"),
    ("kubeadm-bootstrap", "kubeadm-bootstrap-manager", "core", "bootstrap/kubeadm", "BootstrapProvider", "kubeadm",
     "capi-kubeadm-bootstrap-system"),
    ("capd", "capd-manager", "test", "infrastructure/docker", "InfrastructureProvider", "docker", "capd-system"),
)
PROVIDER_NAMES = tuple(name for name, *_rest in PROVIDERS)
_TYPE_PREFIXES = {"CoreProvider": "", "ControlPlaneProvider": "control-plane", "BootstrapProvider": "bootstrap",
                  "InfrastructureProvider": "infrastructure"}
# the labels clusterctl init puts on everything it installs; clusterctl move finds the kinds to move by the first
CLUSTERCTL_LABEL = "clusterctl.cluster.x-k8s.io"
PROVIDER_LABEL = "cluster.x-k8s.io/provider"


def providers(cluster_api: Path, cluster_api_test: Path) -> list[Provider]:
    """The four managers minicloud runs, given the module folders of ``sigs.k8s.io/cluster-api`` and
    ``sigs.k8s.io/cluster-api/test``."""
    modules = {"core": cluster_api, "test": cluster_api_test}
    return [Provider(name, binary, modules[module] / folder / "config", kind, provider, namespace)
            for name, binary, module, folder, kind, provider, namespace in PROVIDERS]


def inventory(providers: list[Provider], version: str) -> list[dict]:
    """clusterctl's inventory as ``clusterctl init`` leaves it: each provider's namespace and Provider object
    (``clusterctl move`` checks that the target has every provider of the source, at the same version or
    newer)."""
    result = []
    for provider in providers:
        labels = {CLUSTERCTL_LABEL: "", PROVIDER_LABEL: provider.manifest_label}
        result.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": provider.namespace}})
        result.append({"apiVersion": "clusterctl.cluster.x-k8s.io/v1alpha3", "kind": "Provider",
                       "metadata": {"name": provider.manifest_label, "namespace": provider.namespace,
                                    "labels": labels},
                       "providerName": provider.provider, "type": provider.kind, "version": version})
    return result


def _load_all(path: Path) -> list[dict]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def kustomization_labels(crd_folder: Path) -> dict:
    """The labels a provider's ``config/crd/kustomization.yaml`` puts on its CRDs (``labels: - pairs:`` or the
    older ``commonLabels:``)."""
    kustomization = yaml.safe_load((crd_folder / "kustomization.yaml").read_text()) or {}
    labels = dict(kustomization.get("commonLabels") or {})
    for entry in kustomization.get("labels") or []:
        labels.update(entry.get("pairs") or {})
    return labels


def crds(provider: Provider, webhook_url: str, ca_bundle: bytes) -> list[dict]:
    """The provider's CRDs with their kustomization labels and clusterctl's and, where its release converts
    versions with a webhook, ``spec.conversion`` pointing at ``webhook_url``/convert."""
    labels = {**kustomization_labels(provider.crd_folder), CLUSTERCTL_LABEL: "",
              PROVIDER_LABEL: provider.manifest_label}
    patches = provider.crd_folder / "patches"
    result = []
    for path in sorted((provider.crd_folder / "bases").glob("*.yaml")):
        for crd in _load_all(path):
            metadata = crd.setdefault("metadata", {})
            metadata["labels"] = {**(metadata.get("labels") or {}), **labels}
            if (patches / f"webhook_in_{crd['spec']['names']['plural']}.yaml").exists():
                crd["spec"]["conversion"] = {"strategy": "Webhook", "webhook": {
                    "conversionReviewVersions": CONVERSION_REVIEW_VERSIONS,
                    "clientConfig": {"url": f"{webhook_url}/convert",
                                     "caBundle": base64.b64encode(ca_bundle).decode()}}}
            result.append(crd)
    return result


def webhook_configurations(provider: Provider, webhook_url: str, ca_bundle: bytes) -> list[dict]:
    """The provider's Mutating- and ValidatingWebhookConfigurations, named after the provider (every provider
    names its own ``mutating-webhook-configuration``), each webhook calling ``webhook_url`` + its path."""
    if not provider.webhook_manifest.exists():
        return []
    bundle = base64.b64encode(ca_bundle).decode()
    result = []
    for doc in _load_all(provider.webhook_manifest):
        doc["metadata"] = {"name": f"{provider.name}-{doc['metadata']['name']}",
                           "labels": {"minicloud.test/provider": provider.name}}
        for webhook in doc.get("webhooks") or []:
            path = webhook["clientConfig"]["service"].get("path", "/")
            webhook["clientConfig"] = {"url": webhook_url + path, "caBundle": bundle}
        result.append(doc)
    return result


def clusterctl_inventory_crd(cluster_api: Path) -> list[dict]:
    """clusterctl's inventory CRD (``providers.clusterctl.cluster.x-k8s.io``), which ``clusterctl move``
    reads on both clusters."""
    return _load_all(cluster_api / "cmd" / "clusterctl" / "config" / "manifest" / "clusterctl-api.yaml")
