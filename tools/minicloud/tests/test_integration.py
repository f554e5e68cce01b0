"""Brings one minicloud up (real Keystone, Neutron, Octavia, nova-api) and exercises it as the demo user."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import threading
import time

import pytest

REQUIRED = ("keystone", "neutron", "nova", "octavia", "octavia_lib", "openstack")
if any(importlib.util.find_spec(name) is None for name in REQUIRED):
    pytest.skip("the OpenStack packages are not installed", allow_module_level=True)

from keystoneauth1 import exceptions as ks_exceptions  # noqa: E402
from openstack import exceptions as sdk_exceptions  # noqa: E402

from minicloud.seeding.openstack import wait_until  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.restarts_cloud]


def wait_for(check, timeout=20.0, interval=0.2, what="condition"):
    return wait_until(what, check, timeout, interval)


@pytest.fixture(scope="module")
def conn(cloud):
    return cloud.connect()


@pytest.fixture
def normal_mode(cloud):
    cloud.set_octavia_mode("normal")
    yield
    cloud.set_octavia_mode("normal")


@pytest.fixture(scope="module")
def plain_lb(cloud):
    """A load balancer with a pool and no health monitor."""
    return cloud.create_lb("plain", members=1)


@pytest.fixture(scope="module")
def monitored_lb(cloud):
    return cloud.create_lb("monitored", members=2, monitor=True, cidr="10.0.1.0/24")


def lb_status(conn, lb_id):
    return conn.load_balancer.get_load_balancer(lb_id).provisioning_status


def wait_lb_active(conn, lb, timeout=20.0):
    wait_for(lambda: lb_status(conn, lb["loadbalancer"]["id"]) == "ACTIVE", timeout=timeout, what="LB ACTIVE")


def create_member(conn, lb, name, address):
    """Create a member once the load balancer is ACTIVE again."""
    wait_lb_active(conn, lb)
    return conn.load_balancer.create_member(
        lb["pool"]["id"], name=name, address=address, protocol_port=6443, subnet_id=lb["subnet"]["id"]
    )


def member(conn, lb, member_id):
    return conn.load_balancer.get_member(member_id, lb["pool"]["id"])


def test_up_is_idempotent(cloud):
    status, summary = cloud.up()
    assert "already up" in summary
    assert status.healthy


def test_demo_user_is_not_admin(cloud, conn):
    roles = set(conn.session.auth.get_access(conn.session).role_names)
    assert {"member", "load-balancer_member"} <= roles
    assert "admin" not in roles


def test_seeded_lb_is_active(conn, plain_lb):
    assert lb_status(conn, plain_lb["loadbalancer"]["id"]) == "ACTIVE"
    m = member(conn, plain_lb, plain_lb["members"][0]["id"])
    assert (m.provisioning_status, m.operating_status) == ("ACTIVE", "NO_MONITOR")
    assert m.address == "10.0.0.10"


def test_vip_is_a_real_neutron_port(conn, plain_lb):
    lb = conn.load_balancer.get_load_balancer(plain_lb["loadbalancer"]["id"])
    port = conn.network.get_port(lb.vip_port_id)
    assert port.fixed_ips[0]["ip_address"] == lb.vip_address
    assert port.fixed_ips[0]["subnet_id"] == plain_lb["subnet"]["id"]


def test_member_create_goes_active(conn, plain_lb, normal_mode):
    m = create_member(conn, plain_lb, "plain-extra", "10.0.0.50")
    assert m.provisioning_status == "PENDING_CREATE"
    assert lb_status(conn, plain_lb["loadbalancer"]["id"]) == "PENDING_UPDATE"
    wait_lb_active(conn, plain_lb)
    assert member(conn, plain_lb, m.id).provisioning_status == "ACTIVE"


def test_mutating_while_pending_is_409(cloud, conn, plain_lb, normal_mode):
    cloud.set_octavia_mode("slow", delay=2)
    first = create_member(conn, plain_lb, "plain-busy-1", "10.0.0.60")
    with pytest.raises(sdk_exceptions.ConflictException, match="immutable"):
        conn.load_balancer.create_member(plain_lb["pool"]["id"], name="plain-busy-2", address="10.0.0.61",
                                         protocol_port=6443)
    wait_for(lambda: member(conn, plain_lb, first.id).provisioning_status == "ACTIVE", timeout=15)
    wait_lb_active(conn, plain_lb)


def test_lost_member_stays_pending_while_lb_goes_active(cloud, conn, plain_lb, normal_mode):
    cloud.set_octavia_mode("lost-member", members="*-lost")
    m = create_member(conn, plain_lb, "plain-lost", "10.0.0.70")
    wait_lb_active(conn, plain_lb)
    time.sleep(1.5)
    assert member(conn, plain_lb, m.id).provisioning_status == "PENDING_CREATE"
    pool = conn.load_balancer.get_pool(plain_lb["pool"]["id"])
    assert pool.provisioning_status == "ACTIVE"
    # Back to normal: the emulator recovers the members it lost.
    cloud.set_octavia_mode("normal")
    wait_for(lambda: member(conn, plain_lb, m.id).provisioning_status == "ACTIVE", what="recovered member")


def test_member_error(cloud, conn, plain_lb, normal_mode):
    cloud.set_octavia_mode("member-error", members="10.0.0.80")
    m = create_member(conn, plain_lb, "plain-broken", "10.0.0.80")
    wait_for(lambda: member(conn, plain_lb, m.id).provisioning_status == "ERROR", what="member ERROR")
    wait_lb_active(conn, plain_lb)


def test_member_delete_goes_away(conn, plain_lb, normal_mode):
    m = create_member(conn, plain_lb, "plain-doomed", "10.0.0.90")
    wait_lb_active(conn, plain_lb)
    assert member(conn, plain_lb, m.id).provisioning_status == "ACTIVE"
    conn.load_balancer.delete_member(m.id, plain_lb["pool"]["id"])
    wait_for(lambda: conn.load_balancer.find_member(m.id, plain_lb["pool"]["id"], ignore_missing=True) is None,
             what="member gone")
    wait_lb_active(conn, plain_lb)


def test_monitored_members_come_online(conn, monitored_lb):
    for spec in monitored_lb["members"]:
        wait_for(lambda member_id=spec["id"]: member(conn, monitored_lb, member_id).operating_status == "ONLINE",
                 what="ONLINE")


def test_backend_down_and_back(cloud, conn, monitored_lb, normal_mode):
    first, second = monitored_lb["members"]
    for spec in (first, second):
        wait_for(lambda member_id=spec["id"]: member(conn, monitored_lb, member_id).operating_status == "ONLINE")
    cloud.set_octavia_mode("backend-down", members=first["name"])
    assert member(conn, monitored_lb, first["id"]).operating_status == "ERROR"
    assert member(conn, monitored_lb, second["id"]).operating_status == "ONLINE"
    cloud.set_octavia_mode("normal")
    assert member(conn, monitored_lb, first["id"]).operating_status == "ONLINE"


def test_batch_member_update_of_many_members(cloud):
    lb = cloud.create_lb("batch", members=150, cidr="10.2.0.0/24")
    assert len(lb["members"]) == 150
    cloud.delete_lb("batch")


def test_lb_delete_waits_until_octavia_takes_it(cloud, conn, normal_mode):
    lb = cloud.create_lb("busy-at-delete", members=1, cidr="10.4.0.0/24")
    cloud.set_octavia_mode("slow", delay=2)
    create_member(conn, lb, "busy-at-delete-2", "10.4.0.20")
    assert lb_status(conn, lb["loadbalancer"]["id"]) == "PENDING_UPDATE"  # a delete now is answered 409
    cloud.delete_lb("busy-at-delete")
    assert conn.load_balancer.find_load_balancer(lb["loadbalancer"]["id"], ignore_missing=True) is None


def test_lb_delete_cascade(cloud, conn):
    lb = cloud.create_lb("short-lived", members=1, monitor=True, cidr="10.3.0.0/24")
    vip_port = conn.load_balancer.get_load_balancer(lb["loadbalancer"]["id"]).vip_port_id
    cloud.delete_lb("short-lived")
    assert conn.load_balancer.find_load_balancer(lb["loadbalancer"]["id"], ignore_missing=True) is None
    assert conn.network.find_port(vip_port, ignore_missing=True) is None


def test_fault_429_with_retry_after_then_spent(cloud, conn):
    rule = cloud.add_fault("load-balancer", method="GET", path="/v2*/lbaas/loadbalancers", status=429,
                           retry_after=3, count=1)
    try:
        first = conn.load_balancer.get("/lbaas/loadbalancers", raise_exc=False)
        assert first.status_code == 429
        assert first.headers["Retry-After"] == "3"
        assert set(first.json()) == {"faultcode", "faultstring", "debuginfo"}
        second = conn.load_balancer.get("/lbaas/loadbalancers", raise_exc=False)
        assert second.status_code == 200
        listed = {r["id"]: r for r in cloud.faults()}
        assert listed[rule["id"]]["spent"] and listed[rule["id"]]["fired"] == 1
    finally:
        cloud.clear_faults()


def test_fault_shapes_neutron_and_keystone_errors(cloud, conn):
    cloud.add_fault("network", path="/v2.0/networks", status=503)
    try:
        body = conn.network.get("/networks", raise_exc=False).json()
        assert set(body["NeutronError"]) == {"type", "message", "detail"}
    finally:
        cloud.clear_faults()


def test_fault_drop_closes_the_connection(cloud, conn):
    cloud.add_fault("network", method="GET", path="/v2.0/ports", status="drop", count=1)
    try:
        with pytest.raises(ks_exceptions.ConnectionError):
            conn.network.get("/ports", raise_exc=False)
    finally:
        cloud.clear_faults()


def test_fault_delay_does_not_hold_up_other_requests(cloud, conn, plain_lb):
    # An order, not a stopwatch: while the delayed request sleeps in the service, another request is answered.
    # The delay is long enough that a busy machine does not make the other request lose the race.
    delay = 10
    rule = cloud.add_fault("load-balancer", method="GET", path="/v2*/lbaas/loadbalancers", delay=delay, count=1)
    other = cloud.connect()
    other.load_balancer.get("/lbaas/pools")  # authenticate before timing
    elapsed = {}

    def slow_call():
        started = time.monotonic()
        other.load_balancer.get("/lbaas/loadbalancers")
        elapsed["slow"] = time.monotonic() - started

    try:
        thread = threading.Thread(target=slow_call)
        thread.start()
        # the slow request is in its delay once the rule fired
        wait_until("the delayed request to reach the service", lambda: cloud.traffic.rule(rule["id"]).fired >= 1, 30, 0.02)
        conn.load_balancer.get_pool(plain_lb["pool"]["id"])
        answered_during_the_delay = thread.is_alive()
        thread.join()
    finally:
        cloud.clear_faults()
    assert elapsed["slow"] >= delay
    assert answered_during_the_delay


def test_gate_holds_a_real_request_until_released(cloud, conn):
    gate = cloud.add_fault("network", method="GET", path="/v2.0/networks", gate=True, count=1)
    other = cloud.connect()
    result = {}

    def held_call():
        result["status"] = other.network.get("/networks", raise_exc=False).status_code

    thread = threading.Thread(target=held_call)
    thread.start()
    try:
        cloud.wait_held(gate["id"], 1, timeout=30)
        assert conn.network.get("/ports", raise_exc=False).status_code == 200  # Neutron goes on meanwhile
        thread.join(0.5)
        assert thread.is_alive() and "status" not in result
        assert cloud.release_fault(gate["id"])["held"] == 1
        thread.join(30)
        assert result["status"] == 200
    finally:
        cloud.clear_faults()
        thread.join(30)


def test_request_counts_increase(cloud, conn):
    cloud.request_counts(service="network", reset=True)
    list(conn.network.networks())
    list(conn.network.networks())
    counts = cloud.request_counts(service="network")
    assert counts["requests"]["network"]["GET"]["/v2.0/networks"] == 2
    assert counts["totals"]["by_service"]["network"] >= 2


def test_cli_status_and_mode(cloud):
    def run(*args):
        return subprocess.run([sys.executable, "-m", "minicloud", "--state-dir", str(cloud.state_dir), *args],
                              capture_output=True, text=True, timeout=60)

    status = run("status")
    assert status.returncode == 0, status.stdout + status.stderr
    assert "octavia-driver-agent" in status.stdout
    mode = run("octavia")
    assert json.loads(mode.stdout)["name"] == "normal"
    assert run("env").stdout.strip() == f"export OS_CLIENT_CONFIG_FILE={cloud.clouds_yaml}"


@pytest.fixture(scope="module")
def two_port_server(cloud):
    return cloud.create_servers(["web-1"], "servers", ports=2)[0]


def port_groups(conn, server_id):
    return {p.id: set(p.security_group_ids) for p in conn.network.ports(device_id=server_id)}


def test_seeded_server_is_listed_by_nova_with_real_ports(conn, two_port_server):
    server = conn.compute.find_server("web-1")
    assert server.id == two_port_server["id"] and server.status == "ACTIVE"
    assert [s.name for s in conn.compute.servers(name="^web-1$")] == ["web-1"]
    ports = list(conn.network.ports(device_id=server.id))
    assert sorted(p.id for p in ports) == sorted(p["id"] for p in two_port_server["ports"])
    assert {p.device_owner for p in ports} == {"compute:nova"}
    # Nova's own view of the server's addresses comes from the seeded network info.
    addresses = {a["addr"] for a in server.addresses["servers"]}
    assert addresses == {p["ip_address"] for p in two_port_server["ports"]}


def test_nova_takes_seed_data_while_serving_uncounted_and_says_why_it_refuses(cloud, conn):
    """minicloud writes booted instances through the running nova-api (no process of its own):
    the writes are there for Nova's API at once, never counted as client traffic, and a payload
    Nova's objects refuse comes back as an error with Nova's traceback."""
    from minicloud.runtime import processes

    cloud.request_counts(reset=True)
    (server,) = cloud.create_servers(["seeded-live-1"], "servers")
    assert "compute" not in cloud.request_counts(service="compute")["requests"]
    assert conn.compute.get_server(server["id"]).status == "ACTIVE"
    with pytest.raises(RuntimeError, match=r"seeding nova failed \(HTTP 500\)(.|\n)*KeyError: 'ports'"):
        processes.run_seed(cloud.state, "nova", {"project_id": "p", "user_id": "u", "servers": [{"uuid": "x"}]})
    cloud.delete_server("seeded-live-1")


def test_nova_security_group_actions_update_every_port(conn, two_port_server):
    server_id = two_port_server["id"]
    group = conn.network.create_security_group(name="nova-actions")
    conn.compute.add_security_group_to_server(server_id, group)
    assert all(group.id in groups for groups in port_groups(conn, server_id).values())
    # A port that loses the group behind Nova's back: Nova's merged view still shows it.
    first = two_port_server["ports"][0]["id"]
    left = port_groups(conn, server_id)[first] - {group.id}
    conn.network.update_port(first, security_groups=sorted(left))
    assert "nova-actions" in {g["name"] for g in conn.compute.get_server(server_id).security_groups}
    conn.compute.remove_security_group_from_server(server_id, group)
    assert not any(group.id in groups for groups in port_groups(conn, server_id).values())
    conn.network.delete_security_group(group.id)


def test_port_update_honours_if_match(conn, two_port_server):
    """Neutron's revisions plugin is loaded: an update with a stale If-Match revision gets 412, with the
    current one 200. (Neutron checks If-Match only when the update really changes the port.)"""
    port = conn.network.get_port(two_port_server["ports"][1]["id"])
    body = {"port": {"security_groups": []}}
    stale = conn.network.put(f"/ports/{port.id}", json=body, raise_exc=False,
                             headers={"If-Match": f"revision_number={port.revision_number - 1}"})
    assert stale.status_code == 412
    assert conn.network.get_port(port.id).security_group_ids == port.security_group_ids
    current = conn.network.put(f"/ports/{port.id}", json=body, raise_exc=False,
                               headers={"If-Match": f"revision_number={port.revision_number}"})
    assert current.status_code == 200
    conn.network.update_port(port.id, security_groups=port.security_group_ids)


def test_port_without_port_security_refuses_groups(cloud, conn):
    server = cloud.create_servers(["bare-1"], "servers", port_security=False)[0]
    (port,) = list(conn.network.ports(device_id=server["id"]))
    assert port.is_port_security_enabled is False and port.security_group_ids == []
    group = conn.network.create_security_group(name="bare-test")
    with pytest.raises(sdk_exceptions.BadRequestException, match="port_security_enabled"):
        conn.compute.add_security_group_to_server(server["id"], group)
    cloud.delete_server("bare-1")
    assert conn.compute.find_server("bare-1", ignore_missing=True) is None
    assert list(conn.network.ports(device_id=server["id"])) == []


def test_compute_faults_and_counts(cloud, conn, two_port_server):
    cloud.request_counts(service="compute", reset=True)
    cloud.add_fault("compute", method="GET", path="/v2.1/servers/detail", status=503, count=1)
    try:
        assert conn.compute.get("/servers/detail", raise_exc=False).status_code == 503
        assert conn.compute.get("/servers/detail", raise_exc=False).status_code == 200
    finally:
        cloud.clear_faults()
    assert cloud.request_counts(service="compute")["requests"]["compute"]["GET"]["/v2.1/servers/detail"] == 2


def test_cli_server_verbs(cloud, conn):
    def run(*args):
        return subprocess.run([sys.executable, "-m", "minicloud", "--state-dir", str(cloud.state_dir), *args],
                              capture_output=True, text=True, timeout=120)

    created = run("server", "create", "cli", "--network", "servers", "--count", "2")
    assert created.returncode == 0, created.stderr
    assert [s["name"] for s in json.loads(created.stdout)] == ["cli-1", "cli-2"]
    again = run("server", "create", "cli-1", "--network", "servers")
    assert again.returncode == 1 and "exist already" in again.stderr
    listed = {s["name"]: s for s in json.loads(run("server", "list").stdout)}
    assert len(listed["cli-2"]["ports"]) == 1 and listed["cli-2"]["ports"][0]["port_security_enabled"]
    assert run("server", "delete", "cli-1").returncode == 0
    assert run("server", "delete", "cli-2").returncode == 0
    assert not {"cli-1", "cli-2"} & {s["name"] for s in json.loads(run("server", "list").stdout)}
    missing = run("server", "delete", "cli-1")
    assert missing.returncode == 1 and "no server named 'cli-1'" in missing.stderr


def test_seeded_server_is_deleted_through_nova(cloud, conn):
    """No compute service runs below nova-api, so Nova deletes the server locally (as for a host that is
    down): 204, the server is gone from the listings and the ports Nova owns are deleted."""
    doomed, kept = cloud.create_servers(["doomed-1", "kept-1"], "servers")
    conn.compute.delete_server(doomed["id"])
    assert conn.compute.find_server(doomed["id"], ignore_missing=True) is None
    names = {s.name for s in conn.compute.servers()}
    assert "doomed-1" not in names and "kept-1" in names
    assert list(conn.network.ports(device_id=doomed["id"])) == []
    assert [p.id for p in conn.network.ports(device_id=kept["id"])] == [kept["ports"][0]["id"]]
    cloud.delete_server("kept-1")


def test_restart_finishes_what_was_in_flight(cloud, conn, plain_lb, normal_mode):
    """down + up (warm) while a member is being created: the emulator resumes it."""
    cloud.set_octavia_mode("slow", delay=30)
    m = create_member(conn, plain_lb, "plain-restart", "10.0.0.99")
    cloud.down()
    cloud.set_octavia_mode("normal")
    status, summary = cloud.up()
    assert status.healthy and "warm start" in summary
    conn = cloud.connect()
    wait_lb_active(conn, plain_lb)
    assert member(conn, plain_lb, m.id).provisioning_status == "ACTIVE"
