# -*- coding: utf-8 -*-
"""keep_routes: a kept route is never removed by any step of a repair (stale, duplicate, wrong nexthop, the route
limit, beside the cloud controller), and the route inputs are checked by one rule before any request."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import ModuleFailure, PlanError
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import ownership
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import findings as route_findings
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import guards as route_guards
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import inputs as route_inputs
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import nodes as route_nodes
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import routes as route_routes
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import steps as route_steps

CLUSTER = route_inputs.normalize_cluster_cidrs(["198.19.0.0/16"])


def r(destination, nexthop):
    return {"destination": destination, "nexthop": nexthop}


def nodes(*specs):
    return route_nodes.normalize_nodes([{"name": n, "pod_cidrs": c, "address": a} for n, c, a in specs], CLUSTER)


def keep(*routes):
    return route_inputs.normalize_keep_routes(list(routes))


def removed(steps):
    return [(x["destination"], x["nexthop"]) for s in steps if s["action"] == "remove_routes" for x in s["routes"]]


# -- the reported case and its variants, one per removal path -------------------------------------------------

def test_a_kept_route_inside_cluster_cidr_and_stale_is_neither_removed_nor_a_finding():
    have = nodes(("n1", "198.19.1.0/24", "10.180.0.11"), ("n2", "198.19.2.0/24", "10.180.0.12"))
    kept = r("198.19.9.0/24", "10.180.0.12")
    routes = [r("198.19.1.0/24", "10.180.0.11"), r("198.19.2.0/24", "10.180.0.12"), kept]
    steps, final, stop = route_steps.simulate(routes, have, CLUSTER, kept=keep(kept))
    assert steps == [] and stop is None and kept in final
    assert route_findings.route_findings(routes, have, CLUSTER, kept=keep(kept)) == []
    # without keep_routes the same route is stale and removed (what the reported run did)
    assert removed(route_steps.simulate(routes, have, CLUSTER)[0]) == [("198.19.9.0/24", "10.180.0.12")]


def test_a_kept_duplicate_or_wrong_route_is_reported_with_no_removal_in_its_fix():
    have = nodes(("n1", "198.19.1.0/24", "10.180.0.11"), ("n2", "198.19.2.0/24", "10.180.0.12"))
    duplicate, wrong = r("198.19.1.0/24", "10.180.0.99"), r("198.19.2.0/24", "10.180.0.98")
    routes = [r("198.19.1.0/24", "10.180.0.11"), duplicate, wrong]
    kept = keep(duplicate, wrong)
    steps, final, _stop = route_steps.simulate(routes, have, CLUSTER, kept=kept)
    assert removed(steps) == [] and duplicate in final and wrong in final
    assert [s["action"] for s in steps] == ["add_routes"]  # n2's right route is added beside the kept one
    found = dict((f["destination"], f) for f in route_findings.route_findings(final, have, CLUSTER, kept=kept))
    assert set(found) == {"198.19.1.0/24", "198.19.2.0/24"}
    for finding in found.values():
        assert finding["kind"] == "duplicate" and finding["fix"]["remove"] == []
        assert "keep_routes" in finding["message"]
        assert "kept" in [x["role"] for x in finding["routes"]]


def test_under_the_route_limit_a_kept_route_is_not_removed_to_make_room():
    have = nodes(("n1", "198.19.1.0/24", "10.180.0.11"))
    stale, wrong = r("198.19.9.0/24", "10.180.0.12"), r("198.19.1.0/24", "10.180.0.98")
    steps, _final, stop = route_steps.simulate([stale, wrong], have, CLUSTER, limit=2, kept=keep(stale, wrong))
    assert removed(steps) == [] and stop == "limit"
    info, finding = route_findings.limit_info([stale, wrong], have, CLUSTER, 2, "route_limit",
                                              kept=keep(stale, wrong))
    assert info["after_repair"] == 3 and finding["severity"] == "error"  # the kept routes stay: raise the limit


def test_beside_the_cloud_controller_a_kept_stale_route_is_not_removed():
    have = nodes(("n1", "198.19.1.0/24", "10.180.0.11"))
    stale = r("198.19.9.0/24", "10.180.0.12")
    who = ownership.decide("cloud-controller", None, CLUSTER)
    steps, final, _stop = route_steps.simulate([r("198.19.1.0/24", "10.180.0.11"), stale], have, CLUSTER,
                                               controlled=who.controlled, kept=keep(stale))
    assert removed(steps) == [] and stale in final


def test_a_kept_route_is_matched_however_neutron_wrote_it():
    have = nodes(("n1", "198.19.1.0/24", "10.180.0.11"))
    stored = r("198.19.9.5/24", "10.180.0.12")  # host bits as add_extraroutes stores them
    steps, _final, _stop = route_steps.simulate([stored], have, CLUSTER, kept=keep(r("198.19.9.0/24", "10.180.0.12")))
    assert removed(steps) == []


def test_kept_routes_keep_their_destination_routed_for_the_removal_guard():
    stale = r("198.19.9.0/24", "10.180.0.12")
    routes = [r("198.19.1.0/24", "10.180.0.11"), stale]
    have = nodes(("n1", "198.19.1.0/24", "10.180.0.11"))
    assert route_guards.removal_refusal_now(routes, have, CLUSTER, "nodes", 0.0, kept=keep(stale)) is None
    assert route_guards.unsafe_removals(routes, [stale], CLUSTER, kept=keep(stale)) == [stale]


def test_the_final_guard_stops_a_plan_that_would_remove_a_kept_route():
    kept = keep(r("198.19.9.0/24", "10.180.0.12"))
    bad = {"action": "remove_routes", "routes": [r("198.19.9.0/24", "10.180.0.12")], "reason": "stale"}
    with pytest.raises(PlanError, match="internal error.*198.19.9.0/24.*keep_routes"):
        route_steps.guard_removals(bad, kept)
    assert route_steps.guard_removals({"action": "add_routes", "routes": bad["routes"]}, kept) is None


# -- the property: for any plan, no kept route is ever among the removals -----------------------------------------

ADDRESSES = ["10.180.0.%d" % i for i in range(2, 10)]
DESTS = ["198.19.%d.0/24" % i for i in range(6)] + ["198.19.3.7/24"]


@st.composite
def scenarios(draw):
    count = draw(st.integers(0, 5))
    addresses = draw(st.lists(st.sampled_from(ADDRESSES), min_size=count, max_size=count, unique=True))
    cidrs = draw(st.lists(st.integers(0, 5), min_size=count, max_size=count, unique=True))
    have = nodes(*[("n%d" % i, "198.19.%d.0/24" % c, a) for i, (c, a) in enumerate(zip(cidrs, addresses))])
    pairs = draw(st.lists(st.tuples(st.sampled_from(DESTS), st.sampled_from(ADDRESSES)), max_size=10, unique=True))
    routes = [r(d, n) for d, n in pairs]
    kept = draw(st.lists(st.sampled_from(routes), unique_by=str)) if routes else []
    kept = [r(str(route_routes.route_key(k)[0]), k["nexthop"]) for k in kept]  # as an operator writes it
    limit = draw(st.one_of(st.none(), st.integers(len(routes), len(routes) + 4)))
    owner = draw(st.sampled_from(["flightcontrol", "cloud-controller", "none"]))
    budget = draw(st.one_of(st.none(), st.integers(1, 4)))
    return have, routes, kept, limit, owner, budget


@settings(max_examples=400, deadline=None)
@given(scenarios())
def test_no_plan_ever_removes_a_kept_route(scenario):
    have, routes, kept_list, limit, owner, budget = scenario
    kept = keep(*kept_list)
    who = ownership.decide(owner, None, CLUSTER)
    steps, final, _stop = route_steps.simulate(routes, have, CLUSTER, limit=limit, budget=budget, kept=kept,
                                               controlled=who.controlled if who.restricted else None)
    for route in (x for s in steps if s["action"] == "remove_routes" for x in s["routes"]):
        assert not kept.holds(route), (route, kept_list)
    for route in routes:
        if kept.holds(route):
            assert route in final
    assert route_guards.removal_refusal_now(routes, have, CLUSTER, "nodes", 0.0, kept=kept) is None or any(
        not kept.holds(x) for x in routes)


# -- class 8: route inputs that make no sense are refused, one rule for every CIDR ---------------------------------

@pytest.mark.parametrize("routes, message", [
    ([r("fd00:9::/64", "10.180.0.12")], "IPv6.*IPv4"),
    ([r("198.19.9.0/24", "fd00::12")], "IPv4.*IPv6"),
    ([r("198.19.9.5/24", "10.180.0.12")], "host bits"),
    ([r("198.19.9.0", "10.180.0.12")], "not a CIDR"),
    ([r("198.19.9.0/24", "10.180.0")], "not an IP address"),
    ([r("198.19.9.0/24", "10.180.0.12/32")], "not an IP address"),
])
def test_keep_routes_that_make_no_sense_are_refused(routes, message):
    with pytest.raises(PlanError, match=message):
        route_inputs.normalize_keep_routes(routes)


def test_keep_routes_problems_come_at_once_and_a_default_route_may_be_kept():
    with pytest.raises(PlanError) as info:
        route_inputs.normalize_keep_routes([r("fd00:9::/64", "10.180.0.12"), r("bogus", "10.180.0.1")])
    assert "keep_routes[0]" in str(info.value) and "keep_routes[1]" in str(info.value)
    assert route_inputs.normalize_keep_routes([r("0.0.0.0/0", "10.180.0.1")]).holds(r("0.0.0.0/0", "10.180.0.1"))


@pytest.mark.parametrize("what", ["cluster_cidr", "cloud_controller.cluster_cidr"])
@pytest.mark.parametrize("value", ["0.0.0.0/0", "::/0"])
def test_a_whole_family_is_refused_for_every_cluster_cidr_before_any_request(what, value):
    with pytest.raises(PlanError, match="%s %s is every address of its family" % (what.replace(".", r"\."),
                                                                                  value.replace(".", r"\."))):
        route_inputs.normalize_cluster_cidrs([value], what)
    with pytest.raises(PlanError, match="host bits"):
        route_inputs.normalize_cluster_cidrs(["198.19.1.1/16"], what)


def test_the_router_subnet_rule_names_the_option():
    subnets = [route_routes.parse_cidr("10.180.0.0/24", "subnet")]
    wide = route_inputs.normalize_cluster_cidrs(["10.0.0.0/8"], "cloud_controller.cluster_cidr")
    assert "cloud_controller.cluster_cidr is wider" in route_guards.cidr_scope_problem(
        wide, subnets, "cloud_controller.cluster_cidr")


# -- the repair: kept routes survive every mode of writing, and a plan that breaks the rule writes nothing ---------

def _repair(routes, have, kept, atomic=True, if_match=True):
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit.repair import (
        RepairInput,
        RouteRepair,
    )
    from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils.route_audit.test_route_repair_races import (
        FakeRouter,
    )

    fake = FakeRouter(routes, atomic, if_match, nodes=have)
    router = {"id": "r1", "routes": [dict(x) for x in routes], "revision_number": 1}
    result = dict(changes=[], pending=[], stopped_by=None, conflicts=[])
    what = RepairInput(router=router, nodes=have, cidrs=CLUSTER, node_ports={}, findings=[], limit=None,
                       atomic=atomic, if_match=if_match, kept=kept)
    return fake, result, RouteRepair(fake, what, False, 1000, False, float("inf"), result)


@pytest.mark.parametrize("atomic, if_match", [(True, True), (False, True), (False, False)])
def test_the_repair_keeps_kept_routes_in_every_mode_of_writing(atomic, if_match):
    have = nodes(("n1", "198.19.1.0/24", "10.180.0.11"))
    stale_kept, stale, dup_kept = r("198.19.9.0/24", "10.180.0.12"), r("198.19.8.0/24", "10.180.0.12"), \
        r("198.19.1.0/24", "10.180.0.99")
    fake, result, repair = _repair([stale_kept, stale, dup_kept], have, keep(stale_kept, dup_kept), atomic, if_match)
    repair.run()
    assert stale_kept in fake.routes and dup_kept in fake.routes and stale not in fake.routes
    assert [(c["action"], c["destination"]) for c in result["changes"]] == [
        ("add_route", "198.19.1.0/24"), ("remove_route", "198.19.8.0/24")]


def test_a_plan_that_would_remove_a_kept_route_stops_before_the_first_write(monkeypatch):
    have = nodes(("n1", "198.19.1.0/24", "10.180.0.11"))
    kept = r("198.19.9.0/24", "10.180.0.12")
    fake, result, repair = _repair([kept], have, keep(kept))
    monkeypatch.setattr(route_steps, "may_remove", lambda removable, kept=None: lambda route: True)  # a broken plan
    with pytest.raises(ModuleFailure, match="internal error.*198.19.9.0/24 -> 10.180.0.12.*keep_routes") as info:
        repair.run()
    assert fake.requests == [] and info.value.data["changed"] is False and kept in fake.routes
