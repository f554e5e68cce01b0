"""What is left running of a cloud after ``down``: its processes (the state folder in their command line, or as
their MINICLOUD_STATE_DIR, or as their working folder) and the TCP ports they listen on; and ports the cloud
listened on that something still holds (``python -m minicloud leftovers``, the end of ``make test``)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from minicloud.core import proctable
from minicloud.core.paths import STATE_DIR_ENV


@dataclass(frozen=True)
class Leftover:
    pid: int
    command: str
    ports: tuple[int, ...] = ()

    def describe(self) -> str:
        listening = f", listening on {', '.join(map(str, self.ports))}" if self.ports else ""
        return f"pid {self.pid}{listening}: {self.command[:200]}"


def _inside(path: str, root: Path) -> bool:
    return path == str(root) or path.startswith(f"{root}/")


def belongs(pid: int, root: Path) -> bool:
    """Whether process ``pid`` is one of the cloud in ``root``."""
    if f"{root}/" in proctable.cmdline(pid) or _inside(proctable.environ(pid).get(STATE_DIR_ENV, ""), root):
        return True
    try:
        return _inside(os.readlink(f"/proc/{pid}/cwd"), root)
    except OSError:
        return False


def processes(root: Path) -> list[Leftover]:
    """The live processes of the cloud in ``root`` (not this one), each with the ports it listens on."""
    mine = {os.getpid(), os.getppid()}
    found = [proc.pid for proc in proctable.live() if proc.pid not in mine and belongs(proc.pid, Path(root))]
    ports = proctable.listening_ports(found)
    return [Leftover(pid, proctable.cmdline(pid), tuple(sorted(p for p, owner in ports.items() if owner == pid)))
            for pid in found]


def ports_held(ports: list[int]) -> list[Leftover]:
    """Of ``ports``, those some process still listens on (with that process)."""
    wanted = set(ports)
    held = [port for port, _ in proctable.listening_sockets() if port in wanted]
    owners = proctable.listening_ports([proc.pid for proc in proctable.live()]) if held else {}
    return [Leftover(owners.get(port, 0), proctable.cmdline(owners[port]) if port in owners else "(owner unknown)",
                     (port,)) for port in sorted(set(held))]


def report(root: Path, ports: list[int]) -> list[str]:
    """What is left of the cloud in ``root``, in words; empty when nothing is."""
    left = processes(Path(root).absolute())
    seen = {port for item in left for port in item.ports}
    left += [item for item in ports_held(ports) if item.ports[0] not in seen]
    return [item.describe() for item in left]
