"""The data plane on a running cloud: HAProxy per load balancer, health from its checks, reloads that keep connections."""

from __future__ import annotations

import http.client
import importlib.util
import json
import shutil
import ssl

import pytest

if importlib.util.find_spec("octavia") is None or shutil.which("haproxy") is None and not shutil.os.path.exists(
        "/usr/sbin/haproxy"):
    pytest.skip("needs the OpenStack packages and haproxy", allow_module_level=True)

from minicloud.dataplane.apiserver import Endpoint, certificate  # noqa: E402
from minicloud.dataplane import health, plane  # noqa: E402
from minicloud.dataplane.endpoints import Registry  # noqa: E402
from minicloud.dataplane.servers import ServerEndpoints  # noqa: E402
from minicloud.core.paths import StateDir  # noqa: E402
from minicloud.seeding.openstack import wait_until  # noqa: E402

pytestmark = [pytest.mark.integration]


def wait_for(check, timeout=30.0, what="condition"):
    return wait_until(what, check, timeout, 0.2)


@pytest.fixture(scope="module")
def lb(cloud):
    lb = cloud.create_lb("dataplane", members=2, monitor=True, cidr="10.7.0.0/24")
    yield lb
    cloud.delete_lb("dataplane")


def statuses(conn, lb) -> dict:
    return {m.name: m.operating_status for m in conn.load_balancer.members(lb["pool"]["id"])}


def lb_active(conn, lb) -> None:
    wait_for(lambda: conn.load_balancer.get_load_balancer(lb["loadbalancer"]["id"]).provisioning_status == "ACTIVE",
             what="load balancer ACTIVE")


def server_weight(cloud, lb, member_id: str) -> int | None:
    stats = health.parse_stat(plane.instance(StateDir(cloud.state_dir), lb["loadbalancer"]["id"]).command("show stat"))
    return next((s.weight for s in stats if s.server == member_id), None)


def vip(cloud, lb) -> tuple[str, int]:
    host, port = Registry(cloud.state_dir).vip(lb["loadbalancer"]["vip_address"], 6443).split(":")
    return host, int(port)


def get(address: tuple[str, int], path: str) -> tuple[int, bytes]:
    context = ssl._create_unverified_context()
    connection = http.client.HTTPSConnection(*address, timeout=5, context=context)
    try:
        connection.request("GET", path)
        answer = connection.getresponse()
        return answer.status, answer.read()
    finally:
        connection.close()


def test_an_apiserver_whose_etcd_member_is_gone_takes_connections_and_fails_requests(tmp_path):
    """What KCP's etcd member removal leaves until the server goes: a TCP check still passes, requests fail."""
    endpoint = Endpoint(certificate(tmp_path))
    try:
        address = ("127.0.0.1", endpoint.port)
        watch = http.client.HTTPSConnection(*address, timeout=10, context=ssl._create_unverified_context())
        watch.request("GET", "/api/v1/configmaps?watch=true&timeoutSeconds=60")
        stream = watch.getresponse()
        assert json.loads(stream.readline())["type"] == "BOOKMARK"
        endpoint.lose_etcd()
        rest = [json.loads(line) for line in stream.read().splitlines()]  # the open watch ends, at once
        assert [e["type"] for e in rest][-1:] == ["ERROR"] and len(rest) <= 2, rest  # (a BOOKMARK on its way)
        assert rest[-1]["object"]["message"] == "etcdserver: server stopped"
        status, body = get(address, "/readyz")
        assert status == 500 and b"[-]etcd failed" in body
        status, body = get(address, "/api/v1/namespaces")
        assert status == 500 and json.loads(body)["message"] == "etcdserver: server stopped"
        assert get(address, "/version")[0] == 200
    finally:
        endpoint.close()


def test_a_server_loses_its_etcd_member_then_goes(tmp_path):
    running = {"default/m-1/i-1": "10.7.0.5", "default/m-2/i-2": "10.7.0.6"}
    removed = set()
    servers = ServerEndpoints(tmp_path, lambda: dict(running), without_etcd=lambda: set(removed))
    try:
        servers.tick()
        endpoint = servers._running["default/m-1/i-1"][1]
        assert not endpoint.etcd_gone.is_set()
        removed.add("default/m-1/i-1")  # KCP took its hook off the Machine being deleted
        servers.tick()
        assert endpoint.etcd_gone.is_set() and not endpoint.stopped.is_set()
        assert not servers._running["default/m-2/i-2"][1].etcd_gone.is_set()
        del running["default/m-1/i-1"]  # CAPO deleted the server
        servers.tick()
        assert endpoint.stopped.is_set() and "default/m-1/i-1" not in servers._running
    finally:
        servers.stop()


