"""The emulated API server driven by the official kubernetes client, typed and dynamic."""

from __future__ import annotations

import json

import pytest
import urllib3
from kubernetes import client, config, dynamic
from kubernetes.client import ApiException


@pytest.fixture(scope="module")
def api(server):
    return server.api_client()


@pytest.fixture(scope="module")
def core(api):
    return client.CoreV1Api(api)


@pytest.fixture(scope="module")
def custom(api):
    return client.CustomObjectsApi(api)


@pytest.fixture(scope="module")
def dyn(api, tmp_path_factory):
    return dynamic.DynamicClient(api, cache_file=str(tmp_path_factory.mktemp("cache") / "discovery.json"))


def status_body(exc: ApiException) -> dict:
    return json.loads(exc.body)


def cluster_body(name, version="v1beta2", **spec):
    return {"apiVersion": f"cluster.x-k8s.io/{version}", "kind": "Cluster",
            "metadata": {"name": name, "labels": {"env": "test"}}, "spec": spec or {"paused": False}}


def test_version_and_discovery(api, dyn):
    assert client.VersionApi(api).get_code().major == "1"
    groups = {g.name: g for g in client.ApisApi(api).get_api_versions().groups}
    assert [v.version for v in groups["cluster.x-k8s.io"].versions] == ["v1beta2", "v1beta1"]
    assert groups["infrastructure.cluster.x-k8s.io"].preferred_version.version == "v1beta1"
    clusters = dyn.resources.get(api_version="cluster.x-k8s.io/v1beta1", kind="Cluster")
    assert clusters.namespaced and clusters.name == "clusters" and "status" in clusters.subresources
    assert dyn.resources.get(api_version="v1", kind="Node").namespaced is False


def test_kubeconfig_loads_with_load_kube_config(server):
    configuration = client.Configuration()
    config.load_kube_config(config_file=str(server.kubeconfig), context="minicloud",
                            client_configuration=configuration)
    assert configuration.host == server.url and configuration.ssl_ca_cert
    core = client.CoreV1Api(client.ApiClient(configuration))
    assert "default" in [n.metadata.name for n in core.list_namespace().items]


def test_no_token_is_401_status(server):
    http = urllib3.PoolManager(ca_certs=str(server.credentials.ca_cert))
    answer = http.request("GET", server.url + "/api/v1/namespaces")
    assert answer.status == 401
    assert json.loads(answer.data) == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                       "message": "Unauthorized", "reason": "Unauthorized", "code": 401}
    wrong = http.request("GET", server.url + "/api/v1/namespaces", headers={"Authorization": "Bearer nope"})
    assert wrong.status == 401


def test_untrusted_ca_is_refused(server):
    http = urllib3.PoolManager(cert_reqs="CERT_REQUIRED", ca_certs=None)
    with pytest.raises(urllib3.exceptions.MaxRetryError):
        http.request("GET", server.url + "/version", retries=urllib3.Retry(0))


def test_not_found_status_body(custom):
    with pytest.raises(ApiException) as caught:
        custom.get_namespaced_custom_object("cluster.x-k8s.io", "v1beta2", "default", "clusters", "missing")
    assert caught.value.status == 404
    assert status_body(caught.value) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'clusters.cluster.x-k8s.io "missing" not found', "reason": "NotFound",
        "details": {"name": "missing", "group": "cluster.x-k8s.io", "kind": "clusters"}, "code": 404}


def test_typed_secret_crud_and_selectors(core):
    for name, tier in (("s-cp", "cp"), ("s-worker", "worker")):
        core.create_namespaced_secret("default", client.V1Secret(
            metadata=client.V1ObjectMeta(name=name, labels={"tier": tier}), string_data={"k": "v"}))
    assert [s.metadata.name for s in core.list_namespaced_secret("default", label_selector="tier=cp").items] == ["s-cp"]
    assert [s.metadata.name for s in core.list_secret_for_all_namespaces(field_selector="metadata.name=s-worker")
            .items] == ["s-worker"]
    patched = core.patch_namespaced_secret("s-cp", "default", {"metadata": {"labels": {"extra": "1"}}})
    assert patched.metadata.labels == {"tier": "cp", "extra": "1"}  # strategic merge accepted for core kinds
    deleted = core.delete_namespaced_secret("s-cp", "default")
    assert deleted["status"] == "Success" and deleted["details"]["name"] == "s-cp"
    with pytest.raises(ApiException) as caught:
        core.read_namespaced_secret("s-cp", "default")
    assert caught.value.status == 404


