# -*- coding: utf-8 -*-
"""ClusterClass clusters on the real control plane: a class and its templates (CAPD's in-memory class cut to a
control plane) and a Cluster with spec.topology, reconciled by Cluster API's real topology controller (the managers
run with the ClusterTopology feature gate), with real servers behind a real Octavia load balancer.

- cluster_info and cluster_readiness say the cluster is topology-managed and by which class;
- Cluster API v1.13: rollout_guard starts the rollout through the Cluster's spec.topology.controlPlane.rollout.after,
  which the topology controller (not the guard) writes onto the KubeadmControlPlane, and releases the old Machines
  one at a time, the pool never below three serving members;
- Cluster API v1.12 (``make conformance-v1.12``), which has no such field: the start is refused before any write;
- both: a Kubernetes upgrade started by changing spec.topology.version, held from the start by a standing hook (as
  the capi_events source keeps one) and guarded in follow mode, never goes below three serving members either;
- both: the cluster_move role with the real clusterctl moves a ClusterClass cluster to the move target with its
  class and templates (one way: CAPD's in-memory backend cannot bring it back).
"""

import functools
import json
import threading
import uuid

import pytest

from conftest import capi_version
# the move tests' fixtures (the role, the target), used by name
from test_move import run_role, target_kubectl  # noqa: F401 # pylint: disable=unused-import

pytestmark = pytest.mark.every_capi_release

CLASS = "fc-in-memory"
GUARD_HOOK = "pre-drain.delete.hook.machine.cluster.x-k8s.io/flightcontrol-rollout"
STANDING_HOOK = "pre-drain.delete.hook.machine.cluster.x-k8s.io/flightcontrol-standing"
CLUSTERS = "clusters.v1beta2.cluster.x-k8s.io"
MACHINES = "machines.v1beta2.cluster.x-k8s.io"
KCPS = "kubeadmcontrolplanes.v1beta2.controlplane.cluster.x-k8s.io"
UPGRADE_TO = "v1.34.1"


@pytest.fixture(scope="module")
def class_cluster(upstream):
    """A ClusterClass cluster of its own: three control-plane Machines. Deleted after the module's tests (the class
    and its templates stay: a class outlives its clusters)."""
    upstream.api.set_octavia_mode("normal", delay=0.2)
    created = upstream.api.create_capi_cluster("cc-%s" % uuid.uuid4().hex[:5], control_plane=3, openstack=True,
                                               class_name=CLASS)
    created["pool"] = "%s-6443" % created["openstack"]["loadbalancer"]["name"]
    created["lb_id"] = created["openstack"]["loadbalancer"]["id"]
    yield created
    upstream.api.set_octavia_mode("normal")
    upstream.api.delete_capi_cluster(created["name"], created["namespace"])


def get(kubectl, resource, cluster, name=None):
    out = kubectl("get", resource, name or cluster["name"], "-n", cluster["namespace"], "-o", "json")
    return json.loads(out.stdout)


def control_plane_machines(kubectl, cluster):
    out = kubectl("get", MACHINES, "-n", cluster["namespace"], "-l",
                  "cluster.x-k8s.io/cluster-name=%s,cluster.x-k8s.io/control-plane" % cluster["name"], "-o", "json")
    return json.loads(out.stdout)["items"]


def guard_args(cluster, **extra):
    args = {"cloud": "minicloud", "mode": "capi", "cluster": cluster["name"], "namespace": cluster["namespace"],
            "pool": cluster["pool"], "loadbalancer": cluster["lb_id"], "min_healthy_members": 3,
            "member_timeout": 120, "timeout": 600, "poll_interval": 1}
    args.update(extra)
    return args


def rollout_field_served():
    """Whether this plane's Cluster API has spec.topology.controlPlane.rollout.after (v1.13 and later)."""
    return capi_version() != "v1.12"


def test_the_topology_controller_made_the_control_plane_and_the_collection_says_so(
        run_module, kubectl, class_cluster):
    kcp = get(kubectl, KCPS, class_cluster, class_cluster["kcp"])
    assert kcp["metadata"]["labels"].get("topology.cluster.x-k8s.io/owned") == "", kcp["metadata"]
    assert kcp["metadata"]["name"] != "%s-control-plane" % class_cluster["name"], "named by the topology controller"
    info = run_module("cluster_info", {"name": class_cluster["name"], "namespace": class_cluster["namespace"]})
    assert not info.get("failed"), info
    assert info["topology"]["managed"] is True and info["topology"]["class"] == CLASS, info["topology"]
    assert info["topology"]["upgrading"] is False and info["healthy"] is True, info
    readiness = run_module("cluster_readiness", {"cloud": "minicloud", "name": class_cluster["name"],
                                                 "namespace": class_cluster["namespace"],
                                                 "pool": class_cluster["pool"]})
    assert not readiness.get("failed"), readiness
    assert "topology_managed" in [f["code"] for f in readiness["findings"]], readiness["findings"]
    assert readiness["topology"]["class"] == CLASS


