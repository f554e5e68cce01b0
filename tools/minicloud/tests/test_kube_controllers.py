"""CAPI behaviour over time: the Paused condition per served version, and the provider modes."""

from __future__ import annotations

import time

import pytest
from kube_harness import KubeServer
from kubernetes import dynamic
from kubernetes.client import ApiException

from minicloud.kube.admin import KubeAdmin
from minicloud.kube.capo_mode import CapoMode, applied_file, mode_file
from minicloud.octavia_provider import modes

BLOCK_MOVE = "clusterctl.cluster.x-k8s.io/block-move"
LAG = 0.3


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = KubeServer(tmp_path_factory.mktemp("kube"), controllers=True, lag=LAG).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def admin(server):
    return KubeAdmin(server.kubeconfig)


@pytest.fixture(scope="module")
def dyn(server, tmp_path_factory):
    return dynamic.DynamicClient(server.api_client(),
                                 cache_file=str(tmp_path_factory.mktemp("cache") / "discovery.json"))


def resource(dyn, kind, version="v1beta1"):
    group = {"KubeadmControlPlane": "controlplane.cluster.x-k8s.io",
             "OpenStackMachine": "infrastructure.cluster.x-k8s.io",
             "OpenStackCluster": "infrastructure.cluster.x-k8s.io"}.get(kind, "cluster.x-k8s.io")
    return dyn.resources.get(api_version=f"{group}/{version}", kind=kind)


