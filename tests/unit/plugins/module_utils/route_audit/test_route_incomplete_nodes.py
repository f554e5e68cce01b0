# -*- coding: utf-8 -*-
"""A node that exists is never gone: nodes read from Kubernetes without a pod CIDR or without a usable address
are incomplete, reported, and their routes left alone. And a result of many nodes is summarised."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import PlanError
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import cidr_cache
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import findings as route_findings
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import guards as route_guards
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import inputs as route_inputs
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import nodes as route_nodes
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import steps as route_steps
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import runner as route_runner

CLUSTER = route_inputs.normalize_cluster_cidrs(["198.19.0.0/16", "fd00:10::/48"])


def r(destination, nexthop):
    return {"destination": destination, "nexthop": nexthop}


def kube(*records):
    """Nodes as the Kubernetes API lists them (``node_record``), checked as route_audit checks them."""
    return route_nodes.normalize_nodes([{"name": n, "pod_cidrs": c, "address": a} for n, c, a in records], CLUSTER,
                                       source="kubernetes", lenient=True)


LIVE = ("live", ["198.19.1.0/24"], ["10.180.0.11"])
INCOMPLETE = {
    "no pod CIDR": (("joining", [], ["10.180.0.12"]), "no pod CIDR"),
    "no address": (("addressless", ["198.19.2.0/24"], []), "no usable address"),
    "wrong family": (("v4only", ["198.19.2.0/24", "fd00:10:0:2::/64"], ["10.180.0.12"]), "no IPv6 InternalIP"),
    "two addresses": (("twonics", ["198.19.2.0/24"], ["10.180.0.12", "10.180.0.13"]), "two IPv4 addresses"),
    "not an address": (("garbled", ["198.19.2.0/24"], ["10.180.0.x"]), "not an IP address"),
}


@pytest.mark.parametrize("case", sorted(INCOMPLETE))
def test_a_node_that_cannot_be_routed_is_incomplete_not_an_error(case):
    record, reason = INCOMPLETE[case]
    nodes = kube(LIVE, record)
    assert [n["name"] for n in nodes] == ["live"]
    (incomplete,) = nodes.incomplete
    assert incomplete["name"] == record[0] and reason in incomplete["reason"]
    # the nodes option stays strict: the user wrote the list
    with pytest.raises(PlanError):
        route_nodes.normalize_nodes([{"name": n, "pod_cidrs": c, "address": a} for n, c, a in (LIVE, record)],
                                    CLUSTER)


def test_a_malformed_pod_cidr_or_one_outside_the_cluster_stays_an_error():
    for record in (("bad", ["198.19.2.5/24"], ["10.180.0.12"]), ("outside", ["10.9.0.0/24"], ["10.180.0.12"])):
        with pytest.raises(PlanError):
            kube(LIVE, record)


def test_the_route_of_a_node_without_pod_cidr_is_not_stale_and_the_node_is_reported():
    """The example: a node with an InternalIP and no spec.podCIDR; its existing route stays."""
    nodes = kube(LIVE, ("joining", [], ["10.180.0.12"]))
    routes = [r("198.19.1.0/24", "10.180.0.11"), r("198.19.2.0/24", "10.180.0.12"), r("198.19.9.0/24", "10.180.0.99")]
    findings = route_findings.route_findings(routes, nodes, CLUSTER)
    assert sorted(f["kind"] for f in findings) == ["incomplete_node", "stale"]
    stale = [f for f in findings if f["kind"] == "stale"][0]
    assert stale["destination"] == "198.19.9.0/24"
    node = [f for f in findings if f["kind"] == "incomplete_node"][0]
    assert node["node"] == "joining" and node["severity"] == "warning" and "no pod CIDR" in node["message"]
    assert [(x["destination"], x["nexthop"]) for x in node["routes"]] == [("198.19.2.0/24", "10.180.0.12")]
    assert "10.180.0.12" not in stale["message"]  # never "points at no current node"
    steps, final, _stop = route_steps.simulate(routes, nodes, CLUSTER)
    assert r("198.19.2.0/24", "10.180.0.12") in final and r("198.19.9.0/24", "10.180.0.99") not in final
    assert all(x != r("198.19.2.0/24", "10.180.0.12") for s in steps for x in s.get("routes", []))


def test_routes_to_the_pod_cidr_of_a_node_without_a_usable_address_are_left_alone():
    nodes = kube(LIVE, ("addressless", ["198.19.2.0/24"], []))
    routes = [r("198.19.1.0/24", "10.180.0.11"), r("198.19.2.0/24", "10.180.0.12")]
    findings = route_findings.route_findings(routes, nodes, CLUSTER)
    assert [f["kind"] for f in findings] == ["incomplete_node"]
    assert findings[0]["destination"] == "198.19.2.0/24"
    assert route_steps.next_step(routes, nodes, CLUSTER) is None
    assert route_guards.removal_refusal(findings, routes, len(nodes), "kubernetes", 0.5) is None
    assert route_guards.removal_refusal_now(routes, nodes, CLUSTER, "kubernetes", 0.5) is None


def test_an_incomplete_node_without_routes_is_still_reported():
    nodes = kube(LIVE, ("joining", [], ["10.180.0.12"]))
    findings = route_findings.route_findings([r("198.19.1.0/24", "10.180.0.11")], nodes, CLUSTER)
    assert [(f["kind"], f["node"]) for f in findings] == [("incomplete_node", "joining")]
    assert "no route on the router" in findings[0]["message"]
    assert route_findings.count_kinds(findings)["incomplete_node"] == 1


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(sorted(INCOMPLETE)), st.booleans(), st.booleans()), min_size=1,
                max_size=4))
def test_no_route_of_any_incomplete_node_is_ever_removed(cases):
    """Any mix of incomplete nodes, each with or without a route to its pod CIDR and via its address, and a
    stale route: the repair plan removes the stale route and nothing of theirs."""
    records, theirs = [LIVE], []
    for index, (case, via_address, to_cidr) in enumerate(cases):
        (name, cidrs, addresses), _reason = INCOMPLETE[case]
        cidrs = [c.replace("198.19.2.", "198.19.%d." % (10 + index)).replace(":2::", ":%x::" % (10 + index))
                 for c in cidrs]
        addresses = [a.replace("10.180.0.1", "10.180.%d.1" % (10 + index)) for a in addresses]
        records.append(("%s-%d" % (name, index), cidrs, addresses))
        good = [a for a in addresses if cidr_cache.address(a) is not None]
        if via_address and good:
            theirs.append(r("198.19.%d.0/24" % (100 + index), good[0]))
        if to_cidr and cidrs:
            theirs.append(r(cidrs[0], "10.180.99.%d" % index))
    nodes = kube(*records)
    routes = [r("198.19.1.0/24", "10.180.0.11"), r("198.19.200.0/24", "10.180.0.99")] + theirs
    _steps, final, _stop = route_steps.simulate(routes, nodes, CLUSTER)
    for route in theirs:
        assert route in final
    assert r("198.19.200.0/24", "10.180.0.99") not in final
    findings = route_findings.route_findings(routes, nodes, CLUSTER)
    assert [f["destination"] for f in findings if f["kind"] == "stale"] == ["198.19.200.0/24"]
    assert len([f for f in findings if f["kind"] == "incomplete_node"]) == len(cases)


# -- a result of many nodes -------------------------------------------------------------------

def test_a_large_result_is_summarised_with_counts_of_what_was_left_out():
    cap = route_runner.RESULT_LIST_CAP
    warning = dict(kind="stale", severity="warning", message="w")
    error = dict(kind="missing", severity="error", message="e")
    findings = [warning] * (cap + 5) + [error] * 3
    data = route_runner.summarise(dict(findings=findings, remaining=findings[:3], pending=[{}] * (cap + 1),
                                       nodes=[{}] * 20000, incomplete_nodes=[], changes=[{}] * (cap + 9)))
    assert len(data["findings"]) == cap and data["findings"][:3] == [error] * 3  # errors first
    assert data["omitted"] == dict(findings=8, remaining=0, pending=1, nodes=20000 - cap, incomplete_nodes=0)
    assert len(data["changes"]) == cap + 9  # bounded by max_changes, never cut
    assert route_runner.summarise(dict(msg="x")) == dict(msg="x")  # no audit, nothing to summarise
    small = route_runner.summarise(dict(findings=[error], remaining=[]))
    assert small["findings"] == [error] and small["omitted"]["findings"] == 0