def test_a_guarded_rollout_starts_through_the_topology_and_keeps_three_serving_members(
        run_module, upstream, kubectl, class_cluster):
    if not rollout_field_served():
        pytest.skip("Cluster API v1.12 has no spec.topology.controlPlane.rollout.after: the refusal is tested")
    before = {m["metadata"]["name"] for m in control_plane_machines(kubectl, class_cluster)}
    result = run_module("rollout_guard", guard_args(class_cluster, start=True))
    assert not result.get("failed"), result
    after = {m["metadata"]["name"] for m in control_plane_machines(kubectl, class_cluster)}
    assert len(after) == 3 and not after & before, (before, after)
    cluster = get(kubectl, CLUSTERS, class_cluster)
    asked = cluster["spec"]["topology"]["controlPlane"]["rollout"]["after"]
    out = kubectl("get", KCPS, class_cluster["kcp"], "-n", class_cluster["namespace"], "-o", "json",
                  "--show-managed-fields")
    kcp = json.loads(out.stdout)
    assert kcp["spec"]["rollout"]["after"] == asked, "the topology controller carried the Cluster's rollout time"
    writers = [f["manager"] for f in kcp["metadata"].get("managedFields") or []
               if '"f:after"' in json.dumps(f.get("fieldsV1") or {})]
    assert writers == ["capi-topology"], "only the topology controller wrote the control plane's rollout time"
    summary = upstream.api.capi_history_summary(class_cluster["name"], class_cluster["namespace"])
    assert summary["samples"] > 0 and summary["minServing"] >= 3, summary


def test_without_the_topology_rollout_field_the_start_is_refused_before_any_write(run_module, kubectl, class_cluster):
    if rollout_field_served():
        pytest.skip("this Cluster API has spec.topology.controlPlane.rollout.after: the guarded rollout is tested")
    cluster = get(kubectl, CLUSTERS, class_cluster)
    kcp = get(kubectl, KCPS, class_cluster, class_cluster["kcp"])
    before = {m["metadata"]["name"] for m in control_plane_machines(kubectl, class_cluster)}
    refused = run_module("rollout_guard", guard_args(class_cluster, start=True))
    assert refused.get("failed") and refused["changed"] is False, refused
    assert "Upgrade Cluster API to v1.13" in refused["msg"] and "spec.topology.version" in refused["msg"], refused
    assert not refused.get("writes"), "the dry run that told is no write"
    assert get(kubectl, CLUSTERS, class_cluster)["spec"] == cluster["spec"], "the Cluster was not written"
    assert get(kubectl, KCPS, class_cluster, class_cluster["kcp"])["spec"] == kcp["spec"], "nor its control plane"
    after = control_plane_machines(kubectl, class_cluster)
    assert {m["metadata"]["name"] for m in after} == before
    assert not [m for m in after if GUARD_HOOK in (m["metadata"].get("annotations") or {})], "no Machine held"


def wait_until(what, predicate, timeout=120):
    """Poll ``predicate`` (a read of the API) until it holds; fail naming ``what`` after ``timeout`` seconds."""
    done = threading.Event()
    for dummy in range(int(timeout * 2)):
        if predicate():
            return
        done.wait(0.5)
    raise AssertionError("timed out waiting for %s" % what)


def hand_over(kubectl, cluster, stop):
    """What the capi_events source does with its standing hook: a Machine the guard holds gives it up."""
    while not stop.is_set():
        for machine in control_plane_machines(kubectl, cluster):
            hooks = machine["metadata"].get("annotations") or {}
            if GUARD_HOOK in hooks and STANDING_HOOK in hooks:
                kubectl("annotate", MACHINES, machine["metadata"]["name"], "-n", cluster["namespace"],
                        STANDING_HOOK + "-", check=False)
        stop.wait(0.5)


