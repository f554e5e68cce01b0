# -*- coding: utf-8 -*-

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia import members as lm
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.waiter import DONE, FAILED, WAITING

LB_ACTIVE = {"id": "lb-1", "name": "kubeapi", "provisioning_status": "ACTIVE", "operating_status": "ONLINE"}
POOL = {"id": "pool-1", "name": "kubeapi-6443", "provisioning_status": "ACTIVE", "healthmonitor_id": None}


def member(i, prov="ACTIVE", oper="NO_MONITOR", port=6443, **extra):
    data = {"id": "00000000-0000-0000-0000-%012d" % i, "name": "cp-%d" % i, "address": "10.0.0.%d" % (10 + i),
            "protocol_port": port, "provisioning_status": prov, "operating_status": oper}
    data.update(extra)
    return data


def obs(members, lb=None, pool=None):
    return {"loadbalancer": dict(lb or LB_ACTIVE), "pool": dict(pool or POOL), "members": members}


def spec(state="present", entries=None, accepted=None, wait_lb=True):
    return lm.WaitSpec(state, lm.parse_selectors(entries), accepted, wait_lb)


# --- selectors -------------------------------------------------------------------------------

@pytest.mark.parametrize("text,kind,value,port", [
    ("00000000-0000-0000-0000-000000000001", "id", "00000000-0000-0000-0000-000000000001", None),
    ("6F1C1F4E5D1B4A519C3E0B0B6C1E2F10", "id", "6f1c1f4e-5d1b-4a51-9c3e-0b0b6c1e2f10", None),
    ("cp-1", "name", "cp-1", None),
    ("k8s-clusterapi-cluster-default-prod-kubeapi-6443-prod-control-plane-x7k2p", "name",
     "k8s-clusterapi-cluster-default-prod-kubeapi-6443-prod-control-plane-x7k2p", None),
    ("10.0.0.11", "address", "10.0.0.11", None),
    ("10.0.0.11:6443", "address", "10.0.0.11", 6443),
    ("2001:db8::5", "address", "2001:db8::5", None),
    ("2001:DB8:0::5", "address", "2001:db8::5", None),
    ("[2001:db8::5]:6443", "address", "2001:db8::5", 6443),
])
def test_parse_selector(text, kind, value, port):
    selector = lm.parse_selector(text)
    assert (selector.kind, selector.value, selector.port) == (kind, value, port)


@pytest.mark.parametrize("text,fragment", [
    ("10.0.0.300", "not a valid IPv4 address"),
    ("10.0.0.1:99999", "port '99999'"),
    ("10.0.0.1:", "port ''"),
    ("10.0.0.1:0", "port '0'"),
    ("[2001:db8::zz]:6443", "not a valid IPv6 address"),
    ("[2001:db8::5]:https", "port 'https'"),
    ("2001:db8:::5", "looks like an IPv6 address"),
    ("  ", "empty"),
])
def test_malformed_selectors_are_rejected_with_the_entry_named(text, fragment):
    with pytest.raises(ValueError) as info:
        lm.parse_selector(text)
    assert fragment in str(info.value)


def test_address_selector_with_and_without_port():
    members = [member(1), member(1, port=10250, id="x", name="other")]
    chosen, unmatched = lm.select(members, lm.parse_selectors(["10.0.0.11"]))
    assert len(chosen) == 2 and not unmatched
    chosen, unmatched = lm.select(members, lm.parse_selectors(["10.0.0.11:6443", "10.0.0.99"]))
    assert [m["name"] for m in chosen] == ["cp-1"]
    assert [s.text for s in unmatched] == ["10.0.0.99"]


def test_a_member_matched_twice_is_chosen_once():
    chosen = lm.select([member(1)], lm.parse_selectors(["cp-1", "10.0.0.11"]))[0]
    assert len(chosen) == 1


# --- accepted operating statuses --------------------------------------------------------------

def test_healthy_depends_on_the_health_monitor():
    assert lm.resolve_accepted(["HEALTHY"], has_monitor=True, pool_label="p") == {"ONLINE"}
    assert lm.resolve_accepted(["HEALTHY"], has_monitor=False, pool_label="p") == {"NO_MONITOR"}
    assert lm.resolve_accepted(None, has_monitor=False, pool_label="p") is None


def test_impossible_operating_status_is_rejected_up_front():
    with pytest.raises(ValueError) as info:
        lm.resolve_accepted(["ONLINE"], has_monitor=False, pool_label="kubeapi")
    assert "no health monitor" in str(info.value) and "kubeapi" in str(info.value)
    with pytest.raises(ValueError):
        lm.resolve_accepted(["NO_MONITOR"], has_monitor=True, pool_label="kubeapi")
    with pytest.raises(ValueError):
        lm.resolve_accepted(["SERVING"], has_monitor=True, pool_label="kubeapi")


# --- decisions ------------------------------------------------------------------------------------

def test_lost_member_keeps_waiting_although_the_lb_is_active():
    observation = obs([member(1), member(2), member(3), member(4, prov="PENDING_CREATE", oper="OFFLINE")])
    verdict = lm.judge(observation, spec())
    assert verdict.state == WAITING
    assert "cp-4 10.0.0.14:6443: provisioning_status is PENDING_CREATE" in verdict.message
    message = lm.failure_message(verdict, observation, spec(), 300, True, 300)
    assert "Timed out after 300 s" in message
    assert "cp-4 10.0.0.14:6443 is still PENDING_CREATE although the load balancer is ACTIVE" in message
    assert "provisioning_status=ACTIVE operating_status=ONLINE" in message


