# -*- coding: utf-8 -*-
"""The control_plane_rollout role (and rollout_guard) rolling minicloud's CAPI control planes on the real Octavia.

Each test seeds a cluster with real servers, ports and an Octavia load balancer (``capi cluster create
--openstack``), runs the role in a real ``ansible-playbook`` and judges it from minicloud's own record of the
pool (``capi history``): serving members sampled every 0.25 s during the rollout.
"""

import json
import os
import subprocess
import sys
import uuid

import yaml
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

from conftest import BIN

HOOK = "pre-drain.delete.hook.machine.cluster.x-k8s.io/flightcontrol-rollout"
KCP_GROUP = "controlplane.cluster.x-k8s.io"


def seed_cluster(cloud, control_plane=3, monitor=False):
    cloud.octavia("normal", delay=0.1)
    name = "r-%s" % uuid.uuid4().hex[:6]
    args = ["capi", "cluster", "create", name, "--control-plane", control_plane, "--openstack"]
    if monitor:
        args.append("--monitor")
    cloud.json(*args)
    return name


def pool_name(name, namespace="default"):
    return "k8s-clusterapi-cluster-%s-%s-kubeapi-6443" % (namespace, name)


def kube_api(cloud):
    return k8s_config.new_client_from_config(config_file=str(cloud.state_dir / "kubeconfig"))


def custom(cloud, func, *args):
    with kube_api(cloud) as api:
        return getattr(k8s_client.CustomObjectsApi(api), func)(*args)


def set_capo_wait(cloud, name, capo_wait, namespace="default"):
    """Make minicloud's CAPO wait like CAPO v0.14+ (``member``) or like older ones (``lb``), without a rollout."""
    cluster = custom(cloud, "get_namespaced_custom_object", "cluster.x-k8s.io", "v1beta2", namespace, "clusters", name)
    kcp = cluster["spec"]["controlPlaneRef"]["name"]
    custom(cloud, "patch_namespaced_custom_object", KCP_GROUP, "v1beta2", namespace, "kubeadmcontrolplanes", kcp,
           {"metadata": {"annotations": {"minicloud.test/capo-wait": capo_wait}}})


def machines(cloud, name, namespace="default"):
    items = custom(cloud, "list_namespaced_custom_object", "cluster.x-k8s.io", "v1beta2", namespace, "machines")
    return [m for m in items["items"]
            if (m["metadata"].get("labels") or {}).get("cluster.x-k8s.io/cluster-name") == name
            and "cluster.x-k8s.io/control-plane" in (m["metadata"].get("labels") or {})]


def hooks_left(cloud, name):
    return dict((m["metadata"]["name"], [k for k in (m["metadata"].get("annotations") or {}) if ".delete.hook." in k])
                for m in machines(cloud, name) if any(".delete.hook." in k for k in m["metadata"].get("annotations") or {}))


def run_role(cloud, collections_path, folder, extra_vars, timeout=600):
    """Run the role in a real ansible-playbook; returns (rc, output, rollout_guard's registered result)."""
    result_file = folder / ("guard-%s.json" % uuid.uuid4().hex[:8])
    play = [{
        "name": "control plane rollout",
        "hosts": "localhost",
        "gather_facts": False,
        "tasks": [{
            "name": "rollout",
            "block": [{"name": "role", "ansible.builtin.include_role": {
                "name": "flightcontrol.openstack.control_plane_rollout"}}],
            "always": [{"name": "keep the guard's result", "ansible.builtin.copy": {
                "content": "{{ control_plane_rollout_result | default({}) | to_json }}", "dest": str(result_file)}}],
        }],
    }]
    playbook = folder / ("rollout-%s.yml" % uuid.uuid4().hex[:8])
    playbook.write_text(yaml.safe_dump(play, sort_keys=False))
    variables = dict({"control_plane_rollout_kubeconfig": str(cloud.state_dir / "kubeconfig"),
                      "control_plane_rollout_cloud": "minicloud",
                      "control_plane_rollout_poll_interval": 1,
                      "ansible_python_interpreter": sys.executable}, **extra_vars)
    vars_file = folder / ("vars-%s.json" % uuid.uuid4().hex[:8])
    vars_file.write_text(json.dumps(variables))
    cmd = [str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local", "-e", "@%s" % vars_file, str(playbook)]
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(collections_path),
               OS_CLIENT_CONFIG_FILE=str(cloud.clouds_yaml), ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0",
               ANSIBLE_LOCALHOST_WARNING="0", ANSIBLE_INVENTORY_UNPARSED_WARNING="0")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout, check=False)
    result = json.loads(result_file.read_text()) if result_file.exists() else {}
    return proc.returncode, proc.stdout + proc.stderr, result


