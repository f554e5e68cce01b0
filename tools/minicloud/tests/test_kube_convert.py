"""CAPI v1beta1 <-> v1beta2 views of one stored object."""

from __future__ import annotations

from minicloud.kube.convert import from_hub, to_hub

NEW_PAUSED = {"type": "Paused", "status": "True", "reason": "Paused", "message": "m", "observedGeneration": 2,
              "lastTransitionTime": "2025-01-01T00:00:00Z"}
OLD_READY = {"type": "Ready", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z"}


def hub_cluster():
    return {
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": "c1", "namespace": "ns"},
        "spec": {"paused": True,
                 "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "OpenStackCluster",
                                       "name": "c1"}},
        "status": {"conditions": [NEW_PAUSED],
                   "initialization": {"infrastructureProvisioned": True, "controlPlaneInitialized": True},
                   "deprecated": {"v1beta1": {"conditions": [OLD_READY], "failureReason": "r",
                                              "failureMessage": "m"}}},
    }


def test_cluster_at_v1beta1():
    old = from_hub(hub_cluster(), "Cluster", "v1beta1")
    assert old["apiVersion"] == "cluster.x-k8s.io/v1beta1"
    assert old["status"] == {"conditions": [OLD_READY], "v1beta2": {"conditions": [NEW_PAUSED]},
                             "failureReason": "r", "failureMessage": "m",
                             "infrastructureReady": True, "controlPlaneReady": True}
    assert old["spec"]["paused"] is True
    assert old["spec"]["infrastructureRef"] == {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                                                "kind": "OpenStackCluster", "name": "c1", "namespace": "ns"}


def test_round_trip_through_v1beta1_is_lossless():
    assert to_hub(from_hub(hub_cluster(), "Cluster", "v1beta1"), "Cluster", "v1beta1") == hub_cluster()


def test_hub_version_is_unchanged():
    assert from_hub(hub_cluster(), "Cluster", "v1beta2") == hub_cluster()


def test_machine_readiness_and_node_ref():
    old = {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Machine", "metadata": {"name": "m"},
           "status": {"bootstrapReady": True, "infrastructureReady": False,
                      "nodeRef": {"apiVersion": "v1", "kind": "Node", "name": "n1"}}}
    hub = to_hub(old, "Machine", "v1beta1")
    assert hub["status"] == {"initialization": {"bootstrapDataSecretCreated": True,
                                                "infrastructureProvisioned": False},
                             "nodeRef": {"name": "n1"}}
    assert from_hub(hub, "Machine", "v1beta1")["status"] == old["status"]


def test_kubeadm_kinds():
    kcp = to_hub({"kind": "KubeadmControlPlane", "apiVersion": "controlplane.cluster.x-k8s.io/v1beta1",
                  "metadata": {"name": "k"}, "status": {"initialized": True, "readyReplicas": 3,
                                                        "v1beta2": {"readyReplicas": 2}}},
                 "KubeadmControlPlane", "v1beta1")
    assert kcp["apiVersion"] == "controlplane.cluster.x-k8s.io/v1beta2"
    assert kcp["status"] == {"initialization": {"controlPlaneInitialized": True}, "readyReplicas": 2,
                             "deprecated": {"v1beta1": {"readyReplicas": 3}}}
    config = to_hub({"kind": "KubeadmConfig", "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1",
                     "metadata": {"name": "k"}, "status": {"ready": True}}, "KubeadmConfig", "v1beta1")
    assert config["status"] == {"initialization": {"dataSecretCreated": True}}


def test_empty_status_keeps_its_shape():
    obj = {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "metadata": {"name": "c"}, "status": {}}
    assert from_hub(obj, "Cluster", "v1beta1")["status"] == {}
