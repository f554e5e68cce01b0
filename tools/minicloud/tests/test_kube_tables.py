"""Server-side table printing: Accept negotiation, printer columns, JSONPath, ages (pure)."""

from __future__ import annotations

import datetime

import pytest

from minicloud.kube import convert, durations, jsonpath, seed, tables
from minicloud.kube.errors import ApiError
from minicloud.kube.resources import by_kind

NOW = datetime.datetime(2025, 1, 1, 1, 0, 0, tzinfo=datetime.timezone.utc)  # an hour after seed.SEED_TIME
KUBECTL_ACCEPT = ("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;"
                  "g=meta.k8s.io,application/json")


@pytest.mark.parametrize(("accept", "expected"), [
    (KUBECTL_ACCEPT, True),
    ("application/json;as=Table;v=v1;g=meta.k8s.io", True),
    ("application/json", False),
    (None, False),
    ("application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json", False),
    ("application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json", False),
    ("application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1;g=meta.k8s.io",
     True),
])
def test_wants_table(accept, expected):
    assert tables.wants_table(accept) is expected


@pytest.mark.parametrize(("seconds", "text"), [
    (-5, "<invalid>"), (-1, "0s"), (0, "0s"), (119, "119s"), (120, "2m"), (303, "5m3s"), (600, "10m"),
    (3 * 3600, "3h"), (2 * 3600 + 600, "130m"), (4 * 3600 + 600, "4h10m"), (30 * 3600, "30h"),
    (3 * 86400 + 4 * 3600, "3d4h"),
    (20 * 86400, "20d"), (3 * 365 * 86400 + 20 * 86400, "3y20d"), (9 * 365 * 86400, "9y"),
])
def test_human_durations(seconds, text):
    assert durations.human(seconds) == text


def test_jsonpath_subset():
    obj = {"metadata": {"labels": {"cluster.x-k8s.io/cluster-name": "c1"},
                        "ownerReferences": [{"kind": "MachineSet", "name": "ms"}, {"kind": "Machine", "name": "m"}]},
           "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "Paused", "status": "False"}],
                      "ready": True}}
    assert jsonpath.find(obj, r".metadata.labels['cluster\.x-k8s\.io/cluster-name']") == ["c1"]
    assert jsonpath.find(obj, r".metadata.labels.cluster\.x-k8s\.io/cluster-name") == ["c1"]
    assert jsonpath.find(obj, '.status.conditions[?(@.type=="Paused")].status') == ["False"]
    assert jsonpath.find(obj, '.metadata.ownerReferences[?(@.kind=="Machine")].name') == ["m"]
    assert jsonpath.find(obj, ".status.conditions[*].type") == ["Ready", "Paused"]
    assert jsonpath.find(obj, ".status.conditions[-1].type") == ["Paused"]
    assert jsonpath.find(obj, "{.status.ready}") == [True] and jsonpath.text(True) == "true"
    assert jsonpath.find(obj, ".spec.missing") == []


def _views(kind_name, version):
    kind = by_kind(kind_name)
    result = []
    for item in seed.cluster_objects("c1", workers=1):
        if item.kind == kind_name:
            body = dict(item.body, status=item.status)
            body["metadata"] = dict(body["metadata"], namespace="default", creationTimestamp=seed.SEED_TIME)
            result.append(convert.from_hub(body, kind_name, version) if convert.converts(kind_name) else body)
    return kind, result


def test_cluster_table_in_both_versions():
    kind, views = _views("Cluster", "v1beta2")
    table = tables.table(kind, "v1beta2", views, {"resourceVersion": "7"}, now=NOW)
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    assert table["metadata"] == {"resourceVersion": "7"}
    names = [c["name"] for c in table["columnDefinitions"]]
    assert names[:3] == ["Name", "ClusterClass", "Available"] and names[-3:] == ["Phase", "Age", "Version"]
    row = dict(zip(names, table["rows"][0]["cells"], strict=True))
    assert row["Name"] == "c1" and row["Available"] == "True" and row["Phase"] == "Provisioned"
    assert row["Age"] == "60m" and row["ClusterClass"] is None
    assert table["rows"][0]["object"] == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                          "metadata": views[0]["metadata"]}
    kind, views = _views("Cluster", "v1beta1")
    old = tables.table(kind, "v1beta1", views, {}, "Object", NOW)
    assert [c["name"] for c in old["columnDefinitions"]] == ["Name", "ClusterClass", "Phase", "Age", "Version"]
    assert old["rows"][0]["object"]["apiVersion"] == "cluster.x-k8s.io/v1beta1"


