# -*- coding: utf-8 -*-

import ipaddress

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import PlanError
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import findings as route_findings
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import inputs as route_inputs
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import nodes as route_nodes
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import steps as route_steps

CLUSTER = route_inputs.normalize_cluster_cidrs(["198.19.0.0/16"])


def r(destination, nexthop):
    return {"destination": destination, "nexthop": nexthop}


def nodes(*specs):
    return route_nodes.normalize_nodes([{"name": n, "pod_cidrs": c, "address": a} for n, c, a in specs], CLUSTER)


def kinds(findings):
    return sorted(f["kind"] for f in findings)


# -- input --------------------------------------------------------------------------------------

def test_host_bits_are_refused_like_neutron_does_with_the_network_suggested():
    with pytest.raises(PlanError, match=r"198.19.1.5/24 has host bits set.*198.19.1.0/24"):
        nodes(("n1", "198.19.1.5/24", "10.180.0.5"))
    with pytest.raises(PlanError, match="host bits"):
        route_inputs.normalize_cluster_cidrs(["198.19.1.1/16"])
    with pytest.raises(PlanError, match="not a CIDR"):
        route_inputs.normalize_cluster_cidrs(["198.19.0.0"])


@pytest.mark.parametrize("spec, message", [
    (("n1", "10.1.0.0/24", "10.180.0.5"), "outside cluster_cidr"),
    (("n1", "fd00::/64", "10.180.0.5"), "IPv6 but the node has no IPv6 address"),
    (("n1", "198.19.1.0/24", "not-an-ip"), "not an IP address"),
    (("n1", [], "10.180.0.5"), "no pod CIDR"),
    (("n1", "198.19.1.0/24", ["10.180.0.5", "10.180.0.6"]), "two IPv4 addresses"),
])
def test_every_node_problem_is_named(spec, message):
    cluster = route_inputs.normalize_cluster_cidrs(["198.19.0.0/16", "fd00::/48"])
    with pytest.raises(PlanError, match=message):
        route_nodes.normalize_nodes([{"name": spec[0], "pod_cidrs": spec[1], "address": spec[2]}], cluster)


def test_two_nodes_cannot_claim_one_pod_cidr_and_all_problems_come_at_once():
    with pytest.raises(PlanError) as info:
        nodes(("a", "198.19.1.0/24", "10.180.0.5"), ("b", "198.19.1.0/24", "10.180.0.6"),
              ("c", "198.19.0.0/17", "10.180.0.7"), ("a", "198.19.9.0/24", "10.180.0.8"))
    text = str(info.value)
    assert "claimed by node a" in text and "overlaps" in text and "used by nodes[0]" in text


def _overlap_problems_one_by_one(specs, cluster):
    """What normalize_nodes said about claimed and overlapping pod CIDRs when it compared every new pod CIDR
    with each one claimed before (the check it makes in O(log n) now)."""
    problems, owners = [], {}
    for index, (name, cidrs) in enumerate(specs):
        where = "nodes[%d] (%s)" % (index, name)
        try:
            for text in cidrs:
                cidr = ipaddress.ip_network(text)
                if cidr in owners and owners[cidr] != name:
                    raise PlanError("%s pod CIDR %s is claimed by node %s too; a pod CIDR belongs to one "
                                    "node" % (where, cidr, owners[cidr]))
                for other, owner in owners.items():
                    if other != cidr and other.version == cidr.version and other.overlaps(cidr):
                        raise PlanError("%s pod CIDR %s overlaps %s of node %s"
                                        % (where, cidr, other, owner))
                owners[cidr] = name
        except PlanError as exc:
            problems.append(str(exc))
    return "; ".join(problems)


_POD_CIDRS = st.one_of(
    st.builds(lambda n, p: str(ipaddress.ip_network("198.19.%d.0/%d" % (n, p), strict=False)),
              st.integers(0, 15), st.integers(20, 26)),
    st.builds(lambda n, p: str(ipaddress.ip_network("fd00:10:0:%x::/%d" % (n, p), strict=False)),
              st.integers(0, 15), st.integers(60, 64)))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_POD_CIDRS, min_size=1, max_size=3), min_size=1, max_size=12))
def test_overlapping_pod_cidrs_are_found_and_named_as_one_by_one(cidr_lists):
    specs = [("n%d" % i, cidrs) for i, cidrs in enumerate(cidr_lists)]
    cluster = route_inputs.normalize_cluster_cidrs(["198.19.0.0/16", "fd00::/16"])
    expected = _overlap_problems_one_by_one(specs, cluster)
    raw = [{"name": name, "pod_cidrs": cidrs, "address": ["10.180.0.%d" % (i + 1), "fd00:180::%x" % (i + 1)]}
           for i, (name, cidrs) in enumerate(specs)]
    if not expected:
        assert len(route_nodes.normalize_nodes(raw, cluster)) == len(specs)
        return
    with pytest.raises(PlanError) as info:
        route_nodes.normalize_nodes(raw, cluster)
    assert str(info.value) == expected