def test_member_error_fails_at_once_and_names_the_member():
    observation = obs([member(1), member(2, prov="ERROR", oper="OFFLINE")])
    verdict = lm.judge(observation, spec())
    assert verdict.state == FAILED
    assert "cp-2 10.0.0.12:6443" in verdict.message and "ERROR" in verdict.message


def test_error_on_an_unchosen_member_does_not_fail_the_wait():
    observation = obs([member(1), member(2, prov="ERROR")])
    assert lm.judge(observation, spec(entries=["cp-1"])).state == DONE


def test_lb_error_fails_at_once():
    lb = dict(LB_ACTIVE, provisioning_status="ERROR")
    assert lm.judge(obs([member(1)], lb=lb), spec()).state == FAILED


def test_waits_for_the_lb_to_be_active_again_unless_told_not_to():
    lb = dict(LB_ACTIVE, provisioning_status="PENDING_UPDATE")
    verdict = lm.judge(obs([member(1)], lb=lb), spec())
    assert verdict.state == WAITING and "PENDING_UPDATE" in verdict.message
    assert lm.judge(obs([member(1)], lb=lb), spec(wait_lb=False)).state == DONE


def test_operating_status_must_be_accepted():
    observation = obs([member(1, oper="OFFLINE")])
    assert lm.judge(observation, spec(accepted=frozenset(["ONLINE"]))).state == WAITING
    assert lm.judge(observation, spec()).state == DONE
    observation = obs([member(1, oper="ONLINE")])
    assert lm.judge(observation, spec(accepted=frozenset(["ONLINE"]))).state == DONE


def test_present_waits_for_members_that_do_not_exist_yet_and_for_an_empty_pool():
    verdict = lm.judge(obs([member(1)]), spec(entries=["10.0.0.99:6443"]))
    assert verdict.state == WAITING and "no member matches '10.0.0.99:6443' yet" in verdict.message
    verdict = lm.judge(obs([]), spec())
    assert verdict.state == WAITING and "has no members" in verdict.message


def test_absent_waits_until_gone_and_fails_on_a_failed_delete():
    verdict = lm.judge(obs([member(1, prov="PENDING_DELETE")]), spec(state="absent", entries=["cp-1"]))
    assert verdict.state == WAITING and "still exists" in verdict.message
    assert lm.judge(obs([member(2)]), spec(state="absent", entries=["cp-1"])).state == DONE
    assert lm.judge(obs([]), spec(state="absent")).state == DONE
    assert lm.judge(obs([member(1, prov="ERROR")]), spec(state="absent", entries=["cp-1"])).state == FAILED


def test_member_view_says_why_it_is_not_ready():
    view = lm.member_view(member(1, oper="OFFLINE"), spec(entries=["cp-1"], accepted=frozenset(["ONLINE"])))
    assert view["ready"] is False
    assert view["waiting_for"] == "operating_status is OFFLINE, waiting for ONLINE"
    assert view["selected_by"] == ["cp-1"]


# --- properties --------------------------------------------------------------------------------

PROVISIONING = st.sampled_from(["ACTIVE", "PENDING_CREATE", "PENDING_UPDATE", "PENDING_DELETE", "ERROR"])
OPERATING = st.sampled_from(list(lm.OPERATING_STATUSES))


@st.composite
def observations(draw):
    count = draw(st.integers(min_value=0, max_value=6))
    members = [member(i, prov=draw(PROVISIONING), oper=draw(OPERATING)) for i in range(count)]
    lb = dict(LB_ACTIVE, provisioning_status=draw(PROVISIONING))
    pool = dict(POOL, provisioning_status=draw(PROVISIONING))
    return obs(members, lb=lb, pool=pool)


@settings(max_examples=300, deadline=None)
@given(observations(), st.lists(st.integers(min_value=0, max_value=7), max_size=4),
       st.sampled_from([None, frozenset(["ONLINE"]), frozenset(["NO_MONITOR"])]), st.booleans())
def test_present_is_never_done_on_a_guess(observation, picks, accepted, wait_lb):
    wait = spec(entries=["cp-%d" % i for i in picks] or None, accepted=accepted, wait_lb=wait_lb)
    verdict = lm.judge(observation, wait)
    chosen, unmatched = lm.select(observation["members"], wait.selectors)
    if verdict.state == DONE:
        assert not unmatched and chosen
        assert all(m["provisioning_status"] == "ACTIVE" for m in chosen)
        assert accepted is None or all(m["operating_status"] in accepted for m in chosen)
        assert not wait_lb or observation["loadbalancer"]["provisioning_status"] == "ACTIVE"
    if any(m["provisioning_status"] == "ERROR" for m in chosen) or "ERROR" in (
            observation["loadbalancer"]["provisioning_status"], observation["pool"]["provisioning_status"]):
        assert verdict.state == FAILED


@settings(max_examples=200, deadline=None)
@given(observations(), st.lists(st.integers(min_value=0, max_value=7), max_size=4))
def test_absent_is_done_only_when_every_chosen_member_is_gone(observation, picks):
    wait = spec(state="absent", entries=["cp-%d" % i for i in picks] or None)
    verdict = lm.judge(observation, wait)
    chosen = lm.select(observation["members"], wait.selectors)[0]
    if verdict.state == DONE:
        assert not chosen
