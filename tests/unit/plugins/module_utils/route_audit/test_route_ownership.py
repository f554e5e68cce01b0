# -*- coding: utf-8 -*-
"""route_audit beside a cloud route controller (``route_owner``): who owns the routes, what a repair may still
do, and what the findings say the controller got wrong."""

import pytest

from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import ownership
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import findings as route_findings
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import inputs as route_inputs
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import nodes as route_nodes
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import routes as route_routes
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import steps as route_steps

CLUSTER = route_inputs.normalize_cluster_cidrs(["198.19.0.0/16"])
NODES = route_nodes.normalize_nodes([
    {"name": "n1", "pod_cidrs": "198.19.1.0/24", "address": "10.180.0.11"},
    {"name": "n2", "pod_cidrs": "198.19.2.0/24", "address": "10.180.0.12"},
    {"name": "n3", "pod_cidrs": "198.19.3.0/24", "address": "10.180.0.13"},
], CLUSTER)
FOREIGN = {"destination": "10.50.0.0/16", "nexthop": "10.180.0.200"}


def r(destination, nexthop):
    return {"destination": destination, "nexthop": nexthop}


def owner(name, controller_cidrs=None):
    return ownership.decide(name, controller_cidrs, CLUSTER)


def steps(routes, who, limit=None, pairs=()):
    controlled = who.controlled if who.restricted else None
    done, final, stop = route_steps.simulate(routes, NODES, CLUSTER, limit=limit, controlled=controlled,
                                             pending_pairs=pairs)
    return [(s["action"], sorted((x["destination"], x["nexthop"]) for x in s.get("routes", []))) for s in done], \
        final, stop


# -- who owns the routes ------------------------------------------------------------------------------------

def test_the_option_wins_then_the_controller_configuration_then_the_nodes_condition_else_flightcontrol():
    routed = [{"name": "n1", "route_created": True}, {"name": "n2", "route_created": False}]
    assert owner("none").owner == "none" and owner("none").source == "route_owner"
    assert owner("flightcontrol").owner == "flightcontrol"
    given = ownership.decide(None, [], CLUSTER)
    assert (given.owner, given.source) == ("cloud-controller", "cloud_controller")
    detected = ownership.decide(None, None, CLUSTER, routed)
    assert (detected.owner, detected.source) == ("cloud-controller", "detected")
    assert "1 of 2 node(s) (n1)" in detected.evidence and "RouteCreated" in detected.evidence
    assert ownership.decide("flightcontrol", None, CLUSTER, routed).owner == "flightcontrol"
    default = ownership.decide(None, None, CLUSTER, [{"name": "n1"}])
    assert (default.owner, default.source) == ("flightcontrol", "default")


def test_the_controller_reconciles_only_inside_its_cluster_cidr():
    narrow = owner("cloud-controller", route_inputs.normalize_cluster_cidrs(["198.19.0.0/23"]))
    assert narrow.controlled(route_routes.parse_cidr("198.19.1.0/24", "x"))
    assert not narrow.controlled(route_routes.parse_cidr("198.19.3.0/24", "x"))
    assert not owner("flightcontrol").controlled(route_routes.parse_cidr("198.19.1.0/24", "x"))


# -- what a repair may do beside the controller ---------------------------------------------------------------

def test_beside_the_controller_missing_and_wrong_routes_are_left_to_it():
    routes = [r("198.19.2.0/24", "10.180.0.11"), r("198.19.3.0/24", "10.180.0.13")]  # n1 missing, n2 wrong
    made, final, stop = steps(routes, owner("cloud-controller"))
    assert made == [] and stop is None and final == routes
    made, _final, _stop = steps(routes, owner("flightcontrol"))
    assert [m[0] for m in made] == ["add_routes", "remove_routes"]  # what flightcontrol would do


def test_beside_the_controller_duplicates_and_stale_routes_are_removed_and_nothing_is_added():
    right = [r("198.19.1.0/24", "10.180.0.11"), r("198.19.2.0/24", "10.180.0.12")]
    routes = right + [r("198.19.1.0/24", "10.180.0.99"), r("198.19.250.0/24", "10.180.0.98"), FOREIGN]
    made, final, _stop = steps(routes, owner("cloud-controller"))
    assert made == [("remove_routes", [("198.19.1.0/24", "10.180.0.99")]),
                    ("remove_routes", [("198.19.250.0/24", "10.180.0.98")])]
    assert sorted(final, key=str) == sorted(right + [FOREIGN], key=str)  # n3's route is the controller's to add


