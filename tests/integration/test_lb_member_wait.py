# -*- coding: utf-8 -*-
"""lb_member_wait end to end: real ansible-playbook, real Octavia API, minicloud's provider emulator."""

import json
import uuid

import pytest
import yaml

from races import with_change_after_first_answer

MODULE = "flightcontrol.openstack.lb_member_wait"
# Seconds per status step of the slow provider. Tests that assert "the first poll saw it pending" need the
# status chain to outlast ansible-playbook's own start-up (several seconds on a busy 2-core machine).
SLOW_STEP = 5
STATUS_TREE = "/v2/lbaas/loadbalancers/*/status"  # what each poll reads


@pytest.fixture
def monitored_lb(cloud):
    name = "it-%s" % uuid.uuid4().hex[:6]
    created = cloud.json("lb", "create", name, "--members", 2, "--monitor")
    yield created
    cloud.cli("lb", "delete", name, check=False)


def test_a_new_member_becomes_active(cloud, lb, run_module):
    # The new member stays PENDING_CREATE (the emulator "loses" it) until the module's first poll has been
    # answered; then the emulator finishes it: a gate, not a provider slow enough to outlast ansible's start.
    cloud.octavia("lost-member", members="cp-new")
    cloud.add_member(lb, "cp-new", "10.0.0.201")
    run = with_change_after_first_answer(
        cloud, "load-balancer", "GET", STATUS_TREE,
        lambda: run_module(MODULE, {"cloud": "minicloud", "pool": lb["pool"]["name"], "members": ["cp-new"],
                                    "timeout": 60, "poll_interval": 0.5}, playbook=True),
        lambda: cloud.octavia("normal", delay=0.1))[0]
    assert run.rc == 0, run.output
    result = run.result
    assert result["failed"] is False and result["changed"] is False
    assert [m["name"] for m in result["members"]] == ["cp-new"]
    assert result["members"][0]["provisioning_status"] == "ACTIVE"
    assert result["members"][0]["ready"] is True
    assert result["loadbalancer"]["provisioning_status"] == "ACTIVE"
    assert result["polls"] >= 2, "the first poll saw the member pending: the module must have polled again"
    assert result["api_calls"] >= 2 * result["polls"]


def test_all_members_by_default_and_by_address(cloud, shared_lb, run_module):
    run = run_module(MODULE, {"cloud": "minicloud", "pool": shared_lb["pool"]["id"], "timeout": 30,
                              "poll_interval": 1})
    assert run.rc == 0, run.output
    assert len(run.result["members"]) == 3
    address = shared_lb["members"][1]["address"]
    run = run_module(MODULE, {"cloud": "minicloud", "pool": shared_lb["pool"]["name"],
                              "loadbalancer": shared_lb["loadbalancer"]["name"],
                              "members": ["%s:6443" % address], "timeout": 30, "poll_interval": 1})
    assert run.rc == 0, run.output
    assert [m["address"] for m in run.result["members"]] == [address]


def test_lost_member_fails_at_the_timeout_although_the_lb_is_active(cloud, lb, run_module):
    cloud.octavia("lost-member", members="cp-lost")
    cloud.add_member(lb, "cp-lost", "10.0.0.202")
    cloud.wait_lb_active(lb)
    conn = cloud.sdk()
    assert conn.load_balancer.get_load_balancer(lb["loadbalancer"]["id"]).provisioning_status == "ACTIVE"
    run = run_module(MODULE, {"cloud": "minicloud", "pool": lb["pool"]["name"], "members": ["cp-lost"],
                              "timeout": 6, "poll_interval": 1})
    result = run.result
    assert result["failed"] is True
    assert result["timed_out"] is True
    assert 6 <= result["elapsed"] < 6 + 1 + 4
    msg = result["msg"]
    assert "cp-lost 10.0.0.202:6443" in msg
    assert "PENDING_CREATE" in msg
    assert "although the load balancer is ACTIVE" in msg
    assert result["loadbalancer"]["provisioning_status"] == "ACTIVE"
    assert result["members"][0]["provisioning_status"] == "PENDING_CREATE"
    assert "Traceback" not in run.output


