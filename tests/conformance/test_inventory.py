# -*- coding: utf-8 -*-
"""The capi_clusters inventory plugin through a real ``ansible-inventory`` against the real API server: the
cluster the real controllers run is one host, with what KubeadmControlPlane and the Cluster report."""

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

ANSIBLE_INVENTORY = str(Path(sys.executable).parent / "ansible-inventory")


def plain(value):
    """The value as a playbook sees it (``ansible-inventory`` marks a plugin's strings as unsafe)."""
    if isinstance(value, dict):
        if set(value) == {"__ansible_unsafe"}:
            return value["__ansible_unsafe"]
        return dict((k, plain(v)) for k, v in value.items())
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def test_the_real_cluster_is_a_host_with_its_control_plane_and_state(kubeconfig, capi_cluster, tmp_path):
    source = tmp_path / "real.capi_clusters.yml"
    source.write_text(yaml.safe_dump({"plugin": "flightcontrol.openstack.capi_clusters", "kubeconfig": kubeconfig,
                                      "namespaces": [capi_cluster["namespace"]]}))
    env = dict(os.environ, ANSIBLE_INVENTORY_UNPARSED_FAILED="true", ANSIBLE_NOCOLOR="1")
    done = subprocess.run([ANSIBLE_INVENTORY, "-i", str(source), "--list"], capture_output=True, text=True, env=env,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    hostvars = plain(json.loads(done.stdout)["_meta"]["hostvars"])
    host = "%s/%s" % (capi_cluster["namespace"], capi_cluster["name"])
    assert host in hostvars, sorted(hostvars)
    variables = hostvars[host]
    assert (variables["capi_cluster_name"], variables["capi_cluster_namespace"]) == (
        capi_cluster["name"], capi_cluster["namespace"])
    assert variables["capi_contract_version"] == "v1beta2"
    assert variables["capi_provisioned"] is True and variables["capi_paused"] is False
    assert variables["capi_control_plane_replicas"] == 3
    assert variables["capi_kubeconfig_secret"]["name"] == capi_cluster["name"] + "-kubeconfig"
