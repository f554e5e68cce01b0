"""The driver agent's listeners serve requests in threads (minicloud.octavia_provider.agent_server): on a running
cloud, status updates, statistics reports and gets go through the real agent and its upstream handlers without a
fork; and the threading server answers requests side by side and waits for the ones under way when closed."""

from __future__ import annotations

import importlib.util
import shutil
import socket
import threading
from pathlib import Path

import pytest

if importlib.util.find_spec("octavia") is None or shutil.which("haproxy") is None and not shutil.os.path.exists(
        "/usr/sbin/haproxy"):
    pytest.skip("needs the OpenStack packages and haproxy", allow_module_level=True)

from minicloud.core.settings import Settings  # noqa: E402
from minicloud.octavia_provider.agent_server import ThreadingUDSServer  # noqa: E402
from minicloud.runtime import lifecycle, processes  # noqa: E402
from minicloud.seeding.openstack import wait_until  # noqa: E402
from minicloud.services import get_service  # noqa: E402

CIDR = "10.74.0.0/24"
UPDATES = 10


def listeners(agent_pid: int) -> dict[str, int]:
    """The agent's listener processes: pid by process title."""
    found = {}
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text() if entry.name.isdigit() else ""
            title = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip() if stat else ""
        except OSError:
            continue
        if stat and int(stat.rsplit(")", 1)[1].split()[1]) == agent_pid and "listener" in title:
            found[title] = int(entry.name)
    return found


def reaped_children_ticks(pid: int) -> int:
    """cutime + cstime of ``pid``: the CPU of the children it has reaped (a forking server's requests)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[13]) + int(fields[14])


@pytest.fixture(scope="module")
def lb(cloud):
    lb = cloud.create_lb("agent-threads", cidr=CIDR)
    yield lb
    cloud.delete_lb("agent-threads")


@pytest.mark.integration
def test_the_agent_answers_updates_statistics_and_gets_without_forking(cloud, lb):
    from octavia_lib.api.drivers.driver_lib import DriverLibrary

    sockets = get_service("octavia", cloud.state, Settings.load(cloud.state)).sockets
    library = DriverLibrary(status_socket=str(sockets["status"]), stats_socket=str(sockets["stats"]),
                            get_socket=str(sockets["get"]))
    found = listeners(processes.find(cloud.state, lifecycle.AGENT).pid)
    assert len(found) == 3, found
    before = {title: reaped_children_ticks(pid) for title, pid in found.items()}
    lb_id, listener_id = lb["loadbalancer"]["id"], lb["listener"]["id"]

    def report(number: int) -> None:
        library.update_listener_statistics({"listeners": [
            {"id": listener_id, "active_connections": number, "bytes_in": 100 * number, "bytes_out": 10 * number,
             "request_errors": 0, "total_connections": number}]})

    for number in range(1, UPDATES + 1):  # each call raises if the agent's answer is not a success
        library.update_loadbalancer_status({"loadbalancers": [{"id": lb_id, "operating_status": "ONLINE"}]})
        report(number)
        assert library.get_loadbalancer(lb_id).loadbalancer_id == lb_id

    conn = cloud.connect()

    def reported() -> bool:  # the emulator's own first report of this listener may come after ours: report again
        report(UPDATES)
        stats = conn.load_balancer.get(f"/lbaas/listeners/{listener_id}/stats").json()["stats"]
        return (stats["active_connections"], stats["bytes_in"]) == (UPDATES, 100 * UPDATES)

    wait_until("the listener's statistics as reported", reported, 30, 0.5)
    # No forked child was reaped: each request ran in a thread of its listener process.
    assert {title: reaped_children_ticks(pid) for title, pid in found.items()} == before


def request(path: str, payload: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.connect(path)
        client.sendall(payload)
        return client.recv(64)


def test_requests_are_served_side_by_side_and_close_waits_for_them(tmp_path):
    entered, release, finished = threading.Event(), threading.Event(), []

    class Handler:
        def __init__(self, request, client_address, server):
            word = request.recv(64)
            if word == b"hold":
                entered.set()
                release.wait(30)
            request.sendall(word.upper())
            finished.append(word)

    path = str(tmp_path / "s.sock")
    server = ThreadingUDSServer(path, Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    held = threading.Thread(target=request, args=(path, b"hold"))
    held.start()
    assert entered.wait(30)
    assert request(path, b"quick") == b"QUICK"  # answered while the first request is held
    server.shutdown()
    closing = threading.Thread(target=server.server_close)
    closing.start()
    closing.join(0.2)
    assert closing.is_alive()  # close waits for the held request
    release.set()
    closing.join(30)
    held.join(30)
    assert not closing.is_alive() and finished == [b"quick", b"hold"]