def test_a_poll_cut_by_the_deadline_is_a_timeout_on_the_last_completed_poll(cloud, lb, run_module):
    # the first two polls are answered (the member pending; the second is held until the fault is in place), then
    # the status tree answers 503 until the deadline: the wait timed out while a poll was in flight, and says what
    # the last completed poll saw
    cloud.octavia("lost-member", members="cp-cut")
    cloud.add_member(lb, "cp-cut", "10.0.0.204")
    cloud.wait_lb_active(lb)
    run = with_change_after_first_answer(
        cloud, "load-balancer", "GET", STATUS_TREE,
        lambda: run_module(MODULE, {"cloud": "minicloud", "pool": lb["pool"]["name"], "members": ["cp-cut"],
                                    "timeout": 8, "poll_interval": 1}),
        lambda: cloud.fault("load-balancer", STATUS_TREE, 503))[0]
    result = run.result
    assert result["failed"] is True and result["timed_out"] is True
    assert result["polls"] == 2
    assert result["members"][0]["provisioning_status"] == "PENDING_CREATE"
    msg = result["msg"]
    assert msg.startswith("Timed out after ") and "cp-cut 10.0.0.204:6443" in msg and "PENDING_CREATE" in msg
    assert "The poll in flight at the deadline did not finish: " in msg and "HTTP 503" in msg
    assert 503 in result["retried_faults"]


def test_member_error_fails_within_two_polls(cloud, lb, run_module):
    cloud.octavia("member-error", members="cp-broken", delay=1)
    cloud.add_member(lb, "cp-broken", "10.0.0.203")
    run = run_module(MODULE, {"cloud": "minicloud", "pool": lb["pool"]["name"], "members": ["cp-broken"],
                              "timeout": 120, "poll_interval": 2})
    result = run.result
    assert result["failed"] is True and result["timed_out"] is False
    assert "cp-broken 10.0.0.203:6443" in result["msg"] and "ERROR" in result["msg"]
    # the ERROR lands about 1 s after the create; the module must notice within two 2 s polls of it
    assert result["elapsed"] < 1 + 2 * 2 + 3, result["elapsed"]


def test_absent_returns_only_once_the_member_is_gone(cloud, lb, run_module):
    cloud.octavia("slow", delay=SLOW_STEP)
    victim = lb["members"][0]
    cloud.sdk().load_balancer.delete_member(victim["id"], lb["pool"]["id"])
    run = run_module(MODULE, {"cloud": "minicloud", "pool": lb["pool"]["name"], "members": [victim["name"]],
                              "state": "absent", "timeout": 60, "poll_interval": 0.5})
    assert run.rc == 0, run.output
    assert run.result["members"] == []
    assert run.result["polls"] >= 2, "the delete takes seconds; the first poll must have seen it still there"
    remaining = [m.name for m in cloud.sdk().load_balancer.members(lb["pool"]["id"])]
    assert victim["name"] not in remaining
    assert run.result["loadbalancer"]["provisioning_status"] == "ACTIVE"


def test_healthy_means_online_with_a_monitor(cloud, monitored_lb, run_module):
    run = run_module(MODULE, {"cloud": "minicloud", "pool": monitored_lb["pool"]["name"],
                              "operating_status": ["HEALTHY"], "timeout": 60, "poll_interval": 0.5})
    assert run.rc == 0, run.output
    assert run.result["accepted_operating_status"] == ["ONLINE"]
    assert {m["operating_status"] for m in run.result["members"]} == {"ONLINE"}


def test_healthy_means_no_monitor_without_one_and_online_is_refused(cloud, shared_lb, run_module):
    run = run_module(MODULE, {"cloud": "minicloud", "pool": shared_lb["pool"]["name"],
                              "operating_status": ["HEALTHY"], "timeout": 30, "poll_interval": 0.5})
    assert run.rc == 0, run.output
    assert run.result["accepted_operating_status"] == ["NO_MONITOR"]
    assert {m["operating_status"] for m in run.result["members"]} == {"NO_MONITOR"}
    run = run_module(MODULE, {"cloud": "minicloud", "pool": shared_lb["pool"]["name"],
                              "operating_status": ["ONLINE"], "timeout": 30})
    assert run.result["failed"] is True
    assert "has no health monitor" in run.result["msg"]
    assert run.result["elapsed"] < 10


