"""The servers' power, shared by the compute side (in nova-api's process) and the guests (the control-plane
servers' API endpoints, in the controllers' process): one JSON file in the state folder.

``<instance uuid>`` -> ``{"state": ..., "changed": <unix time>}``, ``state`` one of

- ``running``: the guest runs (written by the guest when it boots, and by the compute side on a start);
- ``shutting-down``: the compute side sent the guest an ACPI shutdown (Nova's clean stop); the guest shuts down
  in order and writes ``off`` once it has;
- ``off``: powered off (by the guest at the end of its shutdown, or by the compute side: a hard power off after
  Nova's ``shutdown_timeout``, a forced stop, or a server with no guest).

An instance with no entry has no guest here (a seeded server that is not a control-plane server's).

A fault (:meth:`PowerFile.ignore_acpi`): ``"ignoresAcpi": true`` in an entry makes the guest ignore ACPI shutdowns
(a guest without ACPI support, or hung): Nova's clean stop then waits its whole ``shutdown_timeout`` and powers it
off hard (:mod:`minicloud.services.nova_compute`). Lifted, the guest takes the next ACPI event Nova sends (libvirt
sends it again every few seconds until the timeout).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from pathlib import Path

from minicloud.dataplane.endpoints import FOLDER

RUNNING, SHUTTING_DOWN, OFF = "running", "shutting-down", "off"
IGNORES_ACPI = "ignoresAcpi"
STATES = (RUNNING, SHUTTING_DOWN, OFF)
POLL = 0.05  # how often a wait looks at the file


class PowerFile:
    def __init__(self, state_root: str | os.PathLike):
        self.folder = Path(state_root) / FOLDER
        self.path = self.folder / "power.json"

    @contextlib.contextmanager
    def _locked(self):
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.folder / "power.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            data = self.snapshot()
            before = json.dumps(data, sort_keys=True)
            yield data
            if json.dumps(data, sort_keys=True) != before:
                tmp = self.path.with_suffix(".tmp")
                tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
                os.replace(tmp, self.path)

    def snapshot(self) -> dict[str, dict]:
        try:
            return json.loads(self.path.read_text())
        except (FileNotFoundError, ValueError):
            return {}

    def stamp(self) -> tuple | None:
        """Changes whenever the file is written (readers follow it instead of reading the file each time)."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return None
        return stat.st_ino, stat.st_mtime_ns

    def state(self, instance: str) -> str | None:
        return (self.snapshot().get(instance) or {}).get("state")

    def set(self, instance: str, state: str, expected: tuple[str | None, ...] | None = None) -> bool:
        """Write ``state`` (only if the current one is among ``expected``, when given); True if written."""
        if state not in STATES:
            raise ValueError(f"power state {state!r}: one of {', '.join(STATES)}")
        with self._locked() as data:
            current = (data.get(instance) or {}).get("state")
            if expected is not None and current not in expected:
                return False
            if current != state:  # other keys (a fault) stay
                data[instance] = {**(data.get(instance) or {}), "state": state, "changed": round(time.time(), 3)}
            return True

    def ignore_acpi(self, instance: str, ignore: bool = True) -> None:
        """The fault: the guest of ``instance`` ignores ACPI shutdowns (``ignore``), or takes them again."""
        with self._locked() as data:
            entry = data.setdefault(instance, {})
            if ignore:
                entry[IGNORES_ACPI] = True
            else:
                entry.pop(IGNORES_ACPI, None)
                if not entry:
                    data.pop(instance)

    def ignores_acpi(self, instance: str) -> bool:
        return bool((self.snapshot().get(instance) or {}).get(IGNORES_ACPI))

    def forget(self, instance: str) -> None:
        with self._locked() as data:
            data.pop(instance, None)

    def wait(self, instance: str, states: tuple[str, ...], timeout: float) -> str | None:
        """The instance's state once it is one of ``states``, or None after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            state = self.state(instance)
            if state in states:
                return state
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            time.sleep(min(POLL, left))
