# -*- coding: utf-8 -*-
"""Cluster API objects as the Kubernetes API serves them, in both contract versions.

Shapes follow Cluster API v1.10 (v1beta1 with ``status.v1beta2``) and v1.11 (v1beta2 with
``status.deprecated.v1beta1``) and CAPO v1beta1; the pause tests move them through time.
"""

import copy

T0 = "2026-11-21T10:00:00Z"


def paused_condition(status, generation, reason=None):
    return {"type": "Paused", "status": status, "observedGeneration": generation,
            "reason": reason or ("Paused" if status == "True" else "NotPaused"),
            "message": "", "lastTransitionTime": T0}


def cluster(version="v1beta1", name="c1", namespace="default", paused=False, generation=1, paused_status=None,
            paused_generation=None, provisioned=True, ready=True):
    obj = {
        "apiVersion": "cluster.x-k8s.io/%s" % version,
        "kind": "Cluster",
        "metadata": {"name": name, "namespace": namespace, "uid": "uid-cluster-%s" % name, "generation": generation,
                     "resourceVersion": "100", "labels": {"cluster.x-k8s.io/cluster-name": name}},
        "spec": {"paused": paused,
                 "controlPlaneEndpoint": {"host": "203.0.113.10", "port": 6443}},
        "status": {"phase": "Provisioned" if provisioned else "Provisioning"},
    }
    new = [{"type": "Available", "status": "True" if ready else "False", "reason": "Available" if ready else
            "NotAvailable", "message": "", "observedGeneration": generation, "lastTransitionTime": T0}]
    if paused_status is not None:
        new.append(paused_condition(paused_status, paused_generation if paused_generation is not None
                                    else generation))
    old = [{"type": "Ready", "status": "True" if ready else "False", "severity": "" if ready else "Warning",
            "reason": "" if ready else "WaitingForControlPlane", "lastTransitionTime": T0}]
    if version == "v1beta1":
        obj["spec"]["infrastructureRef"] = {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                                            "kind": "OpenStackCluster", "name": name, "namespace": namespace}
        obj["spec"]["controlPlaneRef"] = {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1",
                                          "kind": "KubeadmControlPlane", "name": name + "-cp", "namespace": namespace}
        obj["status"].update(infrastructureReady=provisioned, controlPlaneReady=provisioned, conditions=old,
                             v1beta2={"conditions": new})
    else:
        obj["spec"]["infrastructureRef"] = {"apiGroup": "infrastructure.cluster.x-k8s.io",
                                            "kind": "OpenStackCluster", "name": name}
        obj["spec"]["controlPlaneRef"] = {"apiGroup": "controlplane.cluster.x-k8s.io",
                                          "kind": "KubeadmControlPlane", "name": name + "-cp"}
        obj["status"].update(initialization={"infrastructureProvisioned": provisioned,
                                             "controlPlaneInitialized": provisioned},
                             conditions=new, deprecated={"v1beta1": {"conditions": old}})
    return obj


def machine(version="v1beta1", name="c1-cp-a", cluster_name="c1", control_plane=True, ready=True, node="node-a",
            address="10.0.0.11", paused_status=None, deleting=False, hooks=()):
    labels = {"cluster.x-k8s.io/cluster-name": cluster_name}
    if control_plane:
        labels["cluster.x-k8s.io/control-plane"] = ""
    obj = {
        "apiVersion": "cluster.x-k8s.io/%s" % version,
        "kind": "Machine",
        "metadata": {"name": name, "namespace": "default", "uid": "uid-" + name, "generation": 1,
                     "resourceVersion": "200", "labels": labels, "creationTimestamp": T0,
                     "annotations": dict((h, "") for h in hooks)},
        "spec": {"clusterName": cluster_name, "providerID": "openstack:///" + name, "version": "v1.31.2"},
        "status": {"phase": "Running", "nodeRef": {"name": node},
                   "addresses": [{"type": "InternalIP", "address": address}]},
    }
    if deleting:
        obj["metadata"]["deletionTimestamp"] = T0
    new = [{"type": "Ready", "status": "True" if ready else "False", "reason": "Ready" if ready else "NotReady",
            "observedGeneration": 1, "lastTransitionTime": T0}]
    if paused_status is not None:
        new.append(paused_condition(paused_status, 1))
    if version == "v1beta1":
        obj["status"].update(bootstrapReady=True, infrastructureReady=True, v1beta2={"conditions": new},
                             conditions=[{"type": "Ready", "status": "True" if ready else "False"}])
    else:
        obj["status"].update(initialization={"bootstrapDataSecretCreated": True, "infrastructureProvisioned": True},
                             conditions=new)
    return obj


def openstack_cluster(name="c1", block_move=False, resource_version="300", ready=True):
    obj = {
        "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
        "kind": "OpenStackCluster",
        "metadata": {"name": name, "namespace": "default", "uid": "uid-osc-" + name, "generation": 1,
                     "resourceVersion": resource_version, "labels": {"cluster.x-k8s.io/cluster-name": name},
                     "annotations": {}},
        "spec": {},
        "status": {"ready": ready,
                   "apiServerLoadBalancer": {"id": "lb-1", "name": "k8s-clusterapi-cluster-default-" + name,
                                             "ip": "203.0.113.10", "internalIP": "10.0.0.5",
                                             "allowedCIDRs": ["10.0.0.0/24"]},
                   "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }
    if block_move:
        obj["metadata"]["annotations"]["clusterctl.cluster.x-k8s.io/block-move"] = "true"
    return obj


def written(obj, resource_version, annotations=None):
    """A copy of ``obj`` as it looks after a write: a new resourceVersion, and new annotations if given."""
    new = copy.deepcopy(obj)
    new["metadata"]["resourceVersion"] = str(resource_version)
    if annotations is not None:
        new["metadata"]["annotations"] = dict(annotations)
    return new