def test_backend_down_is_reported_as_not_serving(cloud, monitored_lb, run_module):
    target = monitored_lb["members"][0]
    run = run_module(MODULE, {"cloud": "minicloud", "pool": monitored_lb["pool"]["name"],
                              "operating_status": ["HEALTHY"], "timeout": 60, "poll_interval": 0.5})
    assert run.rc == 0, run.output
    cloud.octavia("backend-down", members=target["name"])
    run = run_module(MODULE, {"cloud": "minicloud", "pool": monitored_lb["pool"]["name"],
                              "members": [target["name"]], "operating_status": ["HEALTHY"],
                              "timeout": 5, "poll_interval": 1})
    assert run.result["failed"] is True
    assert "provisioned but not serving (operating_status ERROR)" in run.result["msg"]


def test_429_with_retry_after_is_honoured(cloud, shared_lb, run_module):
    cloud.fault("load-balancer", STATUS_TREE, 429, count=1, retry_after=3)
    run = run_module(MODULE, {"cloud": "minicloud", "pool": shared_lb["pool"]["name"], "timeout": 60,
                              "poll_interval": 1}, playbook=True)
    assert run.rc == 0, run.output
    assert run.result["retried_faults"] == [429]
    assert run.result["elapsed"] >= 3


def test_faults_past_the_deadline_fail_with_the_reason(cloud, shared_lb, run_module):
    cloud.fault("load-balancer", STATUS_TREE, 503)
    run = run_module(MODULE, {"cloud": "minicloud", "pool": shared_lb["pool"]["name"], "timeout": 4,
                              "poll_interval": 1}, playbook=True)
    result = run.result
    assert result["failed"] is True
    assert "HTTP 503" in result["msg"] and "until the deadline" in result["msg"]
    assert "No poll of pool %s" % shared_lb["pool"]["name"] in result["msg"]
    assert result["members"] is None and result["polls"] == 0, "nothing was seen, so nothing is reported"
    assert set(result["retried_faults"]) == {503}
    assert 4 <= result["elapsed"] < 4 + 3
    assert "Traceback" not in run.output


def test_cloud_as_a_dict_masks_its_secrets_and_refuses_clashing_options(cloud, shared_lb, run_module):
    config = yaml.safe_load(cloud.clouds_yaml.read_text())["clouds"]["minicloud"]
    run = run_module(MODULE, {"cloud": config, "pool": shared_lb["pool"]["name"], "timeout": 30})
    assert run.rc == 0, run.output
    sentinel = "Sentinel-Password-4711"
    config["auth"]["password"] = sentinel
    run = run_module(MODULE, {"cloud": config, "pool": shared_lb["pool"]["name"], "timeout": 10}, verbosity=3)
    assert run.result["failed"] is True
    assert "401" in run.result["msg"], "a wrong password is a clear authentication error"
    assert "Traceback" not in run.output
    assert sentinel not in run.output, "the password inside the cloud dict leaked into the output"
    assert sentinel not in json.dumps(run.result)
    run = run_module(MODULE, {"cloud": config, "region_name": "RegionTwo", "pool": shared_lb["pool"]["name"]})
    assert run.result["failed"] is True
    assert "region_name would be ignored" in run.result["msg"]


def test_absent_warns_about_members_it_never_saw(cloud, shared_lb, run_module):
    run = run_module(MODULE, {"cloud": "minicloud", "pool": shared_lb["pool"]["name"], "members": ["cp-typo"],
                              "state": "absent", "timeout": 10})
    assert run.rc == 0, run.output
    assert run.result["not_seen_at_start"] == ["cp-typo"]
    assert any("cp-typo" in w and "proved nothing" in w for w in run.result.get("warnings", []))


@pytest.mark.parametrize("args,fragment", [
    ({"pool": "no-such-pool"}, "pool 'no-such-pool' not found"),
    ({"pool": "{pool}", "members": ["10.0.0.300:6443"]}, "not a valid IPv4 address"),
    ({"pool": "{pool}", "members": ["10.0.0.5:70000"]}, "port '70000'"),
    ({"pool": "{pool}", "state": "absent", "operating_status": ["HEALTHY"]}, "state=present only"),
    ({"pool": "{pool}", "poll_interval": 0}, "poll_interval must be more than zero"),
])
def test_bad_input_gets_a_clear_error(cloud, shared_lb, run_module, args, fragment):
    pool = shared_lb["pool"]["name"]
    args = dict((k, v.format(pool=pool) if isinstance(v, str) else v) for k, v in args.items())
    run = run_module(MODULE, dict(args, cloud="minicloud", timeout=10))
    assert run.result["failed"] is True
    assert fragment in run.result["msg"]
    assert "Traceback" not in run.output
    assert "MODULE FAILURE" not in run.output