def test_health_comes_from_the_checks_of_a_real_endpoint(cloud, lb, tmp_path):
    conn = cloud.connect()
    wait_for(lambda: set(statuses(conn, lb).values()) == {"ONLINE"}, what="members ONLINE")
    assert get(vip(cloud, lb), "/readyz") == (200, b"ok")
    registry = Registry(cloud.state_dir)
    first = lb["members"][0]
    endpoint = Endpoint(certificate(tmp_path))
    registry.register_member(first["address"], 6443, endpoint.address, owner="test")
    try:
        wait_for(lambda: statuses(conn, lb)[first["name"]] == "ONLINE", what="ONLINE on its own endpoint")
        endpoint.stop()  # the server is gone: its checks time out
        wait_for(lambda: statuses(conn, lb)[first["name"]] == "ERROR", what="ERROR from the checks")
        assert statuses(conn, lb)[lb["members"][1]["name"]] == "ONLINE"
        assert get(vip(cloud, lb), "/version")[0] == 200  # the other member serves
    finally:
        registry.forget_member(first["address"], 6443)
        endpoint.close()
    wait_for(lambda: statuses(conn, lb)[first["name"]] == "ONLINE", what="ONLINE again")


def test_weight_zero_and_disabled_is_offline_and_reloads_keep_connections(cloud, lb):
    conn = cloud.connect()
    pool_id = lb["pool"]["id"]
    first = lb["members"][0]
    context = ssl._create_unverified_context()
    watch = http.client.HTTPSConnection(*vip(cloud, lb), timeout=10, context=context)
    watch.request("GET", "/api/v1/configmaps?watch=1&timeoutSeconds=15")
    stream = watch.getresponse()
    assert stream.status == 200 and stream.readline().startswith(b"{")
    try:
        conn.load_balancer.update_member(first["id"], pool_id, weight=0)
        # HAProxy keeps a server of weight 0 UP (no new connections, established ones go on): ONLINE
        wait_for(lambda: server_weight(cloud, lb, first["id"]) == 0, what="weight 0 in HAProxy")
        assert statuses(conn, lb)[first["name"]] == "ONLINE"
        lb_active(conn, lb)
        conn.load_balancer.update_member(first["id"], pool_id, weight=1, admin_state_up=False)
        wait_for(lambda: statuses(conn, lb)[first["name"]] == "OFFLINE", what="OFFLINE")
        for _ in range(3):  # the watch opened before the reloads still streams
            assert stream.readline().startswith(b"{")
    finally:
        watch.close()
        lb_active(conn, lb)
        conn.load_balancer.update_member(first["id"], pool_id, admin_state_up=True)
    wait_for(lambda: statuses(conn, lb)[first["name"]] == "ONLINE", what="ONLINE again")


def test_control_plane_servers_serve_through_the_vip_until_deleted(cloud):
    cloud.create_capi_cluster("dataplane-cp", control_plane=1, openstack=True, monitor=True)
    registry = Registry(cloud.state_dir)
    try:
        wait_for(lambda: any(e["serving"] and e["owner"].startswith("default/dataplane-cp-")
                             for e in registry.snapshot()["members"].values()), what="the server's endpoint")
        lb = "k8s-clusterapi-cluster-default-dataplane-cp-kubeapi"
        cloud.load_start("dataplane-cp", lb, rate=10, clients=2, watches=1)
        wait_for(lambda: cloud.load_report("dataplane-cp")["requests"] >= 20, what="20 requests")
        cloud.load_stop("dataplane-cp")
        report = cloud.load_report("dataplane-cp")
        assert report["failed"] == 0 and report["p99_ms"] is not None, report
    finally:
        cloud.load_stop("dataplane-cp")
        cloud.delete_capi_openstack("dataplane-cp")
        cloud.delete_capi_cluster("dataplane-cp")
    owners = [e for e in registry.snapshot()["members"].values() if e["owner"].startswith("default/dataplane-cp-")]
    wait_for(lambda: not any(e["serving"] for e in registry.snapshot()["members"].values()
                             if e["owner"].startswith("default/dataplane-cp-")), what="the endpoint stopped")
    assert owners
