# -*- coding: utf-8 -*-
"""fleet_wave's pure decisions: wave sizes from the spec, the fleet's order, budgets, the gate and the waves'
verdicts."""

import pytest

from ansible_collections.flightcontrol.openstack.plugins.module_utils.fleet_wave.fleet import PatternError, select
from ansible_collections.flightcontrol.openstack.plugins.module_utils.fleet_wave.plan import (
    build_plan,
    fleet_order,
    gate_verdict,
    may_start,
    my_clusters,
    PlanError,
    same_plan,
    wave_budgets,
    wave_sizes,
    wave_verdict,
)

GOOD = dict(kcp=dict(replicas=3, ready_replicas=3), machines=[dict(name="m1", ready=True)],
            members=dict(serving=True), readyz=dict(status=200), critical_before=["x"], critical_after=["x"])


def fleet(count, canaries=()):
    return [dict(host="ns/c%02d" % i, labels={"flightcontrol.openstack/canary": "true"} if i in canaries else {})
            for i in range(count)]


def test_wave_sizes_counts_and_shares():
    assert wave_sizes([1, 3, "25%", "100%"], 30) == [1, 3, 4, 22]
    assert wave_sizes([1, 3, "25%", "100%"], 4) == [1, 3, 0, 0]
    assert wave_sizes([1, 3, "25%", "100%"], 3) == [1, 2, 0, 0]
    assert wave_sizes(["50%", "100%"], 5) == [3, 2]


@pytest.mark.parametrize("spec, words", [
    ([1, 3], "cover 4 of the 30"),
    ([1, "120%"], "at most 100"),
    ([1, "0%"], "above 0"),
    ([0, "100%"], "at least one"),
    (["50%", "25%", "100%"], "only grow"),
    (["x", "100%"], "not a number"),
    ([], "non-empty"),
    ([True, "100%"], "not a number"),
])
def test_bad_wave_specs_are_refused(spec, words):
    with pytest.raises(PlanError, match=words):
        wave_sizes(spec, 30)


def test_budgets():
    assert wave_budgets([], [1, 3, 4]) == [0, 0, 0]
    assert wave_budgets([0, 1, "50%"], [1, 3, 4]) == [0, 1, 2]
    with pytest.raises(PlanError, match="above the 1 cluster"):
        wave_budgets([2], [1, 3])
    with pytest.raises(PlanError, match="0 or more"):
        wave_budgets([0, -1], [1, 3])
    with pytest.raises(PlanError, match="2 entries for 1 waves"):
        wave_budgets([0, 0], [1])


def test_negative_soak_is_refused():
    with pytest.raises(PlanError, match="soak"):
        build_plan(fleet(3), ["100%"], soak=-1)


def test_order_canaries_first_then_inventory_order():
    clusters = list(reversed(fleet(5, canaries=(3,))))
    assert fleet_order(clusters) == ["ns/c03", "ns/c00", "ns/c01", "ns/c02", "ns/c04"]
    assert fleet_order(clusters, "other") == ["ns/c00", "ns/c01", "ns/c02", "ns/c03", "ns/c04"]
    with pytest.raises(PlanError, match="twice"):
        fleet_order(fleet(2) + fleet(1))


def test_plan_is_the_same_whatever_order_the_slices_give():
    one = build_plan(fleet(30), [1, 3, "25%", "100%"], soak=5)
    two = build_plan(list(reversed(fleet(30))), [1, 3, "25%", "100%"], soak=5)
    assert one == two
    assert [len(w["clusters"]) for w in one["waves"]] == [1, 3, 4, 22]


def test_gate_verdict():
    assert gate_verdict(GOOD) == dict(passed=True, reasons=[])
    bad = dict(GOOD, kcp=dict(replicas=3, ready_replicas=2), readyz=dict(status=-1, message="timed out"),
               members=dict(serving=False, message="member x PENDING_CREATE"), critical_after=["x", "y"],
               machines=[dict(name="m1", ready=None)])
    reasons = gate_verdict(bad)["reasons"]
    assert not gate_verdict(bad)["passed"]
    assert reasons == ["KubeadmControlPlane ready 2/3", "Nodes not Ready: m1",
                       "API members not all serving: member x PENDING_CREATE",
                       "/readyz through the load balancer answered timed out",
                       "new critical cluster_readiness finding(s): y"]
    assert not gate_verdict({})["passed"]


