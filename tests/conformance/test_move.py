# -*- coding: utf-8 -*-
"""roles/cluster_move with the real clusterctl (the plane's release, v1.13 or v1.12, built with the other Cluster API programs) between the
cloud's two real management clusters: the main kube-apiserver and the move target's, each with Cluster API's
four managers. The provider's block-move annotation is set and removed by the test, as CAPZ would."""

import json
import os
import subprocess
import threading
import time
import uuid

import pytest

import playbook_runner
from conftest import capi_version

pytestmark = pytest.mark.every_capi_release

BLOCK_MOVE = "clusterctl.cluster.x-k8s.io/block-move"


@pytest.fixture(scope="module")
def moving(upstream):
    """A cluster of its own (one control-plane Machine), in a namespace of its own: clusterctl moves a whole
    namespace. It is left where the tests leave it (the cloud goes down after the run)."""
    upstream.api.set_octavia_mode("normal")
    name = "mv-%s" % uuid.uuid4().hex[:5]
    return upstream.api.create_capi_cluster(name, namespace="move-%s" % name, control_plane=1, openstack=True)


@pytest.fixture
def target_kubectl(upstream_bin, upstream, tmp_path):
    def run(*args):
        done = subprocess.run([str(upstream_bin / "kubectl"), "--kubeconfig", str(upstream.state_dir / "kubeconfig-target"),
                               *map(str, args)], capture_output=True, text=True, timeout=120, check=False,
                              env=dict(os.environ, HOME=str(tmp_path)))
        return done

    return run


@pytest.fixture
def run_role(upstream, upstream_bin, collections_path, tmp_path):
    """Run the role in a real ansible-playbook with the real clusterctl; returns the PlaybookRun (its result:
    what the play recorded)."""
    playbooks = playbook_runner.PlaybookRunner(tmp_path, collections_path, upstream.clouds_yaml)

    def run(cluster, **extra):
        role_vars = {
            "cluster_move_name": cluster["name"], "cluster_move_namespace": cluster["namespace"],
            "cluster_move_source_kubeconfig": str(upstream.state_dir / "kubeconfig"),
            "cluster_move_target_kubeconfig": str(upstream.state_dir / "kubeconfig-target"),
            "cluster_move_clusterctl": str(upstream_bin / "clusterctl"),
            "cluster_move_clusterctl_env": {"HOME": str(tmp_path), "CLUSTERCTL_DISABLE_VERSIONCHECK": "true"},
            "cluster_move_pause_timeout": 120, "cluster_move_quiet_period": 1, "cluster_move_poll_interval": 1,
            "cluster_move_timeout": 300,
        }
        role_vars.update(extra)
        keep = ("{{ {'failed': %s, 'msg': %s, 'version': cluster_move_clusterctl_version | default(None),"
                " 'move': cluster_move_clusterctl_run | default(None),"
                " 'target_unpause': cluster_move_target_unpause | default(None),"
                " 'source_unpause': cluster_move_source_unpause | default(None),"
                " 'source_unpause_forced': cluster_move_source_unpause_forced | default(None)} | to_json }}")
        done = playbooks.role("flightcontrol.openstack.cluster_move", role_vars=role_vars, timeout=900,
                              keep=keep % ("false", "''"), keep_failure=keep % ("true", "ansible_failed_result.msg"))
        assert done.result, "the play recorded nothing:\n%s" % done.output
        return done

    return run


def clusterctl_moves(upstream):
    """The clusterctl processes moving from this cloud's kubeconfig."""
    found = subprocess.run(["pgrep", "-af", "clusterctl move --kubeconfig %s" % (upstream.state_dir / "kubeconfig")],
                           capture_output=True, text=True, check=False)
    return found.stdout.strip()


def paused_condition(obj):
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == "Paused"), None)


