"""The clusterctl stand-in's sequence, against in-memory APIs (no cloud)."""

from __future__ import annotations

import itertools

import pytest

from minicloud.clusterctl import cli, sequence
from minicloud.clusterctl.cli import Mover
from minicloud.clusterctl.sequence import BLOCK_MOVE_ANNOTATION, MoveError
from minicloud.kube import seed
from minicloud.kube.resources import KINDS

_uids = itertools.count(1)


class FakeApi:
    """Objects by (kind, namespace, name), with a log of writes."""

    def __init__(self, where: str):
        self.where = where
        self.objects: dict[tuple, dict] = {}
        self.writes: list[tuple] = []
        self.namespaces = {"default"}
        self.on_list = None  # called before each list: lets a test change objects over time

    def add(self, obj: dict) -> dict:
        obj = {**obj, "metadata": {**obj["metadata"], "uid": f"{self.where}-{next(_uids)}", "resourceVersion": "7",
                                   "creationTimestamp": "2025-01-01T00:00:00Z", "generation": 1}}
        self.objects[(obj["kind"], obj["metadata"]["namespace"], obj["metadata"]["name"])] = obj
        return obj

    def list_namespace(self, namespace):
        if self.on_list:
            self.on_list(self)
        return [dict(o) for (k, ns, n), o in sorted(self.objects.items()) if ns == namespace]

    def merge_patch(self, kind, namespace, name, patch):
        self.writes.append(("patch", kind, name, patch))
        obj = self.objects[(kind, namespace, name)]
        for key, value in patch.items():
            merged = dict(obj.get(key) or {})
            for k, v in value.items():
                if v is None:
                    merged.pop(k, None)
                elif isinstance(v, dict):
                    merged[k] = {**(merged.get(k) or {}), **v}
                else:
                    merged[k] = v
            obj[key] = merged
        return obj

    def ensure_namespace(self, namespace):
        self.namespaces.add(namespace)

    def create(self, body, status):
        assert "uid" not in body["metadata"] and "resourceVersion" not in body["metadata"]
        assert body["metadata"]["namespace"] in self.namespaces
        self.writes.append(("create", body["kind"], body["metadata"]["name"]))
        return self.add({**body, "status": status or {}})

    def delete(self, kind, namespace, name):
        self.writes.append(("delete", kind, name))
        del self.objects[(kind, namespace, name)]


def seeded(name="c1", namespace="ns1", workers=1, paused=False) -> FakeApi:
    """A source API holding a provisioned cluster as minicloud seeds it, owner uids resolved."""
    api = FakeApi("src")
    uids = {}
    for item in seed.cluster_objects(name, namespace, 1, workers, 0):
        if item.kind == "Node":
            continue
        body = dict(item.body, kind=item.kind)
        body["metadata"] = dict(body["metadata"], namespace=namespace)
        if item.owner:
            owner = uids[item.owner]
            body["metadata"]["ownerReferences"] = [{"kind": item.owner[0], "name": item.owner[1],
                                                    "uid": owner, "controller": True}]
        if item.kind == "Cluster" and paused:
            body["spec"] = dict(body.get("spec") or {}, paused=True)
        obj = api.add({**body, "status": item.status})
        uids[(item.kind, obj["metadata"]["name"])] = obj["metadata"]["uid"]
    return api


def mover(source, target, version="v1.12.0", fail=lambda point: None, timeout=5.0):
    clock = itertools.count(0, 0.5)
    return Mover(source, target, version, block_move_timeout=timeout, clock=lambda: next(clock),
                 sleep=lambda s: None, fail=fail, say=lambda text: None)


def test_version_parsing_and_the_v1_12_and_v1_5_thresholds():
    assert sequence.parse_version("v1.12.0") == (1, 12, 0)
    assert sequence.parse_version("1.11.3-rc.1") == (1, 11, 3)
    with pytest.raises(ValueError):
        sequence.parse_version("latest")
    assert sequence.refuses_paused((1, 12, 0)) and sequence.refuses_paused((2, 0, 0))
    assert not sequence.refuses_paused((1, 11, 9))
    assert sequence.waits_for_block_move((1, 5, 0)) and not sequence.waits_for_block_move((1, 4, 9))


def test_a_move_copies_owners_first_remaps_uids_deletes_owned_first_and_unpauses_the_target():
    source, target = seeded(workers=1), FakeApi("dst")
    moved = mover(source, target).move("ns1")
    assert source.objects == {}, "everything left the source"
    kinds = {o["kind"] for o in moved}
    assert kinds == {"Cluster", "OpenStackCluster", "KubeadmControlPlane", "MachineDeployment", "MachineSet",
                     "Machine", "KubeadmConfig", "OpenStackMachine", "Secret"}
    # The source was paused before anything was created; the target is resumed last.
    first_create = next(i for i, w in enumerate(source.writes + target.writes) if w[0] == "create")
    assert source.writes[0] == ("patch", "Cluster", "c1", {"spec": {"paused": True}})
    assert first_create >= 1
    assert target.writes[-1] == ("patch", "Cluster", "c1", {"spec": {"paused": False}})
    created = [w for w in target.writes if w[0] == "create"]
    assert created[0][1] == "Cluster"
    target_uids = {o["metadata"]["uid"]: o for o in target.objects.values()}
    for obj in target.objects.values():
        for owner in obj["metadata"].get("ownerReferences") or []:
            assert owner["uid"] in target_uids, f"{obj['metadata']['name']} points at a source uid"
            owner_index = created.index(("create", owner["kind"], owner["name"]))
            assert owner_index < created.index(("create", obj["kind"], obj["metadata"]["name"]))
    deleted = [w for w in source.writes if w[0] == "delete"]
    assert deleted[-1] == ("delete", "Cluster", "c1")
    cleared = [w for w in source.writes if w[0] == "patch" and "metadata" in w[3]]
    assert all(w[3]["metadata"]["finalizers"] is None and
               sequence.DELETE_FOR_MOVE_ANNOTATION in w[3]["metadata"]["annotations"] for w in cleared)
    machine = next(o for o in target.objects.values() if o["kind"] == "Machine")
    assert machine["status"]["nodeRef"], "status came along"


