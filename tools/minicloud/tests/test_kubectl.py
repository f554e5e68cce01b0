"""The real kubectl against the emulated API server: OpenAPI (explain, server-side field validation on
apply and create) and server-side printing (the CAPI columns of ``kubectl get``)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from kube_harness import KubeServer

from minicloud.kube.admin import KubeAdmin

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on PATH")

CLUSTER = """apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  name: {name}
  namespace: default
spec:
  paused: true
  clusterNetwork:
    pods:
      cidrBlocks: ["10.244.0.0/16"]
{extra}"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = KubeServer(tmp_path_factory.mktemp("kubectl")).start()
    admin = KubeAdmin(server.kubeconfig)
    admin.create_cluster("seeded", control_plane=1, workers=1)
    server.seeded_kubeconfig = server.folder / "seeded.kubeconfig"  # its Nodes are in its own API
    server.seeded_kubeconfig.write_text(admin.workload_kubeconfig("seeded"))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def kubectl(server, tmp_path_factory):
    home = tmp_path_factory.mktemp("home")  # kubectl's discovery and OpenAPI caches, this module's own

    def run(*args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
        env = dict(os.environ, KUBECONFIG=str(server.kubeconfig), HOME=str(home))
        done = subprocess.run([KUBECTL, *args], input=stdin, capture_output=True, text=True, env=env, timeout=60)
        if check and done.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)}: {done.returncode}\n{done.stdout}\n{done.stderr}")
        return done

    return run


def header(output: str) -> list[str]:
    return output.splitlines()[0].split()


def test_apply_creates_and_strict_validation_refuses_unknown_fields(kubectl):
    assert "cluster.cluster.x-k8s.io/k1 created" in kubectl(
        "apply", "-f", "-", stdin=CLUSTER.format(name="k1", extra="")).stdout
    refused = kubectl("apply", "-f", "-", stdin=CLUSTER.format(name="k2", extra="  colour: blue\n"), check=False)
    assert refused.returncode == 1
    assert ('Cluster in version "v1beta2" cannot be handled as a Cluster: strict decoding error: '
            'unknown field "spec.colour"') in refused.stderr
    assert kubectl("get", "cluster", "k2", check=False).returncode == 1
    patched = kubectl("apply", "-f", "-", stdin=CLUSTER.format(name="k1", extra="  flavour: x\n"), check=False)
    assert patched.returncode == 1 and 'strict decoding error: unknown field "spec.flavour"' in patched.stderr
    warned = kubectl("create", "--validate=warn", "-f", "-", stdin=CLUSTER.format(name="k3", extra="  odd: 1\n"))
    assert 'Warning: unknown field "spec.odd"' in warned.stderr


def test_explain_uses_the_published_schemas(kubectl):
    paused = kubectl("explain", "cluster.spec.paused").stdout
    assert "VERSION:    v1beta2" in paused and "FIELD: paused <boolean>" in paused and "stop reconciling" in paused
    spec = kubectl("explain", "cluster.spec").stdout
    assert "clusterNetwork\t<Object>" in spec and "controlPlaneRef\t<Object>" in spec
    old = kubectl("explain", "machine", "--api-version=cluster.x-k8s.io/v1beta1").stdout
    assert "VERSION:    v1beta1" in old and "metadata\t<ObjectMeta>" in old
    old_kcp = kubectl("explain", "kcp.spec", "--api-version=controlplane.cluster.x-k8s.io/v1beta1").stdout
    assert "rolloutAfter" in old_kcp
    assert "base64" in kubectl("explain", "secret.data").stdout


def test_get_prints_the_capi_columns(kubectl):
    output = kubectl("get", "clusters,machines,kcp", "-A").stdout
    tables = output.strip().split("\n\n")
    assert header(tables[0])[:4] == ["NAMESPACE", "NAME", "CLUSTERCLASS", "AVAILABLE"]
    assert "cluster.cluster.x-k8s.io/seeded" in tables[0] and "Provisioned" in tables[0]
    assert header(tables[1])[:5] == ["NAMESPACE", "NAME", "CLUSTER", "NODE", "NAME"]
    assert "Running" in tables[1] and "machine.cluster.x-k8s.io/seeded-control-plane-" in tables[1]
    assert "kubeadmcontrolplane.controlplane.cluster.x-k8s.io/seeded-control-plane" in tables[2]
    assert "INITIALIZED" in header(tables[2])
    old = kubectl("get", "machines.v1beta1.cluster.x-k8s.io", "-n", "default").stdout
    assert header(old) == ["NAME", "CLUSTER", "NODENAME", "PROVIDERID", "PHASE", "AGE", "VERSION"]


def test_get_prints_the_built_in_columns(kubectl, server):
    nodes = kubectl("--kubeconfig", str(server.seeded_kubeconfig), "get", "nodes", "-o", "wide").stdout
    assert header(nodes)[:6] == ["NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP"]
    assert "control-plane" in nodes and "Ready" in nodes
    secrets = kubectl("get", "secrets", "-n", "default").stdout
    assert header(secrets) == ["NAME", "TYPE", "DATA", "AGE"] and "seeded-kubeconfig" in secrets
    assert header(kubectl("get", "namespaces").stdout) == ["NAME", "STATUS", "AGE"]
    osm = kubectl("get", "openstackmachines", "-A").stdout
    assert header(osm) == ["NAMESPACE", "NAME", "CLUSTER", "READY", "PROVIDERID", "MACHINE", "AGE"]
