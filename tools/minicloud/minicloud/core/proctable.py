"""The machine's processes as /proc shows them: who runs, in which process group, with which command line, and
which TCP ports they listen on. What ``down`` stops by process group and what checks that nothing of a cloud is
left read it."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
LISTEN = "0A"  # the TCP state LISTEN in /proc/net/tcp


@dataclass(frozen=True)
class Proc:
    pid: int
    pgid: int
    state: str
    start_time: int
    comm: str


def stat(pid: int) -> Proc | None:
    """The process ``pid``, or None once it is gone (a zombie counts as gone: it runs nothing, holds no port)."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    comm = text[text.index("(") + 1:text.rindex(")")]
    # after the command name: state (3), ppid (4), pgrp (5), ... starttime (22)
    fields = text.rsplit(")", 1)[1].split()
    if fields[0] in ("Z", "X"):
        return None
    return Proc(pid=pid, pgid=int(fields[2]), state=fields[0], start_time=int(fields[19]), comm=comm)


def cmdline(pid: int) -> str:
    try:
        return (PROC / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def pids() -> list[int]:
    return [int(entry.name) for entry in PROC.iterdir() if entry.name.isdigit()]


def live() -> list[Proc]:
    return [proc for proc in map(stat, pids()) if proc is not None]


def naming(text: str) -> list[Proc]:
    """The live processes whose command line contains ``text``."""
    return [proc for proc in live() if text in cmdline(proc.pid)]


def members(groups: set[int]) -> list[Proc]:
    """The live processes of the process groups ``groups``."""
    return [proc for proc in live() if proc.pgid in groups] if groups else []


def signal_groups(groups: set[int], sig: int) -> None:
    for group in groups:
        try:
            os.killpg(group, sig)
        except (ProcessLookupError, PermissionError):
            pass


def wait_gone(groups: set[int], timeout: float) -> list[Proc]:
    """Wait until no process of ``groups`` runs, at most ``timeout`` seconds; what still runs."""
    deadline = time.monotonic() + timeout
    left = members(groups)
    while left and time.monotonic() < deadline:
        time.sleep(0.02)
        left = members(groups)
    return left


def end_groups(groups: set[int], timeout: float, first: int | None = None) -> list[Proc]:
    """End every process of ``groups``: SIGTERM to ``first`` (a master that stops its workers itself), or to the
    groups, then SIGKILL to the groups after ``timeout``, and wait until they are gone. What was running."""
    running = members(groups)
    if not running:
        return []
    if first is not None:
        try:
            os.kill(first, signal.SIGTERM)
        except ProcessLookupError:
            pass
    else:
        signal_groups(groups, signal.SIGTERM)
    if wait_gone(groups, timeout):
        signal_groups(groups, signal.SIGKILL)
        left = wait_gone(groups, 10.0)
        if left:
            raise RuntimeError(f"processes {', '.join(str(p.pid) for p in left)} outlived SIGKILL")
    return running


def listening_ports(pid_list: list[int]) -> dict[int, int]:
    """Port -> pid: the TCP ports the processes ``pid_list`` listen on."""
    inodes: dict[str, int] = {}
    for pid in pid_list:
        try:
            fds = list((PROC / str(pid) / "fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes[target[8:-1]] = pid
    return {port: inodes[inode] for port, inode in listening_sockets() if inode in inodes}


def listening_sockets() -> list[tuple[int, str]]:
    """(port, socket inode) of every TCP socket listening on this machine."""
    found = []
    for name in ("tcp", "tcp6"):
        try:
            lines = (PROC / "net" / name).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            words = line.split()
            if len(words) > 9 and words[3] == LISTEN:
                found.append((int(words[1].rsplit(":", 1)[1], 16), words[9]))
    return found


def environ(pid: int) -> dict[str, str]:
    """The environment ``pid`` started with (empty when it cannot be read)."""
    try:
        raw = (PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return {}
    pairs = (item.decode(errors="replace").partition("=") for item in raw.split(b"\0") if item)
    return {key: value for key, _, value in pairs}
