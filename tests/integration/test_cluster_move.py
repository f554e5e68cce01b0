# -*- coding: utf-8 -*-
"""roles/cluster_move through real ansible-playbook runs, between minicloud's two Kubernetes APIs, with
minicloud's clusterctl stand-in (tools/minicloud/bin/clusterctl-standin, NOT clusterctl) emulating a version."""

import sys
import uuid

import pytest
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

from leases import drop_lease, hold_lease, lease
from playbook_runner import REPO

STANDIN = REPO / "tools" / "minicloud" / "bin" / "clusterctl-standin"


@pytest.fixture
def capi(cloud):
    yield cloud
    cloud.cli("capi", "provider", "silent", "--delay", "2")


@pytest.fixture
def run_role(minicloud, playbooks):
    """Run the role in a real ansible-playbook; returns (process, what the play recorded)."""

    def run(name, namespace, version, fail=None, **extra):
        env = {"MINICLOUD_PYTHON": sys.executable, "MINICLOUD_CLUSTERCTL_VERSION": version}
        if fail:
            env["MINICLOUD_CLUSTERCTL_FAIL"] = fail
        role_vars = {
            "cluster_move_name": name, "cluster_move_namespace": namespace,
            "cluster_move_source_kubeconfig": str(minicloud.state_dir / "kubeconfig"),
            "cluster_move_target_kubeconfig": str(minicloud.state_dir / "kubeconfig-target"),
            "cluster_move_target_context": "minicloud",
            "cluster_move_clusterctl": str(STANDIN), "cluster_move_clusterctl_env": env,
            "cluster_move_pause_timeout": 60, "cluster_move_quiet_period": 1, "cluster_move_poll_interval": 0.5,
            "cluster_move_timeout": 120,
        }
        role_vars.update(extra)
        keep = ("{{ {'failed': %s, 'msg': %s, 'version': cluster_move_clusterctl_version | default(None),"
                " 'source_pause': cluster_move_source_pause | default(None),"
                " 'move': cluster_move_clusterctl_run | default(None),"
                " 'target_unpause': cluster_move_target_unpause | default(None),"
                " 'preflight': cluster_move_preflight | default(None),"
                " 'leases': cluster_move_leases | default(None)} | to_json }}")
        run = playbooks.role("flightcontrol.openstack.cluster_move", role_vars=role_vars, timeout=600,
                             keep=keep % ("false", "''"), keep_failure=keep % ("true", "ansible_failed_result.msg"),
                             extra_vars={"awx_job_id": 5150})
        assert run.result, "the play recorded nothing:\n%s" % run.output
        return run.proc, run.result

    return run


def seed(cloud, version="v1beta2"):
    name = "mv-%s" % uuid.uuid4().hex[:6]
    namespace = "move-%s" % name  # clusterctl moves a whole namespace: one cluster each
    cloud.json("capi", "cluster", "create", name, "--namespace", namespace, "--workers", 1, "--api-version", version)
    return name, namespace


def cluster(cloud, name, namespace, kubeconfig="kubeconfig"):
    """The Cluster (v1beta2) on one of the two APIs, or None."""
    api = k8s_config.new_client_from_config(config_file=str(cloud.state_dir / kubeconfig))
    with api:
        try:
            return k8s_client.CustomObjectsApi(api).get_namespaced_custom_object(
                "cluster.x-k8s.io", "v1beta2", namespace, "clusters", name)
        except k8s_client.ApiException as exc:
            if exc.status == 404:
                return None
            raise


def without_leases(writes):
    """The writes apart from those of Leases."""
    return dict((method, paths) for method, paths in
                ((method, [p for p in paths if "/leases" not in p]) for method, paths in writes.items()) if paths)


def paused_condition(obj):
    return next(c for c in obj["status"]["conditions"] if c["type"] == "Paused")


def test_clusterctl_v1_12_pauses_itself_the_role_does_not_and_the_target_acknowledges_the_unpause(capi, run_role):
    name, namespace = seed(capi)
    capi.cli("capi", "provider", "block-move", "--delay", "2")  # clusterctl waits for the provider
    proc, got = run_role(name, namespace, "v1.12.0")
    assert got["failed"] is False, proc.stdout + proc.stderr
    assert got["version"] == "1.12.0"
    assert got["source_pause"]["skipped"] is True, "not paused before a v1.12 move"
    assert "stand-in (NOT clusterctl; emulating clusterctl v1.12.0)" in got["move"]["stderr"]
    assert "Waiting for all resources to be ready to move" in got["move"]["stdout"]
    unpause = got["target_unpause"]
    assert unpause["acknowledged"] is True and unpause["cluster"]["paused"] is False
    assert cluster(capi, name, namespace) is None, "gone from the source"
    moved = cluster(capi, name, namespace, "kubeconfig-target")
    assert not moved["spec"].get("paused")
    assert paused_condition(moved)["status"] == "False"


def test_clusterctl_older_than_v1_12_gets_the_cluster_paused_and_acknowledged_first(capi, run_role):
    name, namespace = seed(capi, "v1beta1")
    capi.cli("capi", "provider", "silent", "--delay", "1")
    proc, got = run_role(name, namespace, "v1.11.3", cluster_move_api_version="v1beta1")
    assert got["failed"] is False, proc.stdout + proc.stderr
    pause = got["source_pause"]
    assert pause["changed"] is True and pause["acknowledged"] is True and pause["cluster"]["paused"] is True
    assert "OpenStackCluster" in {o["kind"] for o in pause["objects"]}
    assert got["target_unpause"]["acknowledged"] is True
    assert cluster(capi, name, namespace) is None
    assert paused_condition(cluster(capi, name, namespace, "kubeconfig-target"))["status"] == "False"