def test_capi_and_capo_columns():
    kind, views = _views("KubeadmControlPlane", "v1beta2")
    row = tables.table(kind, "v1beta2", views, {}, "None", NOW)["rows"][0]
    assert "object" not in row
    assert row["cells"][:4] == ["c1-control-plane", "c1", "True", 1]
    kind, views = _views("KubeadmControlPlane", "v1beta1")
    table = tables.table(kind, "v1beta1", views, {}, now=NOW)
    cells = dict(zip([c["name"] for c in table["columnDefinitions"]], table["rows"][0]["cells"], strict=True))
    assert cells["Initialized"] is True and cells["Ready"] == 1 and cells["Version"] == seed.KUBERNETES_VERSION
    kind, views = _views("OpenStackMachine", "v1beta1")
    for obj in views:
        obj["metadata"]["ownerReferences"] = [{"kind": "Machine", "name": obj["metadata"]["name"]}]
    table = tables.table(kind, "v1beta1", views, {}, now=NOW)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Cluster", "Ready", "ProviderID", "Machine",
                                                               "Age"]
    assert table["rows"][0]["cells"][2] == "true" and table["rows"][0]["cells"][4] == views[0]["metadata"]["name"]


def test_built_in_printers():
    node = seed.node("n1", "10.244.0.0/24", "10.6.1.10", {"node-role.kubernetes.io/control-plane": ""})
    node["metadata"]["creationTimestamp"] = seed.SEED_TIME
    node["spec"]["unschedulable"] = True
    table = tables.table(by_kind("Node"), "v1", [node], {}, now=NOW)
    assert [c["name"] for c in table["columnDefinitions"] if c["priority"] == 0] == [
        "Name", "Status", "Roles", "Age", "Version"]
    assert table["rows"][0]["cells"][:6] == ["n1", "Ready,SchedulingDisabled", "control-plane", "60m",
                                             seed.KUBERNETES_VERSION, "10.6.1.10"]
    secret = {"metadata": {"name": "s", "creationTimestamp": seed.SEED_TIME}, "type": "Opaque",
              "data": {"a": "", "b": ""}}
    assert tables.table(by_kind("Secret"), "v1", [secret], {}, now=NOW)["rows"][0]["cells"] == ["s", "Opaque", 2,
                                                                                                  "60m"]
    namespace = {"metadata": {"name": "default", "creationTimestamp": seed.SEED_TIME}, "status": {"phase": "Active"}}
    assert tables.table(by_kind("Namespace"), "v1", [namespace], {}, now=NOW)["rows"][0]["cells"] == [
        "default", "Active", "60m"]


def test_event_printer_in_both_groups():
    from minicloud.kube import printers

    core = {"metadata": {"name": "e1"}, "involvedObject": {"kind": "Machine", "name": "m1"}, "type": "Normal",
            "reason": "Created", "message": " made it ", "lastTimestamp": "2025-01-01T00:59:00Z",
            "firstTimestamp": "2025-01-01T00:30:00Z", "count": 3, "source": {"component": "kcp"}}
    cells = printers.printer("", "Event").cells(core, NOW)
    assert cells == ["60s", "Normal", "Created", "machine/m1", "", "kcp", "made it", "30m", 3, "e1"]
    new = {"metadata": {"name": "e2"}, "regarding": {"kind": "Node", "name": "n"}, "type": "Warning",
           "reason": "Gone", "note": "lost", "eventTime": "2025-01-01T00:58:00.000000Z",
           "reportingController": "ctl", "reportingInstance": "i"}
    cells = printers.printer("events.k8s.io", "Event").cells(new, NOW)
    assert cells == ["2m", "Warning", "Gone", "node/n", "", "ctl, i", "lost", "2m", 1, "e2"]


def test_include_object_values():
    assert tables.include_object(None) == "Metadata" and tables.include_object("Object") == "Object"
    with pytest.raises(ApiError):
        tables.include_object("Everything")
