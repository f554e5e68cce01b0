"""Start, find and stop the processes minicloud owns.

Each process is started in a process group of its own (setsid) and recorded in a pid file with
its kernel start time, so ``down`` only ever signals the very processes ``up``
started (a recycled pid has another start time).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path

from minicloud.core import proctable
from minicloud.core.paths import STATE_DIR_ENV, StateDir
from minicloud.core.settings import Settings
from minicloud.core.wsgi import SEED_PATH
from minicloud.services import get_service

RUNNER_MODULE = "minicloud.runtime.runner"
# how long a program just started may take to show its own command line (see _wait_for_image)
IMAGE_TIMEOUT = 5.0


@dataclass(frozen=True)
class ProcessRecord:
    name: str
    pid: int
    start_time: int
    # what the command line of the process holds: the runner module, or the program's path (spawn_program)
    marker: str = RUNNER_MODULE

    def alive(self) -> bool:
        """True if this pid still is the process we started."""
        return _start_time(self.pid) == self.start_time and self.marker in _cmdline(self.pid)


def _start_time(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # Field 22 (starttime); the command name in field 2 may hold spaces, so split after ')'.
    return int(stat.rsplit(")", 1)[1].split()[19])


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def runner_command(action: str, service: str) -> list[str]:
    return [sys.executable, "-m", RUNNER_MODULE, action, service]


def runner_env(state: StateDir) -> dict[str, str]:
    env = dict(os.environ)
    env[STATE_DIR_ENV] = str(state.root)
    env["PYTHONWARNINGS"] = "ignore"
    return env


def spawn(state: StateDir, name: str, action: str, service: str) -> ProcessRecord:
    """Start ``runner ACTION SERVICE`` in the background, logging to ``logs/NAME.log``."""
    return _spawn(state, name, runner_command(action, service), runner_env(state), RUNNER_MODULE)


def spawn_program(state: StateDir, name: str, argv: list[str], env: dict[str, str] | None = None) -> ProcessRecord:
    """Start a program that is not minicloud's (etcd, kube-apiserver, a controller manager) in the
    background, logging to ``logs/NAME.log``; recorded like the runner's processes."""
    return _spawn(state, name, argv, {**runner_env(state), **(env or {})}, argv[0])


def _spawn(state: StateDir, name: str, argv: list[str], env: dict[str, str], marker: str) -> ProcessRecord:
    state.logs.mkdir(parents=True, exist_ok=True)
    state.run.mkdir(parents=True, exist_ok=True)
    with open(state.log(name), "ab") as log:
        log.write(f"--- minicloud: starting {name} at {time.strftime('%Y-%m-%d %H:%M:%S')}\n".encode())
        log.flush()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                                cwd=state.root, start_new_session=True)
    start = None
    while start is None:
        start = _start_time(proc.pid)
    _wait_for_image(proc, marker)
    record = ProcessRecord(name=name, pid=proc.pid, start_time=start, marker=marker)
    state.pidfile(name).write_text(json.dumps(asdict(record)) + "\n")
    return record


def _wait_for_image(proc: subprocess.Popen, marker: str, timeout: float = IMAGE_TIMEOUT) -> None:
    """Return once the new program's command line shows ``marker`` (or it has exited, or ``timeout`` passed).

    Popen returns when exec has closed the close-on-exec pipe, which the kernel does before it writes the new
    program's arguments: a busy machine could read an empty command line then, and a process that had just
    started was taken for one that had exited."""
    deadline = time.monotonic() + timeout
    while marker not in _cmdline(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)


def run_to_completion(state: StateDir, name: str, action: str, service: str) -> subprocess.Popen:
    """Start a short-lived runner (e.g. ``init``); the caller waits for it."""
    state.logs.mkdir(parents=True, exist_ok=True)
    log = open(state.log(name), "ab")
    proc = subprocess.Popen(
        runner_command(action, service),
        stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
        env=runner_env(state), cwd=state.root,
    )
    log.close()
    return proc


def find(state: StateDir, name: str) -> ProcessRecord | None:
    """The recorded process ``name`` if it is still running, else None."""
    try:
        record = ProcessRecord(**json.loads(state.pidfile(name).read_text()))
    except (OSError, ValueError, TypeError):
        return None
    return record if record.alive() else None


def stop(state: StateDir, name: str, timeout: float = 10.0) -> bool:
    """Stop process ``name``, then whatever is left of its process group. True if one was running.

    SIGTERM goes to the main process only: octavia-driver-agent shuts its listener
    processes down itself, and hangs if they are killed under it.
    """
    record = find(state, name)
    state.pidfile(name).unlink(missing_ok=True)
    if record is None:
        return False
    try:
        os.kill(record.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and record.alive():
        time.sleep(0.1)
    # what is left of its group, and wait until it is gone: a service killed in the middle of starting a program
    # of its own (HAProxy) has no say afterwards, so nothing it started can come after the stop of those programs
    proctable.signal_groups({record.pid}, signal.SIGKILL)
    proctable.wait_gone({record.pid}, 10.0)
    return True


def run_seed(state: StateDir, service: str, payload: dict, timeout: float = 120.0) -> dict:
    """Write seed data for ``service`` (``payload`` in, its JSON answer out).

    A running service that takes seed data while serving gets it there (milliseconds); otherwise
    ``runner seed SERVICE`` runs in a process of its own, with the payload as JSON on stdin.
    """
    settings = Settings.load(state)
    target = get_service(service, state, settings) if settings else None
    if target is not None and target.seeds_while_serving and find(state, service) is not None:
        return _seed_served(target.url, service, payload, timeout)
    state.logs.mkdir(parents=True, exist_ok=True)
    with open(state.log(f"{service}-seed"), "ab") as log:
        proc = subprocess.run(
            runner_command("seed", service), input=json.dumps(payload).encode(), stdout=subprocess.PIPE,
            stderr=log, env=runner_env(state), cwd=state.root, timeout=timeout, check=False,
        )
    if proc.returncode != 0:
        raise RuntimeError(f"seeding {service} failed (exit {proc.returncode}); see {state.log(service + '-seed')}")
    return json.loads(proc.stdout.decode().strip().splitlines()[-1])


def _seed_served(url: str, service: str, payload: dict, timeout: float) -> dict:
    request = urllib.request.Request(url + SEED_PATH, data=json.dumps(payload).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:  # noqa: S310  (our own http URL)
            return json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        detail = json.loads(exc.read() or b"{}").get("error", "")
        raise RuntimeError(f"seeding {service} failed (HTTP {exc.code}):\n{detail}") from None