def test_wave_verdicts_and_may_start():
    plan = build_plan(fleet(6), [1, 2, "100%"], budgets=[0, 1])
    first, second = plan["waves"][0]["clusters"], plan["waves"][1]["clusters"]
    outcomes = {}
    assert may_start(plan, outcomes, 1, False)[0] == "go"
    assert may_start(plan, outcomes, 2, False)[0] == "wait"
    outcomes[first[0]] = dict(outcome="done", started_at=1, finished_at=2)
    assert wave_verdict(plan, outcomes, 1)["state"] == "passed"
    assert may_start(plan, outcomes, 3, False)[0] == "wait"
    outcomes[second[0]] = dict(outcome="failed")
    assert wave_verdict(plan, outcomes, 2)["state"] == "pending"  # one failure within the budget of 1
    outcomes[second[1]] = dict(outcome="failed")
    assert wave_verdict(plan, outcomes, 2)["state"] == "halted"
    assert may_start(plan, outcomes, 3, False)[0] == "halted"
    assert may_start(plan, {}, 1, True)[0] == "halted"


def test_a_failure_above_budget_halts_its_own_wave_without_the_halt_record():
    """The halt record deleted by hand mid-wave: the run's record still holds the failure, so no cluster of that
    wave (or any other) starts; a failure whose halt was lifted keeping it (``lifted``) no longer counts."""
    plan = build_plan(fleet(6), [1, 3, "100%"])
    first, second = plan["waves"][0]["clusters"], plan["waves"][1]["clusters"]
    outcomes = {first[0]: dict(outcome="done"), second[0]: dict(outcome="failed")}
    state, message = may_start(plan, outcomes, 2, False)
    assert state == "halted" and "wave 2 failed above its budget" in message and second[0] in message
    assert may_start(plan, outcomes, 1, False)[0] == "halted"
    outcomes[second[0]]["lifted"] = True
    assert may_start(plan, outcomes, 2, False)[0] == "go"
    assert wave_verdict(plan, outcomes, 2)["failed"] == []


def test_a_recorded_plan_is_adopted_whatever_fleet_a_slice_sees_but_not_other_settings():
    recorded = build_plan(fleet(6), [1, "100%"], soak=5)
    recorded["budgets"] = []
    grown = build_plan(fleet(7), [1, "100%"], soak=5)
    grown["budgets"] = []
    assert same_plan(recorded, grown) is None
    assert same_plan(recorded, dict(grown, soak=6)) == "its soak differ"
    assert same_plan(recorded, dict(grown, spec=[2, "100%"])) == "its spec differ"
    assert same_plan(recorded, dict(grown, budgets=[1])) == "its budgets differ"
    with pytest.raises(PlanError, match="ns/c06 not in the fleet run's plan"):
        my_clusters(recorded, ["ns/c01", "ns/c06"])


HOSTS = [dict(name="a/c1", groups=["capi_namespace_a", "capi_phase_provisioned", "capi_label_env_prod"]),
         dict(name="a/c2", groups=["capi_namespace_a", "capi_phase_provisioning"]),
         dict(name="b/c3", groups=["capi_namespace_b", "capi_phase_provisioned"])]


@pytest.mark.parametrize("pattern, names", [
    ("capi_phase_provisioned", ["a/c1", "b/c3"]),
    ("all", ["a/c1", "a/c2", "b/c3"]),
    ("capi_namespace_a:&capi_phase_provisioned", ["a/c1"]),
    ("capi_phase_provisioned:!capi_label_env_prod", ["b/c3"]),
    ("a/*,b/c3", ["a/c1", "a/c2", "b/c3"]),
    ("~c[23]$", ["a/c2", "b/c3"]),
    ("!capi_namespace_a", []),
    ("nothing", []),
])
def test_the_host_pattern_over_the_inventory_groups(pattern, names):
    assert [h["name"] for h in select(HOSTS, pattern)] == names


def test_a_bad_pattern_is_refused():
    with pytest.raises(PatternError):
        select(HOSTS, " ")
    with pytest.raises(PatternError, match="no regular expression"):
        select(HOSTS, "~(")
