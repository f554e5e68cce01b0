"""The data plane's pure parts: the HAProxy configuration as the amphora renders it, health from ``show stat``."""

from __future__ import annotations

import shutil
import socket
import time
from pathlib import Path

import pytest

from minicloud.dataplane import health
from minicloud.dataplane.haproxy import Instance, keep_unmoved, server_addresses
from minicloud.dataplane.model import Listener, LoadBalancer, Member, Monitor, Pool
from minicloud.dataplane.render import Addresses, Paths, expected_codes, render
from minicloud.octavia_provider.tree import HEALTHMONITOR, LOADBALANCER, MEMBER, POOL, LbTree, Node

PATHS = Paths(stats_socket="/s.sock", state_file="/state")
ADDRESSES = Addresses(frontend=lambda listener: "127.0.0.1:9000",
                      member=lambda pool, member: f"127.0.0.1:{member.port + 1000}")


def lb(monitor: Monitor | None = None, *members: Member) -> LoadBalancer:
    pool = Pool(id="p1", protocol="TCP", algorithm="ROUND_ROBIN", members=members, monitor=monitor)
    return LoadBalancer(id="lb1", vip_address="10.0.0.5", provisioning_status="ACTIVE",
                        listeners=(Listener(id="l1", protocol="TCP", port=6443, default_pool_id="p1"),), pools=(pool,))


def test_members_become_servers_with_octavia_checks():
    monitor = Monitor(id="hm", type="TCP", delay=10, timeout=5, rise=5, fall=3)
    text = render(lb(monitor, Member("m1", "10.0.0.7", 6443), Member("m2", "10.0.0.8", 6444, weight=0, enabled=False),
                     Member("m3", "10.0.0.9", 6443, backup=True)), PATHS, ADDRESSES)
    assert "frontend l1\n" in text and "    bind 127.0.0.1:9000\n" in text
    assert "    default_backend p1:l1\n" in text and "backend p1:l1\n" in text
    assert "    timeout check 5000ms\n" in text
    assert "    server m1 127.0.0.1:7443 weight 1 check inter 10000ms fall 3 rise 5\n" in text
    assert "    server m2 127.0.0.1:7444 weight 0 check inter 10000ms fall 3 rise 5 disabled\n" in text
    assert "    server m3 127.0.0.1:7443 weight 1 check inter 10000ms fall 3 rise 5 backup\n" in text
    assert "stats socket /s.sock mode 600 level admin expose-fd listeners" in text
    assert "load-server-state-from-file global" in text


def test_check_interval_cap_and_no_monitor():
    monitor = Monitor(id="hm", type="HTTP", delay=10, timeout=5, rise=2, fall=2, http_method="GET",
                      url_path="/readyz", expected_codes="200-202")
    text = render(lb(monitor, Member("m1", "10.0.0.7", 6443)), PATHS, ADDRESSES, check_cap=2.0)
    assert "check inter 2000ms fall 2 rise 2" in text and "timeout check 2000ms" in text
    assert "option httpchk GET /readyz" in text and "http-check expect rstatus 200|201|202" in text
    plain = render(lb(None, Member("m1", "10.0.0.7", 6443)), PATHS, ADDRESSES)
    assert "    server m1 127.0.0.1:7443 weight 1\n" in plain


def test_expected_codes():
    assert expected_codes("200") == "200"
    assert expected_codes("200, 204") == "200|204"
    assert expected_codes("200-202") == "200|201|202"


STAT = """# pxname,svname,qcur,qmax,scur,smax,slim,stot,bin,bout,dreq,dresp,ereq,econ,eresp,wretr,wredis,status,weight,act,bck,chkfail,chkdown,lastchg,downtime,qlimit,pid,iid,sid,throttle,lbtot,tracked,type,rate,rate_lim,rate_max,check_status,check_code
l1,FRONTEND,,,0,0,4096,0,0,0,0,0,0,,,,,OPEN,,,,,,,,,1,2,0,,,,0,0,0,0,,
p1:l1,up,0,0,2,2,,0,0,0,,0,,0,0,0,0,UP,1,1,0,0,0,1,0,,1,3,1,,0,,2,0,,0,L4OK,
p1:l1,down,0,0,0,0,,0,0,0,,0,,0,0,0,0,DOWN,1,1,0,0,0,1,0,,1,3,2,,0,,2,0,,0,L4CON,
p1:l1,going,0,0,0,0,,0,0,0,,0,,0,0,0,0,UP 1/3,1,1,0,0,0,1,0,,1,3,3,,0,,2,0,,0,L4CON,
p1:l1,drain,0,0,1,1,,0,0,0,,0,,0,0,0,0,DRAIN,0,1,0,0,0,1,0,,1,3,4,,0,,2,0,,0,L4OK,
p1:l1,maint,0,0,0,0,,0,0,0,,0,,0,0,0,0,MAINT,1,1,0,0,0,1,0,,1,3,5,,0,,2,0,,0,,
p1:l1,new,0,0,0,0,,0,0,0,,0,,0,0,0,0,UP,1,1,0,0,0,1,0,,1,3,6,,0,,2,0,,0,INI,
p1:l1,nocheck,0,0,0,0,,0,0,0,,0,,0,0,0,0,no check,1,1,0,0,0,1,0,,1,3,7,,0,,2,0,,0,,
p1:l1,BACKEND,0,0,3,3,,0,0,0,0,0,,0,0,0,0,UP,3,3,0,,0,1,0,,1,3,0,,0,,1,0,,0,,
"""