def wait_for(check, timeout=20.0, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def paused_in(conditions):
    return next((c for c in conditions or [] if c["type"] == "Paused"), None)


def set_mode(server, name, delay):
    written = modes.save(mode_file(server.folder), CapoMode(name, delay))
    wait_for(lambda: modes.applied_generation(applied_file(server.folder)) >= written.generation, what="mode ack")


def pause(dyn, name, value=True):
    return resource(dyn, "Cluster").patch(name=name, namespace="default", body={"spec": {"paused": value}},
                                          content_type="application/merge-patch+json")


def test_paused_condition_in_each_versions_place(admin, dyn):
    admin.create_cluster("old", api_version="v1beta1", workers=1)
    clusters_v1beta1, clusters_v1beta2 = resource(dyn, "Cluster"), resource(dyn, "Cluster", "v1beta2")
    wait_for(lambda: paused_in(clusters_v1beta1.get(name="old", namespace="default").to_dict()["status"]
                               .get("v1beta2", {}).get("conditions")), what="NotPaused")
    patched = pause(dyn, "old")
    generation = patched.metadata.generation
    early = paused_in(patched.to_dict()["status"]["v1beta2"]["conditions"])
    assert early["status"] == "False"  # a controller reacts after a lag, never within the request

    def paused_v1beta1():
        obj = clusters_v1beta1.get(name="old", namespace="default").to_dict()
        condition = paused_in(obj["status"].get("v1beta2", {}).get("conditions"))
        return (obj, condition) if condition and condition["status"] == "True" else None

    obj, condition = wait_for(paused_v1beta1, what="Paused in status.v1beta2.conditions")
    assert (condition["reason"], condition["message"], condition["observedGeneration"]) == (
        "Paused", "Cluster spec.paused is set to true", generation)
    assert paused_in(obj["status"]["conditions"]) is None  # the old-style list has no Paused condition
    assert int(obj["metadata"]["resourceVersion"]) > int(patched.metadata.resourceVersion)
    new = clusters_v1beta2.get(name="old", namespace="default").to_dict()
    assert paused_in(new["status"]["conditions"]) == condition
    machines = resource(dyn, "Machine").get(namespace="default", label_selector="cluster.x-k8s.io/cluster-name=old")
    for machine in machines.to_dict()["items"]:
        name = machine["metadata"]["name"]
        wait_for(lambda name=name: paused_in(
            resource(dyn, "Machine").get(name=name, namespace="default").to_dict()["status"]["v1beta2"]
            ["conditions"])["status"] == "True", what=f"{name} Paused")
    pause(dyn, "old", False)
    wait_for(lambda: paused_in(clusters_v1beta2.get(name="old", namespace="default").to_dict()["status"]
                               ["conditions"])["reason"] == "NotPaused", what="NotPaused again")


def test_paused_annotation_on_one_object(admin, dyn):
    admin.create_cluster("annotated", api_version="v1beta2")
    kcps = resource(dyn, "KubeadmControlPlane", "v1beta2")
    kcps.patch(name="annotated-control-plane", namespace="default", content_type="application/merge-patch+json",
               body={"metadata": {"annotations": {"cluster.x-k8s.io/paused": ""}}})
    condition = wait_for(lambda: (c := paused_in(kcps.get(name="annotated-control-plane", namespace="default")
                                                  .to_dict()["status"]["conditions"])) and c["status"] == "True"
                         and c, what="KCP Paused")
    assert condition["message"] == "KubeadmControlPlane has the cluster.x-k8s.io/paused annotation"
    cluster = resource(dyn, "Cluster", "v1beta2").get(name="annotated", namespace="default").to_dict()
    assert paused_in(cluster["status"]["conditions"])["status"] == "False"


def annotated(dyn, name):
    obj = resource(dyn, "OpenStackCluster").get(name=name, namespace="default").to_dict()
    return BLOCK_MOVE in (obj["metadata"].get("annotations") or {})


def test_block_move_mode_holds_the_annotation_for_the_delay(server, admin, dyn):
    # 3 s of delay: the checks below stay true even when a busy machine stretches the sleep
    set_mode(server, "block-move", 3.0)
    admin.create_cluster("bm")
    wait_for(lambda: annotated(dyn, "bm"), what="block-move while reconciling")
    pause(dyn, "bm")
    paused_at = time.monotonic()
    time.sleep(0.5)
    assert annotated(dyn, "bm")
    wait_for(lambda: not annotated(dyn, "bm"), what="block-move removed")
    # the controller saw the pause at the earliest when the patch was applied, a moment before it returned
    assert time.monotonic() - paused_at >= 3.0 - 0.5
    pause(dyn, "bm", False)
    wait_for(lambda: annotated(dyn, "bm"), what="block-move back after unpause")


def test_stuck_mode_never_acknowledges(server, admin, dyn):
    set_mode(server, "stuck", 0.5)
    admin.create_cluster("st")
    pause(dyn, "st")
    time.sleep(1.2)
    assert annotated(dyn, "st")


def test_silent_mode_writes_for_the_delay_then_stops(server, admin, dyn):
    set_mode(server, "silent", 1.0)
    admin.create_cluster("si")
    machines = resource(dyn, "OpenStackMachine")

    def version():
        items = machines.get(namespace="default", label_selector="cluster.x-k8s.io/cluster-name=si").to_dict()
        return [(i["metadata"]["resourceVersion"], BLOCK_MOVE in (i["metadata"].get("annotations") or {}))
                for i in items["items"]]

    before = version()
    time.sleep(0.4)
    assert version() == before  # nothing written while not paused
    pause(dyn, "si")
    time.sleep(0.8)
    during = version()
    assert during != before and not any(flag for _, flag in during)
    time.sleep(0.8)
    settled = version()
    time.sleep(0.7)
    assert version() == settled  # quiet once the in-flight reconcile is over
    assert not annotated(dyn, "si")


def test_admin_calls_raise_on_answers_other_than_2xx(admin):
    with pytest.raises(ApiException) as caught:
        admin.call("GET", "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/clusters/nowhere")
    assert caught.value.status == 404 and '"reason": "NotFound"' in caught.value.body


def test_seeding_writes_status_although_a_controller_wrote_the_new_object_first(admin, dyn, monkeypatch):
    """A provider annotating a new object between seeding's create and its status write (what a
    block-move or stuck provider does) must not make the status write fail or be lost."""
    real_call = admin.call
    raced = []

    def call(method, path, body=None, **kwargs):
        answer = real_call(method, path, body, **kwargs)
        if method == "POST" and path.endswith("/openstackclusters"):
            real_call("PATCH", f"{path}/{answer['metadata']['name']}",
                      {"metadata": {"annotations": {"example.com/touched": "true"}}},
                      content_type="application/merge-patch+json")
            raced.append(answer["metadata"]["name"])
        return answer

    monkeypatch.setattr(admin, "call", call)
    admin.create_cluster("raced")
    assert raced == ["raced"]
    osc = resource(dyn, "OpenStackCluster", "v1beta1").get(name="raced", namespace="default").to_dict()
    assert osc["metadata"]["annotations"]["example.com/touched"] == "true"
    assert osc["status"]["ready"] is True


def test_a_cluster_that_stays_paused_needs_no_pass_once_the_modes_delay_is_over():
    """The controller loop skips its pass while nothing changed and no controller waits for time: a paused
    cluster makes the infrastructure provider wait only while its mode still acts on the pause's age."""
    from minicloud.kube.controllers.infra import InfraProvider
    from minicloud.kube.resources import by_kind
    from minicloud.kube.store import Store

    store = Store()
    store.create(by_kind("Namespace"), {"metadata": {"name": "default"}})
    store.create(by_kind("Cluster"), {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
                                      "metadata": {"name": "p"}, "spec": {"paused": True}}, "default")
    store.create(by_kind("OpenStackCluster"), {
        "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "OpenStackCluster",
        "metadata": {"name": "p", "labels": {"cluster.x-k8s.io/cluster-name": "p"}}}, "default")
    now = [100.0]
    for name, timed in (("block-move", True), ("silent", True), ("stuck", False)):
        provider = InfraProvider(store, lambda name=name: CapoMode(name, 3.0), clock=lambda: now[0])
        provider.tick()
        assert provider.waiting() is timed, name
        now[0] += 3.5
        provider.tick()  # the pass after the delay: block-move takes its annotation off here
        assert provider.waiting() is False, name
    annotations = store.get(by_kind("OpenStackCluster"), "default", "p")["metadata"].get("annotations") or {}
    assert BLOCK_MOVE in annotations  # stuck's, put back by the last provider
