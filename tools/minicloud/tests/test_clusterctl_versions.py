"""The clusterctl stand-in's choice of versions: every kind read and written at the version the source's CRD
stores it at, and a target that does not serve that version refused before any write (no cloud)."""

from __future__ import annotations

import pytest

from minicloud.clusterctl import cli, versions
from minicloud.clusterctl.kubeapi import KubeApi
from minicloud.clusterctl.sequence import MOVE_KINDS, MoveError
from minicloud.kube.capo_crds import CapoCrds

V014, V015 = CapoCrds("v1beta1").describe(), CapoCrds("v1beta2").describe()
INFRA = "infrastructure.cluster.x-k8s.io"


def test_capo_kinds_are_stored_as_the_planes_capo_crds_say_and_the_rest_as_minicloud_serves_them():
    old, new = versions.plane_crds(V014), versions.plane_crds(V015)
    assert old.storage["OpenStackCluster"] == old.storage["OpenStackMachine"] == "v1beta1"
    assert new.storage["OpenStackCluster"] == new.storage["OpenStackMachine"] == "v1beta2"
    assert new.served["OpenStackMachine"] == ("v1beta1", "v1beta2") and old.served["OpenStackMachine"] == ("v1beta1",)
    for plane in (old, new):
        assert plane.storage["Cluster"] == plane.storage["KubeadmControlPlane"] == "v1beta2"
        assert plane.storage["Secret"] == "v1"
    assert (old.release, new.release) == ("v0.14", "v0.15")


def test_a_description_without_a_storage_version_is_refused():
    with pytest.raises(MoveError, match="name no storage version"):
        versions.plane_crds({"served": ["v1beta1"]})


@pytest.mark.parametrize("source,target,capo", [(V015, V015, "v1beta2"), (V014, V014, "v1beta1"),
                                                (V014, V015, "v1beta1")])
def test_the_move_uses_the_sources_storage_version_wherever_the_target_serves_it(source, target, capo):
    chosen = versions.choose(versions.plane_crds(source), versions.plane_crds(target))
    assert chosen["OpenStackCluster"] == chosen["OpenStackMachine"] == capo
    assert chosen["Cluster"] == "v1beta2" and set(chosen) == set(MOVE_KINDS)


def test_a_target_with_capo_v0_14s_crds_is_refused_naming_the_kinds_and_the_version():
    source, target = versions.plane_crds(V015), versions.plane_crds(V014)
    assert versions.unserved(source, target) == ["OpenStackCluster", "OpenStackMachine"]
    with pytest.raises(MoveError) as refused:
        versions.choose(source, target)
    assert str(refused.value) == (
        f"failed to check the target cluster: it does not serve OpenStackCluster, OpenStackMachine at {INFRA}/v1beta2, "
        "the version the source cluster stores them at (CAPO v0.15's CRDs on the source, v0.14's on the target); "
        "the target serves OpenStackCluster: v1beta1; OpenStackMachine: v1beta1. Install the same providers' CRDs "
        "on the target first; nothing was changed")


def test_a_dry_run_checks_no_target():
    assert versions.choose(versions.plane_crds(V015), None)["OpenStackCluster"] == "v1beta2"


class RecordingApi(KubeApi):
    """A KubeApi whose requests are recorded and answered from ``objects`` (path of a collection: items), with
    the CAPO CRDs ``capo``."""

    def __init__(self, where: str, capo: dict, objects: dict | None = None):
        self.where, self.versions, self.capo = where, {}, capo
        self.objects, self.requests = objects or {}, []

    def call(self, method, path, body=None, content_type="application/json", query=None):
        self.requests.append((method, path))
        if path == "/minicloud/capo-crds":
            return self.capo
        if method == "GET":
            return {"items": [dict(o) for o in self.objects.get(path, [])]}
        return dict(body or {}, metadata=dict((body or {}).get("metadata") or {}, uid=f"{self.where}-new"))


def test_refused_before_either_side_is_told_a_version_and_before_any_write():
    source, target = RecordingApi("src", V015), RecordingApi("dst", V014)
    with pytest.raises(MoveError, match="OpenStackCluster, OpenStackMachine at infrastructure"):
        cli.use_storage_versions(source, target)
    assert source.requests == target.requests == [("GET", "/minicloud/capo-crds")]
    assert source.versions == target.versions == {}


def test_every_object_is_read_and_created_at_the_sources_storage_version():
    osc = {"apiVersion": f"{INFRA}/v1beta2", "kind": "OpenStackCluster",
           "metadata": {"name": "c1", "namespace": "ns1", "uid": "u1"}}
    source = RecordingApi("src", V015, {f"/apis/{INFRA}/v1beta2/namespaces/ns1/openstackclusters": [osc]})
    target = RecordingApi("dst", V015)
    chosen = cli.use_storage_versions(source, target)
    assert source.versions == target.versions == chosen
    listed = source.list_namespace("ns1")
    reads = [path for method, path in source.requests if method == "GET" and "/namespaces/" in path]
    assert f"/apis/{INFRA}/v1beta2/namespaces/ns1/openstackmachines" in reads
    assert "/apis/cluster.x-k8s.io/v1beta2/namespaces/ns1/clusters" in reads and "/api/v1/namespaces/ns1/secrets" in reads
    assert not any("/v1beta1/" in path for path in reads), reads
    assert [o["apiVersion"] for o in listed] == [f"{INFRA}/v1beta2"]
    target.create(dict(osc, metadata={"name": "c1", "namespace": "ns1"}),
                  {"apiServerManagedLoadBalancer": {"name": "lb"}})
    assert target.requests[-2:] == [
        ("POST", f"/apis/{INFRA}/v1beta2/namespaces/ns1/openstackclusters"),
        ("PATCH", f"/apis/{INFRA}/v1beta2/namespaces/ns1/openstackclusters/c1/status")]


def test_an_object_is_created_at_the_version_it_was_read_at_whatever_the_target_prefers():
    target = RecordingApi("dst", V015)
    target.use({"OpenStackMachine": "v1beta2"})
    target.create({"apiVersion": f"{INFRA}/v1beta1", "kind": "OpenStackMachine",
                   "metadata": {"name": "m1", "namespace": "ns1"}}, None)
    assert target.requests == [("POST", f"/apis/{INFRA}/v1beta1/namespaces/ns1/openstackmachines")]


def test_before_the_choice_the_stand_in_reads_at_minicloud_s_registry_versions():
    api = RecordingApi("src", V014)
    api.list_namespace("ns1")
    paths = [path for _method, path in api.requests]
    assert f"/apis/{INFRA}/v1beta1/namespaces/ns1/openstackclusters" in paths
    assert "/apis/cluster.x-k8s.io/v1beta2/namespaces/ns1/clusters" in paths
