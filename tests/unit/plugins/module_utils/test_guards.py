# -*- coding: utf-8 -*-
"""The pure guards: what a destructive plan may leave, identities, numbers, names and error words."""

import ipaddress
import json
import ssl

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import PlanError
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.names import name_problem
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes import client as k8s_client
from ansible_collections.flightcontrol.openstack.plugins.module_utils.node_registration_audit import plan as registration_plan
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard import plan
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import guards as route_guards
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import inputs as route_inputs
from ansible_collections.flightcontrol.openstack.plugins.module_utils.secgroup_ensure import plan as sr
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.members import parse_selector
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.module_base import (
    CONNECTION_RANGES,
    number_problems,
    NumberRange,
    SECONDS,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.http import service_message

CLUSTER = route_inputs.normalize_cluster_cidrs(["198.19.0.0/16"])


def stale(destination):
    return {"kind": "stale", "destination": destination}


def routes(count):
    return [{"destination": "198.19.%d.0/24" % i, "nexthop": "10.180.0.%d" % (i + 10)} for i in range(count)]


# -- route_audit ------------------------------------------------------------------------------------

def test_empty_node_view_never_removes_a_route_unless_lifted():
    findings = [stale(r["destination"]) for r in routes(3)]
    refusal = route_guards.removal_refusal(findings, routes(3), 0, "nodes", 0.5)
    assert "3 of the 3 pod CIDRs" in refusal and "node view is empty" in refusal
    assert route_guards.removal_refusal(findings, routes(3), 0, "kubernetes", 0.99) is not None
    assert route_guards.removal_refusal(findings, routes(3), 0, "nodes", 1) is None


def test_share_counts_destinations_not_routes():
    # Two routes of one destination (a duplicate) are one pod CIDR.
    cluster = routes(4) + [{"destination": "198.19.0.0/24", "nexthop": "10.180.0.99"}]
    assert route_guards.removal_refusal([stale("198.19.0.0/24"), stale("198.19.1.0/24")], cluster, 2, "nodes", 0.5) is None
    refusal = route_guards.removal_refusal([stale("198.19.%d.0/24" % i) for i in range(3)], cluster, 1, "nodes", 0.5)
    assert "3 of the 4 pod CIDRs" in refusal and "max_removal_share 0.5" in refusal


@given(routed=st.integers(1, 40), lost=st.integers(0, 40), nodes=st.integers(0, 40),
       share=st.sampled_from([0.0, 0.25, 0.5, 0.9, 1.0]))
def test_removal_guard_property(routed, lost, nodes, share):
    lost = min(lost, routed)
    findings = [stale(r["destination"]) for r in routes(routed)[:lost]]
    refusal = route_guards.removal_refusal(findings, routes(routed), nodes, "nodes", share)
    if share >= 1 or lost == 0:
        assert refusal is None
    elif nodes == 0 or float(lost) / routed > share:
        assert refusal is not None and "max_removal_share: 1" in refusal
    else:
        assert refusal is None


def test_cluster_cidr_covering_the_routers_subnets_is_refused():
    subnets = [ipaddress.ip_network(u"10.180.0.0/24"), ipaddress.ip_network(u"fd00:180::/64")]
    assert route_guards.cidr_scope_problem(CLUSTER, subnets) is None
    assert "overlaps the router's subnet 10.180.0.0/24" in route_guards.cidr_scope_problem(
        route_inputs.normalize_cluster_cidrs(["10.0.0.0/8"]), subnets)
    assert "overlaps" in route_guards.cidr_scope_problem(route_inputs.normalize_cluster_cidrs(["10.180.0.128/25"]), subnets)
    with pytest.raises(PlanError, match="every address"):  # refused before the router is read
        route_inputs.normalize_cluster_cidrs(["::/0"])


# -- rollout_guard direct ---------------------------------------------------------------------------

MEMBERS = [{"id": "m%d" % i, "name": "cp-%d" % i, "address": "10.6.0.%d" % i, "protocol_port": 6443}
           for i in range(1, 4)]


def pairs(*texts):
    return [(parse_selector(old), parse_selector(new)) for old, new in texts]


def test_pairs_that_name_one_member_twice_are_refused_before_and_after_the_members_are_read():
    assert plan.pair_problems(pairs(("cp-1", "cp-4"), ("cp-2", "cp-5"))) == []
    assert "same member" in plan.pair_problems(pairs(("cp-1", "cp-1")))[0]
    assert "same member" in plan.pair_problems(pairs(("10.6.0.1", "10.6.0.1:6443")))[0]
    assert plan.pair_problems(pairs(("cp-1", "10.6.0.1:6443"))) == []  # cannot know before reading
    assert "same member" in plan.pair_problems(pairs(("cp-1", "10.6.0.1:6443")), MEMBERS)[0]
    assert "both replace" in plan.pair_problems(pairs(("cp-1", "cp-4"), ("cp-1", "cp-5")))[0]
    assert "both wait for" in plan.pair_problems(pairs(("cp-1", "cp-4"), ("cp-2", "cp-4")))[0]
    assert "is the old member of replace[1]" in plan.pair_problems(pairs(("cp-1", "cp-2"), ("cp-2", "cp-4")))[0]


# -- secgroup_ensure --------------------------------------------------------------------------------

def rule(port, rule_id):
    return sr.Rule("ingress", "IPv4", 6, port, port, "10.0.0.0/8", None, rule_id=rule_id)


def test_exclusive_may_not_strip_most_or_all_of_a_group():
    existing = [rule(p, "r%d" % p) for p in (22, 80, 443, 6443)]
    keep_three = sr.plan_rules(existing[:3], existing, exclusive=True)
    assert sr.exclusive_refusal(keep_three, existing, 0.5) is None
    keep_one = sr.plan_rules(existing[:1], existing, exclusive=True)
    assert "remove 3 of the group's 4 rules" in sr.exclusive_refusal(keep_one, existing, 0.5)
    assert sr.exclusive_refusal(keep_one, existing, 1) is None
    one = existing[:1]
    assert "remove 1 of the group's 1 rules" in sr.exclusive_refusal(
        sr.plan_rules([rule(80, None)], one, exclusive=True), one, 0.99)


def test_names_and_descriptions_follow_neutron():
    assert sr.text_problem("security_group", "  ", required=True) == "security_group must not be empty or blank"
    assert "at most 255" in sr.text_problem("description", "x" * 256)
    assert sr.text_problem("description", "") is None and sr.text_problem("security_group", "x" * 255) is None


# -- node_registration_audit ------------------------------------------------------------------------

def record(server_id, state):
    return dict(id=server_id, name=server_id, status="ACTIVE", created=None, age=9999, state=state)


def test_a_candidate_with_another_clusters_mark_is_never_deleted():
    records = [record("a", registration_plan.REGISTERED), record("b", registration_plan.REGISTERED), record("c", registration_plan.UNREGISTERED),
               record("d", registration_plan.UNREGISTERED)]
    metadata = {"a": {"cluster": "prod", "pool": "x"}, "b": {"cluster": "prod", "pool": "y"},
                "c": {"cluster": "staging"}, "d": {"pool": "z"}}
    assert registration_plan.cluster_marks(records, metadata) == {"cluster": "prod"}
    delete, skipped, refusal = registration_plan.plan_deletions(records, 5, 2, metadata)
    assert refusal is None and [r["id"] for r in delete] == ["d"]
    assert [s["id"] for s in skipped] == ["c"] and "carries cluster=staging" in skipped[0]["reason"]


# -- numbers ----------------------------------------------------------------------------------------

SPEC = dict(timeout=dict(type="int"), share=dict(type="float"), rules=dict(type="list", elements="dict", options=dict(
    port=dict(type="int"))), name=dict(type="str"))


def test_numbers_nan_infinity_magnitude_and_ranges():
    ranges = dict(timeout=SECONDS, share=NumberRange(minimum=0, maximum=1))
    assert number_problems(SPEC, dict(timeout=300, share=0.5, rules=[dict(port=80)], name="x"), ranges) == []
    assert number_problems(SPEC, dict(share=float("nan")), ranges) == ["share must be a finite number, got nan"]
    assert number_problems(SPEC, dict(share=float("-inf")), ranges) == ["share must be a finite number, got -inf"]
    assert "timeout is out of range" in number_problems(SPEC, dict(timeout=10 ** 30), ranges)[0]
    assert number_problems(SPEC, dict(timeout=-1), ranges) == ["timeout must be zero or more seconds, got -1"]
    assert number_problems(SPEC, dict(share=2.0), ranges) == ["share must be at most 1, got 2.0"]
    assert "rules[1].port is out of range" in number_problems(SPEC, dict(rules=[dict(port=1), dict(port=-10 ** 20)]),
                                                              ranges)[0]


def test_api_timeout_is_a_second_up_to_an_hour():
    spec = dict(api_timeout=dict(type="int"), kubernetes=dict(type="dict", options=dict(api_timeout=dict(type="int"))))
    assert number_problems(spec, dict(api_timeout=30, kubernetes=dict(api_timeout=1)), CONNECTION_RANGES) == []
    assert number_problems(spec, dict(api_timeout=0, kubernetes=dict(api_timeout=3601)), CONNECTION_RANGES) == [
        "api_timeout must be 1 or more seconds, got 0", "kubernetes.api_timeout must be at most 3600 seconds, got 3601"]


@given(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10 ** 40, 10 ** 40)))
def test_every_number_is_judged_without_raising(value):
    problems = number_problems(SPEC, dict(timeout=value if isinstance(value, int) else 1, share=value), dict(
        timeout=SECONDS, share=NumberRange(minimum=0, maximum=1)))
    assert all(isinstance(p, str) and p for p in problems)
    assert (problems == []) == (0 <= value <= 1 and (not isinstance(value, int) or value <= SECONDS.maximum))