def test_a_duplicate_without_its_right_route_is_the_controllers():
    routes = [r("198.19.1.0/24", "10.180.0.98"), r("198.19.1.0/24", "10.180.0.99")]
    made, _final, _stop = steps(routes, owner("cloud-controller"))
    assert made == []


def test_under_the_limit_stale_routes_make_room_for_the_controllers_adds():
    routes = [r("198.19.1.0/24", "10.180.0.11"), r("198.19.250.0/24", "10.180.0.98"), FOREIGN]
    step = route_steps.next_step(routes, NODES, CLUSTER, limit=3, controlled=owner("cloud-controller").controlled)
    assert step["action"] == "remove_routes" and step["routes"] == [r("198.19.250.0/24", "10.180.0.98")]
    # and never a stop for room the controller needs: that is its finding (the limit), not a repair to stop
    after = route_steps.apply_routes(routes, remove=step["routes"])
    assert route_steps.next_step(after, NODES, CLUSTER, limit=3, controlled=owner("cloud-controller").controlled) \
        is None


def test_routes_outside_the_controllers_cidr_are_repaired_as_flightcontrol_does():
    narrow = owner("cloud-controller", route_inputs.normalize_cluster_cidrs(["198.19.0.0/23"]))
    made, _final, _stop = steps([], narrow)
    assert made == [("add_routes", [("198.19.2.0/24", "10.180.0.12"), ("198.19.3.0/24", "10.180.0.13")])]


def test_address_pairs_of_the_controllers_nodes_are_left_to_it():
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit.repair import pair_fixes

    ports = dict((n["name"], {"id": "p-" + n["name"], "allowed_address_pairs": []}) for n in NODES)
    narrow = owner("cloud-controller", route_inputs.normalize_cluster_cidrs(["198.19.0.0/23"]))
    assert [f["node"] for f in pair_fixes(NODES, ports, narrow.controlled)] == ["n2", "n3"]
    assert len(pair_fixes(NODES, ports)) == 3


# -- findings: who repairs, what the controller got wrong ------------------------------------------------------

def findings(routes, who, keep=()):
    found = route_findings.route_findings(routes, NODES, CLUSTER) + ownership.kept_route_findings(routes, keep, who)
    return dict((f["destination"], f) for f in ownership.annotate(found, who))


def test_findings_name_what_the_controller_got_wrong_and_who_repairs():
    routes = [r("198.19.1.0/24", "10.180.0.11"), r("198.19.1.0/24", "10.180.0.99"),  # duplicate
              r("198.19.2.0/24", "10.180.0.13"), r("198.19.3.0/24", "10.180.0.13"),  # n2 wrong
              r("198.19.250.0/24", "10.180.0.98")]  # stale
    found = findings(routes, owner("cloud-controller"), keep=[FOREIGN])
    assert {d: (f["kind"], f["repaired_by"], f.get("controller_fault")) for d, f in found.items()} == {
        "198.19.1.0/24": ("duplicate", "flightcontrol", "duplicate"),
        "198.19.2.0/24": ("wrong_nexthop", "cloud-controller", "not_reconciled"),
        "198.19.250.0/24": ("stale", "flightcontrol", "kept_stale"),
        "10.50.0.0/16": ("foreign_dropped", "nobody", "dropped_foreign"),
    }
    assert "cloud controller most likely dropped it" in found["10.50.0.0/16"]["message"]


@pytest.mark.parametrize("name, repairer", [("flightcontrol", "flightcontrol"), ("none", "nobody")])
def test_without_a_controller_no_fault_is_named(name, repairer):
    found = findings([r("198.19.250.0/24", "10.180.0.98")], owner(name))
    (stale,) = [f for f in found.values() if f["kind"] == "stale"]
    assert stale["repaired_by"] == repairer and "controller_fault" not in stale


def test_a_kept_route_that_is_there_is_no_finding_however_written():
    found = findings([r("fd00:50::/64", "fd00::5")], owner("cloud-controller"),
                     keep=[r("fd00:50:0::/64", "fd00::0005")])
    assert not [f for f in found.values() if f["kind"] == "foreign_dropped"]
