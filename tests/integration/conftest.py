# -*- coding: utf-8 -*-
"""Integration tests: real ``ansible-playbook`` runs against minicloud (real Keystone, Neutron, Octavia, Nova).

One minicloud serves the whole test run.  Set MINICLOUD_STATE_DIR to reuse a cloud that is already up
(it is then left running); otherwise the fixture starts one in a temporary folder and stops it.
"""

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import openstack.config
import openstack.connection
import pytest
import yaml
from minicloud.runtime.control import Minicloud as MinicloudAPI
from minicloud.octavia_provider.modes import DEFAULT_DELAY

import inprocess

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


WRITE_SERVICES = ("network", "load-balancer", "compute", "kubernetes")


class Minicloud:
    """The minicloud command line, as a test would type it."""

    def __init__(self, state_dir):
        self.state_dir = Path(state_dir)
        self.clouds_yaml = self.state_dir / "clouds.yaml"

    def cli(self, *args, check=True):
        env = dict(os.environ, MINICLOUD_STATE_DIR=str(self.state_dir))
        proc = subprocess.run([sys.executable, "-m", "minicloud"] + [str(a) for a in args],
                              capture_output=True, text=True, env=env, timeout=600, check=False)
        if check and proc.returncode != 0:
            raise AssertionError("minicloud %s failed (%d):\n%s\n%s" % (
                " ".join(map(str, args)), proc.returncode, proc.stdout, proc.stderr))
        return proc

    def json(self, *args):
        return json.loads(self.cli(*args).stdout)

    def octavia(self, mode, members=None, delay=None):
        args = ["octavia", mode]
        if members:
            args += ["--members", members]
        if delay is not None:
            args += ["--delay", delay]
        self.cli(*args)

    def fault(self, service, path, status, method="GET", count=None, retry_after=None, delay=None):
        args = ["fault", "add", "--service", service, "--method", method, "--path", path]
        if status is not None:
            args += ["--status", status]
        if count is not None:
            args += ["--count", count]
        if retry_after is not None:
            args += ["--retry-after", retry_after]
        if delay is not None:
            args += ["--delay", delay]
        self.cli(*args)

    def clear_faults(self):
        self.cli("fault", "clear")

    def requests(self, service=None, reset=False):
        args = ["requests"]
        if service:
            args += ["--service", service]
        if reset:
            args.append("--reset")
        return json.loads(self.cli(*args).stdout or "{}")

    def server(self, name, network="servers", ports=1, port_security=True):
        """Seed a server with real Neutron ports; returns it with its ports."""
        args = ["server", "create", name, "--network", network, "--ports", ports]
        if not port_security:
            args.append("--no-port-security")
        return self.json(*args)[0]

    @property
    def api(self):
        """minicloud's Python API on the same state folder (no subprocess)."""
        return MinicloudAPI(self.state_dir)

    def normal(self):
        """No fault rules and the Octavia emulator in its normal mode (switched, and waited for, only when it
        is not: the common case costs two reads of the state folder instead of two CLI processes)."""
        api = self.api
        api.clear_faults()
        mode = api.octavia_mode()
        if (mode["name"], mode["members"], mode["delay"], mode["applied"]) != ("normal", "*", DEFAULT_DELAY, True):
            api.set_octavia_mode("normal")

    def reset_counts(self):
        self.api.request_counts(reset=True)

    def write_count(self, services=WRITE_SERVICES):
        """Write requests (anything but GET and HEAD) clients made to ``services`` since the last reset;
        Keystone's token requests are not writes to the cloud and are not counted."""
        requests = self.api.request_counts()["requests"]
        return sum(n for service in services for method, paths in requests.get(service, {}).items()
                   if method not in ("GET", "HEAD") for n in paths.values())

    def writes(self, service="network"):
        """Requests other than GET a client made to ``service`` since the last reset."""
        counts = self.requests(service=service).get("requests", {}).get(service, {})
        return dict((method, paths) for method, paths in counts.items() if method not in ("GET", "HEAD"))

    def sdk(self):
        """An openstacksdk connection as the cloud's normal project user."""
        config = openstack.config.OpenStackConfig(config_files=[str(self.clouds_yaml)])
        return openstack.connection.Connection(config=config.get_one(cloud="minicloud"))

    def add_member(self, lb, name, address):
        """Add a member to ``lb`` (from ``lb create``) the way CAPO does: one create call, nothing waited for."""
        return self.sdk().load_balancer.create_member(
            lb["pool"]["id"], name=name, address=address, protocol_port=6443, subnet_id=lb["subnet"]["id"])

    def wait_lb_active(self, lb, timeout=60):
        conn = self.sdk()
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if conn.load_balancer.get_load_balancer(lb["loadbalancer"]["id"]).provisioning_status == "ACTIVE":
                return
            time.sleep(0.3)
        raise AssertionError("load balancer %s did not return to ACTIVE" % lb["loadbalancer"]["name"])


