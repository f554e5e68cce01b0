"""The store's rules (generation, resourceVersion, finalizers, status subresource), selectors and patches."""

from __future__ import annotations

import threading

import pytest

from minicloud.kube import patches
from minicloud.kube.errors import ApiError
from minicloud.kube.resources import by_kind
from minicloud.kube.selectors import FieldSelector, LabelSelector
from minicloud.kube.store import Store

CLUSTER = by_kind("Cluster")
SECRET = by_kind("Secret")
NODE = by_kind("Node")


@pytest.fixture
def store():
    store = Store()
    store.create(by_kind("Namespace"), {"metadata": {"name": "default"}})
    return store


def cluster(name="c1", **spec):
    return {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "metadata": {"name": name},
            "spec": spec or {"paused": False}}


def test_create_sets_server_fields(store):
    obj = store.create(CLUSTER, cluster(), "default")
    meta = obj["metadata"]
    assert meta["generation"] == 1 and meta["uid"] and meta["creationTimestamp"].endswith("Z")
    assert meta["namespace"] == "default" and int(meta["resourceVersion"]) > 0


def test_create_twice_is_already_exists(store):
    store.create(CLUSTER, cluster(), "default")
    with pytest.raises(ApiError) as caught:
        store.create(CLUSTER, cluster(), "default")
    assert caught.value.code == 409 and caught.value.reason == "AlreadyExists"
    assert caught.value.message == 'clusters.cluster.x-k8s.io "c1" already exists'


def test_create_in_missing_namespace_is_not_found(store):
    with pytest.raises(ApiError) as caught:
        store.create(CLUSTER, cluster(), "nowhere")
    assert caught.value.code == 404 and caught.value.message == 'namespaces "nowhere" not found'


def test_generation_moves_on_spec_changes_only(store):
    obj = store.create(CLUSTER, cluster(), "default")
    obj["metadata"]["labels"] = {"a": "b"}
    obj = store.replace(CLUSTER, obj, "default", "c1")
    assert obj["metadata"]["generation"] == 1
    obj["status"] = {"phase": "Provisioned"}
    obj = store.replace(CLUSTER, obj, "default", "c1", subresource="status")
    assert obj["metadata"]["generation"] == 1 and obj["status"] == {"phase": "Provisioned"}
    obj["spec"]["paused"] = True
    obj = store.replace(CLUSTER, obj, "default", "c1")
    assert obj["metadata"]["generation"] == 2


def test_status_subresource_separates_writes(store):
    obj = store.create(CLUSTER, dict(cluster(), status={"phase": "ignored on create"}), "default")
    assert "status" not in obj
    obj["status"] = {"phase": "Provisioned"}
    obj["spec"]["paused"] = True
    after = store.replace(CLUSTER, obj, "default", "c1")  # the main resource ignores status
    assert "status" not in after and after["spec"]["paused"] is True
    after["status"] = {"phase": "Provisioned"}
    after["spec"]["paused"] = False
    final = store.replace(CLUSTER, after, "default", "c1", subresource="status")  # /status ignores spec
    assert final["status"] == {"phase": "Provisioned"} and final["spec"]["paused"] is True


def test_stale_resource_version_is_conflict(store):
    obj = store.create(CLUSTER, cluster(), "default")
    fresh = store.replace(CLUSTER, dict(obj, spec={"paused": True}), "default", "c1")
    assert fresh["metadata"]["resourceVersion"] != obj["metadata"]["resourceVersion"]
    with pytest.raises(ApiError) as caught:
        store.replace(CLUSTER, dict(obj, spec={"paused": False}), "default", "c1")
    assert caught.value.code == 409 and caught.value.reason == "Conflict"
    assert caught.value.message == (
        'Operation cannot be fulfilled on clusters.cluster.x-k8s.io "c1": the object has been modified; '
        "please apply your changes to the latest version and try again")


def test_noop_write_keeps_resource_version(store):
    obj = store.create(CLUSTER, cluster(), "default")
    again = store.replace(CLUSTER, obj, "default", "c1")
    assert again["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"]


