"""ClusterClass clusters of the upstream plane (minicloud.upstream.classes, clusters.class_cluster_objects): the
class, its templates and the topology Cluster as applied; --class refused on the emulated plane; what a creation
that timed out says. Pure: no process runs."""

import json

import pytest

from minicloud.runtime.control import Minicloud, MinicloudError
from minicloud.upstream import capo_lb, classes, clusters

OPENSTACK = {"lb_id": "lb", "pool_id": "pool", "network": "net", "subnet_id": "subnet"}


def test_a_class_cluster_is_its_templates_its_class_then_a_topology_cluster():
    objects = clusters.class_cluster_objects("c1", "team-a", 3, OPENSTACK, "in-memory")
    kinds = [o["kind"] for o in objects]
    assert kinds == ["Namespace", "DevClusterTemplate", "KubeadmControlPlaneTemplate", "DevMachineTemplate",
                     "ClusterClass", "Cluster"]
    by_kind = {o["kind"]: o for o in objects}
    spec = by_kind["ClusterClass"]["spec"]
    refs = [spec["infrastructure"]["templateRef"], spec["controlPlane"]["templateRef"],
            spec["controlPlane"]["machineInfrastructure"]["templateRef"]]
    templates = {(o["kind"], o["metadata"]["name"]) for o in objects[1:4]}
    assert {(r["kind"], r["name"]) for r in refs} == templates
    assert all(o["metadata"]["namespace"] == "team-a" for o in objects[1:])
    cluster = by_kind["Cluster"]
    assert cluster["spec"]["topology"] == {"classRef": {"name": "in-memory"}, "version": clusters.KUBERNETES_VERSION,
                                           "controlPlane": {"replicas": 3}}
    assert "controlPlaneRef" not in cluster["spec"] and "infrastructureRef" not in cluster["spec"]
    assert json.loads(cluster["metadata"]["annotations"][capo_lb.ANNOTATION]) == OPENSTACK


def test_the_control_plane_template_is_the_plain_clusters_kubeadm_configuration():
    plain = {o["kind"]: o for o in clusters.cluster_objects("c1", "default", 1, OPENSTACK)}
    classy = {o["kind"]: o for o in clusters.class_cluster_objects("c1", "default", 1, OPENSTACK, "x")}
    assert (classy["KubeadmControlPlaneTemplate"]["spec"]["template"]["spec"]["kubeadmConfigSpec"]
            == plain["KubeadmControlPlane"]["spec"]["kubeadmConfigSpec"])
    assert classy["DevMachineTemplate"]["spec"] == plain["DevMachineTemplate"]["spec"]
    assert "Namespace" not in classy


@pytest.mark.parametrize("name", ["", "In-Memory", "-x", "x-", "a" * 41, "a_b"])
def test_a_class_name_the_templates_cannot_be_named_after_is_refused(name):
    with pytest.raises(ValueError, match="ClusterClass name"):
        classes.check_class_name(name)


def test_class_on_the_emulated_plane_is_refused_naming_the_upstream_plane(tmp_path):
    cloud = Minicloud(tmp_path / "state")  # no cloud up: the emulated plane's settings
    with pytest.raises(MinicloudError, match="--kubernetes upstream"):
        cloud.create_capi_cluster("c1", control_plane=3, openstack=True, class_name="in-memory")


class _Plane:
    """Answers the Machines list of a cluster's creation that timed out."""

    def __init__(self, machines):
        self.machines, self.paths = machines, []

    def request(self, method, path):
        self.paths.append((method, path))
        return {"items": self.machines}


class _Member:
    def __init__(self, address, provisioning, operating):
        self.address, self.provisioning_status, self.operating_status = address, provisioning, operating


def test_a_creation_that_timed_out_says_what_it_last_saw():
    plane = _Plane([{"metadata": {"name": "c1-control-plane-a"}, "status": {"phase": "Running", "nodeRef": {"name": "n1"}}},
                    {"metadata": {"name": "c1-control-plane-b"}, "status": {"phase": "Provisioned"}}])
    found = {"kcp": "c1-control-plane",
             "status": {"replicas": 2, "readyReplicas": 1,
                        "conditions": [{"type": "Available", "status": "True"},
                                       {"type": "MachinesReady", "status": "False", "reason": "NotReady",
                                        "message": "Machine c1-control-plane-b has no Node"}]},
             "members": [_Member("10.0.0.11", "ACTIVE", "ONLINE"), _Member("10.0.0.12", "PENDING_CREATE", "OFFLINE")]}
    said = clusters._progress(plane, "team-a", "c1", found)
    assert said == ("KubeadmControlPlane c1-control-plane: replicas 2, readyReplicas 1; not True: MachinesReady=False "
                    "(NotReady: Machine c1-control-plane-b has no Node); Machines: c1-control-plane-a Running, "
                    "c1-control-plane-b Provisioned (no Node); pool members: 10.0.0.11 ACTIVE/ONLINE, "
                    "10.0.0.12 PENDING_CREATE/OFFLINE")
    assert plane.paths == [("GET", f"{capo_lb.CAPI}/namespaces/team-a/machines?labelSelector="
                                   "cluster.x-k8s.io/cluster-name%3Dc1")]
    assert clusters._progress(plane, "team-a", "c1", {}) == "no KubeadmControlPlane named on the Cluster yet"
