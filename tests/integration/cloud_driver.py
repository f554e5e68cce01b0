# -*- coding: utf-8 -*-
"""The test's hand on minicloud: its Python API and its command line, both in this process.

A test types what an operator would (``cloud.cli("lb", "create", ...)``), but the command runs in the test's own
interpreter: no new process per call, openstacksdk imported once. Only ``up`` and ``down`` (which start and stop
the services) run as processes.
"""

import contextlib
import io
import json
import os
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path

from minicloud.cli import main as minicloud_main
from minicloud.octavia_provider.modes import DEFAULT_DELAY
from minicloud.runtime.control import Minicloud as MinicloudAPI

WRITE_SERVICES = ("network", "load-balancer", "compute", "kubernetes")


class TestCloud:
    """One minicloud state folder, driven in-process."""

    __test__ = False  # not a test class
    _cli_lock = threading.Lock()  # the command line prints to this process's stdout: one call at a time

    def __init__(self, state_dir):
        self.state_dir = Path(state_dir)
        self.clouds_yaml = self.state_dir / "clouds.yaml"
        self.api = MinicloudAPI(self.state_dir)

    # -- the command line --------------------------------------------------------------------------------

    def cli(self, *args, check=True):
        """``python -m minicloud ARGS`` in this process; returns a CompletedProcess like the command's."""
        argv = ["--state-dir", str(self.state_dir)] + [str(a) for a in args]
        out, err = io.StringIO(), io.StringIO()
        with self._cli_lock, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = minicloud_main(argv)
            except SystemExit as exc:  # argparse refusing the arguments
                code = exc.code if isinstance(exc.code, int) else 1
            except Exception:  # pylint: disable=broad-except
                traceback.print_exc()  # what the command would have printed
                code = 1
        proc = subprocess.CompletedProcess(["minicloud"] + argv, code, out.getvalue(), err.getvalue())
        if check and code != 0:
            raise AssertionError("minicloud %s failed (%d):\n%s\n%s" % (
                " ".join(map(str, args)), code, proc.stdout, proc.stderr))
        return proc

    def process(self, *args, check=True):
        """``python -m minicloud ARGS`` as its own process (``up`` and ``down`` start and stop services)."""
        env = dict(os.environ, MINICLOUD_STATE_DIR=str(self.state_dir))
        proc = subprocess.run([sys.executable, "-m", "minicloud"] + [str(a) for a in args],
                              capture_output=True, text=True, env=env, timeout=600, check=False)
        if check and proc.returncode != 0:
            raise AssertionError("minicloud %s failed (%d):\n%s\n%s" % (
                " ".join(map(str, args)), proc.returncode, proc.stdout, proc.stderr))
        return proc

    def json(self, *args):
        return json.loads(self.cli(*args).stdout)

    # -- Octavia emulator, faults, request counts (the Python API) -----------------------------------------

    def octavia(self, mode, members=None, delay=None):
        self.api.set_octavia_mode(mode, members=members or "*", delay=delay)

    def fault(self, service, path, status, method="GET", count=None, retry_after=None, delay=None, query=None):
        return self.api.add_fault(service, method=method, path=path, status=status, count=count,
                                  retry_after=retry_after, delay=delay or 0.0, query=query)

    def faults(self):
        return self.api.faults()

    def clear_faults(self):
        self.api.clear_faults()

    def requests(self, service=None, reset=False):
        return self.api.request_counts(service=service, reset=reset)

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

    def normal(self):
        """No fault rules and the Octavia emulator in its normal mode (switched, and waited for, only when it
        is not: the common case costs three reads of the state folder), Octavia's own policy."""
        self.api.clear_faults()
        self.api.reset_policy("load-balancer")
        mode = self.api.octavia_mode()
        if (mode["name"], mode["members"], mode["delay"], mode["applied"]) != ("normal", "*", DEFAULT_DELAY, True):
            self.api.set_octavia_mode("normal")

    def capi_clusters(self):
        """(on the move target?, namespace, name) of every CAPI cluster of both management clusters."""
        return {(target, cluster["namespace"], cluster["name"]) for target in (False, True)
                for cluster in self.api.list_capi_clusters(target=target)}

    def remove_capi_clusters(self, keep):
        """Delete the CAPI objects of every cluster not in ``keep`` (what a test seeded). A cluster left paused or
        in the middle of a rollout keeps the emulated controllers working for the rest of the run; its OpenStack
        resources stay (nothing reads them once the cluster is gone)."""
        for target, namespace, name in sorted(self.capi_clusters() - keep):
            self.api.delete_capi_cluster(name, namespace, target=target)

    # -- seeding and clients -----------------------------------------------------------------------------

    def server(self, name, network="servers", ports=1, port_security=True):
        """Seed a server with real Neutron ports; returns it with its ports."""
        return self.api.create_servers([name], network, ports=ports, port_security=port_security)[0]

    def sdk(self):
        """An openstacksdk connection as the cloud's normal project user (counted as client traffic)."""
        return self.api.connect()

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
