"""The upstream control plane's manifests: Cluster API's CRDs and webhooks rewritten for managers on loopback
(pure functions over a provider's config/ folder, here a small one written by the test)."""

import base64

import yaml

from minicloud.upstream import manifests
from minicloud.upstream.control_plane import resource_path

CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": "devclusters.infrastructure.cluster.x-k8s.io",
                    "annotations": {"controller-gen.kubebuilder.io/version": "v0.18.0"}},
       "spec": {"group": "infrastructure.cluster.x-k8s.io", "names": {"plural": "devclusters", "kind": "DevCluster"},
                "versions": []}}
PLAIN = {**CRD, "metadata": {"name": "things.example.com"},
         "spec": {"group": "example.com", "names": {"plural": "things", "kind": "Thing"}, "versions": []}}
WEBHOOKS = [{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
             "metadata": {"name": "mutating-webhook-configuration"},
             "webhooks": [{"name": "default.devcluster", "clientConfig": {"service": {
                 "name": "webhook-service", "namespace": "system", "path": "/mutate-devcluster"}}}]}]


def provider(tmp_path, labels_style="labels"):
    crd = tmp_path / "config" / "crd"
    (crd / "bases").mkdir(parents=True)
    (crd / "patches").mkdir()
    (crd / "bases" / "a.yaml").write_text(yaml.safe_dump(CRD))
    (crd / "bases" / "b.yaml").write_text(yaml.safe_dump(PLAIN))
    (crd / "patches" / "webhook_in_devclusters.yaml").write_text("{}")
    pairs = {"cluster.x-k8s.io/v1beta1": "v1beta1", "cluster.x-k8s.io/v1beta2": "v1beta2"}
    kustomization = {"labels": [{"pairs": pairs}]} if labels_style == "labels" else {"commonLabels": pairs}
    (crd / "kustomization.yaml").write_text(yaml.safe_dump(kustomization))
    (tmp_path / "config" / "webhook").mkdir()
    (tmp_path / "config" / "webhook" / "manifests.yaml").write_text(yaml.safe_dump_all(WEBHOOKS))
    return manifests.Provider("capd", "capd-manager", tmp_path / "config", "InfrastructureProvider", "docker",
                              "capd-system")


def test_crds_carry_the_contract_labels_and_a_conversion_webhook_where_the_release_has_one(tmp_path):
    for style in ("labels", "commonLabels"):
        folder = tmp_path / style
        crds = {c["metadata"]["name"]: c for c in manifests.crds(provider(folder, style), "https://127.0.0.1:9446",
                                                                    b"CA")}
        converted, plain = crds[CRD["metadata"]["name"]], crds[PLAIN["metadata"]["name"]]
        for crd in (converted, plain):
            assert crd["metadata"]["labels"]["cluster.x-k8s.io/v1beta2"] == "v1beta2"
            # clusterctl move takes the kinds of the CRDs labelled as clusterctl init labels them
            assert crd["metadata"]["labels"]["clusterctl.cluster.x-k8s.io"] == ""
            assert crd["metadata"]["labels"]["cluster.x-k8s.io/provider"] == "infrastructure-docker"
        assert converted["metadata"]["annotations"] == CRD["metadata"]["annotations"]
        webhook = converted["spec"]["conversion"]["webhook"]
        assert converted["spec"]["conversion"]["strategy"] == "Webhook"
        assert webhook["clientConfig"] == {"url": "https://127.0.0.1:9446/convert",
                                           "caBundle": base64.b64encode(b"CA").decode()}
        assert "conversion" not in plain["spec"]


def test_webhook_configurations_call_the_manager_on_loopback_under_the_providers_name(tmp_path):
    [config] = manifests.webhook_configurations(provider(tmp_path), "https://127.0.0.1:9446", b"CA")
    assert config["metadata"]["name"] == "capd-mutating-webhook-configuration"
    [webhook] = config["webhooks"]
    assert webhook["clientConfig"] == {"url": "https://127.0.0.1:9446/mutate-devcluster",
                                       "caBundle": base64.b64encode(b"CA").decode()}


def test_the_inventory_is_clusterctl_inits_namespace_and_provider_object_per_provider(tmp_path):
    folders = {"core": tmp_path / "core", "test": tmp_path / "test"}
    objects = manifests.inventory(manifests.providers(folders["core"], folders["test"]), "v1.12.5")
    providers = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Provider"}
    assert sorted(providers) == ["bootstrap-kubeadm", "cluster-api", "control-plane-kubeadm", "infrastructure-docker"]
    core = providers["cluster-api"]
    assert (core["metadata"]["namespace"], core["type"], core["providerName"], core["version"]) == \
        ("capi-system", "CoreProvider", "cluster-api", "v1.12.5")
    assert providers["control-plane-kubeadm"]["metadata"]["labels"] == {
        "clusterctl.cluster.x-k8s.io": "", "cluster.x-k8s.io/provider": "control-plane-kubeadm"}
    namespaces = [o["metadata"]["name"] for o in objects if o["kind"] == "Namespace"]
    assert sorted(namespaces) == sorted(p["metadata"]["namespace"] for p in providers.values())
    assert resource_path(core) == \
        "/apis/clusterctl.cluster.x-k8s.io/v1alpha3/namespaces/capi-system/providers/cluster-api"


def test_resource_paths_of_what_minicloud_applies():
    assert resource_path(CRD) == "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + CRD["metadata"]["name"]
    assert resource_path(WEBHOOKS[0]) == \
        "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/mutating-webhook-configuration"
    assert resource_path({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}) == \
        "/api/v1/namespaces/x"
    kcp = {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlane",
           "metadata": {"name": "c", "namespace": "ns"}}
    assert resource_path(kcp) == "/apis/controlplane.cluster.x-k8s.io/v1beta2/namespaces/ns/kubeadmcontrolplanes/c"
