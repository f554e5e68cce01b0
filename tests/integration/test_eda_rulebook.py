# -*- coding: utf-8 -*-
"""The real ansible-rulebook (drools engine, Java 17) with the capi_events source and the guard_rollouts rulebook
against minicloud's management cluster: a rollout started by patching the KubeadmControlPlane, as `kubectl patch`
does, is guarded end to end; a new member that never serves stops the guard naming it."""

import datetime
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from playbook_runner import REPO
from rollouts import (assert_safe_history, custom, history, HOOK, KCP_GROUP, machines, pool_name, seed_cluster,
                      set_capo_wait)

BIN = Path(sys.executable).parent
RULEBOOKS = REPO / "extensions" / "eda" / "rulebooks"
READY = "capi_events: following"
STANDING = "pre-drain.delete.hook.machine.cluster.x-k8s.io/flightcontrol-standing"


def wait_standing(cloud, name, timeout=60):
    """Every control-plane Machine of ``name`` carries the source's standing hook (it writes it when it sees
    them); polled, as nothing else announces it."""
    ends = time.monotonic() + timeout
    while time.monotonic() < ends:
        found = machines(cloud, name)
        if found and all(STANDING in (m["metadata"].get("annotations") or {}) for m in found):
            return found
        time.sleep(0.2)
    pytest.fail("the standing hook is not on every control-plane Machine of %s: %s" % (name, machines(cloud, name)))


def java_home():
    """JAVA_HOME as set, else the JDK of the ``java`` on PATH; None when there is no Java."""
    if os.environ.get("JAVA_HOME"):
        return os.environ["JAVA_HOME"]
    java = shutil.which("java")
    return str(Path(os.path.realpath(java)).parents[1]) if java else None


pytestmark = pytest.mark.skipif(not (BIN / "ansible-rulebook").exists() or java_home() is None,
                                reason="ansible-rulebook (make venv) and Java 17 are needed")


class Rulebook:
    """One ``ansible-rulebook`` process; its output goes to a file the test reads."""

    def __init__(self, folder, cloud, collections_path, rulebook, variables, namespace):
        self.folder = Path(folder)
        self.log = self.folder / "rulebook.log"
        inventory = self.folder / "fleet.capi_clusters.yml"
        inventory.write_text(yaml.safe_dump({"plugin": "flightcontrol.openstack.capi_clusters",
                                             "kubeconfig": str(cloud.state_dir / "kubeconfig"),
                                             "namespaces": [namespace]}))
        vars_file = self.folder / "vars.yml"
        given = dict({"kubeconfig": str(cloud.state_dir / "kubeconfig"), "namespaces": [namespace]}, **variables)
        vars_file.write_text(yaml.safe_dump(dict((k, v) for k, v in given.items() if v is not None)))
        env = dict(os.environ, JAVA_HOME=java_home(), PATH=str(BIN) + os.pathsep + os.environ["PATH"],
                   ANSIBLE_COLLECTIONS_PATH=str(collections_path), OS_CLIENT_CONFIG_FILE=str(cloud.clouds_yaml),
                   ANSIBLE_NOCOLOR="1", ANSIBLE_INVENTORY_UNPARSED_FAILED="true")
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(
                [str(BIN / "ansible-rulebook"), "-r", str(RULEBOOKS / rulebook), "-i", str(inventory),
                 "--vars", str(vars_file), "-v"],
                cwd=str(self.folder), env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)

    def output(self):
        return self.log.read_text(errors="replace")

    def wait_for(self, text, timeout):
        """Wait until the output holds ``text`` (polling the log: the engine's own pace), or the process ends."""
        ends = time.monotonic() + timeout
        while time.monotonic() < ends:
            found = self.output()
            if text in found:
                return found
            if self.proc.poll() is not None:
                pytest.fail("ansible-rulebook ended (rc %s) before %r:\n%s" % (self.proc.returncode, text, found))
            time.sleep(0.2)
        pytest.fail("no %r within %d s:\n%s" % (text, timeout, self.output()[-6000:]))

    def ended(self, timeout):
        """The process's exit code and output once it has stopped by itself."""
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            pytest.fail("ansible-rulebook did not stop within %d s:\n%s" % (timeout, self.output()[-6000:]))
        return self.proc.returncode, self.output()

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


