# -*- coding: utf-8 -*-
"""The real ``ansible-rulebook`` (drools engine, Java 17) with the collection's rulebooks, for the integration
tests and the conformance tier: one process per :class:`Rulebook`, its output in a file the test reads, and the
source's standing hook awaited on a cluster's Machines."""

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
from rollouts import machines

BIN = Path(sys.executable).parent
RULEBOOKS = REPO / "extensions" / "eda" / "rulebooks"
READY = "capi_events: following"
STANDING = "pre-drain.delete.hook.machine.cluster.x-k8s.io/flightcontrol-standing"


def java_home():
    """JAVA_HOME as set, else the JDK of the ``java`` on PATH; None when there is no Java."""
    if os.environ.get("JAVA_HOME"):
        return os.environ["JAVA_HOME"]
    java = shutil.which("java")
    return str(Path(os.path.realpath(java)).parents[1]) if java else None


# pytestmark of the modules that start rulebooks
needs_rulebook = pytest.mark.skipif(not (BIN / "ansible-rulebook").exists() or java_home() is None,
                                    reason="ansible-rulebook (make venv) and Java 17 are needed")


def wait_standing(cloud, name, namespace="default", timeout=60):
    """Every control-plane Machine of ``name`` carries the source's standing hook (it writes it when it sees
    them); polled, as nothing else announces it."""
    ends = time.monotonic() + timeout
    while time.monotonic() < ends:
        found = machines(cloud, name, namespace)
        if found and all(STANDING in (m["metadata"].get("annotations") or {}) for m in found):
            return found
        time.sleep(0.2)
    pytest.fail("the standing hook is not on every control-plane Machine of %s: %s"
                % (name, machines(cloud, name, namespace)))


class Rulebook:
    """One ``ansible-rulebook`` process on the capi_clusters inventory of ``namespace`` (with the inventory's
    ``compose``, if given); its output goes to a file the test reads."""

    def __init__(self, folder, cloud, collections_path, rulebook, variables, namespace, compose=None):
        self.folder = Path(folder)
        self.log = self.folder / "rulebook.log"
        inventory = self.folder / "fleet.capi_clusters.yml"
        source = {"plugin": "flightcontrol.openstack.capi_clusters", "kubeconfig": str(cloud.state_dir / "kubeconfig"),
                  "namespaces": [namespace]}
        if compose:
            source["compose"] = compose
        inventory.write_text(yaml.safe_dump(source))
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


def rulebooks(cloud, collections_path, folder):
    """A fixture's body: yields ``start(rulebook, variables, namespace="default", compose=None)``, each process
    in a folder of its own under ``folder``; every one started is stopped at the end."""
    started = []

    def start(name, variables, namespace="default", compose=None):
        where = Path(folder) / ("rulebook-%d" % len(started))
        where.mkdir()
        run = Rulebook(where, cloud, collections_path, name, variables, namespace, compose)
        started.append(run)
        return run

    try:
        yield start
    finally:
        for run in started:
            run.stop()