def test_only_the_namespace_and_its_clusters_objects_move():
    source = seeded(namespace="ns1")
    other = seeded(name="c2", namespace="ns2")
    source.objects.update(other.objects)
    target = FakeApi("dst")
    mover(source, target).move("ns1")
    assert {ns for _, ns, _ in target.objects} == {"ns1"}
    assert {ns for _, ns, _ in source.objects} == {"ns2"}


@pytest.mark.parametrize("version", ["v1.12.0", "v1.13.1"])
def test_v1_12_and_later_refuse_a_paused_cluster_without_touching_anything(version):
    source, target = seeded(paused=True), FakeApi("dst")
    with pytest.raises(MoveError, match=r"^cannot start operation while Cluster ns1/c1 is paused$"):
        mover(source, target, version).move("ns1")
    assert source.writes == [] and target.writes == []


def test_older_versions_move_an_already_paused_cluster_without_pausing_it_again():
    source, target = seeded(paused=True), FakeApi("dst")
    mover(source, target, "v1.11.3").move("ns1")
    assert not any(w[0] == "patch" and w[1] == "Cluster" and "spec" in w[3] for w in source.writes)
    cluster = target.objects[("Cluster", "ns1", "c1")]
    assert cluster["spec"]["paused"] is False, "clusterctl resumes the target whatever the source was"


def test_the_wait_for_block_move_ends_when_the_annotation_is_gone():
    source, target = seeded(), FakeApi("dst")
    osc = source.objects[("OpenStackCluster", "ns1", "c1")]
    osc["metadata"]["annotations"] = {BLOCK_MOVE_ANNOTATION: "true"}
    lists = []

    def provider(api):
        lists.append(1)
        if len(lists) == 4:  # the provider finishes a while after the pause
            osc["metadata"]["annotations"] = {}

    source.on_list = provider
    mover(source, target).move("ns1")
    assert ("OpenStackCluster", "ns1", "c1") in target.objects
    assert len(lists) >= 4


def test_block_move_past_the_timeout_fails_with_the_source_paused_and_the_target_untouched():
    source, target = seeded(), FakeApi("dst")
    source.objects[("OpenStackCluster", "ns1", "c1")]["metadata"]["annotations"] = {BLOCK_MOVE_ANNOTATION: "true"}
    with pytest.raises(MoveError, match="resource is not ready to move: OpenStackCluster ns1/c1 still carries the "
                                        "clusterctl.cluster.x-k8s.io/block-move annotation after 3 s"):
        mover(source, target, timeout=3).move("ns1")
    assert target.writes == []
    assert source.objects[("Cluster", "ns1", "c1")]["spec"]["paused"] is True


def test_versions_before_block_move_do_not_wait_for_it():
    source, target = seeded(), FakeApi("dst")
    source.objects[("OpenStackCluster", "ns1", "c1")]["metadata"]["annotations"] = {BLOCK_MOVE_ANNOTATION: "true"}
    mover(source, target, "v1.4.0", timeout=0).move("ns1")
    assert source.objects == {}


def test_provisioning_not_complete_is_refused_before_the_pause():
    source = seeded()
    source.objects[("Machine", "ns1", next(n for k, _, n in source.objects if k == "Machine"))]["status"].pop("nodeRef")
    with pytest.raises(MoveError, match="cannot start the move operation while Machine ns1/.* is still "
                                        "provisioning the node"):
        mover(source, FakeApi("dst")).move("ns1")
    assert source.writes == []


@pytest.mark.parametrize("point,target_created", [("after-pause", False), ("after-copy", True)])
def test_injected_failures_leave_the_source_paused(point, target_created):
    source, target = seeded(), FakeApi("dst")

    def fail(where):
        if where == point:
            raise MoveError(f"failure injected {where}")

    with pytest.raises(MoveError, match=point):
        mover(source, target, fail=fail).move("ns1")
    assert source.objects[("Cluster", "ns1", "c1")]["spec"]["paused"] is True
    assert not any(w[0] == "delete" for w in source.writes)
    assert bool(target.objects) is target_created


def test_dry_run_writes_nothing():
    source = seeded()
    moved = mover(source, None).move("ns1", dry_run=True)
    assert moved and source.writes == []


def test_the_move_kinds_are_served_by_minicloud():
    served = {k.kind for k in KINDS}
    assert set(sequence.MOVE_KINDS) <= served


def test_the_command_line_says_it_is_a_stand_in_and_prints_the_emulated_version(capsys, monkeypatch):
    monkeypatch.setenv("MINICLOUD_CLUSTERCTL_VERSION", "v1.11.3")
    assert cli.main(["version", "-o", "short"]) == 0
    out, err = capsys.readouterr()
    assert out == "v1.11.3\n"
    assert "stand-in (NOT clusterctl" in err
    monkeypatch.setenv("MINICLOUD_CLUSTERCTL_VERSION", "newest")
    assert cli.main(["version"]) == 1
    assert "not a clusterctl version" in capsys.readouterr().err


def test_an_unknown_failure_point_is_refused(monkeypatch):
    monkeypatch.setenv("MINICLOUD_CLUSTERCTL_FAIL", "before-lunch")
    with pytest.raises(MoveError, match="not one of after-pause, after-copy"):
        cli.injected("after-pause")