def test_checked_nodes_give_their_needed_routes_once_and_as_a_plain_list_would():
    checked = nodes(("a", "198.19.1.0/24", "10.180.0.5"), ("b", ["198.19.2.0/24"], "10.180.0.6"))
    assert isinstance(checked, list) and checked == [dict(n) for n in checked]
    assert route_nodes.needed_routes(checked) is route_nodes.needed_routes(checked)
    assert route_nodes.needed_routes(checked) == route_nodes.needed_routes(list(checked))
    assert route_nodes.needed_routes(list(checked)) is not route_nodes.needed_routes(list(checked))


def test_dual_stack_node_needs_one_route_per_family():
    cluster = route_inputs.normalize_cluster_cidrs(["198.19.0.0/16", "fd00:10::/48"])
    found = route_nodes.normalize_nodes([{"name": "n", "pod_cidr": ["198.19.2.0/24", "fd00:10:0:2::/64"],
                                          "address": ["10.180.0.6", "fd00:180::0006"]}], cluster)
    needed = route_nodes.needed_routes(found)
    assert sorted(w["route"]["nexthop"] for w in needed.values()) == ["10.180.0.6", "fd00:180::6"]


# -- audit --------------------------------------------------------------------------------------

KUBERNIKUS = [r("198.19.1.0/24", "10.180.0.3"), r("198.19.1.0/24", "10.180.0.4"), r("198.19.1.0/24", "10.180.0.5")]


def test_kubernikus_duplicates_name_the_live_node_as_right():
    found = route_findings.route_findings(KUBERNIKUS, nodes(("n5", "198.19.1.0/24", "10.180.0.5")), CLUSTER)
    assert kinds(found) == ["duplicate"]
    dup = found[0]
    assert dup["severity"] == "error" and dup["node"] == "n5"
    roles = dict((x["nexthop"], x["role"]) for x in dup["routes"])
    assert roles == {"10.180.0.3": "stale", "10.180.0.4": "stale", "10.180.0.5": "right"}
    assert dup["fix"] == {"add": [], "remove": [r("198.19.1.0/24", "10.180.0.3"), r("198.19.1.0/24", "10.180.0.4")]}


def test_stale_missing_wrong_and_foreign():
    routes = [r("198.19.1.0/24", "10.180.0.3"),   # no node has it: stale
              r("198.19.2.0/24", "10.180.0.7"),   # node b's CIDR to node c: wrong nexthop
              r("10.0.0.0/8", "10.180.0.1"),      # foreign
              r("198.19.3.0/24", "10.180.0.7")]   # right
    have = nodes(("b", "198.19.2.0/24", "10.180.0.6"), ("c", "198.19.3.0/24", "10.180.0.7"),
                 ("d", "198.19.4.0/24", "10.180.0.8"))
    found = route_findings.route_findings(routes, have, CLUSTER)
    assert kinds(found) == ["missing", "stale", "wrong_nexthop"]
    wrong = [f for f in found if f["kind"] == "wrong_nexthop"][0]
    assert wrong["routes"][0]["role"] == "wrong" and wrong["routes"][0]["node"] == "c"
    assert all("10.0.0.0/8" not in str(f) for f in found)


def test_host_bit_route_matches_its_network_but_is_never_right():
    found = route_findings.route_findings([r("198.19.1.5/24", "10.180.0.5")], nodes(("n", "198.19.1.0/24", "10.180.0.5")),
                                          CLUSTER)
    assert kinds(found) == ["wrong_nexthop"] and found[0]["routes"][0]["role"] == "not_canonical"
    assert found[0]["fix"]["remove"] == [r("198.19.1.5/24", "10.180.0.5")]


def test_nexthops_compared_as_addresses():
    cluster = route_inputs.normalize_cluster_cidrs(["fd00:10::/48"])
    have = route_nodes.normalize_nodes([{"name": "n", "pod_cidr": "fd00:10:0:1::/64", "address": "fd00::0005"}], cluster)
    assert route_findings.route_findings([r("fd00:10:0:1::/64", "fd00::5")], have, cluster) == []


def test_unreachable_nexthop_gets_a_note():
    found = route_findings.route_findings([], nodes(("n", "198.19.1.0/24", "10.99.0.5")), CLUSTER,
                                          reachable=lambda a: a in ipaddress.ip_network("10.180.0.0/24"))
    assert found[0]["kind"] == "missing" and "Neutron will likely refuse" in found[0]["note"]