# -- names, TLS and the services' words -------------------------------------------------------------

def test_kubernetes_names():
    assert name_problem("name", "prod-1.example") is None
    assert "no valid Kubernetes name" in name_problem("name", "Prod_1")
    assert "63 characters" in name_problem("namespace", "a" * 64, "label")
    assert name_problem("hook_name", "flightcontrol_Rollout", "qualified") is None
    assert name_problem("hook_name", "bad hook!", "qualified") is not None


def test_tls_failures_are_found_inside_urllib3s_wrapping_and_not_retried():
    verify = ssl.SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed")
    wrapped = k8s_client.urllib3.exceptions.MaxRetryError(None, "/api", reason=k8s_client.urllib3.exceptions.SSLError(
        verify))
    assert k8s_client.tls_error(wrapped) is not None
    assert k8s_client.describe_fault(wrapped) is None
    refused = k8s_client.urllib3.exceptions.MaxRetryError(None, "/api", reason=ConnectionRefusedError(111, "refused"))
    assert k8s_client.tls_error(refused) is None and k8s_client.describe_fault(refused).connection_error


class FakeResponse:
    def __init__(self, body):
        self.body = body
        self.headers = {}
        self.status_code = 404

    def json(self):
        return json.loads(self.body)


def http_error(body):
    from openstack import exceptions
    return exceptions.HttpException(message="Unrecognized schema in response body", response=FakeResponse(body),
                                    http_status=404)


def test_the_services_own_words_are_kept():
    neutron = http_error('{"NeutronError": {"type": "SecurityGroupNotFound", "message": "Security group 1 does '
                         'not exist", "detail": ""}}')
    assert service_message(neutron) == "HTTP 404 SecurityGroupNotFound: Security group 1 does not exist"
    octavia = http_error('{"faultcode": "Client", "faultstring": "Pool p could not be found.", "debuginfo": null}')
    assert service_message(octavia) == "HTTP 404: Pool p could not be found."
    nova = http_error('{"itemNotFound": {"code": 404, "message": "Instance x could not be found."}}')
    assert service_message(nova) == "HTTP 404 itemNotFound: Instance x could not be found."
    assert "Unrecognized schema" in service_message(http_error("not json"))
