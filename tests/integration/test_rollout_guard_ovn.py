# -*- coding: utf-8 -*-
"""rollout_guard's drain on a load balancer of the ``ovn`` provider (mode=direct, no Cluster API): the old member
goes admin_state_up false (ovn-octavia-provider never reads a weight) before its deletion, and a run that stops
before releasing it puts admin_state_up back. Gated on the module's own requests, never on time."""

import time
import uuid

import pytest

from minicloud.seeding.openstack import ensure_subnet, wait_until
from races import with_concurrent_change

MODULE = "flightcontrol.openstack.rollout_guard"
CIDR = "10.0.0.0/24"
OLD = ("10.0.0.101", "10.0.0.102", "10.0.0.103")
NEW = "10.0.0.104"


def active(conn, lb_id, timeout=60):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        lb = conn.load_balancer.get_load_balancer(lb_id)
        if lb.provisioning_status == "ACTIVE":
            return lb
        time.sleep(0.2)
    raise AssertionError("load balancer %s did not become ACTIVE" % lb_id)


@pytest.fixture
def ovn_pool(cloud):
    """An ``ovn`` load balancer (TCP 6443, SOURCE_IP_PORT, no monitor) with three old members and one new one, all
    serving; deleted afterwards."""
    conn = cloud.sdk()
    api = conn.load_balancer
    name = "rg-ovn-%s" % uuid.uuid4().hex[:6]
    subnet = ensure_subnet(conn, CIDR)
    lb = api.create_load_balancer(name=name, vip_subnet_id=subnet.id, provider="ovn")
    try:
        active(conn, lb.id)
        listener = api.create_listener(name=name + "-l", load_balancer_id=lb.id, protocol="TCP", protocol_port=6443)
        active(conn, lb.id)
        pool = api.create_pool(name=name + "-pool", listener_id=listener.id, protocol="TCP",
                               lb_algorithm="SOURCE_IP_PORT")
        members = {}
        for index, address in enumerate(OLD + (NEW,)):
            active(conn, lb.id)
            label = "%s-%s" % (name, "new" if address == NEW else "old-%d" % index)
            members[label] = api.create_member(pool.id, name=label, address=address, protocol_port=6443,
                                               subnet_id=subnet.id).id
        assert active(conn, lb.id).provider == "ovn"
        yield dict(conn=conn, lb=lb, pool=pool, members=members, old=name + "-old-0", new=name + "-new")
    finally:
        api.delete_load_balancer(lb.id, cascade=True)


def args(ovn_pool, **extra):
    values = {"cloud": "minicloud", "mode": "direct", "pool": ovn_pool["pool"].name,
              "replace": [{"old": ovn_pool["old"], "new": ovn_pool["new"]}], "drain": True, "drain_timeout": 5,
              "timeout": 60, "poll_interval": 0.5, "member_timeout": 30}
    values.update(extra)
    return values


def member(ovn_pool, name):
    found = ovn_pool["conn"].load_balancer.get_member(ovn_pool["members"][name], ovn_pool["pool"].id)
    return found.is_admin_state_up, found.operating_status


def test_ovn_drain_takes_the_old_member_admin_down_before_its_deletion(cloud, ovn_pool, run_module):
    """The deletion of the old member is held by the cloud; while it is held, the member is admin-down and OFFLINE
    (out of the VIP's backends), and its weight was never touched."""
    pool_id, old_id = ovn_pool["pool"].id, ovn_pool["members"][ovn_pool["old"]]
    run, seen = with_concurrent_change(
        cloud, "load-balancer", "DELETE", "/v2/lbaas/pools/%s/members/%s" % (pool_id, old_id),
        lambda: run_module(MODULE, args(ovn_pool)), lambda: member(ovn_pool, ovn_pool["old"]))
    assert seen == (False, "OFFLINE"), seen
    result = run.result
    assert result["failed"] is False, run.output
    assert result["provider"] == "ovn" and result["released"] == [ovn_pool["old"]]
    [row] = result["drained"]
    assert (row["member"], row["method"], row["value_before"]) == (ovn_pool["old"], "admin_state", True), row
    assert row["weight_before"] is None and row["released_at"] is not None and row["restored"] is False
    assert [a["action"] for a in result["actions"]][:2] == ["drain (admin_state_up false)", "delete_member"]
    left = dict((m.name, (m.is_admin_state_up, m.weight)) for m in ovn_pool["conn"].load_balancer.members(pool_id))
    assert ovn_pool["old"] not in left and all(state == (True, 1) for state in left.values()), left


def test_a_run_that_stops_puts_the_drained_ovn_member_admin_up_again(cloud, ovn_pool, run_module):
    """The drain's write is held; meanwhile the new member stops serving (admin-down, OFFLINE). The run waits for it,
    stops at member_timeout without deleting anything, and puts admin_state_up back on the old member it drained
    (min_healthy_members 2: the two other old members carry the floor, so no floor restore comes first)."""
    conn, pool_id = ovn_pool["conn"], ovn_pool["pool"].id
    old_id, new_id = ovn_pool["members"][ovn_pool["old"]], ovn_pool["members"][ovn_pool["new"]]

    def new_member_stops_serving():
        conn.load_balancer.update_member(new_id, pool_id, admin_state_up=False)
        active(conn, ovn_pool["lb"].id)
        return member(ovn_pool, ovn_pool["new"])

    run, new_state = with_concurrent_change(
        cloud, "load-balancer", "PUT", "/v2/lbaas/pools/%s/members/%s" % (pool_id, old_id),
        lambda: run_module(MODULE, args(ovn_pool, member_timeout=2, min_healthy_members=2)), new_member_stops_serving)
    assert new_state == (False, "OFFLINE"), new_state
    result = run.result
    assert result["failed"] is True, run.output
    assert "%s not ACTIVE and healthy after" % ovn_pool["new"] in result["msg"], result["msg"]
    assert result["released"] == [] and result["stuck"]["member"] == ovn_pool["new"]
    [row] = result["drained"]
    assert (row["method"], row["value_before"], row["restored"], row["released_at"]) == (
        "admin_state", True, True, None), row
    assert [a["action"] for a in result["actions"]] == ["drain (admin_state_up false)", "restore admin state"]
    # admin_state_up is back at once; the operating status follows when the provider has applied the update and
    # the load balancer's checks show the member again (eventually consistent, as in Octavia)
    assert member(ovn_pool, ovn_pool["old"])[0] is True
    wait_until("the restored member to be NO_MONITOR", lambda: member(ovn_pool, ovn_pool["old"]) == (True, "NO_MONITOR"), 30)
    assert member(ovn_pool, ovn_pool["old"]) == (True, "NO_MONITOR")
    assert old_id in [m.id for m in conn.load_balancer.members(pool_id)]
