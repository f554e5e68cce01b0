# -*- coding: utf-8 -*-
"""Control-plane rollouts on minicloud's CAPI: seeding a cluster on real servers and an Octavia pool, running the
control_plane_rollout role, and judging the run from minicloud's own record of the pool (``capi history``)."""

import uuid

from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

HOOK = "pre-drain.delete.hook.machine.cluster.x-k8s.io/flightcontrol-rollout"
KCP_GROUP = "controlplane.cluster.x-k8s.io"


def seed_cluster(cloud, control_plane=3, monitor=False):
    cloud.octavia("normal", delay=0.1)
    name = "r-%s" % uuid.uuid4().hex[:6]
    args = ["capi", "cluster", "create", name, "--control-plane", control_plane, "--openstack"]
    args.append("--monitor" if monitor else "--no-monitor")  # CAPO's monitor is the CLI's default
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


KCP_CLEANUP_HOOK = "pre-terminate.delete.hook.machine.cluster.x-k8s.io/kcp-cleanup"


def hooks_left(cloud, name):
    """Machine name -> its deletion hooks, for each control-plane Machine of ``name`` with any besides KCP's own
    (which KCP keeps on every Machine it owns)."""
    found = dict((m["metadata"]["name"], [k for k in (m["metadata"].get("annotations") or {})
                                          if ".delete.hook." in k and k != KCP_CLEANUP_HOOK])
                 for m in machines(cloud, name))
    return dict((machine, hooks) for machine, hooks in found.items() if hooks)


def run_role(playbooks, cloud, extra_vars, timeout=900):
    """Run the role in a real ansible-playbook; returns (rc, output, rollout_guard's registered result)."""
    variables = dict({"control_plane_rollout_kubeconfig": str(cloud.state_dir / "kubeconfig"),
                      "control_plane_rollout_cloud": "minicloud",
                      "control_plane_rollout_poll_interval": 1}, **extra_vars)
    run = playbooks.role("flightcontrol.openstack.control_plane_rollout", extra_vars=variables, timeout=timeout,
                         keep="{{ control_plane_rollout_result | default({}) | to_json }}")
    return run.proc.returncode, run.output, run.result


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
