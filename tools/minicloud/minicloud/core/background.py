"""Programs minicloud runs detached in the background of a state folder, each with a pid file (the load
generators, the emulated route controllers; HAProxy writes its own): started, found running (the pid file's
first pid, while its command line names the program: a pid the kernel gave to another process is not taken for
it), stopped (SIGTERM, then SIGKILL after ``timeout``)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path


def running(pid_file: Path, marker: str) -> int | None:
    """The pid in ``pid_file`` if that process runs and its command line contains ``marker``, else None."""
    try:
        pid = int(Path(pid_file).read_text().split()[0])
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except (OSError, ValueError, IndexError):
        return None
    return pid if marker in cmdline else None


def start(pid_file: Path, argv: list[str], log_file: Path) -> int:
    """Run ``argv`` in a session of its own (its output appended to ``log_file``) and record its pid."""
    with open(log_file, "ab") as log:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    Path(pid_file).write_text(f"{proc.pid}\n")
    return proc.pid


def stop(pid_file: Path, marker: str, timeout: float = 15.0) -> bool:
    """Stop the program of ``pid_file`` (``running``): SIGTERM, SIGKILL if it still runs after ``timeout``; the
    pid file goes. False when it was not running."""
    pid = running(pid_file, marker)
    if pid is None:
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and running(pid_file, marker) is not None:
        time.sleep(0.1)
    if running(pid_file, marker) is not None:
        os.kill(pid, signal.SIGKILL)
    Path(pid_file).unlink(missing_ok=True)
    return True
