# -*- coding: utf-8 -*-
"""The cluster_move role's target preflight for a ClusterClass cluster, on the real control plane: the class
references a template of a provider the move target does not have (a CRD installed on the source only, as a
provider installed on one management cluster and not the other), and the target already holds a different class
of that name. The role stops before any write naming each missing kind and the class in the way; nothing is
paused, moved or overwritten."""

import functools
import json
import uuid

import pytest

from test_clusterclass import CLASS, CLUSTERS, wait_until
# the move tests' fixtures (the role, the target), used by name
from test_move import run_role, target_kubectl  # noqa: F401 # pylint: disable=unused-import

pytestmark = pytest.mark.every_capi_release

PROBE_GROUP = "infrastructure.fc-probe.example"
PROBE_CRD = "fcprobemachinetemplates.%s" % PROBE_GROUP
CLASSES = "clusterclasses.v1beta2.cluster.x-k8s.io"


def probe_crd():
    """A provider's template kind, with Cluster API's contract label (the class controller reads it)."""
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": PROBE_CRD, "labels": {"cluster.x-k8s.io/v1beta2": "v1beta2"}},
            "spec": {"group": PROBE_GROUP, "scope": "Namespaced",
                     "names": {"kind": "FcProbeMachineTemplate", "listKind": "FcProbeMachineTemplateList",
                               "plural": "fcprobemachinetemplates", "singular": "fcprobemachinetemplate"},
                     "versions": [{"name": "v1beta2", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                         "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}


def apply(run, tmp_path, *objects):
    path = tmp_path / ("objects-%s.json" % uuid.uuid4().hex[:6])
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objects)}))
    done = run("apply", "-f", path)
    assert done.returncode == 0, done.stderr


@pytest.fixture
def class_cluster_with_probe_worker(upstream, kubectl, target_kubectl, tmp_path):
    """A one-Machine ClusterClass cluster in a namespace of its own whose class gained a worker class with the
    probe provider's template (the cluster uses no worker: it stays as it was), healthy again once the class
    controller took the change; the target holds a ClusterClass of that name with another spec. All removed
    after the test."""
    upstream.api.set_octavia_mode("normal")
    name = "ccpf-%s" % uuid.uuid4().hex[:5]
    namespace = "move-%s" % name
    cluster = upstream.api.create_capi_cluster(name, namespace=namespace, control_plane=1, openstack=True,
                                               class_name=CLASS)
    source = functools.partial(kubectl, check=False)
    original = json.loads(kubectl("get", CLASSES, CLASS, "-n", namespace, "-o", "json").stdout)
    try:
        apply(source, tmp_path, probe_crd())
        kubectl("wait", "--for", "condition=Established", "crd/" + PROBE_CRD, "--timeout", "60s")
        meta = {"namespace": namespace}
        apply(source, tmp_path,
              {"apiVersion": "%s/v1beta2" % PROBE_GROUP, "kind": "FcProbeMachineTemplate",
               "metadata": dict(meta, name="probe-worker"), "spec": {"template": {"spec": {}}}},
              {"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2", "kind": "KubeadmConfigTemplate",
               "metadata": dict(meta, name="probe-worker-bootstrap"),
               "spec": {"template": {"spec": {"format": "cloud-config"}}}})
        worker = {"class": "probe", "bootstrap": {"templateRef": {
            "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2", "kind": "KubeadmConfigTemplate",
            "name": "probe-worker-bootstrap"}}, "infrastructure": {"templateRef": {
                "apiVersion": "%s/v1beta2" % PROBE_GROUP, "kind": "FcProbeMachineTemplate", "name": "probe-worker"}}}
        kubectl("patch", CLASSES, CLASS, "-n", namespace, "--type", "merge", "-p",
                json.dumps({"spec": {"workers": {"machineDeployments": [worker]}}}))
        wait_until("the class controller to take the probe worker class and the Cluster to be available again",
                   lambda: reconciled(kubectl, namespace, name))
        # the target's class of that name: the source's as it was before the worker class
        assert target_kubectl("create", "namespace", namespace).returncode == 0
        apply(target_kubectl, tmp_path, {"apiVersion": original["apiVersion"], "kind": "ClusterClass",
                                         "metadata": {"name": CLASS, "namespace": namespace},
                                         "spec": original["spec"]})
        yield cluster
    finally:
        target_kubectl("delete", "namespace", namespace, "--wait=false")
        upstream.api.delete_capi_cluster(name, namespace)
        kubectl("delete", "crd", PROBE_CRD, "--wait=false", check=False)


def reconciled(kubectl, namespace, name):
    """The class took its new generation, and the Cluster is Available with its topology reconciled."""
    found = json.loads(kubectl("get", CLASSES, CLASS, "-n", namespace, "-o", "json").stdout)
    if (found.get("status") or {}).get("observedGeneration") != found["metadata"]["generation"]:
        return False
    cluster = json.loads(kubectl("get", CLUSTERS, name, "-n", namespace, "-o", "json").stdout)
    conditions = {c["type"]: c["status"] for c in (cluster.get("status") or {}).get("conditions") or []}
    return conditions.get("Available") == "True" and conditions.get("TopologyReconciled") == "True"


def test_a_target_without_a_provider_of_the_class_stops_the_move_before_any_write(
        kubectl, target_kubectl, run_role, class_cluster_with_probe_worker):
    cluster = class_cluster_with_probe_worker
    name, namespace = cluster["name"], cluster["namespace"]
    target_class = json.loads(target_kubectl("get", CLASSES, CLASS, "-n", namespace, "-o", "json").stdout)
    run = run_role(cluster)
    got = run.result
    assert got["failed"] is True, run.output
    msg = got["msg"]
    assert "is not fit for a move, nothing was changed" in msg, msg
    assert "does not serve 2 kind(s)" in msg, msg
    for kind in ("FcProbeMachineTemplate (", "FcProbeMachine ("):
        assert kind in msg, msg
    assert "API group %s is not served" % PROBE_GROUP in msg, msg
    assert "spec.workers.machineDeployments[probe].infrastructure.templateRef (probe-worker)" in msg, msg
    assert "the target already has a different ClusterClass %s/%s (its spec differs in spec.workers)" % (
        namespace, CLASS) in msg, msg
    assert got["move"] is None, "clusterctl never ran"
    # nothing paused on the source, nothing moved to the target, the target's class not overwritten
    source = json.loads(kubectl("get", CLUSTERS, name, "-n", namespace, "-o", "json").stdout)
    assert not source["spec"].get("paused") and "deletionTimestamp" not in source["metadata"]
    assert target_kubectl("get", CLUSTERS, name, "-n", namespace).returncode != 0
    # the target's class controller writes its status (its templates are not there): its spec is what counts
    after = json.loads(target_kubectl("get", CLASSES, CLASS, "-n", namespace, "-o", "json").stdout)
    assert after["spec"] == target_class["spec"] and "workers" not in after["spec"], "the class was not overwritten"
    assert after["metadata"]["generation"] == target_class["metadata"]["generation"]