def test_address_pairs_missing_covered_or_port_security_off():
    have = nodes(("a", "198.19.1.0/24", "10.180.0.5"), ("b", "198.19.2.0/24", "10.180.0.6"),
                 ("c", "198.19.3.0/24", "10.180.0.7"))
    ports = {"a": {"id": "pa", "allowed_address_pairs": [], "port_security_enabled": True},
             "b": {"id": "pb", "allowed_address_pairs": [{"ip_address": "198.19.0.0/16"}], "port_security_enabled": True},
             "c": {"id": "pc", "allowed_address_pairs": [], "port_security_enabled": False}}
    found = route_findings.pair_findings(have, ports)
    assert [(f["node"], f["destination"]) for f in found] == [("a", "198.19.1.0/24")]


def test_limit_error_warning_and_room():
    routes = [r("10.%d.0.0/16" % i, "10.180.0.1") for i in range(5)]  # 5 foreign
    many = nodes(*[("n%d" % i, "198.19.%d.0/24" % i, "10.180.0.%d" % (10 + i)) for i in range(26)])
    info, finding = route_findings.limit_info(routes, many, CLUSTER, 30, "quota router_route")
    assert finding["severity"] == "error" and finding["fix"]["raise_limit_to"] == 31
    assert "raise it to at least 31" in finding["message"]
    info, finding = route_findings.limit_info(routes, many[:22], CLUSTER, 30, "quota router_route")
    assert finding["severity"] == "warning" and info["free_after_repair"] == 3
    info, finding = route_findings.limit_info(routes, many[:10], CLUSTER, 30, "quota router_route")
    assert finding is None
    info, finding = route_findings.limit_info(routes, many, CLUSTER, -1, "quota router_route")
    assert finding is None and info["limit"] is None


# -- repair -------------------------------------------------------------------------------------

def test_kubernikus_repair_leaves_only_the_right_route():
    steps, final, stop = route_steps.simulate(KUBERNIKUS, nodes(("n5", "198.19.1.0/24", "10.180.0.5")), CLUSTER, limit=30)
    assert stop is None and final == [r("198.19.1.0/24", "10.180.0.5")]
    assert [s["action"] for s in steps] == ["remove_routes"]


def test_adds_come_before_removals_of_the_same_destination():
    have = nodes(("n", "198.19.1.0/24", "10.180.0.5"))
    steps, final, _stop = route_steps.simulate([r("198.19.1.0/24", "10.180.0.3")], have, CLUSTER, limit=30)
    assert [s["action"] for s in steps] == ["add_routes", "remove_routes"]
    assert final == [r("198.19.1.0/24", "10.180.0.5")]


def test_full_router_removes_stale_first_then_wrong_before_right():
    have = nodes(("n", "198.19.1.0/24", "10.180.0.5"))
    routes = [r("198.19.1.0/24", "10.180.0.3"), r("198.19.9.0/24", "10.180.0.9")]
    steps, final, _stop = route_steps.simulate(routes, have, CLUSTER, limit=2)
    assert [(s["action"], s["routes"]) for s in steps] == [
        ("remove_routes", [r("198.19.9.0/24", "10.180.0.9")]),   # stale: makes room
        ("add_routes", [r("198.19.1.0/24", "10.180.0.5")]),      # the right route before
        ("remove_routes", [r("198.19.1.0/24", "10.180.0.3")])]   # the wrong one goes
    assert final == [r("198.19.1.0/24", "10.180.0.5")]
    steps, final, stop = route_steps.simulate([r("198.19.1.0/24", "10.180.0.3")], have, CLUSTER, limit=1)
    assert [s["action"] for s in steps] == ["remove_routes", "add_routes"] and stop is None
    assert "route limit leaves no room" in steps[0]["reason"]


def test_limit_with_nothing_removable_stops():
    have = nodes(("a", "198.19.1.0/24", "10.180.0.5"), ("b", "198.19.2.0/24", "10.180.0.6"))
    steps, final, stop = route_steps.simulate([r("10.0.0.0/8", "10.180.0.1")], have, CLUSTER, limit=2)
    assert stop == "limit" and len(final) == 2


def test_max_changes_caps_and_stops():
    have = nodes(*[("n%d" % i, "198.19.%d.0/24" % i, "10.180.0.%d" % (10 + i)) for i in range(7)])
    steps, final, stop = route_steps.simulate([], have, CLUSTER, limit=30, budget=5)
    assert stop == "max_changes" and sum(route_steps.step_size(s) for s in steps) == 5 and len(final) == 5


def test_refused_add_keeps_the_destinations_other_routes():
    have = nodes(("n", "198.19.1.0/24", "10.99.0.5"))
    routes = [r("198.19.1.0/24", "10.180.0.3")]
    step = route_steps.next_step(routes, have, CLUSTER, limit=30, failed=[r("198.19.1.0/24", "10.99.0.5")])
    assert step is None


