# -*- coding: utf-8 -*-
"""The example inventory the collection ships (examples/inventory/fleet.capi_clusters.yml) works as it is, with
the connection from K8S_AUTH_* as an AWX Kubernetes credential gives it: ``ansible-inventory --list`` lists the
seeded cluster in the groups the file builds."""

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "inventory" / "fleet.capi_clusters.yml"
ANSIBLE_INVENTORY = str(Path(sys.executable).parent / "ansible-inventory")


def test_the_example_inventory_lists_the_clusters(cloud, collections_path, tmp_path):
    name = "example-%s" % uuid.uuid4().hex[:6]
    cloud.json("capi", "cluster", "create", name, "--control-plane", 1, "--workers", 0, "--api-version", "v1beta2")
    source = tmp_path / EXAMPLE.name
    shutil.copy(EXAMPLE, source)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(collections_path), ANSIBLE_INVENTORY_UNPARSED_FAILED="true",
               ANSIBLE_NOCOLOR="1", K8S_AUTH_KUBECONFIG=str(cloud.state_dir / "kubeconfig"))
    proc = subprocess.run([ANSIBLE_INVENTORY, "-i", str(source), "--list"], capture_output=True, text=True, env=env,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    listed = json.loads(proc.stdout)
    host = "default/%s" % name
    assert host in listed["_meta"]["hostvars"], sorted(listed["_meta"]["hostvars"])
    assert host in listed["capi_namespace_default"]["hosts"]
    assert any(group.startswith("k8s_") and host in listed[group].get("hosts", []) for group in listed), listed
    assert "lb_vip" in listed["_meta"]["hostvars"][host]
