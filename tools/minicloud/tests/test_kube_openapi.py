"""OpenAPI documents and strict field validation of the emulated API server (pure)."""

from __future__ import annotations

import json

import pytest

from minicloud.kube import convert, resources, seed
from minicloud.kube.openapi import documents, routes, validation
from minicloud.kube.openapi.validation import strict_error, unknown_fields, warning_headers


def test_v2_names_definitions_like_kube_apiserver():
    doc = documents.v2()
    assert doc["swagger"] == "2.0"
    cluster = doc["definitions"]["io.x-k8s.cluster.v1beta2.Cluster"]
    assert cluster["x-kubernetes-group-version-kind"] == [
        {"group": "cluster.x-k8s.io", "kind": "Cluster", "version": "v1beta2"}]
    assert "paused" in cluster["properties"]["spec"]["properties"]
    for name in ("io.k8s.api.core.v1.Secret", "io.x-k8s.cluster.controlplane.v1beta1.KubeadmControlPlane",
                 "io.x-k8s.cluster.infrastructure.v1beta1.OpenStackCluster", "io.x-k8s.cluster.v1beta1.MachineList",
                 "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "io.k8s.apimachinery.pkg.apis.meta.v1.Status"):
        assert name in doc["definitions"], name


def test_v2_write_operations_carry_the_field_validation_parameter():
    item = documents.v2()["paths"]["/apis/cluster.x-k8s.io/v1beta2/namespaces/{namespace}/clusters/{name}"]
    for method in ("put", "patch"):
        names = [p["name"] for p in item[method]["parameters"]]
        assert {"dryRun", "fieldManager", "fieldValidation"} <= set(names)
    assert item["patch"]["x-kubernetes-action"] == "patch"
    assert "application/strategic-merge-patch+json" not in item["patch"]["consumes"]
    secret = documents.v2()["paths"]["/api/v1/namespaces/{namespace}/secrets/{name}"]
    assert "application/strategic-merge-patch+json" in secret["patch"]["consumes"]


def test_v3_index_and_group_version_document():
    index = documents.v3_index()["paths"]
    assert index["api/v1"]["serverRelativeURL"].startswith("/openapi/v3/api/v1?hash=")
    assert "apis/cluster.x-k8s.io/v1beta1" in index and "apis/infrastructure.cluster.x-k8s.io/v1beta1" in index
    doc = documents.v3("apis/cluster.x-k8s.io/v1beta1")
    assert doc["openapi"].startswith("3.0")
    machine = doc["components"]["schemas"]["io.x-k8s.cluster.v1beta1.Machine"]
    assert machine["properties"]["metadata"]["allOf"] == [
        {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]
    patch = doc["paths"]["/apis/cluster.x-k8s.io/v1beta1/namespaces/{namespace}/machines/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"]["kind"] == "Machine"
    assert any(p["name"] == "fieldValidation" and p["in"] == "query" for p in patch["parameters"])
    assert set(patch["requestBody"]["content"]) == {"application/json-patch+json", "application/merge-patch+json",
                                                                    "application/apply-patch+yaml"}
    assert documents.v3("apis/nothing/v1") is None
    assert "$ref" not in json.dumps(doc).replace('"$ref": "#/components/schemas/', "")


def test_accept_negotiation_of_v2():
    assert routes.accepts_json(None) and routes.accepts_json("application/json, */*")
    assert not routes.accepts_json(routes.PROTOBUF_V2)


@pytest.mark.parametrize("kind_name", sorted({o.kind for o in seed.cluster_objects("c", workers=1)}))
def test_seeded_objects_have_no_unknown_field_in_any_version(kind_name):
    for item in (o for o in seed.cluster_objects("c", workers=1) if o.kind == kind_name):
        body = dict(item.body, status=item.status) if item.status else dict(item.body)
        kind = resources.by_kind(kind_name)
        for version in kind.versions:
            view = convert.from_hub(body, kind_name, version) if convert.converts(kind_name) else body
            assert unknown_fields(kind_name, kind.api_version(version), view) == []


def test_unknown_fields_are_dotted_paths():
    body = {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "metadata": {"name": "c", "colour": 1},
            "spec": {"paused": True, "foo": 1, "clusterNetwork": {"pods": {"cidrBlocks": ["10.0.0.0/8"], "x": 2}},
                     "topology": {"anything": {"goes": True}}},
            "status": {"conditions": [{"type": "Ready", "status": "True", "bogus": ""}]}}
    assert unknown_fields("Cluster", "cluster.x-k8s.io/v1beta2", body) == [
        "metadata.colour", "spec.clusterNetwork.pods.x", "spec.foo", "status.conditions[0].bogus"]
    assert unknown_fields("Cluster", "cluster.x-k8s.io/v1beta1", {"spec": {"rollout": {}}}) == ["spec.rollout"]
    assert unknown_fields("KubeadmControlPlane", "controlplane.cluster.x-k8s.io/v1beta1",
                          {"spec": {"rolloutAfter": "2025-01-01T00:00:00Z"}}) == []
    assert unknown_fields("KubeadmControlPlane", "controlplane.cluster.x-k8s.io/v1beta2",
                          {"spec": {"rolloutAfter": "x", "rollout": {"after": "y"}}}) == ["spec.rolloutAfter"]
    assert unknown_fields("Secret", "v1", {"data": {"a": "Yg=="}, "spec": {}}) == ["spec"]
    assert unknown_fields("Nothing", "v1", {"anything": 1}) == []


def test_strict_error_and_warning_builders():
    error = strict_error("Cluster", "v1beta2", ["spec.foo", "spec.bar"])
    assert error.code == 400 and error.reason == "BadRequest"
    assert error.message == ('Cluster in version "v1beta2" cannot be handled as a Cluster: strict decoding error: '
                             'unknown field "spec.foo", unknown field "spec.bar"')
    assert strict_error("Cluster", "v1beta2", ["spec.foo"], on_patch=True).message == (
        'strict decoding error: unknown field "spec.foo"')
    assert warning_headers(["spec.foo"]) == ['299 - "unknown field \\"spec.foo\\""']


def test_field_validation_directive():
    assert validation.directive("Strict") == "Strict" and validation.directive("warn") == "Warn"
    assert validation.directive(None) == "Ignore"
    with pytest.raises(validation.ApiError):
        validation.directive("Sometimes")


def test_check_fields_per_directive():
    sent = {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "spec": {"paused": True, "foo": 1}}
    assert validation.check_fields("Cluster", "cluster.x-k8s.io/v1beta1", sent, None) == []
    assert validation.check_fields("Cluster", "cluster.x-k8s.io/v1beta1", sent, "Ignore") == []
    assert validation.check_fields("Cluster", "cluster.x-k8s.io/v1beta1", sent, "Warn") == [
        '299 - "unknown field \\"spec.foo\\""']
    with pytest.raises(validation.ApiError) as caught:
        validation.check_fields("Cluster", "cluster.x-k8s.io/v1beta1", sent, "Strict")
    assert caught.value.message.startswith('Cluster in version "v1beta1" cannot be handled as a Cluster: ')
    assert validation.check_fields("Cluster", "cluster.x-k8s.io/v1beta1", sent, "Strict", before=sent) == []
    with pytest.raises(validation.ApiError) as caught:
        validation.check_fields("Cluster", "cluster.x-k8s.io/v1beta1", sent, "Strict", before={"spec": {}})
    assert caught.value.message == 'strict decoding error: unknown field "spec.foo"'
