"""CAPI controllers that keep reconciling, in process (no OpenStack): finalizers, hand deletions through hooks
and drain, KCP and MachineSets keeping their replicas, Events, pauses, a quiet store at rest, and a move."""

from __future__ import annotations

import time

import pytest
from kube_harness import KubeServer

from minicloud.kube import seed
from minicloud.kube.admin import KubeAdmin
from minicloud.kube.controllers.loop import ControllerLoop
from minicloud.kube.resources import by_kind

GROUP = "cluster.x-k8s.io/v1beta2"
PRE_DRAIN = "pre-drain.delete.hook.machine.cluster.x-k8s.io/test"
PRE_TERMINATE = "pre-terminate.delete.hook.machine.cluster.x-k8s.io/test"
MACHINE, KCP, MS, NODE = by_kind("Machine"), by_kind("KubeadmControlPlane"), by_kind("MachineSet"), by_kind("Node")
OSM, CONFIG, CLUSTER, EVENT = (by_kind("OpenStackMachine"), by_kind("KubeadmConfig"), by_kind("Cluster"),
                               by_kind("Event"))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = KubeServer(tmp_path_factory.mktemp("kube"), controllers=True, lag=0.2).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def admin(server):
    return KubeAdmin(server.kubeconfig)


def wait_for(check, timeout=30.0, what="condition"):
    """Until ``check()`` is true. A scale-up takes about 1 s on a quiet machine; the limit is for a machine busy
    with the integration tests beside (10 s was seen to run out there)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def machines(server, cluster, control_plane=None):
    selector = f"cluster.x-k8s.io/cluster-name={cluster}"
    if control_plane is not None:
        selector += ",cluster.x-k8s.io/control-plane" if control_plane else ",!cluster.x-k8s.io/control-plane"
    return server.store.list(MACHINE, "default", label_selector=selector)[0]


def names(objects):
    return sorted(o["metadata"]["name"] for o in objects)


def events_of(server, obj):
    found = server.store.list(EVENT, "default", field_selector=f"involvedObject.uid={obj['metadata']['uid']}")[0]
    return [(e["reason"], e["message"]) for e in found]


def patch_annotations(server, name, annotations):
    def change(obj):
        current = obj["metadata"].setdefault("annotations", {})
        for key, value in annotations.items():
            if value is None:
                current.pop(key, None)
            else:
                current[key] = value
        return obj

    server.store.update(MACHINE, "default", name, change)


def settled(server, cluster, replicas):
    found = machines(server, cluster)
    return len(found) == replicas and all(m.get("status", {}).get("nodeRef") and not
                                          m["metadata"].get("deletionTimestamp") for m in found)


def versions(server, cluster):
    """resourceVersion of every Machine, KCP, MachineSet and MachineDeployment of the cluster."""
    selector = f"cluster.x-k8s.io/cluster-name={cluster}"
    return {(o["kind"], o["metadata"]["name"]): o["metadata"]["resourceVersion"]
            for kind in (MACHINE, KCP, MS, by_kind("MachineDeployment"))
            for o in server.store.list(kind, "default", label_selector=selector)[0]}


def test_seeding_leaves_finalizers_and_nothing_for_the_controllers_to_do(server, admin):
    for version in ("v1beta1", "v1beta2"):
        name = f"seed-{version}"
        admin.create_cluster(name, control_plane=3, workers=2, api_version=version)
        found = machines(server, name)
        assert len(found) == 5
        assert all(m["metadata"]["finalizers"] == ["machine.cluster.x-k8s.io"] for m in found)
        osms = server.store.list(OSM, "default", label_selector=f"cluster.x-k8s.io/cluster-name={name}")[0]
        assert len(osms) == 5
        assert all(o["metadata"]["finalizers"] == ["openstackmachine.infrastructure.cluster.x-k8s.io"] for o in osms)
    time.sleep(0.3)
    for version in ("v1beta1", "v1beta2"):
        name = f"seed-{version}"
        before = versions(server, name)
        assert len(machines(server, name)) == 5  # nothing created while seeding wrote the KCP before its Machines
        time.sleep(0.3)
        assert versions(server, name) == before


def test_a_control_plane_machine_deleted_by_hand_goes_through_hooks_and_drain_and_is_replaced(server, admin):
    admin.create_cluster("hand", control_plane=3)
    kcp = server.store.get(KCP, "default", "hand-control-plane")
    before = names(machines(server, "hand"))
    victim = before[0]
    patch_annotations(server, victim, {PRE_DRAIN: "", PRE_TERMINATE: ""})
    admin.call("DELETE", f"/apis/{GROUP}/namespaces/default/machines/{victim}")

    wait_for(lambda: server.store.get(MACHINE, "default", victim)["status"].get("phase") == "Deleting",
             what="Deleting")
    time.sleep(0.3)  # held by the pre-drain hook: no drain, no replacement
    assert not server.nodes("hand").get(NODE, None, victim)["spec"].get("unschedulable")
    assert len(machines(server, "hand")) == 3

    patch_annotations(server, victim, {PRE_DRAIN: None})
    wait_for(lambda: server.nodes("hand").get(NODE, None, victim)["spec"].get("unschedulable"), what="drained")
    time.sleep(0.3)  # held by the pre-terminate hook: the Machine and its objects stay
    machine = server.store.get(MACHINE, "default", victim)
    assert machine["metadata"]["finalizers"] == ["machine.cluster.x-k8s.io"]
    assert server.store.find(OSM, "default", victim) is not None
    assert ("SuccessfulDrainNode", f'success draining Machine\'s node "{victim}"') in events_of(server, machine)

    patch_annotations(server, victim, {PRE_TERMINATE: None})
    wait_for(lambda: server.store.find(MACHINE, "default", victim) is None, what="machine gone")
    for store, kind, namespace in ((server.store, OSM, "default"), (server.store, CONFIG, "default"),
                                   (server.nodes("hand"), NODE, None)):
        assert store.find(kind, namespace, victim) is None, kind.kind

    wait_for(lambda: settled(server, "hand", 3), what="a replacement, Running")
    [replacement] = [m for m in machines(server, "hand") if m["metadata"]["name"] not in before]
    name = replacement["metadata"]["name"]
    assert name.startswith("hand-control-plane-") and replacement["metadata"]["finalizers"] == [
        "machine.cluster.x-k8s.io"]
    assert replacement["metadata"]["ownerReferences"][0]["uid"] == kcp["metadata"]["uid"]
    assert replacement["status"]["phase"] == "Running" and replacement["status"]["nodeRef"] == {"name": name}
    node = server.nodes("hand").get(NODE, None, name)
    assert server.store.find(NODE, None, name) is None  # in the cluster's own API only
    assert "node-role.kubernetes.io/control-plane" in node["metadata"]["labels"]
    assert node["spec"]["providerID"] == replacement["spec"]["providerID"]
    osm = server.store.get(OSM, "default", name)
    assert osm["status"]["ready"] is True and osm["metadata"]["finalizers"] == [
        "openstackmachine.infrastructure.cluster.x-k8s.io"]
    assert ("SuccessfulCreate", f'Created Machine "{name}"') in events_of(server, kcp)
    wait_for(lambda: [server.store.get(KCP, "default", "hand-control-plane")["status"][k]
                      for k in ("replicas", "readyReplicas", "upToDateReplicas")] == [3, 3, 3], what="KCP status")


def test_a_worker_deleted_by_hand_is_replaced_by_its_machine_set(server, admin):
    admin.create_cluster("workers", control_plane=1, workers=2)
    [machine_set] = server.store.list(MS, "default", label_selector="cluster.x-k8s.io/cluster-name=workers")[0]
    before = names(machines(server, "workers", control_plane=False))
    victim = before[0]
    admin.call("DELETE", f"/apis/{GROUP}/namespaces/default/machines/{victim}")
    wait_for(lambda: server.store.find(MACHINE, "default", victim) is None, what="worker gone")
    wait_for(lambda: settled(server, "workers", 3), what="a new worker")
    [new] = [m for m in machines(server, "workers", control_plane=False) if m["metadata"]["name"] not in before]
    labels = new["metadata"]["labels"]
    assert labels["cluster.x-k8s.io/set-name"] == machine_set["metadata"]["name"]
    assert "cluster.x-k8s.io/control-plane" not in labels
    assert new["metadata"]["ownerReferences"][0]["uid"] == machine_set["metadata"]["uid"]
    node = server.nodes("workers").get(NODE, None, new["metadata"]["name"])
    assert server.store.find(NODE, None, new["metadata"]["name"]) is None
    assert "node-role.kubernetes.io/control-plane" not in node["metadata"]["labels"]
    assert ("SuccessfulCreate", f'Created Machine "{new["metadata"]["name"]}"') in events_of(server, machine_set)
    wait_for(lambda: [server.store.get(MS, "default", machine_set["metadata"]["name"])["status"][k]
                      for k in ("replicas", "readyReplicas")] == [2, 2], what="MachineSet status")


def test_kcp_scales_up_and_down(server, admin):
    admin.create_cluster("scale", control_plane=1)

    def set_replicas(count):
        def change(obj):
            obj["spec"]["replicas"] = count
            return obj

        server.store.update(KCP, "default", "scale-control-plane", change)

    oldest = names(machines(server, "scale"))[0]
    set_replicas(3)
    wait_for(lambda: settled(server, "scale", 3), what="3 replicas")
    set_replicas(1)
    wait_for(lambda: settled(server, "scale", 1), what="1 replica")
    assert oldest not in names(machines(server, "scale"))  # the oldest goes first
    kcp = server.store.get(KCP, "default", "scale-control-plane")
    reasons = [reason for reason, _ in events_of(server, kcp)]
    assert reasons.count("SuccessfulCreate") == 2 and reasons.count("SuccessfulDelete") == 2


def test_a_kcp_scaled_before_the_controllers_saw_its_seeded_machines_scales(tmp_path):
    """Seeding marks the KCP until its Machines are written; once the mark is gone the controllers scale, even
    when no pass ran between seeding and the scale-up (as on a busy machine). The loop is ticked by hand here."""
    server = KubeServer(tmp_path).start()
    try:
        loop = ControllerLoop(server.store, tmp_path, lag=0.0, workloads=server.workloads)
        KubeAdmin(server.kubeconfig).create_cluster("quick", control_plane=1)
        kcp = server.store.get(KCP, "default", "quick-control-plane")
        assert seed.SEEDING_ANNOTATION not in (kcp["metadata"].get("annotations") or {})

        def change(obj):
            obj["spec"]["replicas"] = 2
            return obj

        server.store.update(KCP, "default", "quick-control-plane", change)
        for _ in range(10):
            loop.tick()
        assert settled(server, "quick", 2)

        def seeding(obj):  # the mark back: nothing is created while it is there
            obj["metadata"].setdefault("annotations", {})[seed.SEEDING_ANNOTATION] = "true"
            obj["spec"]["replicas"] = 3
            return obj

        server.store.update(KCP, "default", "quick-control-plane", seeding)
        for _ in range(10):
            loop.tick()
        assert len(machines(server, "quick")) == 2
    finally:
        server.stop()


def test_nothing_moves_while_paused_and_the_pause_leaves_events(server, admin):
    admin.create_cluster("held", control_plane=1, workers=1)

    def pause(value):
        def change(obj):
            obj["spec"]["paused"] = value
            return obj

        server.store.update(CLUSTER, "default", "held", change)

    wait_for(lambda: any(c["type"] == "Paused" for c in server.store.get(CLUSTER, "default", "held")["status"]
                         .get("conditions", [])), what="NotPaused first")
    pause(True)
    # the controllers have seen the pause (on a busy machine their next pass may come after the sleep below)
    wait_for(lambda: any(c["type"] == "Paused" and c["status"] == "True"
                         for c in server.store.get(CLUSTER, "default", "held")["status"].get("conditions", [])),
             what="the pause seen")
    worker = names(machines(server, "held", control_plane=False))[0]
    server.store.delete(MACHINE, "default", worker)
    time.sleep(0.5)
    machine = server.store.get(MACHINE, "default", worker)
    assert machine["metadata"]["finalizers"] and machine["status"]["phase"] == "Running"
    pause(False)
    wait_for(lambda: server.store.find(MACHINE, "default", worker) is None, what="deletion after the pause")
    wait_for(lambda: settled(server, "held", 2), what="replaced after the pause")
    cluster = server.store.get(CLUSTER, "default", "held")
    wait_for(lambda: [r for r, _ in events_of(server, cluster)] == ["Paused", "Unpaused"], what="pause events")


def test_a_cluster_at_rest_costs_no_pass(server, admin):
    admin.create_cluster("rest", control_plane=3, workers=1)
    wait_for(lambda: settled(server, "rest", 4), what="settled")
    controllers = server.controllers
    calls = []
    real = controllers.replicas.tick
    controllers.replicas.tick = lambda: calls.append(1) or real()
    try:
        at_rest(server)  # the pause controller's lag and the loop's last passes are over
        calls.clear()
        time.sleep(0.5)
        assert calls == []
        server.store.delete(MACHINE, "default", names(machines(server, "rest", control_plane=False))[0])
        wait_for(lambda: settled(server, "rest", 4) and len(calls) > 0, what="replaced")
        at_rest(server)  # the controllers' own writes, their Events too, end in a pass that writes nothing
        count = len(calls)
        time.sleep(0.5)
        assert len(calls) == count, "a quiet store must cost no pass"
    finally:
        controllers.replicas.tick = real


def at_rest(server, timeout=10.0):
    """Wait until the store is quiet and the controller loop has made its pass over it with nothing left to wait
    for (a quiet store alone is not enough: on a busy machine the pass over the last write may come later)."""
    quiet(server)
    wait_for(server.controllers.at_rest, what="the controller loop at rest", timeout=timeout)


def quiet(server, period=0.4, timeout=10.0):
    """Wait until the store has not changed for ``period`` seconds."""
    deadline = time.monotonic() + timeout
    revision, since = server.store.revision, time.monotonic()
    while time.monotonic() - since < period:
        assert time.monotonic() < deadline, "the store never went quiet"
        time.sleep(0.05)
        if server.store.revision != revision:
            revision, since = server.store.revision, time.monotonic()


def test_a_move_takes_machines_with_finalizers_and_the_target_creates_nothing(server, admin, tmp_path):
    from minicloud.clusterctl.cli import Mover
    from minicloud.clusterctl.kubeapi import KubeApi

    target = KubeServer(tmp_path / "target", controllers=True, lag=0.2)
    (tmp_path / "target").mkdir(exist_ok=True)
    target.start()
    try:
        admin.ensure_namespace("moving")
        admin.create_cluster("mv", namespace="moving", control_plane=3, workers=1)
        source_names = names(server.store.list(MACHINE, "moving")[0])
        Mover(KubeApi(str(server.kubeconfig)), KubeApi(str(target.kubeconfig)), "v1.12.0",
              say=lambda _text: None).move("moving")
        wait_for(lambda: not server.store.list(MACHINE, "moving")[0], what="source emptied")
        time.sleep(0.5)
        moved = target.store.list(MACHINE, "moving")[0]
        assert names(moved) == source_names
        assert all(m["metadata"]["finalizers"] == ["machine.cluster.x-k8s.io"] for m in moved)
        assert not target.store.get(CLUSTER, "moving", "mv")["spec"]["paused"]
    finally:
        target.stop()