@pytest.fixture
def rulebook(cloud, collections_path, tmp_path):
    started = []

    def start(name, variables, namespace="default"):
        folder = tmp_path / ("rulebook-%d" % len(started))
        folder.mkdir()
        run = Rulebook(folder, cloud, collections_path, name, variables, namespace)
        started.append(run)
        return run

    yield start
    for run in started:
        run.stop()


def patch_rollout_after(cloud, name, namespace="default"):
    """What `kubectl patch kcp NAME --type merge -p '{"spec":{"rollout":{"after":"<now>"}}}'` sends; returns the
    moment of the change."""
    cluster = custom(cloud, "get_namespaced_custom_object", "cluster.x-k8s.io", "v1beta2", namespace, "clusters", name)
    kcp = cluster["spec"]["controlPlaneRef"]["name"]
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0) + datetime.timedelta(seconds=1)
    custom(cloud, "patch_namespaced_custom_object", KCP_GROUP, "v1beta2", namespace, "kubeadmcontrolplanes", kcp,
           {"spec": {"rollout": {"after": now.strftime("%Y-%m-%dT%H:%M:%SZ")}}})
    return now


GUARD_VARS = {"openstack_cloud": "minicloud", "member_timeout": 20}


def test_a_rollout_started_by_a_patch_is_guarded_end_to_end(cloud, rulebook):
    name = seed_cluster(cloud, control_plane=1)
    set_capo_wait(cloud, name, "lb")  # CAPO before v0.14: a Machine is ready once the load balancer is ACTIVE
    old = [m["metadata"]["name"] for m in machines(cloud, name)]
    run = rulebook("guard_rollouts.yml", GUARD_VARS)
    run.wait_for(READY, 180)
    wait_standing(cloud, name)
    patch_rollout_after(cloud, name)
    output = run.wait_for("PLAY RECAP", 600)
    assert "failed=0" in output.split("PLAY RECAP", 1)[1], output[-6000:]
    # one run for the one rollout (the source said it once), for the cluster's host only
    assert output.count("PLAY [Roll the control planes of the fleet") == 1, output[-6000:]
    assert "default/%s" % name in output
    now = [m["metadata"]["name"] for m in machines(cloud, name)]
    assert not set(now) & set(old) and len(now) == 1
    assert not any(HOOK in (m["metadata"].get("annotations") or {}) for m in machines(cloud, name))
    wait_standing(cloud, name)  # the new Machine is held for the next rollout
    assert_safe_history(history(cloud, name), 1, pool_name(name))


def test_a_lost_member_stops_the_guard_naming_it(cloud, rulebook):
    name = seed_cluster(cloud, control_plane=1)
    set_capo_wait(cloud, name, "lb")
    [old] = [m["metadata"]["name"] for m in machines(cloud, name)]
    cloud.octavia("lost-member", members=pool_name(name) + "-*", delay=0.2)
    run = rulebook("guard_rollouts.yml", GUARD_VARS)
    run.wait_for(READY, 180)
    wait_standing(cloud, name)
    patch_rollout_after(cloud, name)
    output = run.wait_for("PLAY RECAP", 600)
    assert "failed=1" in output.split("PLAY RECAP", 1)[1], output[-6000:]
    new = [m["metadata"]["name"] for m in machines(cloud, name) if m["metadata"]["name"] != old]
    assert new, "no replacement Machine was created"
    assert "new member not ACTIVE and healthy" in output, output[-6000:]
    assert "%s-%s" % (pool_name(name), new[0]) in output, output[-6000:]
    # the old Machine is still held: the API keeps its member
    [held] = [m for m in machines(cloud, name) if m["metadata"]["name"] == old]
    assert HOOK in held["metadata"]["annotations"]
    assert_safe_history(history(cloud, name), 1, pool_name(name))


def test_bad_input_stops_the_rulebook_at_start_with_the_reason(cloud, rulebook, tmp_path):
    missing = rulebook("guard_rollouts.yml", dict(GUARD_VARS, namespaces=None))
    code, output = missing.ended(180)
    assert code != 0 and "namespaces" in output and "is undefined" in output, output[-4000:]
    broken = tmp_path / "broken.kubeconfig"
    broken.write_text("apiVersion: v1\nusers:\n- name: eda\n  user: {token: s3cr3t-value\n")
    unusable = rulebook("guard_rollouts.yml", dict(GUARD_VARS, kubeconfig=str(broken)))
    code, output = unusable.ended(180)
    assert code != 0 and "the Kubernetes connection settings cannot be used" in output, output[-4000:]
    assert "s3cr3t-value" not in output