def test_a_failure_after_the_pause_leaves_the_source_unpaused_and_acknowledged(capi, run_role):
    name, namespace = seed(capi)
    proc, got = run_role(name, namespace, "v1.12.0", fail="after-pause")
    assert got["failed"] is True, proc.stdout
    msg = got["msg"]
    assert "failed at 'Run clusterctl move'" in msg and "failure injected after-pause" in msg, msg
    assert "the cluster is there, unpaused, and every controller acknowledged the unpause" in msg, msg
    assert "nothing of the cluster is there" in msg, msg
    source = cluster(capi, name, namespace)
    assert not source["spec"].get("paused")
    condition = paused_condition(source)
    assert condition["status"] == "False" and condition["observedGeneration"] == source["metadata"]["generation"]
    assert cluster(capi, name, namespace, "kubeconfig-target") is None


def test_a_failure_after_the_copy_names_the_copy_left_on_the_target(capi, run_role):
    name, namespace = seed(capi)
    proc, got = run_role(name, namespace, "v1.12.0", fail="after-copy")
    assert got["failed"] is True, proc.stdout
    assert "a copy of the cluster is there (paused: True); it is not the live one" in got["msg"], got["msg"]
    assert not cluster(capi, name, namespace)["spec"].get("paused")
    assert cluster(capi, name, namespace, "kubeconfig-target")["spec"]["paused"] is True
    assert got["leases"]["source"]["released"] is True, got["leases"]
    assert lease(capi, name, namespace).spec.holder_identity is None, "released after the rescue"
    assert "lease" not in got["leases"]["target"], "no namespace on the target before the move: no Lease there"
    assert lease(capi, name, namespace, "kubeconfig-target") is None


def test_a_cluster_that_is_not_fit_stops_at_the_preflight_before_anything_changes(capi, run_role):
    name, namespace = seed(capi)
    api = k8s_config.new_client_from_config(config_file=str(capi.state_dir / "kubeconfig"))
    with api:
        k8s_client.CustomObjectsApi(api).patch_namespaced_custom_object(
            "cluster.x-k8s.io", "v1beta2", namespace, "clusters", name, {"spec": {"paused": True}})
    capi.requests(reset=True)
    _proc, got = run_role(name, namespace, "v1.12.0")
    assert got["failed"] is True
    assert got["msg"] == ("Cluster %s/%s is not fit for a move, nothing was changed: Cluster %s/%s is paused"
                          % (namespace, name, namespace, name)), got["msg"]
    assert got["move"] is None, "clusterctl move never ran"
    assert without_leases(capi.writes("kubernetes")) == {} and capi.writes("kubernetes-target") == {}
    assert lease(capi, name, namespace).spec.holder_identity is None, "its own Lease released"
    assert cluster(capi, name, namespace)["spec"]["paused"] is True, "left as it was"
    assert cluster(capi, name, namespace, "kubeconfig-target") is None


def test_another_actors_lease_on_the_source_or_the_target_stops_the_move_before_any_change(capi, run_role):
    """Another actor's live Lease on the source stops the role before its preflight, naming the holder, with no
    write anywhere. Once it is gone, the same actor's Lease on the target (whose namespace exists) stops the move
    before clusterctl runs; the role's own Lease on the source, taken by then, is released."""
    name, namespace = seed(capi)
    hold_lease(capi, name, namespace)
    capi.requests(reset=True)
    _proc, got = run_role(name, namespace, "v1.12.0")
    assert got["failed"] is True and got["preflight"] is None, got
    assert "AWX job 12 (host awx-ee-1" in got["msg"] and "holder other-run" in got["msg"], got["msg"]
    assert capi.writes("kubernetes") == {} and capi.writes("kubernetes-target") == {}
    assert lease(capi, name, namespace).spec.holder_identity == "other-run"

    drop_lease(capi, name, namespace)
    target = k8s_config.new_client_from_config(config_file=str(capi.state_dir / "kubeconfig-target"))
    k8s_client.CoreV1Api(target).create_namespace(
        k8s_client.V1Namespace(metadata=k8s_client.V1ObjectMeta(name=namespace)))
    hold_lease(capi, name, namespace, "kubeconfig-target")
    _proc, got = run_role(name, namespace, "v1.12.0")
    assert got["failed"] is True and got["preflight"]["blockers"] == [], got
    assert "AWX job 12" in got["msg"] and "holder other-run" in got["msg"], got["msg"]
    assert got["move"] is None, "clusterctl move never ran"
    assert got["leases"]["source"]["released"] is True, got["leases"]
    source = lease(capi, name, namespace)  # deleted before the run: this run took it, and released it
    assert source is not None and source.spec.holder_identity is None, source
    assert lease(capi, name, namespace, "kubeconfig-target").spec.holder_identity == "other-run"
    assert not cluster(capi, name, namespace)["spec"].get("paused"), "left as it was"
    assert cluster(capi, name, namespace, "kubeconfig-target") is None