def test_a_version_upgrade_through_the_topology_is_guarded_from_its_start(run_module, upstream, kubectl,
                                                                          class_cluster):
    machines = control_plane_machines(kubectl, class_cluster)
    before = {m["metadata"]["name"] for m in machines}
    for machine in machines:  # the standing hook: held before the upgrade starts, however fast KCP is
        kubectl("annotate", MACHINES, machine["metadata"]["name"], "-n", class_cluster["namespace"],
                "%s=flightcontrol.openstack" % STANDING_HOOK)
    kubectl("patch", CLUSTERS, class_cluster["name"], "-n", class_cluster["namespace"], "--type", "merge", "-p",
            json.dumps({"spec": {"topology": {"version": UPGRADE_TO}}}))
    # the guard starts at the Cluster's change, as the capi_events source with topology_rollouts starts it: follow
    # mode judges the Machines against the Cluster's topology version from its first look, before the topology
    # controller and KCP have shown the upgrade (the unit tests hold the case where KCP has not marked them yet)
    stop = threading.Event()
    helper = threading.Thread(target=hand_over, args=(kubectl, class_cluster, stop), daemon=True)
    helper.start()
    try:
        result = run_module("rollout_guard", guard_args(class_cluster, start=False))
    finally:
        stop.set()
        helper.join(30)
    assert not result.get("failed"), result
    after = control_plane_machines(kubectl, class_cluster)
    assert len(after) == 3 and not {m["metadata"]["name"] for m in after} & before
    assert {m["spec"]["version"] for m in after} == {UPGRADE_TO}
    info = run_module("cluster_info", {"name": class_cluster["name"], "namespace": class_cluster["namespace"]})
    assert info["topology"]["version"] == UPGRADE_TO and info["topology"]["upgrading"] is False, info["topology"]
    summary = upstream.api.capi_history_summary(class_cluster["name"], class_cluster["namespace"])
    assert summary["samples"] > 0 and summary["minServing"] >= 3, summary


@pytest.fixture(scope="module")
def class_cluster_to_move(upstream):
    """A ClusterClass cluster of one control-plane Machine in a namespace of its own (clusterctl moves a whole
    namespace, its class and templates with it). Left where the test leaves it (the cloud goes down after the run)."""
    upstream.api.set_octavia_mode("normal")
    name = "ccmv-%s" % uuid.uuid4().hex[:5]
    return upstream.api.create_capi_cluster(name, namespace="move-%s" % name, control_plane=1, openstack=True,
                                            class_name=CLASS)


def class_objects_in(run, namespace):
    """The class and its templates found in ``namespace`` through kubectl ``run`` (source or target)."""
    kinds = ("clusterclasses.v1beta2.cluster.x-k8s.io",
             "kubeadmcontrolplanetemplates.v1beta2.controlplane.cluster.x-k8s.io",
             "devclustertemplates.v1beta2.infrastructure.cluster.x-k8s.io",
             "devmachinetemplates.v1beta2.infrastructure.cluster.x-k8s.io")
    found = set()
    for kind in kinds:
        done = run("get", kind, "-n", namespace, "-o", "json")
        assert done.returncode == 0, done.stderr
        found.update((item["kind"], item["metadata"]["name"]) for item in json.loads(done.stdout)["items"]
                     if item["metadata"]["name"].startswith(CLASS))  # not the topology controller's clones
    return found


def test_a_clusterclass_cluster_moves_with_its_class(upstream, kubectl, target_kubectl, run_role, class_cluster_to_move):
    """One way only: CAPD's in-memory backend keeps a workload cluster in the memory of the CAPD that made it, so a
    moved cluster stays Provisioning on the target (docs/minicloud.md), and a move back is refused there (by the
    role's preflight, and by clusterctl, which moves only provisioned clusters)."""
    cluster = class_cluster_to_move
    name, namespace = cluster["name"], cluster["namespace"]
    source_kubectl = functools.partial(kubectl, check=False)
    classes = class_objects_in(source_kubectl, namespace)
    assert ("ClusterClass", CLASS) in classes and len(classes) == 4, classes
    there = run_role(cluster)
    assert there.result["failed"] is False, there.output
    moved = json.loads(target_kubectl("get", CLUSTERS, name, "-n", namespace, "-o", "json").stdout)
    assert moved["spec"]["topology"]["classRef"]["name"] == CLASS and not moved["spec"].get("paused")
    assert class_objects_in(target_kubectl, namespace) == classes, "the class and its templates went along"
    assert source_kubectl("get", CLUSTERS, name, "-n", namespace).returncode != 0, "still on the source"
    assert class_objects_in(source_kubectl, namespace) == set(), "the class left the source with its cluster"
