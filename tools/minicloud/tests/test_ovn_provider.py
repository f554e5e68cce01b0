"""The ``ovn`` provider's pure parts: its refusals, its statuses, how its data plane forwards, and CAPO's API load
balancer (its monitor, its provider)."""

from __future__ import annotations

import pytest

from minicloud.dataplane.model import Listener, LoadBalancer, Member, Monitor, Pool
from minicloud.dataplane.render import Addresses, Paths, render
from minicloud.kube.controllers import capo
from minicloud.octavia_provider import ovn
from minicloud.octavia_provider.planner import (CREATE, DELETE, UPDATE, Event, plan, pool_health, StatusUpdate,
                                                roll_up_health)
from minicloud.octavia_provider.modes import Mode
from minicloud.octavia_provider.tree import HEALTHMONITOR, LISTENER, LOADBALANCER, MEMBER, POOL, LbTree, Node


def tree(provider="ovn", monitor=False, member_status="PENDING_CREATE", member_operating="OFFLINE", admin=True,
         others=()):
    nodes = [Node(LOADBALANCER, "lb", "PENDING_UPDATE", "ONLINE", provider=provider),
             Node(LISTENER, "l", "PENDING_UPDATE", "ONLINE", parent_id="lb", default_pool_id="p"),
             Node(POOL, "p", "PENDING_UPDATE", "ONLINE", parent_id="lb"),
             Node(MEMBER, "m", member_status, member_operating, admin_state_up=admin, parent_id="p",
                  address="10.6.0.5")]
    nodes += [Node(MEMBER, name, "ACTIVE", status, parent_id="p", address="10.6.0.9") for name, status in others]
    if monitor:
        nodes.append(Node(HEALTHMONITOR, "hm", "ACTIVE", "ONLINE", parent_id="p", delay=10))
    return LbTree(nodes)


def members_of(update):
    return {m["id"]: m for m in update.get("members", [])}


# -- statuses -----------------------------------------------------------------------------


def test_an_ovn_member_is_active_at_once_in_one_update_with_its_parents():
    steps = ovn.plan(tree(), Event(MEMBER, "m", CREATE))
    assert [s.delay for s in steps] == [0.0] and not steps[0].settle
    update = steps[0].update
    assert members_of(update)["m"] == {"id": "m", "provisioning_status": "ACTIVE", "operating_status": "NO_MONITOR"}
    assert {k: [r["provisioning_status"] for r in update[k]] for k in ("loadbalancers", "listeners", "pools")} == {
        "loadbalancers": ["ACTIVE"], "listeners": ["ACTIVE"], "pools": ["ACTIVE"]}


def test_the_amphora_emulator_keeps_its_pending_window():
    steps = plan(tree(provider="amphora"), Event(MEMBER, "m", CREATE), Mode())
    assert len(steps) == 2 and all(s.delay > 0 for s in steps)


@pytest.mark.parametrize("monitor, admin, status, operating, wanted", [
    (False, True, "PENDING_CREATE", "OFFLINE", "NO_MONITOR"),
    (False, False, "PENDING_CREATE", "OFFLINE", "OFFLINE"),
    (True, True, "PENDING_CREATE", "OFFLINE", "ONLINE"),  # member_create: ONLINE until OVN's checks say otherwise
    (True, False, "PENDING_UPDATE", "ONLINE", "OFFLINE"),  # admin-down
    (True, True, "PENDING_UPDATE", "ERROR", "ERROR"),  # member_update keeps ERROR
    (True, True, "PENDING_UPDATE", "OFFLINE", "ONLINE"),  # back from admin-down
])
def test_ovn_member_statuses(monitor, admin, status, operating, wanted):
    action = CREATE if status == "PENDING_CREATE" else UPDATE
    update = ovn.plan(tree(monitor=monitor, admin=admin, member_status=status, member_operating=operating),
                      Event(MEMBER, "m", action))[0].update
    assert members_of(update)["m"]["operating_status"] == wanted


def test_ovn_rolls_up_an_all_error_pool_to_error_and_the_load_balancer_too():
    t = tree(monitor=True, member_status="ACTIVE", member_operating="ONLINE")
    update = StatusUpdate()
    roll_up_health(t, {"m": "ERROR"}, update)
    result = update.to_dict()
    assert result["pools"][0]["operating_status"] == "ERROR"
    assert result["loadbalancers"][0]["operating_status"] == "ERROR"  # amphora's health manager says DEGRADED
    assert pool_health(["ERROR"]) == "ERROR"


def test_deleting_the_monitor_puts_members_back_to_no_monitor_or_offline():
    t = LbTree([Node(LOADBALANCER, "lb", "PENDING_UPDATE", "ONLINE", provider="ovn"),
                Node(POOL, "p", "PENDING_UPDATE", "ONLINE", parent_id="lb"),
                Node(MEMBER, "up", "ACTIVE", "ERROR", parent_id="p"),
                Node(MEMBER, "down", "ACTIVE", "OFFLINE", admin_state_up=False, parent_id="p"),
                Node(HEALTHMONITOR, "hm", "PENDING_DELETE", "ONLINE", parent_id="p")])
    update = ovn.plan(t, Event(HEALTHMONITOR, "hm", DELETE))[0].update
    assert {m: r["operating_status"] for m, r in members_of(update).items()} == {"up": "NO_MONITOR",
                                                                                "down": "OFFLINE"}
    assert update["healthmonitors"] == [{"id": "hm", "provisioning_status": "DELETED"}]