def history(cloud, name):
    return cloud.json("capi", "history", name)


def assert_safe_history(records, min_healthy, pool):
    """From minicloud's samples: never fewer serving members than min_healthy, and no old Machine released
    (its member leaving or gone) before a replacement of its own served."""
    assert records, "no history recorded"
    lowest = min(records, key=lambda r: r["serving"])
    assert lowest["serving"] >= min_healthy, "serving fell to %d at %s: %s" % (
        lowest["serving"], lowest["time"], lowest)
    original = max(len(r["old"]) for r in records)
    for record in records:
        status = record["memberStatus"]
        serving_new = [m for m in record["new"] if status.get("%s-%s" % (pool, m), "/").split("/") in (
            ["ACTIVE", "ONLINE"], ["ACTIVE", "NO_MONITOR"])]
        # Old Machines gone, or whose member is leaving (what a release lets happen: minicloud's "released" is
        # "being deleted", which a held Machine also is): each needs a serving replacement of its own.
        leaving = [m for m in record["released"] if m in record["old"] and status.get(
            "%s-%s" % (pool, m), "PENDING_DELETE/").startswith("PENDING_DELETE/")]
        replaced = original - len(record["old"]) + len(leaving)
        assert len(serving_new) >= replaced, "%d old Machine(s) released with %d new member(s) serving: %s" % (
            replaced, len(serving_new), record)


def test_rolls_all_members_never_below_min_healthy(cloud, collections_path, tmp_path):
    name = seed_cluster(cloud, 3)
    set_capo_wait(cloud, name, "member")
    rc, output, result = run_role(cloud, collections_path, tmp_path, {
        "control_plane_rollout_cluster": name, "control_plane_rollout_member_timeout": 120})
    assert rc == 0, output
    assert result["rollout_started"] and len(result["released"]) == 3, result
    assert len(result["members_gone"]) == 3
    assert [a["action"] for a in result["actions"]][:2] == ["hold", "start"]
    assert all(m["up_to_date"] and m["serving"] and not m["held"] for m in result["machines"]), result["machines"]
    assert result["api_calls"] > 0 and result["elapsed"] > 0
    assert not hooks_left(cloud, name)
    summary = cloud.json("capi", "history", name, "--summary")
    assert summary["minServing"] >= 3, summary
    assert summary["final"]["serving"] == 3 and summary["final"]["members"] == 3
    assert_safe_history(history(cloud, name), 3, pool_name(name))


def test_lost_member_stops_with_holds_then_resumes(cloud, collections_path, tmp_path):
    name = seed_cluster(cloud, 3)
    set_capo_wait(cloud, name, "lb")  # CAPO before v0.14: a lost member looks done
    cloud.octavia("lost-member", members=pool_name(name) + "-*")
    rc, output, result = run_role(cloud, collections_path, tmp_path, {
        "control_plane_rollout_cluster": name, "control_plane_rollout_member_timeout": 15})
    assert rc != 0
    stuck = result["stuck"]
    assert stuck["member"].startswith(pool_name(name) + "-") and stuck["state"].startswith("PENDING_CREATE"), result
    assert stuck["member"] in output and "PENDING_CREATE" in output, output
    old = [m["name"] for m in result["machines"] if not m["up_to_date"]]
    assert len(old) == 3 and sorted(result["held"]) == sorted(old), result
    assert not result["released"]
    assert sorted(hooks_left(cloud, name)) == sorted(old)
    assert_safe_history(history(cloud, name), 3, pool_name(name))

    cloud.octavia("normal", delay=0.1)  # the emulator finishes the members it lost
    rc, output, result = run_role(cloud, collections_path, tmp_path, {
        "control_plane_rollout_cluster": name, "control_plane_rollout_start": False,
        "control_plane_rollout_member_timeout": 120})
    assert rc == 0, output
    assert len(result["released"]) == 3 and not result["rollout_started"], result
    assert not hooks_left(cloud, name)
    assert all(m["up_to_date"] and m["serving"] for m in result["machines"])
    assert_safe_history(history(cloud, name), 3, pool_name(name))
