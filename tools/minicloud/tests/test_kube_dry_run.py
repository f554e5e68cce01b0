"""Server-side dry run: validated and answered as if done, nothing stored (kube-apiserver's ``dryRun=All``)."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from kubernetes import client, dynamic
from kubernetes.client import ApiException

from minicloud.kube.resources import by_kind

CLUSTER = by_kind("Cluster")


@pytest.fixture(scope="module")
def clusters(server, tmp_path_factory):
    dyn = dynamic.DynamicClient(server.api_client(),
                                cache_file=str(tmp_path_factory.mktemp("cache") / "discovery.json"))
    return dyn.resources.get(api_version="cluster.x-k8s.io/v1beta2", kind="Cluster")


def seed_cluster(server, name, **meta):
    return server.store.create(CLUSTER, {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
                                         "metadata": {"name": name, **meta}, "spec": {"paused": False}}, "default")


def test_create_patch_replace_delete_change_nothing(server, clusters):
    before = seed_cluster(server, "dry")
    revision = server.store.revision
    body = {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "metadata": {"name": "dry-new"},
            "spec": {"paused": True}}
    created = clusters.create(body=body, namespace="default", dry_run="All").to_dict()
    assert created["metadata"]["uid"] and created["metadata"]["creationTimestamp"]
    assert "resourceVersion" not in created["metadata"]  # not stored, so not versioned
    patched = clusters.patch(name="dry", namespace="default", body={"spec": {"paused": True}},
                             content_type="application/merge-patch+json", dry_run="All").to_dict()
    assert patched["spec"]["paused"] is True and patched["metadata"]["generation"] == 2
    assert patched["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    replaced = dict(before, spec={"paused": True, "topology": {"version": "v1.31.0"}})
    assert clusters.replace(body=replaced, namespace="default", dry_run="All").spec.topology.version == "v1.31.0"
    deleted = clusters.delete(name="dry", namespace="default", dry_run="All").to_dict()
    assert deleted["metadata"]["name"] == "dry"
    assert server.store.revision == revision
    assert server.store.get(CLUSTER, "default", "dry") == before
    assert server.store.find(CLUSTER, "default", "dry-new") is None


def test_a_dry_run_still_answers_the_real_errors(server, clusters):
    seed_cluster(server, "taken")
    with pytest.raises(ApiException) as caught:
        clusters.create(body={"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
                              "metadata": {"name": "taken"}}, namespace="default", dry_run="All")
    assert caught.value.status == 409 and json.loads(caught.value.body)["reason"] == "AlreadyExists"
    with pytest.raises(ApiException) as caught:
        clusters.delete(name="missing", namespace="default", dry_run="All")
    assert caught.value.status == 404


def test_a_dry_run_delete_of_a_held_object_shows_the_deletion_and_keeps_the_object(server):
    seed_cluster(server, "held", finalizers=["cluster.cluster.x-k8s.io"])
    api = client.CustomObjectsApi(server.api_client())
    answer = api.delete_namespaced_custom_object("cluster.x-k8s.io", "v1beta2", "default", "clusters", "held",
                                                 dry_run="All")
    assert answer["metadata"]["deletionTimestamp"]
    assert "deletionTimestamp" not in server.store.get(CLUSTER, "default", "held")["metadata"]


def test_dry_run_in_the_delete_options_body_as_client_go_sends_it(server):
    seed_cluster(server, "body-options")
    core = client.CoreV1Api(server.api_client())
    api = client.CustomObjectsApi(server.api_client())
    api.delete_namespaced_custom_object("cluster.x-k8s.io", "v1beta2", "default", "clusters", "body-options",
                                        body=client.V1DeleteOptions(dry_run=["All"]))
    assert server.store.find(CLUSTER, "default", "body-options") is not None
    core.delete_namespace("kube-node-lease", dry_run="All")
    assert core.read_namespace("kube-node-lease").status.phase == "Active"


def test_an_unknown_dry_run_value_is_refused_as_invalid_options(server, clusters):
    with pytest.raises(ApiException) as caught:
        clusters.patch(name="taken", namespace="default", body={"spec": {"paused": True}},
                       content_type="application/merge-patch+json", dry_run="Some")
    status = json.loads(caught.value.body)
    assert (caught.value.status, status["reason"]) == (422, "Invalid")
    assert status["message"] == ('PatchOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: '
                                 '[]string{"Some"}: supported values: "All"')
    assert server.store.get(CLUSTER, "default", "taken")["spec"]["paused"] is False


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")
def test_kubectl_server_side_dry_runs_change_nothing(server, tmp_path):
    seed_cluster(server, "kubectl-dry", finalizers=["cluster.cluster.x-k8s.io"])
    revision = server.store.revision

    def kubectl(*args):
        return subprocess.run(["kubectl", "--kubeconfig", str(server.kubeconfig), *args], capture_output=True,
                              text=True, timeout=60, check=True).stdout

    assert "patched" in kubectl("patch", "clusters.cluster.x-k8s.io", "kubectl-dry", "--type", "merge",
                                "-p", '{"spec":{"paused":true}}', "--dry-run=server")
    assert "deleted" in kubectl("delete", "clusters.cluster.x-k8s.io", "kubectl-dry", "--dry-run=server",
                                "--wait=false")
    manifest = tmp_path / "cluster.yaml"
    manifest.write_text("apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata:\n  name: kubectl-diffed\n"
                        "  namespace: default\nspec:\n  paused: true\n")
    diff = subprocess.run(["kubectl", "--kubeconfig", str(server.kubeconfig), "diff", "-f", str(manifest)],
                          capture_output=True, text=True, timeout=60)
    assert diff.returncode == 1 and "+  name: kubectl-diffed" in diff.stdout, diff.stderr  # 1: differences found
    assert server.store.revision == revision
    assert server.store.get(CLUSTER, "default", "kubectl-dry")["spec"]["paused"] is False
    assert server.store.find(CLUSTER, "default", "kubectl-diffed") is None
