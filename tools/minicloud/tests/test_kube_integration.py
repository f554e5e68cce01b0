"""The kubernetes service in a real minicloud: kubeconfig, CLI verbs, faults and request counts."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

REQUIRED = ("keystone", "neutron", "nova", "octavia", "octavia_lib", "openstack")
if any(importlib.util.find_spec(name) is None for name in REQUIRED):
    pytest.skip("the OpenStack packages are not installed", allow_module_level=True)

from kubernetes import client, config  # noqa: E402

pytestmark = pytest.mark.integration


def run(cloud, *args):
    done = subprocess.run([sys.executable, "-m", "minicloud", "--state-dir", str(cloud.state_dir), *args],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_kubeconfig_works_and_faults_hit_client_requests(cloud):
    config.load_kube_config(config_file=str(cloud.kubeconfig), context="minicloud")
    core = client.CoreV1Api()
    assert "default" in [n.metadata.name for n in core.list_namespace().items]
    cloud.request_counts(service="kubernetes", reset=True)
    run(cloud, "fault", "add", "--service", "kubernetes", "--status", "503", "--count", "1")
    try:
        with pytest.raises(client.ApiException) as caught:
            core.list_namespace()
        assert caught.value.status == 503 and json.loads(caught.value.body)["kind"] == "Status"
        assert core.list_namespace().items
    finally:
        cloud.clear_faults()
    counts = json.loads(run(cloud, "requests", "--service", "kubernetes"))
    assert counts["requests"]["kubernetes"]["GET"]["/api/v1/namespaces"] == 2


def test_capi_and_node_verbs(cloud):
    before = {n["name"] for n in json.loads(run(cloud, "kube", "node", "list"))}  # other modules' nodes
    created = json.loads(run(cloud, "capi", "cluster", "create", "demo", "--control-plane", "1", "--workers", "1",
                             "--api-version", "v1beta1"))
    assert {o["kind"] for o in created["objects"]} >= {"Cluster", "KubeadmControlPlane", "MachineDeployment",
                                                        "MachineSet", "Machine", "OpenStackMachine", "Secret"}
    assert len(created["nodes"]) == 2 and "Node" not in {o["kind"] for o in created["objects"]}
    mode = json.loads(run(cloud, "capi", "provider", "block-move", "--delay", "1"))
    assert mode["name"] == "block-move" and mode["applied"]
    run(cloud, "kube", "node", "create", "extra", "--pod-cidr", "10.244.99.0/24", "--address", "10.6.9.9")
    nodes = {n["name"]: n for n in json.loads(run(cloud, "kube", "node", "list"))}
    assert nodes["extra"]["podCIDR"] == "10.244.99.0/24" and nodes["extra"]["internalIP"] == "10.6.9.9"
    assert set(nodes) - before == {"extra"}  # demo's Nodes are in its own API
    seeded = {n["name"] for n in json.loads(run(cloud, "kube", "node", "list", "--cluster", "demo"))}
    assert seeded == {n["name"] for n in created["nodes"]}
    [listed] = [c for c in json.loads(run(cloud, "capi", "cluster", "list")) if c["name"] == "demo"]
    assert len(listed["machines"]) == 2
    run(cloud, "capi", "cluster", "delete", "demo")
    run(cloud, "kube", "node", "delete", "extra")
    assert {n["name"] for n in json.loads(run(cloud, "kube", "node", "list"))} == before
