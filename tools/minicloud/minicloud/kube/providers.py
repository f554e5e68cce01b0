"""What ``clusterctl init`` leaves on a management cluster: its inventory (``Provider`` objects of
``clusterctl.cluster.x-k8s.io/v1alpha3``) and the providers' controller Deployments, labelled
``cluster.x-k8s.io/provider`` as clusterctl labels them; optionally ORC (openstack-resource-controller)
beside CAPO, as its own install manifest puts it.

The emulated API serves the two kinds (``resources.KINDS``); nothing reconciles them. Seeded through
:class:`minicloud.kube.admin.KubeAdmin` like the CAPI clusters; ``Minicloud.seed_capi_providers`` is the entry.
"""

from __future__ import annotations

from kubernetes import client

from minicloud.kube.admin import KubeAdmin

INVENTORY = "/apis/clusterctl.cluster.x-k8s.io/v1alpha3"
DEPLOYMENTS = "/apis/apps/v1"
#: (provider name, type, namespace, label, controller Deployment, image without tag)
PROVIDERS = (
    ("cluster-api", "CoreProvider", "capi-system", "cluster-api", "capi-controller-manager",
     "registry.k8s.io/cluster-api/cluster-api-controller"),
    ("kubeadm", "BootstrapProvider", "capi-kubeadm-bootstrap-system", "bootstrap-kubeadm",
     "capi-kubeadm-bootstrap-controller-manager", "registry.k8s.io/cluster-api/kubeadm-bootstrap-controller"),
    ("kubeadm", "ControlPlaneProvider", "capi-kubeadm-control-plane-system", "control-plane-kubeadm",
     "capi-kubeadm-control-plane-controller-manager", "registry.k8s.io/cluster-api/kubeadm-control-plane-controller"),
    ("openstack", "InfrastructureProvider", "capo-system", "infrastructure-openstack", "capo-controller-manager",
     "registry.k8s.io/capi-openstack/capi-openstack-controller"),
)
ORC = ("orc-system", "orc-controller-manager", "quay.io/orc/openstack-resource-controller")
LABEL = "minicloud.test/seeded-provider"


def _deployment(namespace: str, name: str, image: str, labels: dict) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace, "labels": dict(labels, **{LABEL: "true"})},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"control-plane": name}},
                     "template": {"metadata": {"labels": {"control-plane": name}},
                                  "spec": {"containers": [{"name": "manager", "image": image}]}}}}


def seed_providers(admin: KubeAdmin, capi: str = "v1.12.2", capo: str = "v0.13.1", orc: str | None = "v2.2.0",
                   images: dict | None = None) -> list[str]:
    """Provider objects of CAPI core, kubeadm bootstrap and control plane at ``capi`` and CAPO at ``capo``, with
    their controller Deployments (``images`` maps a Deployment's name to another tag), and ORC's controller at
    ``orc`` (None: no ORC). Replaces what an earlier call seeded. Returns ``Kind namespace/name`` of each object."""
    delete_providers(admin)
    made = []
    for name, kind, namespace, label, deployment, image in PROVIDERS:
        version = capo if kind == "InfrastructureProvider" else capi
        admin.ensure_namespace(namespace)
        admin.call("POST", f"{INVENTORY}/namespaces/{namespace}/providers", {
            "apiVersion": "clusterctl.cluster.x-k8s.io/v1alpha3", "kind": "Provider",
            "metadata": {"name": label, "namespace": namespace,
                         "labels": {"cluster.x-k8s.io/provider": label, LABEL: "true"}},
            "providerName": name, "type": kind, "version": version})
        tag = (images or {}).get(deployment, version)
        admin.call("POST", f"{DEPLOYMENTS}/namespaces/{namespace}/deployments",
                   _deployment(namespace, deployment, f"{image}:{tag}", {"cluster.x-k8s.io/provider": label}))
        made += [f"Provider {namespace}/{label}", f"Deployment {namespace}/{deployment}"]
    if orc:
        namespace, deployment, image = ORC
        admin.ensure_namespace(namespace)
        admin.call("POST", f"{DEPLOYMENTS}/namespaces/{namespace}/deployments",
                   _deployment(namespace, deployment, f"{image}:{orc}", {}))
        made.append(f"Deployment {namespace}/{deployment}")
    return made


def delete_providers(admin: KubeAdmin) -> list[str]:
    """Remove every Provider and Deployment ``seed_providers`` made."""
    removed = []
    for base, plural in ((INVENTORY, "providers"), (DEPLOYMENTS, "deployments")):
        found = admin.call("GET", f"{base}/{plural}", query=[("labelSelector", f"{LABEL}=true")])
        for item in found.get("items") or []:
            metadata = item["metadata"]
            try:
                admin.call("DELETE", f"{base}/namespaces/{metadata['namespace']}/{plural}/{metadata['name']}")
            except client.ApiException as exc:
                if exc.status != 404:
                    raise
            removed.append(f"{item.get('kind')} {metadata['namespace']}/{metadata['name']}")
    return removed