def test_create_conflict_and_replace(custom):
    group, version, plural = "cluster.x-k8s.io", "v1beta2", "clusters"
    created = custom.create_namespaced_custom_object(group, version, "default", plural, cluster_body("rc"))
    assert created["metadata"]["generation"] == 1
    with pytest.raises(ApiException) as caught:
        custom.create_namespaced_custom_object(group, version, "default", plural, cluster_body("rc"))
    assert caught.value.status == 409 and status_body(caught.value)["reason"] == "AlreadyExists"
    created["spec"]["paused"] = True
    replaced = custom.replace_namespaced_custom_object(group, version, "default", plural, "rc", created)
    assert replaced["metadata"]["generation"] == 2
    created["spec"]["paused"] = False  # still carries the old resourceVersion
    with pytest.raises(ApiException) as caught:
        custom.replace_namespaced_custom_object(group, version, "default", plural, "rc", created)
    assert caught.value.status == 409
    assert status_body(caught.value)["message"] == (
        'Operation cannot be fulfilled on clusters.cluster.x-k8s.io "rc": the object has been modified; '
        "please apply your changes to the latest version and try again")


def test_dynamic_merge_and_json_patch_and_status(dyn):
    clusters = dyn.resources.get(api_version="cluster.x-k8s.io/v1beta2", kind="Cluster")
    clusters.create(body=cluster_body("pc"), namespace="default")
    merged = clusters.patch(name="pc", namespace="default", body={"spec": {"paused": True}},
                            content_type="application/merge-patch+json")
    assert merged.spec.paused is True and merged.metadata.generation == 2
    jsoned = clusters.patch(name="pc", namespace="default", content_type="application/json-patch+json",
                            body=[{"op": "add", "path": "/metadata/annotations", "value": {"a": "b"}}])
    assert jsoned.to_dict()["metadata"]["annotations"] == {"a": "b"} and jsoned.metadata.generation == 2
    status = clusters.status.patch(name="pc", namespace="default", body={"status": {"phase": "Provisioned"},
                                                                         "spec": {"paused": False}},
                                   content_type="application/merge-patch+json")
    assert status.status.phase == "Provisioned" and status.spec.paused is True
    assert status.metadata.generation == 2
    with pytest.raises(ApiException) as caught:
        clusters.patch(name="pc", namespace="default", body={"spec": {"paused": False}},
                       content_type="application/strategic-merge-patch+json")
    assert caught.value.status == 415


def test_stale_resource_version_in_patch_is_conflict(dyn):
    clusters = dyn.resources.get(api_version="cluster.x-k8s.io/v1beta2", kind="Cluster")
    obj = clusters.create(body=cluster_body("sc"), namespace="default")
    clusters.patch(name="sc", namespace="default", body={"spec": {"paused": True}},
                   content_type="application/merge-patch+json")
    with pytest.raises(ApiException) as caught:
        clusters.patch(name="sc", namespace="default", content_type="application/merge-patch+json",
                       body={"metadata": {"resourceVersion": obj.metadata.resourceVersion}, "spec": {"paused": False}})
    assert caught.value.status == 409


def test_versions_are_views_of_one_object(dyn):
    old = dyn.resources.get(api_version="cluster.x-k8s.io/v1beta1", kind="Cluster")
    new = dyn.resources.get(api_version="cluster.x-k8s.io/v1beta2", kind="Cluster")
    old.create(namespace="default", body=cluster_body(
        "vc", "v1beta1", paused=False, infrastructureRef={"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                                                          "kind": "OpenStackCluster", "name": "vc"}))
    old.status.patch(name="vc", namespace="default", content_type="application/merge-patch+json",
                     body={"status": {"infrastructureReady": True}})
    seen = new.get(name="vc", namespace="default")
    assert seen.apiVersion == "cluster.x-k8s.io/v1beta2"
    assert seen.status.initialization.infrastructureProvisioned is True
    assert seen.to_dict()["spec"]["infrastructureRef"] == {"apiGroup": "infrastructure.cluster.x-k8s.io",
                                                     "kind": "OpenStackCluster", "name": "vc"}
    assert old.get(name="vc", namespace="default").status.infrastructureReady is True


def test_finalizer_deletion(dyn):
    clusters = dyn.resources.get(api_version="cluster.x-k8s.io/v1beta2", kind="Cluster")
    body = cluster_body("fc")
    body["metadata"]["finalizers"] = ["cluster.cluster.x-k8s.io"]
    clusters.create(body=body, namespace="default")
    held = clusters.delete(name="fc", namespace="default")
    assert held.metadata.deletionTimestamp and held.to_dict()["metadata"]["finalizers"] == ["cluster.cluster.x-k8s.io"]
    assert clusters.get(name="fc", namespace="default").metadata.deletionTimestamp
    clusters.patch(name="fc", namespace="default", body={"metadata": {"finalizers": None}},
                   content_type="application/merge-patch+json")
    with pytest.raises(ApiException) as caught:
        clusters.get(name="fc", namespace="default")
    assert caught.value.status == 404


def test_list_label_selector_and_paging(dyn):
    nodes = dyn.resources.get(api_version="v1", kind="Node")
    for i in range(3):
        nodes.create(body={"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"page-{i}",
                                                                          "labels": {"pool": "paging"}}})
    first = nodes.get(label_selector="pool=paging", limit=2)
    assert len(first.items) == 2 and first.metadata["continue"]
    rest = nodes.get(label_selector="pool=paging", limit=2, _continue=first.metadata["continue"])
    assert [n.metadata.name for n in rest.items] == ["page-2"]


def test_configmaps_are_served(core):
    created = core.create_namespaced_config_map("default", client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="settings"), data={"mode": "rehearsal"}))
    assert created.data == {"mode": "rehearsal"} and created.metadata.resource_version
    core.patch_namespaced_config_map("settings", "default", {"data": {"mode": "live"}})
    assert core.read_namespaced_config_map("settings", "default").data == {"mode": "live"}


