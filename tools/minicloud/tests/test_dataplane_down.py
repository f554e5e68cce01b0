"""Nothing of a cloud's HAProxy outlives ``down``: a master whose pid file is being written again by a reload, the
workers of reloads that still hold connections, a load balancer deleted while its HAProxy reloads."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import tempfile
from pathlib import Path

import pytest

if shutil.which("haproxy") is None and not os.path.exists("/usr/sbin/haproxy"):
    pytest.skip("needs haproxy", allow_module_level=True)

from minicloud.core import proctable  # noqa: E402
from minicloud.core.paths import StateDir  # noqa: E402
from minicloud.dataplane import plane  # noqa: E402
from minicloud.seeding.openstack import wait_until  # noqa: E402


@pytest.fixture
def backend():
    """A TCP server the load balancer forwards to (it accepts and holds every connection)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    yield server
    server.close()


@pytest.fixture
def state(tmp_path):
    """A state folder of this test; whatever of its HAProxy a failing test left is killed afterwards."""
    yield StateDir(tmp_path / "state")
    for proc in proctable.naming(str(tmp_path)):
        if proc.comm == "haproxy":
            proctable.signal_groups({proc.pgid}, signal.SIGKILL)


@pytest.fixture
def short_tmp():
    """A folder with a short path: HAProxy takes stats socket paths of at most 97 characters, and pytest's
    temporary folders with a state folder's socket path inside are longer."""
    folder = Path(tempfile.mkdtemp(prefix="mc-down-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def config(lb, frontend: int, backend: socket.socket, weight: int) -> str:
    return "\n".join([
        "global",
        f"    stats socket {lb.stats_socket} mode 600 level admin expose-fd listeners",
        "    hard-stop-after 120s",
        "defaults",
        "    mode tcp",
        "    timeout connect 5s",
        "    timeout client 60s",
        "    timeout server 60s",
        "frontend vip",
        f"    bind 127.0.0.1:{frontend}",
        "    default_backend pool",
        "backend pool",
        f"    server member 127.0.0.1:{backend.getsockname()[1]} weight {weight}",
        "",
    ])


def haproxy_of(lb) -> list[int]:
    return [proc.pid for proc in proctable.naming(str(lb.config))]


def connect_through(port: int, backend: socket.socket) -> socket.socket:
    """A connection through the load balancer, established to the backend."""
    client = wait_until("the frontend takes connections", lambda: _connect(port), 20, 0.05)
    backend.accept()
    return client


def _connect(port: int, host: str = "127.0.0.1") -> socket.socket | None:
    try:
        return socket.create_connection((host, port), timeout=5)
    except OSError:
        return None


def test_down_stops_a_master_whose_pid_file_is_being_written_again(state, backend):
    lb = plane.instance(state, "lb-1")
    port = free_port()
    lb.apply(config(lb, port, backend, 1))
    held = connect_through(port, backend)
    lb.pidfile.write_text("")  # what a reload leaves for a moment, while the master writes it again
    stopped = plane.stop_all(state)
    held.close()
    assert haproxy_of(lb) == []
    assert stopped == ["haproxy/lb-1 (2 processes)"]


def test_a_reload_while_the_pid_file_is_written_again_starts_no_second_master(state, backend):
    lb = plane.instance(state, "lb-1")
    port = free_port()
    lb.apply(config(lb, port, backend, 1))
    lb.pidfile.write_text("")
    assert lb.apply(config(lb, port, backend, 2))
    masters = [proc for proc in proctable.naming(str(lb.config)) if proc.pid == proc.pgid]
    assert len(masters) == 1
    lb.stop()


def test_stop_waits_until_the_workers_of_every_reload_are_gone(state, backend):
    lb = plane.instance(state, "lb-1")
    port = free_port()
    held = []
    for weight in (1, 2, 3):  # each reload leaves the previous worker holding its connection
        lb.apply(config(lb, port, backend, weight))
        held.append(connect_through(port, backend))
        wait_until("a worker per reload", lambda: len(haproxy_of(lb)) == weight + 1, 20, 0.05)
    stopped = lb.stop()
    assert len(stopped) == 4 and haproxy_of(lb) == []
    assert lb.master_pid() is None and not lb.pidfile.exists()
    for client in held:
        client.close()


@pytest.mark.integration
def test_down_leaves_nothing_of_a_cloud_whose_load_balancers_reloaded(short_tmp):
    """A cloud of its own: two load balancers reloaded while clients hold connections, one deleted while its
    HAProxy reloads; then ``down`` stops every process of the cloud and nothing listens on its ports."""
    pytest.importorskip("octavia")
    from minicloud.core.settings import free_port_offset
    from minicloud.runtime.control import Minicloud

    cloud = Minicloud(short_tmp / "state")
    cloud.up(port_offset=free_port_offset(), timeout=300)
    try:
        kept = cloud.create_lb("down-kept", members=2, monitor=True, cidr="10.9.1.0/24")
        gone = cloud.create_lb("down-gone", members=1, cidr="10.9.2.0/24")
        held = reload_with_connections(cloud, kept, 3)
        kept_lb = plane.instance(cloud.state, kept["loadbalancer"]["id"])
        assert len(haproxy_of(kept_lb)) >= 4  # the master, the worker and one per reload holding a connection
        gone_lb = plane.instance(cloud.state, gone["loadbalancer"]["id"])
        conn = cloud.connect()
        conn.load_balancer.update_member(gone["members"][0]["id"], gone["pool"]["id"], weight=5)
        cloud.delete_lb("down-gone")  # while its HAProxy reloads
        assert haproxy_of(gone_lb) == []
        ports = cloud.listening_ports()
        stopped = cloud.down()
    finally:
        cloud.down()
    for client in held:
        client.close()
    assert any(name.startswith(f"haproxy/{kept['loadbalancer']['id']} (") for name in stopped), stopped
    assert cloud.leftovers(ports) == []


def reload_with_connections(cloud, lb, reloads: int) -> list[socket.socket]:
    """``reloads`` reloads of ``lb``'s HAProxy (a member's weight each time), a connection held through it before
    each one."""
    conn = cloud.connect()
    host, port = cloud.lb_vip(lb["loadbalancer"]["name"]).split(":")
    instance = plane.instance(cloud.state, lb["loadbalancer"]["id"])
    held = []
    for weight in range(2, 2 + reloads):
        held.append(wait_until("the VIP takes connections", lambda: _connect(int(port), host), 60, 0.1))
        before = set(haproxy_of(instance))
        conn.load_balancer.update_member(lb["members"][0]["id"], lb["pool"]["id"], weight=weight)
        wait_until("a reload", lambda: set(haproxy_of(instance)) - before, 60, 0.1)
        wait_until("ACTIVE", lambda: conn.load_balancer.get_load_balancer(lb["loadbalancer"]["id"]).provisioning_status
                   == "ACTIVE", 60, 0.2)
    return held


def test_sessions_counts_the_connections_each_server_holds(state, backend):
    lb = plane.instance(state, "lb-1")
    port = free_port()
    lb.apply(config(lb, port, backend, 1))
    held = [connect_through(port, backend) for _ in range(2)]
    try:
        assert wait_until("two sessions", lambda: plane.sessions(state, "lb-1") == {"member": 2}, 20, 0.05)
    finally:
        for client in held:
            client.close()
    assert wait_until("none", lambda: plane.sessions(state, "lb-1") == {"member": 0}, 20, 0.05)
    lb.stop()
    assert plane.sessions(state, "lb-1") == {}