def test_statuses_as_octavia_health_manager_maps_them():
    stats = health.parse_stat(STAT)
    assert health.member_statuses(stats) == {"up": "ONLINE", "down": "ERROR", "going": "ONLINE",
                                             "drain": "DRAINING", "maint": "OFFLINE", "nocheck": "NO_MONITOR"}
    assert health.sessions(stats)["up"] == 2 and health.sessions(stats)["drain"] == 1


def test_health_update_rolls_up_to_pool_and_lb():
    tree = LbTree([
        Node(LOADBALANCER, "lb", "ACTIVE", "ONLINE"),
        Node(POOL, "p1", "ACTIVE", "ONLINE", parent_id="lb"),
        Node(HEALTHMONITOR, "hm", "ACTIVE", "ONLINE", parent_id="p1"),
        Node(MEMBER, "a", "ACTIVE", "ONLINE", parent_id="p1"),
        Node(MEMBER, "b", "ACTIVE", "ONLINE", parent_id="p1"),
        Node(MEMBER, "lost", "PENDING_CREATE", "OFFLINE", parent_id="p1"),
    ])
    update = health.health_update(tree, {"a": "ERROR", "b": "ONLINE", "lost": "ERROR"})
    assert update["members"] == [{"id": "a", "operating_status": "ERROR"}]
    assert update["pools"] == [{"id": "p1", "operating_status": "DEGRADED"}]
    assert update["loadbalancers"] == [{"id": "lb", "operating_status": "DEGRADED"}]
    assert health.health_update(tree, {"a": "ONLINE"}) == {}


def test_health_update_drops_what_an_older_configuration_said():
    """An observation read before the last reload: the monitor it does not know of yet, the monitor just deleted,
    the member just enabled again. None of it is taken; what the current configuration can say still is."""
    tree = LbTree([
        Node(LOADBALANCER, "lb", "ACTIVE", "ONLINE"),
        Node(POOL, "p1", "ACTIVE", "ONLINE", parent_id="lb"),
        Node(HEALTHMONITOR, "hm", "ACTIVE", "ONLINE", parent_id="p1"),
        Node(MEMBER, "watched", "ACTIVE", "ONLINE", parent_id="p1"),
        Node(MEMBER, "enabled-again", "ACTIVE", "ONLINE", parent_id="p1"),
        Node(POOL, "p2", "ACTIVE", "ONLINE", parent_id="lb"),
        Node(MEMBER, "unwatched", "ACTIVE", "NO_MONITOR", parent_id="p2"),
    ])
    assert health.health_update(tree, {"watched": "NO_MONITOR", "enabled-again": "OFFLINE",
                                       "unwatched": "ERROR"}) == {}
    assert health.health_update(tree, {"watched": "ERROR"})["members"] == [{"id": "watched",
                                                                            "operating_status": "ERROR"}]
    no_monitor = LbTree([node for node in tree.nodes.values() if node.kind != HEALTHMONITOR])
    assert health.health_update(no_monitor, {"unwatched": "NO_MONITOR", "watched": "NO_MONITOR"})["members"] == [
        {"id": "watched", "operating_status": "NO_MONITOR"}]


def test_server_state_forgets_servers_that_moved():
    config = "backend p\n    server a 127.0.0.1:1000 weight 1\n    server b 127.0.0.1:2001 weight 1\n"
    header = "1\n# be_id be_name srv_id srv_name srv_addr ...\n"
    row = "3 p:l {id} {name} 127.0.0.1 2 0 1 1 83 6 3 5 6 0 0 0 - {port} - 0 0 - - 0"
    state = header + row.format(id=1, name="a", port=1000) + "\n" + row.format(id=2, name="b", port=2000) + "\n"
    kept = keep_unmoved(state, server_addresses(config))
    assert " a 127.0.0.1 " in kept and " b 127.0.0.1 " not in kept


