"""One HAProxy process per load balancer: start, seamless reload, stop, and its stats socket.

HAProxy runs in master-worker mode (``-W``), daemonized, its master's pid in a pid file. A reload
first saves the servers' state (``show servers state``, read back by ``load-server-state-from-file``),
then checks the new configuration (``-c``) and signals the master (SIGUSR2): the master starts new
workers, which take the listening sockets over (``expose-fd listeners``), and the old workers finish
their established connections (for at most ``hard-stop-after``). That is how the amphora reloads.

The master is known by a record of minicloud's own (``master.json``: its pid and kernel start time), written
once it started: HAProxy's pid file is written again at each reload, and read then it may be empty, which took a
running master for none (a second master was started beside it, or ``down`` passed it by). Stopping ends the
master's process group (the master and every worker, those of reloads too) and waits until none of it runs.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from minicloud.core import background, proctable

LOG = logging.getLogger(__name__)
BINARY = "haproxy"
SOCKET_TIMEOUT = 2.0
# how long a master just started may take to write its pid file
START_TIMEOUT = 10.0


class HaproxyMissing(RuntimeError):
    pass


def binary() -> str:
    found = shutil.which(BINARY) or next((p for p in ("/usr/sbin/haproxy", "/usr/local/sbin/haproxy")
                                          if os.access(p, os.X_OK)), None)
    if found is None:
        raise HaproxyMissing("haproxy is not installed: minicloud's load balancers need it "
                             "(Debian/Ubuntu: apt-get install -y haproxy; `make venv` does it when it may)")
    return found


class Instance:
    """The HAProxy of one load balancer, kept in ``folder`` (config, pid file, server state)."""

    def __init__(self, folder: Path, stats_socket: Path):
        self.folder = folder
        self.config = folder / "haproxy.cfg"
        self.pidfile = folder / "haproxy.pid"
        self.state_file = folder / "servers-state"
        self.stats_socket = stats_socket
        self.record = folder / "master.json"

    def master_pid(self) -> int | None:
        """The running master: the one recorded at its start (still the same process), else the pid file's."""
        try:
            record = json.loads(self.record.read_text())
            found = proctable.stat(int(record["pid"]))
        except (OSError, ValueError, KeyError, TypeError):
            found = None
        if found is not None and found.start_time == record["start_time"]:
            return found.pid
        return background.running(self.pidfile, str(self.config))

    def processes(self) -> list[int]:
        """The pids of the HAProxy processes (master and workers) whose command line names this configuration."""
        return [proc.pid for proc in proctable.naming(str(self.config)) if "haproxy" in proctable.cmdline(proc.pid)]

    def groups(self) -> set[int]:
        """The process groups of this load balancer's HAProxy: the master's (its workers are in it) and those of
        any process running this configuration."""
        pid = self.master_pid()
        found = {proctable.stat(pid)} if pid is not None else set()
        found |= {proctable.stat(other) for other in self.processes()}
        return {proc.pgid for proc in found if proc is not None}

    def apply(self, text: str) -> bool:
        """Run ``text``: start HAProxy, or reload it if the configuration changed. True if it did something."""
        pid = self.master_pid()
        if pid is not None and self.config.exists() and self.config.read_text() == text:
            return False
        self.folder.mkdir(parents=True, exist_ok=True)
        candidate = self.folder / "haproxy.cfg.new"
        candidate.write_text(text)
        check = subprocess.run([binary(), "-c", "-q", "-f", str(candidate)], capture_output=True, text=True)
        if check.returncode != 0:
            LOG.error("data plane: HAProxy refuses the configuration of %s: %s", self.folder.name,
                      check.stdout + check.stderr)
            return False
        if pid is not None:
            self._save_server_state(text)
        candidate.replace(self.config)
        if pid is None:
            self._start()
        else:
            os.kill(pid, signal.SIGUSR2)
        return True

    def _start(self) -> None:
        self.stats_socket.parent.mkdir(parents=True, exist_ok=True)
        self.stats_socket.unlink(missing_ok=True)
        log = open(self.folder / "haproxy.log", "ab")
        self.pidfile.unlink(missing_ok=True)
        started = subprocess.run([binary(), "-W", "-D", "-f", str(self.config), "-p", str(self.pidfile)],
                                 stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, check=False,
                                 start_new_session=True)
        log.close()
        if started.returncode == 0:
            self._record_master()

    def _record_master(self) -> None:
        """Keep the new master's pid and start time, once its pid file names it."""
        deadline = time.monotonic() + START_TIMEOUT
        while (pid := background.running(self.pidfile, str(self.config))) is None:
            if time.monotonic() > deadline:
                LOG.error("data plane: HAProxy of %s wrote no pid file; see %s", self.folder.name,
                          self.folder / "haproxy.log")
                return
            time.sleep(0.02)
        found = proctable.stat(pid)
        if found is not None:
            self.record.write_text(json.dumps({"pid": pid, "start_time": found.start_time}) + "\n")

    def _save_server_state(self, new_config: str) -> None:
        """Keep each server's health across the reload, except where its endpoint changes (HAProxy
        would take the old address back from the state file): that server starts afresh."""
        try:
            state = self.command("show servers state")
        except OSError:
            return
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(keep_unmoved(state, server_addresses(new_config)))
        tmp.replace(self.state_file)

    def command(self, line: str) -> str:
        """One command on the stats socket, its whole answer."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(SOCKET_TIMEOUT)
            sock.connect(str(self.stats_socket))
            sock.sendall(line.encode() + b"\n")
            chunks = []
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
        return b"".join(chunks).decode(errors="replace")

    def stop(self, timeout: float = 5.0) -> list[int]:
        """Stop the master and every worker (a reload's too), and wait until none runs: SIGTERM to the master, which
        stops its workers, then SIGKILL to the process groups after ``timeout``. Processes running this
        configuration that no record names (a master whose pid file was being written again) go the same way.
        Returns the pids that were running."""
        stopped = proctable.end_groups(self.groups(), timeout, first=self.master_pid())
        for path in (self.pidfile, self.record, self.stats_socket):
            path.unlink(missing_ok=True)
        return [proc.pid for proc in stopped]


def server_addresses(config: str) -> dict[str, str]:
    """Server name -> ``address:port`` in a configuration."""
    result = {}
    for line in config.splitlines():
        words = line.split()
        if len(words) >= 3 and words[0] == "server":
            result[words[1]] = words[2]
    return result


def keep_unmoved(state: str, addresses: dict[str, str]) -> str:
    """The lines of ``show servers state`` whose server keeps its address and port."""
    lines = state.splitlines()
    kept = []
    for line in lines:
        words = line.split()
        if len(words) > 18 and not line.startswith("#"):
            # srv_name is column 4, srv_addr column 5, srv_port column 19 (1-based)
            if addresses.get(words[3]) != f"{words[4]}:{words[18]}":
                continue
        kept.append(line)
    return "\n".join(kept) + "\n"
