"""The move target API and the clusterctl stand-in in a real minicloud, through ``up`` and the wrapper script."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

REQUIRED = ("keystone", "neutron", "nova", "octavia", "octavia_lib", "openstack")
if any(importlib.util.find_spec(name) is None for name in REQUIRED):
    pytest.skip("the OpenStack packages are not installed", allow_module_level=True)

from minicloud.kube.admin import KubeAdmin  # noqa: E402

pytestmark = pytest.mark.integration

STANDIN = Path(__file__).resolve().parents[1] / "bin" / "clusterctl-standin"


def test_up_serves_a_move_target_and_the_stand_in_moves_a_cluster_to_it(cloud):
    status = {p.name: p for p in cloud.status().processes}
    assert status["kubernetes-target"].healthy
    assert status["kubernetes-target"].port == status["kubernetes"].port + 1
    target_config = cloud.state_dir / "kubeconfig-target"
    cloud.create_capi_cluster("moved", namespace="moving", workers=1)
    cloud.set_capi_provider_mode("block-move", delay=1)
    env = dict(os.environ, MINICLOUD_PYTHON=sys.executable, MINICLOUD_CLUSTERCTL_VERSION="v1.12.0")
    started = time.monotonic()
    done = subprocess.run([str(STANDIN), "move", "--kubeconfig", str(cloud.kubeconfig), "--to-kubeconfig",
                           str(target_config), "--to-kubeconfig-context", "minicloud", "-n", "moving"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "stand-in (NOT clusterctl; emulating clusterctl v1.12.0)" in done.stderr
    assert time.monotonic() - started >= 1, "it waited for the provider to lift block-move"
    assert "Creating objects in the target cluster" in done.stdout
    assert KubeAdmin(cloud.kubeconfig).list_clusters("moving") == []
    (moved,) = KubeAdmin(target_config).list_clusters("moving")
    assert moved["paused"] is False and len(moved["machines"]) == 2
    deadline = time.monotonic() + 10  # the target's own CAPI controllers report the unpause
    while (moved["pausedCondition"] or {}).get("reason") != "NotPaused" or moved["pausedCondition"][
            "observedGeneration"] < 2:
        assert time.monotonic() < deadline, moved
        time.sleep(0.2)
        (moved,) = KubeAdmin(target_config).list_clusters("moving")

    again = subprocess.run([str(STANDIN), "move", "--kubeconfig", str(target_config), "--to-kubeconfig",
                            str(cloud.kubeconfig), "-n", "nowhere"], capture_output=True, text=True, env=env,
                           timeout=60)
    assert again.returncode == 1 and "Error: no Cluster found in namespace 'nowhere'" in again.stderr
    cloud.set_capi_provider_mode("silent")