def test_load_summary_counts_failures_streaks_and_percentiles():
    from minicloud.dataplane.load import summarise

    def line(t, ok, error=None, ms=10.0, kind="request"):
        return {"t": t, "kind": kind, "ok": ok, "error": error, "ms": ms}

    lines = [line(1.0, True, ms=10), line(2.0, False, "reset"), line(2.5, False, "timeout"), line(3.0, True, ms=30),
             line(4.0, False, "refused"), line(5.0, True, ms=20), line(5.5, False, "timeout", kind="watch"),
             line(6.0, True, kind="watch")]
    summary = summarise(lines)
    assert summary["requests"] == 6 and summary["failed"] == 3
    assert summary["failures"] == {"reset": 1, "timeout": 1, "refused": 1}
    assert summary["longest_error_streak"] == 2 and summary["longest_error_streak_seconds"] == 0.5
    assert summary["p50_ms"] == 20 and summary["p99_ms"] == 30
    assert summary["watches_ended"] == 2 and summary["watch_interruptions"] == {"timeout": 1}
    assert summarise(lines, since=3.0)["failed"] == 1


def test_a_member_update_keeps_what_the_health_checks_said():
    from minicloud.octavia_provider.modes import Mode
    from minicloud.octavia_provider.planner import UPDATE, Event, plan

    tree = LbTree([
        Node(LOADBALANCER, "lb", "PENDING_UPDATE", "ONLINE"),
        Node(POOL, "p1", "PENDING_UPDATE", "ONLINE", parent_id="lb"),
        Node(HEALTHMONITOR, "hm", "ACTIVE", "ONLINE", parent_id="p1"),
        Node(MEMBER, "a", "PENDING_UPDATE", "ONLINE", parent_id="p1"),
    ])
    [first, *_rest] = plan(tree, Event(MEMBER, "a", UPDATE), Mode())
    assert first.update["members"] == [{"id": "a", "provisioning_status": "ACTIVE", "operating_status": "ONLINE"}]


@pytest.mark.skipif(shutil.which("haproxy") is None and not Path("/usr/sbin/haproxy").exists(),
                    reason="haproxy is not installed")
def test_stop_finds_a_master_whose_pid_file_is_gone(tmp_path):
    """A load balancer deleted right after its HAProxy started (no pid file yet, or it went): stop() still ends
    every process of that configuration, so none outlives the load balancer's folder."""
    proc = Instance(tmp_path / "lb", tmp_path / "lb" / "stats.sock")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = ("global\n    stats socket %s mode 600 level admin expose-fd listeners\n"
              "defaults\n    mode tcp\n    timeout connect 1s\n    timeout client 1s\n    timeout server 1s\n"
              "frontend f\n    bind 127.0.0.1:%d\n" % (proc.stats_socket, port))
    assert proc.apply(config)
    deadline = time.monotonic() + 10
    while not proc.processes() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.processes()
    proc.pidfile.unlink()
    assert proc.stop()  # the pids it stopped
    deadline = time.monotonic() + 5
    while proc.processes() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.processes() == []


def test_one_address_on_two_subnets_is_two_hosts(tmp_path):
    """Every cluster's network may have the same CIDR (CAPO's default node CIDR): 10.6.0.12 of one cluster and
    10.6.0.12 of another are two servers. A load balancer's member reaches the server of its own subnet, and the
    other cluster's server going away (or coming) changes nothing for it. Before, one key per address let the
    second server's registration take over the first's member, and its deletion left that member on a dead
    endpoint (TLS handshakes through the first cluster's VIP ended with an EOF)."""
    from minicloud.dataplane.endpoints import Registry, member_entry
    from minicloud.dataplane.servers import ServerEndpoints

    running = {"a/m-1/i-1": ("10.6.0.12", "subnet-a")}
    servers = ServerEndpoints(tmp_path, lambda: dict(running))
    registry = Registry(tmp_path)

    def answers(subnet):
        entry = member_entry(registry.snapshot()["members"], "10.6.0.12", 6443, subnet)
        return entry and entry["owner"], entry and entry["serving"]
    try:
        servers.tick()
        running["b/m-2/i-2"] = ("10.6.0.12", "subnet-b")
        servers.tick()
        assert answers("subnet-a") == ("a/m-1/i-1", True) and answers("subnet-b") == ("b/m-2/i-2", True)
        first = servers._running["a/m-1/i-1"][1].address
        del running["b/m-2/i-2"]  # the other cluster's rollout deleted its server
        servers.tick()
        assert answers("subnet-a") == ("a/m-1/i-1", True) and answers("subnet-b") == ("b/m-2/i-2", False)
        assert member_entry(registry.snapshot()["members"], "10.6.0.12", 6443, "subnet-a")["loopback"] == first
        # the same address again on one subnet (a new server after the old one): the old one's end leaves the new
        running["a/m-3/i-3"] = ("10.6.0.12", "subnet-a")
        servers.tick()
        del running["a/m-1/i-1"]
        servers.tick()
        assert answers("subnet-a") == ("a/m-3/i-3", True)
        # a registration without a subnet answers on every subnet without one of its own
        registry.register_member("10.6.0.99", 6443, "127.0.0.1:1", owner="plain")
        assert member_entry(registry.snapshot()["members"], "10.6.0.99", 6443, "subnet-a")["owner"] == "plain"
    finally:
        servers.stop()