# -- properties ---------------------------------------------------------------------------------

ADDRESSES = ["10.180.0.%d" % i for i in range(2, 12)]
DESTS = ["198.19.%d.0/24" % i for i in range(8)] + ["198.19.3.7/24"]
FOREIGN = [r("10.0.0.0/8", "10.180.0.1"), r("198.20.0.0/16", "10.180.0.2"), r("0.0.0.0/0", "10.180.0.3")]


@st.composite
def scenarios(draw):
    count = draw(st.integers(0, 6))
    addresses = draw(st.lists(st.sampled_from(ADDRESSES), min_size=count, max_size=count, unique=True))
    cidrs = draw(st.lists(st.integers(0, 7), min_size=count, max_size=count, unique=True))
    have = nodes(*[("n%d" % i, "198.19.%d.0/24" % c, a) for i, (c, a) in enumerate(zip(cidrs, addresses))])
    cluster = draw(st.lists(st.tuples(st.sampled_from(DESTS), st.sampled_from(ADDRESSES)), max_size=10, unique=True))
    foreign = draw(st.lists(st.sampled_from(FOREIGN), max_size=3, unique_by=lambda x: x["destination"]))
    routes = foreign + [r(d, n) for d, n in cluster]
    limit = draw(st.one_of(st.none(), st.integers(len(routes), len(routes) + 8)))
    return have, routes, foreign, limit


@settings(max_examples=300, deadline=None)
@given(scenarios())
def test_repair_never_touches_foreign_routes_and_ends_clean(scenario):
    have, routes, foreign, limit = scenario
    steps, final, stop = route_steps.simulate(routes, have, CLUSTER, limit=limit)
    for step in steps:
        for route in step.get("routes", []):
            assert route not in foreign
    assert all(f in final for f in foreign)
    if limit is not None:
        running = list(routes)
        for step in steps:
            change = {"add": step["routes"]} if step["action"] == "add_routes" else {"remove": step["routes"]}
            running = route_steps.apply_routes(running, **change)
            assert len(running) <= max(limit, len(routes))
    if stop is None:
        # The plan after the repair is empty: nothing left to find about routes.
        assert route_findings.route_findings(final, have, CLUSTER) == []
        assert route_steps.next_step(final, have, CLUSTER, limit=limit) is None


@settings(max_examples=300, deadline=None)
@given(scenarios())
def test_a_right_route_is_never_removed_and_stops_after_any_step_are_safe(scenario):
    have, routes, _foreign, limit = scenario
    steps, _final, _stop = route_steps.simulate(routes, have, CLUSTER, limit=limit)
    rights = set((w["route"]["destination"], w["route"]["nexthop"]) for w in route_nodes.needed_routes(have).values())
    running = list(routes)
    for step in steps:
        if step["action"] == "remove_routes":
            assert not rights & set((x["destination"], x["nexthop"]) for x in step["routes"])
            for route in step["routes"]:
                dest = ipaddress.ip_network(route["destination"], strict=False)
                if limit is None or "no room" not in step["reason"]:
                    # Removing a needed destination's route only once its right route is in place.
                    want = route_nodes.needed_routes(have).get(dest)
                    if want is not None:
                        assert want["route"] in running
        change = {"add": step["routes"]} if step["action"] == "add_routes" else {"remove": step["routes"]}
        running = route_steps.apply_routes(running, **change)


@settings(max_examples=200, deadline=None)
@given(scenarios(), st.integers(1, 4))
def test_runs_capped_by_max_changes_converge(scenario, budget):
    have, routes, foreign, limit = scenario
    current = routes
    for _run in range(30):
        steps, current, stop = route_steps.simulate(current, have, CLUSTER, limit=limit, budget=budget)
        assert sum(route_steps.step_size(s) for s in steps) <= budget
        if stop != "max_changes":
            break
    if stop is None:
        assert route_findings.route_findings(current, have, CLUSTER) == []
    assert all(f in current for f in foreign)


def test_a_step_is_applied_when_the_routes_hold_what_it_asked_for():
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit.steps import step_applied
    r1 = dict(destination="10.244.1.0/24", nexthop="192.168.0.11")
    r2 = dict(destination="10.244.2.0/24", nexthop="192.168.0.12")
    assert step_applied(dict(action="add_routes", routes=[r1]), [r1, r2])
    assert not step_applied(dict(action="add_routes", routes=[r1, r2]), [r2])
    assert step_applied(dict(action="remove_routes", routes=[r1]), [r2])
    assert not step_applied(dict(action="remove_routes", routes=[r1]), [r1])
