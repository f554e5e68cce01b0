"""CPU that octavia-driver-agent's listener processes spend per status update and per statistics report.

    .venv/bin/python tools/bench/driver_agent_cpu.py [--updates 300] [--state-dir DIR]

Starts a minicloud of its own (or uses the one up in ``--state-dir``), creates one load balancer with a listener
and a member, then sends ``--updates`` status updates and as many listener statistics reports through octavia_lib's
DriverLibrary, one after the other, as a provider driver does. The CPU of each listener process is read from
/proc/PID/stat before and after: utime + stime (its own threads) + cutime + cstime (its reaped children, the forks
of a forking server). An idle window of the same length before the workload gives what the cloud sends on its own.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "minicloud"))

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime + cutime + cstime of ``pid``, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / TICKS


def children(pid: int) -> dict[int, str]:
    """The direct children of ``pid``: their process titles by pid."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found[int(entry.name)] = cmdline
    return found


def listener_cpu(listeners: dict[int, str]) -> dict[str, float]:
    return {title: cpu_seconds(pid) for pid, title in listeners.items()}


def difference(after: dict[str, float], before: dict[str, float]) -> dict[str, float]:
    return {title: round(after[title] - before[title], 2) for title in after}


def workload(library, lb: dict, updates: int) -> float:
    """Send ``updates`` status updates and ``updates`` statistics reports; return the wall time."""
    status = {"loadbalancers": [{"id": lb["loadbalancer"]["id"], "provisioning_status": "ACTIVE",
                                 "operating_status": "ONLINE"}]}
    started = time.monotonic()
    for number in range(updates):
        library.update_loadbalancer_status(status)
        library.update_listener_statistics({"listeners": [
            {"id": lb["listener"]["id"], "active_connections": 0, "bytes_in": number, "bytes_out": number,
             "request_errors": 0, "total_connections": number}]})
    return time.monotonic() - started


def measure(cloud, updates: int) -> dict:
    from minicloud.core.settings import Settings
    from minicloud.runtime import lifecycle, processes
    from minicloud.services import get_service
    from octavia_lib.api.drivers.driver_lib import DriverLibrary

    agent = processes.find(cloud.state, lifecycle.AGENT)
    listeners = {pid: title for pid, title in children(agent.pid).items() if "listener" in title}
    octavia = get_service("octavia", cloud.state, Settings.load(cloud.state))
    sockets = octavia.sockets
    library = DriverLibrary(status_socket=str(sockets["status"]), stats_socket=str(sockets["stats"]),
                            get_socket=str(sockets["get"]))
    lb = cloud.create_lb("agent-cpu", members=1, cidr="10.9.0.0/24")
    try:
        before = listener_cpu(listeners)
        seconds = workload(library, lb, 3)  # warm-up, and a first guess of the window's length
        time.sleep(max(1.0, seconds / 3 * updates))
        idle = difference(listener_cpu(listeners), before)
        before = listener_cpu(listeners)
        seconds = workload(library, lb, updates)
        busy = difference(listener_cpu(listeners), before)
    finally:
        cloud.delete_lb("agent-cpu")
    total = sum(busy.values()) - sum(idle.values())
    return {"updates": updates, "wall_seconds": round(seconds, 2), "idle_cpu": idle, "busy_cpu": busy,
            "cpu_ms_per_update_and_report": round(1000 * total / updates, 2)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--updates", type=int, default=300)
    parser.add_argument("--state-dir", help="a minicloud up already (default: start one, then purge it)")
    args = parser.parse_args()

    from minicloud.core.settings import free_port_offset
    from minicloud.runtime.control import Minicloud

    if args.state_dir:
        print(json.dumps(measure(Minicloud(args.state_dir), args.updates), indent=2))
        return
    with tempfile.TemporaryDirectory(prefix="agent-cpu-") as folder:
        cloud = Minicloud(Path(folder) / "state")
        cloud.up(port_offset=free_port_offset())
        try:
            print(json.dumps(measure(cloud, args.updates), indent=2))
        finally:
            cloud.down(purge=True)


if __name__ == "__main__":
    main()
