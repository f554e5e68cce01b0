# -*- coding: utf-8 -*-
"""The conformance tier: the collection against the real Kubernetes control plane.

One minicloud started with ``--kubernetes upstream`` serves the whole run: etcd, kube-apiserver, Cluster API's
core, KubeadmControlPlane, kubeadm bootstrap and CAPD (in-memory backend) managers built from their Go modules
(``tools/upstream``), with the real OpenStack services and minicloud's CAPO load-balancer controller. Set
MINICLOUD_UPSTREAM_STATE_DIR to use one that is up already (it is then left running). The first run on a machine
builds the upstream programs (tools/upstream/build.sh; cached outside the repository).

The tier runs on Cluster API v1.13 (the plane's default). CONFORMANCE_CAPI_VERSION=v1.12 (``make conformance-v1.12``)
brings the cloud up on v1.12 and runs only the tests marked ``every_capi_release`` (the guarded rollout, the pause
and unpause, the move): the promises users of each supported release rely on.

The helpers are the integration tests' own (``inprocess``, ``cloud_driver``, ``playbook_runner``).
"""

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))

import inprocess  # noqa: E402
from cloud_driver import TestCloud  # noqa: E402
import playbook_runner  # noqa: E402
from playbook_runner import REPO  # noqa: E402

# A cold start on a machine without the build cache builds seven programs first.
UP_TIMEOUT = 3600
STATE_ENV = "MINICLOUD_UPSTREAM_STATE_DIR"
CAPI_ENV = "CONFORMANCE_CAPI_VERSION"
DEFAULT_CAPI = "v1.13"
EVERY_RELEASE = "every_capi_release"


def capi_version():
    """The Cluster API release the tier runs on (CONFORMANCE_CAPI_VERSION, v1.13 by default)."""
    return os.environ.get(CAPI_ENV) or DEFAULT_CAPI


def pytest_configure(config):
    config.addinivalue_line("markers", "%s: runs on every Cluster API release the plane builds (%s=v1.12 runs "
                                       "only these)" % (EVERY_RELEASE, CAPI_ENV))


def pytest_collection_modifyitems(config, items):
    """On a release other than the default, only the tests marked ``every_capi_release``."""
    if capi_version() == DEFAULT_CAPI:
        return
    kept = [item for item in items if item.get_closest_marker(EVERY_RELEASE)]
    config.hook.pytest_deselected(items=[item for item in items if item not in kept])
    items[:] = kept


@pytest.fixture(scope="session")
def upstream(tmp_path_factory):
    """The run's minicloud on the real control plane."""
    given = os.environ.get(STATE_ENV)
    cloud = TestCloud(given or tmp_path_factory.mktemp("upstream"))
    os.environ["MINICLOUD_STATE_DIR"] = str(cloud.state_dir)
    try:
        if given:
            cloud.process("status")
        else:
            cloud.process("up", "--kubernetes", "upstream", "--capi-version", capi_version(), "--port-offset", "auto",
                          "--timeout", UP_TIMEOUT)
        yield cloud
    finally:
        if not given:
            cloud.process("down", check=False)


@pytest.fixture(scope="session")
def kubeconfig(upstream):
    return str(upstream.state_dir / "kubeconfig")


@pytest.fixture(scope="session")
def upstream_bin():
    """The folder of the built upstream programs (kubectl, clusterctl, ...)."""
    out = subprocess.run(["bash", str(REPO / "tools" / "upstream" / "build.sh"), "--capi", capi_version(), "--dir"],
                         capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


@pytest.fixture
def kubectl(upstream_bin, kubeconfig, tmp_path):
    """The real kubectl (built with kube-apiserver) against the real API server."""

    def run(*args, check=True):
        done = subprocess.run([str(upstream_bin / "kubectl"), "--kubeconfig", kubeconfig, *map(str, args)],
                              capture_output=True, text=True, env=dict(os.environ, HOME=str(tmp_path)), timeout=120,
                              check=False)
        if check and done.returncode != 0:
            command = " ".join(map(str, args))
            raise AssertionError("kubectl %s: %d\n%s\n%s" % (command, done.returncode, done.stdout, done.stderr))
        return done

    return run


@pytest.fixture
def run_module(upstream, kubeconfig):
    """Run one module of the collection in this process against the upstream cloud (OpenStack from its
    clouds.yaml, Kubernetes from its kubeconfig)."""

    def run(module, args, check_mode=False):
        return inprocess.run_module(module, dict(args), check_mode=check_mode,
                                    env={"OS_CLIENT_CONFIG_FILE": str(upstream.clouds_yaml),
                                         "K8S_AUTH_KUBECONFIG": kubeconfig})

    return run


@pytest.fixture(scope="session")
def capi_cluster(upstream):
    """One cluster on the real controllers: three control-plane Machines (KCP, in-memory DevMachines), each with a
    real server and an ACTIVE member of a real Octavia load balancer (minicloud's CAPO controller). Tests roll it
    in place; it is deleted at the end."""
    upstream.api.set_octavia_mode("normal", delay=0.2)
    # a name of its own each run: CAPD v1.12.5's in-memory backend may not serve a cluster again under a name it served
    created = upstream.api.create_capi_cluster("conf-%s" % uuid.uuid4().hex[:5], control_plane=3, openstack=True)
    lb = created["openstack"]["loadbalancer"]
    created["pool"] = "%s-6443" % lb["name"]
    created["lb_id"] = lb["id"]
    yield created
    upstream.api.set_octavia_mode("normal")
    upstream.api.delete_capi_cluster(created["name"], created["namespace"])


ROLLOUT_HOOK = "pre-drain.delete.hook.machine.cluster.x-k8s.io/flightcontrol-rollout"


@pytest.fixture
def settled(upstream, kubectl, capi_cluster):
    """For a test that rolls the shared cluster or injects a fault into it: what it may leave behind when it
    fails halfway is taken away after it, so the next test starts from a cluster that rolls: the Octavia
    emulator back to normal (a lost-member mode left on loses every new member of the tests after), and no
    rollout hook of ours left on a Machine (a held Machine blocks the control plane until a guard releases it)."""
    yield capi_cluster
    upstream.api.set_octavia_mode("normal", delay=0.2)
    out = kubectl("get", "machines.v1beta2.cluster.x-k8s.io", "-n", capi_cluster["namespace"], "-l",
                  "cluster.x-k8s.io/cluster-name=%s" % capi_cluster["name"], "-o", "json")
    for machine in json.loads(out.stdout)["items"]:
        if ROLLOUT_HOOK in (machine["metadata"].get("annotations") or {}):
            kubectl("annotate", "machines.v1beta2.cluster.x-k8s.io", machine["metadata"]["name"], "-n",
                    capi_cluster["namespace"], ROLLOUT_HOOK + "-")


@pytest.fixture(scope="session")
def collections_path(tmp_path_factory):
    """ANSIBLE_COLLECTIONS_PATH for the programs the tests start (ansible-rulebook)."""
    return playbook_runner.collections_path(lambda: tmp_path_factory.mktemp("collections"))