def test_an_event_is_one_object_in_both_event_apis(server, core, api):
    from minicloud.kube.controllers import events
    from minicloud.kube.resources import by_kind

    machine = server.store.create(by_kind("Node"), {"apiVersion": "v1", "kind": "Node",
                                                    "metadata": {"name": "event-node"}})
    for _ in range(2):  # the same event twice: aggregated into one with count 2, as client-go's recorder does
        events.record(server.store, machine, "Drained", "node drained", "minicloud-test")
    listed = core.list_namespaced_event("default", field_selector="involvedObject.name=event-node").items
    assert [(e.reason, e.message, e.count, e.involved_object.kind) for e in listed] == [
        ("Drained", "node drained", 2, "Node")]
    same = client.EventsV1Api(api).list_namespaced_event("default").items
    new_shape = [e for e in same if e.metadata.name == listed[0].metadata.name]
    assert [(e.reason, e.note, e.deprecated_count, e.regarding.name, e.reporting_controller) for e in new_shape] == [
        ("Drained", "node drained", 2, "event-node", "minicloud-test")]


def test_a_failed_json_patch_test_is_answered_in_kube_apiservers_words(dyn):
    clusters = dyn.resources.get(api_version="cluster.x-k8s.io/v1beta2", kind="Cluster")
    clusters.create(body=cluster_body("tested"), namespace="default")
    with pytest.raises(ApiException) as caught:
        clusters.patch(name="tested", namespace="default", content_type="application/json-patch+json",
                       body=[{"op": "test", "path": "/spec/paused", "value": True},
                             {"op": "replace", "path": "/spec/paused", "value": False}])
    status = status_body(caught.value)
    assert (caught.value.status, status["reason"], status["message"]) == (
        422, "Invalid", "the server rejected our request due to an error in our request")
    assert status["details"]["causes"][0]["message"] == "testing value /spec/paused failed: test failed"


def test_server_side_apply_creates_a_missing_object_then_merges(dyn):
    clusters = dyn.resources.get(api_version="cluster.x-k8s.io/v1beta2", kind="Cluster")
    body = {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "metadata": {"name": "applied"},
            "spec": {"paused": True}}
    with pytest.raises(ApiException) as caught:
        clusters.server_side_apply(body=body, name="applied", namespace="default")
    assert caught.value.status == 422 and "fieldManager: Required value" in status_body(caught.value)["message"]
    created = clusters.server_side_apply(body=body, name="applied", namespace="default", field_manager="rehearsal")
    assert created.to_dict()["spec"] == {"paused": True}
    merged = clusters.server_side_apply(body={**body, "spec": {"topology": {"version": "v1.31.0"}}}, name="applied",
                                        namespace="default", field_manager="rehearsal")
    assert merged.to_dict()["spec"] == {"paused": True, "topology": {"version": "v1.31.0"}}


def test_leases_are_served_with_optimistic_concurrency(api):
    """coordination.k8s.io/v1 Lease, namespaced, as the real API server serves it: a create of an existing name is
    409 AlreadyExists, a replace with a stale resourceVersion 409 Conflict (the one way two actors race for it)."""
    leases = client.CoordinationV1Api(api)
    body = client.V1Lease(metadata=client.V1ObjectMeta(name="flightcontrol-c1"),
                          spec=client.V1LeaseSpec(holder_identity="a", lease_duration_seconds=30))
    created = leases.create_namespaced_lease("default", body)
    assert created.spec.holder_identity == "a" and created.metadata.resource_version
    with pytest.raises(ApiException) as caught:
        leases.create_namespaced_lease("default", body)
    assert caught.value.status == 409 and status_body(caught.value)["reason"] == "AlreadyExists"
    created.spec.holder_identity = "b"
    replaced = leases.replace_namespaced_lease("flightcontrol-c1", "default", created)
    assert replaced.spec.holder_identity == "b"
    created.spec.holder_identity = "c"  # still carries the first resourceVersion
    with pytest.raises(ApiException) as caught:
        leases.replace_namespaced_lease("flightcontrol-c1", "default", created)
    assert caught.value.status == 409 and status_body(caught.value)["reason"] == "Conflict"
    assert leases.read_namespaced_lease("flightcontrol-c1", "default").spec.holder_identity == "b"
    assert [item.metadata.name for item in leases.list_namespaced_lease("default").items] == ["flightcontrol-c1"]
    leases.delete_namespaced_lease("flightcontrol-c1", "default")
    with pytest.raises(ApiException) as caught:
        leases.read_namespaced_lease("flightcontrol-c1", "default")
    assert caught.value.status == 404