def test_finalizers_hold_deletion_until_removed(store):
    obj = cluster()
    obj["metadata"]["finalizers"] = ["cluster.cluster.x-k8s.io"]
    store.create(CLUSTER, obj, "default")
    held, gone = store.delete(CLUSTER, "default", "c1")
    assert not gone and held["metadata"]["deletionTimestamp"]
    assert store.get(CLUSTER, "default", "c1")["metadata"]["deletionTimestamp"]

    def drop_finalizers(current):
        current["metadata"]["finalizers"] = []
        return current

    store.update(CLUSTER, "default", "c1", drop_finalizers)
    assert store.find(CLUSTER, "default", "c1") is None


def test_delete_without_finalizers_is_immediate(store):
    store.create(SECRET, {"metadata": {"name": "s"}}, "default")
    _, gone = store.delete(SECRET, "default", "s")
    assert gone and store.find(SECRET, "default", "s") is None


def test_list_with_selectors(store):
    for name, labels in (("a", {"tier": "cp"}), ("b", {"tier": "worker"}), ("c", {})):
        store.create(SECRET, {"metadata": {"name": name, "labels": labels}, "type": "Opaque"}, "default")
    names = lambda items: [i["metadata"]["name"] for i in items]  # noqa: E731
    assert names(store.list(SECRET, "default", "tier=cp")[0]) == ["a"]
    assert names(store.list(SECRET, "default", "tier")[0]) == ["a", "b"]
    assert names(store.list(SECRET, "default", "!tier")[0]) == ["c"]
    assert names(store.list(SECRET, "default", "tier in (cp,worker),tier!=worker")[0]) == ["a"]
    assert names(store.list(SECRET, "default", field_selector="metadata.name=b")[0]) == ["b"]
    with pytest.raises(ApiError) as caught:
        store.list(SECRET, "default", field_selector="spec.nothing=1")
    assert caught.value.code == 400 and "field label not supported" in caught.value.message


def test_concurrent_updates_lose_nothing(store):
    store.create(CLUSTER, dict(cluster(), spec={"count": 0}), "default")

    def bump():
        for _ in range(50):
            store.update(CLUSTER, "default", "c1", lambda c: dict(c, spec={"count": c["spec"]["count"] + 1}))

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    obj = store.get(CLUSTER, "default", "c1")
    assert obj["spec"]["count"] == 200 and obj["metadata"]["generation"] == 201


def test_label_selector_parsing():
    assert LabelSelector.parse("a notin (x, y)").matches({"a": "z"})
    assert not LabelSelector.parse("a notin (x, y)").matches({"a": "x"})
    assert LabelSelector.parse("").matches({})


def test_field_selector_not_equal():
    selector = FieldSelector.parse("type!=Opaque", ("type",))
    assert selector.matches({"type": "kubernetes.io/tls"}) and not selector.matches({"type": "Opaque"})


def test_merge_patch_removes_with_null_and_replaces_lists():
    current = {"metadata": {"labels": {"a": "1", "b": "2"}, "finalizers": ["x", "y"]}}
    patched = patches.apply(patches.MERGE, current, {"metadata": {"labels": {"a": None}, "finalizers": ["y"]}}, True)
    assert patched == {"metadata": {"labels": {"b": "2"}, "finalizers": ["y"]}}


def test_json_patch_and_its_test_op():
    current = {"spec": {"paused": False}}
    assert patches.apply(patches.JSON_PATCH, current, [{"op": "replace", "path": "/spec/paused", "value": True}],
                         True) == {"spec": {"paused": True}}
    with pytest.raises(ApiError) as caught:
        patches.apply(patches.JSON_PATCH, current, [{"op": "test", "path": "/spec/paused", "value": True}], True)
    assert caught.value.code == 422


def test_strategic_merge_is_415_for_custom_resources_only():
    with pytest.raises(ApiError) as caught:
        patches.apply(patches.STRATEGIC, {}, {"a": 1}, custom=True)
    assert caught.value.code == 415 and caught.value.reason == "UnsupportedMediaType"
    assert patches.apply(patches.STRATEGIC, {}, {"a": 1}, custom=False) == {"a": 1}