@pytest.fixture(scope="session")
def minicloud(tmp_path_factory):
    reuse = os.environ.get("MINICLOUD_STATE_DIR")
    if reuse:
        cloud = Minicloud(reuse)
        cloud.cli("status")
        yield cloud
        return
    cloud = Minicloud(tmp_path_factory.mktemp("minicloud"))
    # Free ports keep the test cloud clear of other clouds on this machine (a developer's, a parallel run).
    cloud.cli("up", "--port-offset", "auto")
    try:
        yield cloud
    finally:
        cloud.cli("down", check=False)


@pytest.fixture
def cloud(minicloud):
    """The session's minicloud, with the emulator normal and no faults before and after each test."""
    minicloud.normal()
    yield minicloud
    minicloud.normal()


@pytest.fixture
def lb(cloud):
    """A load balancer with three ACTIVE members (port 6443) and no health monitor, deleted afterwards."""
    name = "it-%s" % uuid.uuid4().hex[:6]
    created = cloud.json("lb", "create", name, "--members", 3)
    yield created
    cloud.cli("lb", "delete", name, check=False)


@pytest.fixture
def run_in_process(minicloud):
    """Run one module in this process (``inprocess.run_module``) against the session's minicloud: the
    module's own argument checks, runner and requests, without a playbook around it."""

    def run(module, args, check_mode=False, diff=False):
        name = module.rsplit(".", 1)[-1]
        return inprocess.run_module(name, args, check_mode=check_mode, diff=diff,
                                    env={"OS_CLIENT_CONFIG_FILE": str(minicloud.clouds_yaml)})

    return run


@pytest.fixture(scope="session")
def collections_path(tmp_path_factory):
    """ANSIBLE_COLLECTIONS_PATH: the caller's (CI points it at the built collection), else this working tree."""
    if os.environ.get("ANSIBLE_COLLECTIONS_PATH"):
        return os.environ["ANSIBLE_COLLECTIONS_PATH"]
    root = tmp_path_factory.mktemp("collections")
    target = root / "ansible_collections" / "flightcontrol"
    target.mkdir(parents=True)
    (target / "openstack").symlink_to(REPO)
    return root


class PlaybookRun:
    """One run of the module under test. The play ignores the task's errors so that its result can be
    kept, so ``rc`` is made from the result: the playbook's exit code, or 2 when the module failed (as
    ``ansible-playbook`` itself would exit)."""

    def __init__(self, proc, result):
        self.proc = proc
        self.result = result
        self.rc = proc.returncode or (2 if result.get("failed") else 0)

    @property
    def output(self):
        return self.proc.stdout + self.proc.stderr


@pytest.fixture
def run_module(minicloud, collections_path, tmp_path):
    """Run one module task in a real ansible-playbook and return its registered result."""

    def run(module, args, check_mode=False, verbosity=0, diff=False):
        result_file = tmp_path / ("result-%s.json" % uuid.uuid4().hex[:8])
        playbook = tmp_path / "play.yml"
        task = {module: args}
        play = [{
            "name": "integration",
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [
                dict(task, name="module under test", register="result", ignore_errors=True),
                {"name": "keep the result", "check_mode": False,
                 "ansible.builtin.copy": {"content": "{{ result | to_json }}", "dest": str(result_file)}},
            ],
        }]
        playbook.write_text(yaml.safe_dump(play, sort_keys=False))
        cmd = [str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local",
               "-e", "ansible_python_interpreter=%s" % sys.executable, str(playbook)]
        if check_mode:
            cmd.append("--check")
        if diff:
            cmd.append("--diff")
        if verbosity:
            cmd.append("-" + "v" * verbosity)
        env = dict(os.environ,
                   ANSIBLE_COLLECTIONS_PATH=str(collections_path),
                   OS_CLIENT_CONFIG_FILE=str(minicloud.clouds_yaml),
                   ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0",
                   ANSIBLE_LOCALHOST_WARNING="0", ANSIBLE_INVENTORY_UNPARSED_WARNING="0")
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900, check=False)
        assert result_file.exists(), "playbook did not get to record a result:\n%s\n%s" % (proc.stdout, proc.stderr)
        return PlaybookRun(proc, json.loads(result_file.read_text()))

    return run