# -- refusals -----------------------------------------------------------------------------


@pytest.mark.parametrize("check, args, message", [
    (ovn.check_algorithm, ("ROUND_ROBIN",), "OVN provider does not support ROUND_ROBIN algorithm"),
    (ovn.check_protocol, ("HTTP",), "OVN provider does not support HTTP protocol"),
    (ovn.check_health_monitor_type, ("HTTP",),
     "OVN provider does not support HTTP health monitor type. Supported types: UDP-CONNECT, TCP"),
    (ovn.check_member_monitor, ("10.0.0.1", None),
     "OVN Load Balancer does not support different member monitor address or port."),
    (ovn.check_ip_version, ("fd00::5", "10.6.0.3"),
     "OVN provider does not support mixing IPv4/IPv6 configuration within the same Load Balancer."),
    (ovn.member_subnet, ("10.9.0.5", None, ("vip-subnet", "10.6.0.0/24")),
     "Subnet is required, or Loadbalancer associated with Pool must have a subnet, for Member creation with OVN "
     "Provider Driver if it is not the same as LB VIP subnet"),
])
def test_ovn_refuses_with_its_own_words(check, args, message):
    with pytest.raises(ovn.Refused) as caught:
        check(*args)
    assert str(caught.value) == message


def test_a_member_without_subnet_takes_the_vip_subnet_when_its_address_is_in_it():
    assert ovn.member_subnet("10.6.0.5", None, ("vip-subnet", "10.6.0.0/24")) == "vip-subnet"
    assert ovn.member_subnet("10.9.0.5", "own", ("vip-subnet", "10.6.0.0/24")) == "own"
    for fine in (lambda: ovn.check_algorithm("SOURCE_IP_PORT"), lambda: ovn.check_protocol("SCTP"),
                 lambda: ovn.check_health_monitor_type("TCP")):
        fine()


# -- data plane ---------------------------------------------------------------------------


def rendered(provider):
    members = (Member("heavy", "10.6.0.5", 6443, weight=5), Member("drained", "10.6.0.6", 6443, weight=0),
               Member("down", "10.6.0.7", 6443, weight=1, enabled=False),
               Member("spare", "10.6.0.8", 6443, weight=1, backup=True))
    pool = Pool("p", "TCP", "SOURCE_IP_PORT", members=members, monitor=Monitor("hm", "TCP", 10, 5, 5, 3))
    lb = LoadBalancer("lb", "10.6.0.3", "ACTIVE", listeners=(Listener("l", "TCP", 6443, default_pool_id="p"),),
                      pools=(pool,), provider=provider)
    text = render(lb, Paths("stats.sock", "state"), Addresses(lambda l: "127.0.0.1:1",
                                                              lambda p, m: f"127.0.0.1:{m.address[-1]}"))
    return {line.split()[1]: line for line in text.splitlines() if line.strip().startswith("server ")}, text


def test_ovn_forwards_without_weight_and_leaves_an_admin_down_member_out():
    servers, text = rendered("ovn")
    assert all(" weight 1 " in line or line.split(" weight ")[1].startswith("1") for line in servers.values())
    assert "weight 0" not in servers["drained"] and "weight 5" not in servers["heavy"]
    assert servers["down"].endswith("disabled")
    assert "backup" not in servers["spare"]
    assert "balance hash src_port" in text


def test_amphora_still_forwards_by_weight():
    servers, text = rendered("amphora")
    assert "weight 0" in servers["drained"] and "weight 5" in servers["heavy"]
    assert servers["down"].endswith("disabled") and "backup" in servers["spare"]


# -- CAPO's API load balancer -------------------------------------------------------------

RESOURCES = {"network": {"subnets": [{"id": "subnet"}]}, "servers": {"cp-1": {"address": "10.6.0.5"}}}


def test_capo_makes_the_api_pool_monitor_as_capo_does():
    body = capo.load_balancer_body("ns", "c", RESOURCES, ["cp-1"], monitor=True)
    pool = body["listeners"][0]["default_pool"]
    assert pool["healthmonitor"] == {"name": "k8s-clusterapi-cluster-ns-c-kubeapi-6443", "type": "TCP", "delay": 10,
                                     "timeout": 5, "max_retries": 5, "max_retries_down": 3}
    assert pool["lb_algorithm"] == "ROUND_ROBIN" and "provider" not in body
    assert pool["members"][0]["subnet_id"] == "subnet"
    assert "healthmonitor" not in capo.load_balancer_body("ns", "c", RESOURCES, ["cp-1"])["listeners"][0][
        "default_pool"]


def test_capo_on_ovn_names_the_provider_and_picks_source_ip_port():
    body = capo.load_balancer_body("ns", "c", RESOURCES, ["cp-1"], monitor=True, provider="ovn")
    pool = body["listeners"][0]["default_pool"]
    assert body["provider"] == "ovn" and pool["lb_algorithm"] == "SOURCE_IP_PORT"
    assert "subnet_id" not in pool["members"][0]  # CAPO leaves it out on the cluster's network
    with pytest.raises(Exception, match="unknown load balancer provider 'octavia'"):
        capo.load_balancer_body("ns", "c", RESOURCES, [], provider="octavia")