def writes(counts):
    """Every non-GET request minicloud saw from clients, except asking Keystone for a token."""
    found = []
    for service, methods in counts["requests"].items():
        for method, paths in methods.items():
            for path, count in paths.items():
                if method in ("GET", "HEAD") or (service == "identity" and path.endswith("/auth/tokens")):
                    continue
                found.append((service, method, path, count))
    return found


def test_check_mode_waits_the_same_and_writes_nothing(cloud, lb, run_module):
    cloud.add_member(lb, "cp-check", "10.0.0.204")
    cloud.requests(reset=True)
    run = run_module(MODULE, {"cloud": "minicloud", "pool": lb["pool"]["name"], "members": ["cp-check"],
                              "timeout": 60, "poll_interval": 0.5}, check_mode=True)
    assert run.rc == 0, run.output
    assert run.result["changed"] is False
    assert run.result["members"][0]["provisioning_status"] == "ACTIVE"
    counts = cloud.requests()
    assert counts["totals"]["by_service"].get("load-balancer", 0) >= 2
    assert writes(counts) == []


def test_one_request_per_poll_whatever_the_pool_size(cloud, run_module):
    name = "it-many-%s" % uuid.uuid4().hex[:4]
    created = cloud.json("lb", "create", name, "--members", 30)
    try:
        cloud.octavia("slow", delay=SLOW_STEP)
        conn = cloud.sdk()
        conn.load_balancer.create_member(created["pool"]["id"], name="cp-slow", address="10.0.0.240",
                                         protocol_port=6443, subnet_id=created["subnet"]["id"])
        cloud.requests(reset=True)
        run = run_module(MODULE, {"cloud": "minicloud", "pool": created["pool"]["id"], "timeout": 60,
                                  "poll_interval": 0.5})
        assert run.rc == 0, run.output
        result = run.result
        assert len(result["members"]) == 31
        assert result["polls"] >= 3, "the slow provider should have needed several polls"
        assert result["polled_with"] == {"method": "status tree", "fallback_reason": None}
        lb_gets = counts_for(cloud.requests(), "load-balancer", "GET")
        assert sum(n for path, n in lb_gets.items() if path.endswith("/status")) == result["polls"]
        # one member list when the wait is done, for the fields the tree does not carry
        assert sum(n for path, n in lb_gets.items() if path.endswith("/members")) == 1
        assert all(m["admin_state_up"] is True and m["weight"] == 1 for m in result["members"]), result["members"]
        assert not any("/members/{id}" in path for path in lb_gets), "no GET per member"
        # the module's own count agrees with what the cloud saw (token and version discovery included)
        assert result["api_calls"] == sum(cloud.requests()["totals"]["by_service"].values())
    finally:
        cloud.octavia("normal")
        cloud.cli("lb", "delete", name, check=False)


def test_the_member_list_where_the_status_tree_cannot_serve(cloud, shared_lb, run_in_process):
    """Octavia's own policy refusing the status tree, and a pool on no listener (the tree shows pools under
    listeners): both polled with the member list and the load balancer's GET, and the result says why."""
    args = {"cloud": "minicloud", "pool": shared_lb["pool"]["name"], "timeout": 30, "poll_interval": 0.5}
    cloud.api.set_policy("load-balancer", {"os_load-balancer_api:loadbalancer:get_status": "!"})
    cloud.requests(reset=True)
    refused = run_in_process(MODULE, args)
    assert not refused["failed"], refused.get("msg")
    assert refused["polled_with"]["method"] == "member list"
    assert refused["polled_with"]["fallback_reason"].startswith("the status tree was refused (HTTP 403"), refused
    assert "Policy does not allow this request to be performed" in refused["polled_with"]["fallback_reason"]
    lb_gets = counts_for(cloud.requests(), "load-balancer", "GET")
    assert sum(n for path, n in lb_gets.items() if path.endswith("/status")) == 1, "asked once, then not again"
    assert sum(n for path, n in lb_gets.items() if path.endswith("/members")) == refused["polls"]
    assert len(refused["members"]) == 3 and all(m["ready"] for m in refused["members"])
    cloud.api.reset_policy("load-balancer")

    conn = cloud.sdk()
    lb_id = shared_lb["loadbalancer"]["id"]
    pool = conn.load_balancer.create_pool(loadbalancer_id=lb_id, protocol="TCP", lb_algorithm="ROUND_ROBIN",
                                          name="it-unlistened-%s" % uuid.uuid4().hex[:4])
    try:
        cloud.wait_lb_active(shared_lb)
        conn.load_balancer.create_member(pool.id, name="lonely", address="10.0.0.77", protocol_port=6443,
                                         subnet_id=shared_lb["subnet"]["id"])
        result = run_in_process(MODULE, dict(args, pool=pool.id))
        assert not result["failed"], result.get("msg")
        assert result["polled_with"] == {"method": "member list", "fallback_reason": (
            "the pool is on no listener of the load balancer (the status tree shows pools under listeners)")}
        assert [m["name"] for m in result["members"] if m["ready"]] == ["lonely"]
    finally:
        cloud.wait_lb_active(shared_lb)
        conn.load_balancer.delete_pool(pool.id)
        cloud.wait_lb_active(shared_lb)