def test_a_move_stopped_at_its_timeout_stops_clusterctl_and_leaves_the_source_live(upstream, kubectl, target_kubectl,
                                                                                   moving, run_role):
    """clusterctl (v1.12 and v1.13 alike) pauses the cluster and waits for block-move; the role's timeout must stop clusterctl
    itself, or it moves the cluster away after the role has unpaused it on the source."""
    name, namespace = moving["name"], moving["namespace"]
    kubectl("annotate", "devcluster", name, "-n", namespace, "%s=true" % BLOCK_MOVE)
    run = run_role(moving, cluster_move_timeout=12)
    got = run.result
    assert got["failed"] is True, run.output
    msg = got["msg"]
    assert "failed at 'Run clusterctl move'" in msg and "did not finish within cluster_move_timeout (12 s)" in msg, msg
    assert "it is the live one" in msg and "nothing of the cluster is there" in msg, msg
    # the provider still marks the DevCluster: the role unpaused past it, clusterctl having stopped
    assert "unpaused although DevCluster %s/%s (%s) still carried the annotation" % (namespace, name, BLOCK_MOVE) \
        in msg, msg
    assert clusterctl_moves(upstream) == "", "clusterctl still runs after the role stopped"
    source = json.loads(kubectl("get", "cluster", name, "-n", namespace, "-o", "json").stdout)
    assert not source["spec"].get("paused")
    assert paused_condition(source)["status"] == "False"
    assert got["source_unpause"]["moving"] and got["source_unpause_forced"]["acknowledged"] is True
    # with clusterctl gone, the provider finishing its work moves nothing
    kubectl("annotate", "devcluster", name, "-n", namespace, "%s-" % BLOCK_MOVE)
    assert target_kubectl("get", "cluster", name, "-n", namespace).returncode != 0


def test_the_real_clusterctl_waits_for_block_move_and_the_targets_controllers_acknowledge(upstream, kubectl,
                                                                                          target_kubectl, moving,
                                                                                          run_role):
    name, namespace = moving["name"], moving["namespace"]
    kubectl("annotate", "devcluster", name, "-n", namespace, "%s=true" % BLOCK_MOVE, "--overwrite")
    outcome = {}
    role = threading.Thread(target=lambda: outcome.update(run=run_role(moving)))
    role.start()
    try:
        deadline = time.monotonic() + 180
        while not json.loads(kubectl("get", "cluster", name, "-n", namespace, "-o", "json").stdout)["spec"].get(
                "paused"):
            assert role.is_alive() and time.monotonic() < deadline, "clusterctl did not pause the cluster"
            time.sleep(0.3)
        # paused by clusterctl, which now waits for the annotation to go: nothing is copied meanwhile
        assert clusterctl_moves(upstream) != ""
        assert target_kubectl("get", "cluster", name, "-n", namespace).returncode != 0
    finally:
        kubectl("annotate", "devcluster", name, "-n", namespace, "%s-" % BLOCK_MOVE)
        role.join(900)
    run = outcome["run"]
    got = run.result
    assert got["failed"] is False, run.output
    assert got["version"].startswith(capi_version()[1:] + "."), got["version"]
    assert "Waiting for all resources to be ready to move" in got["move"]["stdout"] + got["move"]["stderr"]
    unpause = got["target_unpause"]
    assert unpause["acknowledged"] is True and unpause["cluster"]["paused"] is False
    # every object was reconciled by the target's controllers: none was taken as acknowledged on an empty status
    for item in unpause["objects"]:
        assert item["paused_condition"] and item["paused_condition"]["status"] == "False", item
    assert kubectl("get", "cluster", name, "-n", namespace, check=False).returncode != 0, "still on the source"
    moved = json.loads(target_kubectl("get", "cluster", name, "-n", namespace, "-o", "json").stdout)
    assert not moved["spec"].get("paused")
    condition = paused_condition(moved)
    assert condition["status"] == "False" and condition["observedGeneration"] == moved["metadata"]["generation"]