def counts_for(counts, service, method):
    return counts["requests"].get(service, {}).get(method, {})


MEMBER_LIST = "/v2/lbaas/pools/*/members"  # read once, after the wait, to complete the members' fields


@pytest.mark.parametrize("api_timeout,timeout,delay", [
    (1, 6, 3),    # each attempt of the read times out: it is retried until the module's deadline, not its own
    (30, 3, 10),  # one slow read: cut at the module's deadline, not given api_timeout of its own
])
def test_the_read_after_the_wait_keeps_to_the_module_deadline(cloud, shared_lb, run_module, api_timeout, timeout,
                                                              delay):
    cloud.fault("load-balancer", MEMBER_LIST, None, delay=delay)
    run = run_module(MODULE, {"cloud": "minicloud", "api_timeout": api_timeout, "pool": shared_lb["pool"]["name"],
                              "timeout": timeout, "poll_interval": 0.5}, playbook=True)
    result = run.result
    assert result["failed"] is False, result.get("msg")
    # The last request gets at most a second more (core.deadline.LAST_REQUEST_SECONDS), and a loaded machine up to 1.5 s to
    # finish the result; a read that was not cut would have taken the whole delay (10 s > 3 + 2.5).
    assert result["elapsed"] < timeout + 2.5, result["elapsed"]
    assert len(result["members"]) == 3 and all(m["ready"] for m in result["members"])
    assert any("did not answer before the timeout" in w for w in result.get("warnings") or []), result.get("warnings")


def test_thousands_of_absent_names_make_a_short_message(cloud, shared_lb, run_module):
    names = ["absent-%04d" % i for i in range(5000)]
    result = run_module(MODULE, {"cloud": "minicloud", "pool": shared_lb["pool"]["name"], "members": names,
                                 "timeout": 2, "poll_interval": 1}).result
    assert result["failed"] is True
    assert len(result["msg"]) < 10000, len(result["msg"])
    assert "'absent-0000'" in result["msg"] and "'absent-0009'" in result["msg"]
    assert "'absent-0010'" not in result["msg"]
    assert "4990 more entries of members matched no member" in result["msg"]
    assert result["missing_total"] == 5000 and result["missing"] == names[:1000]


def test_an_entry_that_is_a_members_name_means_that_member_even_if_it_looks_like_an_address(cloud, lb, run_module):
    """A member called ``10.0.0.211`` (address 10.0.0.212) beside a member at address 10.0.0.211: the entry
    ``10.0.0.211`` is exactly the first member's name, so it means that member, not the other one's address."""
    cloud.wait_lb_active(lb)
    named = cloud.add_member(lb, "10.0.0.211", "10.0.0.212")
    cloud.wait_lb_active(lb)
    cloud.add_member(lb, "at-211", "10.0.0.211")
    cloud.wait_lb_active(lb)
    run = run_module(MODULE, {"cloud": "minicloud", "pool": lb["pool"]["name"], "members": ["10.0.0.211"],
                              "timeout": 30, "poll_interval": 0.5})
    assert run.rc == 0, run.output
    assert [(m["id"], m["name"], m["address"]) for m in run.result["members"]] == [
        (named.id, "10.0.0.211", "10.0.0.212")]
    assert run.result["missing"] == []
