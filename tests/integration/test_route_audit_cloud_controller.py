# -*- coding: utf-8 -*-
"""route_audit beside minicloud's emulated cloud route controller (cloud-provider-openstack's, with its reported
bugs as modes), both writing one router for 10 reconcile periods. The test steps the controller: each period is
one ``step``, and route_audit runs during it (with ``non-atomic``, in the window between the controller's read and
its write of the whole list; otherwise just before its read)."""

import uuid

import pytest

MODULE = "flightcontrol.openstack.route_audit"
CLUSTER = "198.19.0.0/16"
FOREIGN = {"destination": "10.50.0.0/16", "nexthop": "10.180.0.200"}
DEAD = "10.180.0.98"  # a node that is gone
STALE = {"destination": "198.19.250.0/24", "nexthop": "10.180.0.97"}
PERIODS = 10
MODES = {"well-behaved": [], "drops-foreign": ["drops-foreign"], "keeps-stale": ["keeps-stale"],
         "non-atomic": ["non-atomic"], "non-atomic keeps-stale": ["non-atomic", "keeps-stale"]}


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:6])


def text(route):
    return "%s=%s" % (route["destination"], route["nexthop"])


def routes_of(cloud, router):
    return frozenset(text(r) for r in cloud.json("router", "show", router)["routes"])


def node_args(nodes):
    return [{"name": n["name"], "pod_cidr": n["pod_cidr"], "address": n["address"]} for n in nodes]


def seeded_router(cloud):
    """Four nodes; the first three routed, the last one's route missing; a duplicate of the first one's to a
    gone node, a stale route and a foreign route (outside the cluster CIDR)."""
    router = unique("rt")
    cloud.json("router", "create", router, "--network", unique("nodes"))
    nodes = cloud.json("router", "nodes", router, "--count", 4, "--prefix", unique("cc"), "--address-pairs")
    cloud.json("router", "routes", router, *["--add=" + text(dict(destination=n["pod_cidr"], nexthop=n["address"]))
                                             for n in nodes[:3]])
    cloud.json("router", "routes", router, "--add=%s=%s" % (nodes[0]["pod_cidr"], DEAD), "--add=" + text(STALE),
               "--add=" + text(FOREIGN))
    return router, nodes


@pytest.fixture
def controllers(cloud):
    made = []
    api = cloud.api.route_controllers()

    def start(router, nodes, modes):
        name = unique("ccm")
        made.append(name)
        api.start(name, router, [CLUSTER], nodes=node_args(nodes), modes=modes, period=None)
        return name

    api.begin = start
    yield api
    for name in made:
        api.stop(name)


def audit(cloud, run_module, router, nodes, playbook=False, **args):
    task = dict(cloud="minicloud", router=router, cluster_cidr=[CLUSTER], nodes=node_args(nodes),
                route_owner="cloud-controller", keep_routes=[FOREIGN], state="repaired")
    task.update(args)
    cloud.requests(reset=True)
    result = run_module(MODULE, task, playbook=playbook).result
    assert not result.get("failed"), result.get("msg") or result
    result["client_writes"] = cloud.writes()  # the controller's requests are minicloud's own: not counted
    return result


def flapping(states):
    """(i, j, k) when the route list at k is the one at i after another one at j (it alternated), else None."""
    for i, first in enumerate(states):
        for j in range(i + 1, len(states)):
            if states[j] == first:
                continue
            for k in range(j + 1, len(states)):
                if states[k] == first:
                    return i, j, k
    return None


def run_periods(cloud, run_module, controllers, modes):
    router, nodes = seeded_router(cloud)
    name = controllers.begin(router, nodes, modes)
    runs, states = [], [routes_of(cloud, router)]  # the route list after each writer's turn

    def during(first):
        runs.append(audit(cloud, run_module, router, nodes, playbook=first and "non-atomic" in modes))
        states.append(routes_of(cloud, router))

    for period in range(PERIODS):
        controllers.step(name, during=lambda: during(period == 0))
        states.append(routes_of(cloud, router))
    assert len(controllers.periods(name)) == PERIODS
    return router, nodes, runs, states


def faults(result):
    return sorted((f["kind"], f.get("controller_fault"), f["repaired_by"]) for f in result["findings"])


@pytest.mark.parametrize("mode", sorted(MODES))
def test_beside_the_cloud_controller_for_ten_periods(cloud, run_module, controllers, mode):
    modes = MODES[mode]
    router, nodes, runs, states = run_periods(cloud, run_module, controllers, modes)
    final = states[-1]
    right = set(text(dict(destination=n["pod_cidr"], nexthop=n["address"])) for n in nodes)

    assert flapping(states) is None, states  # the router's route list never alternates
    assert len(set(states[-10:])) == 1, states[-10:]  # and has settled
    cluster = [r for r in final if r.startswith("198.19.")]
    assert sorted(cluster) == sorted(right)  # no duplicate, no stale route: each node its one route
    for result in runs:
        assert result["route_owner"]["owner"] == "cloud-controller"
        assert result["changed"] == bool(result["client_writes"]), result  # changed says whether it wrote
        for change in result["changes"]:  # only what the controller never adds back, never a node's route
            assert change["action"] == "remove_route" and change["reason"] in ("duplicate", "stale"), change
            assert "%s=%s" % (change["destination"], change["nexthop"]) not in right | {text(FOREIGN)}
    # the first run named what the controller got wrong, and who repairs each finding
    assert faults(runs[0]) == [("duplicate", "duplicate", "flightcontrol"),
                               ("missing", "not_reconciled", "cloud-controller"),
                               ("stale", "kept_stale", "flightcontrol")]
    assert runs[0]["changed"] and sorted(c["reason"] for c in runs[0]["changes"]) == ["duplicate", "stale"]
    assert not any(r["changed"] for r in runs[3:]), [r["changes"] for r in runs]  # quiet once settled
    if "drops-foreign" in modes:
        # the controller dropped the foreign route; route_audit never re-adds it (the two would take turns) and
        # names it in every run after
        assert text(FOREIGN) not in final
        for result in runs[1:]:
            assert ("foreign_dropped", "dropped_foreign", "nobody") in faults(result)
    else:
        assert all(text(FOREIGN) in state for state in states)  # kept all along
        assert not any(f["kind"] == "foreign_dropped" for r in runs for f in r["findings"])
    if modes == ["non-atomic", "keeps-stale"]:
        # its whole-list write, computed before route_audit's removal, put the stale routes back once; the next
        # run removed them again and the controller (which keeps them, but never adds them) left it so
        # (states: 0 seeded, 1 after route_audit's first run, 2 after the controller's first write, 3 after the
        # second run)
        assert text(STALE) not in states[1] and text(STALE) in states[2] and text(STALE) not in states[3]
        assert runs[1]["changed"]
        assert [f["controller_fault"] for f in runs[1]["findings"]] == ["duplicate", "kept_stale"]


def test_owner_detected_from_the_condition_the_controller_sets_and_check_mode_writes_nothing(
        cloud, run_module, controllers):
    """The controller reads its nodes from the Kubernetes API and marks those it routed (RouteCreated); route_audit,
    reading the same Nodes and not told who owns the routes, takes them for the controller's."""
    router, nodes = seeded_router(cloud)
    label = unique("pool")
    for node in nodes:
        cloud.cli("kube", "node", "create", node["name"], "--pod-cidr", node["pod_cidr"], "--address",
                  node["address"], "--label", "pool=%s" % label)
    api = cloud.api.route_controllers()
    name = unique("ccm")
    try:
        api.start(name, router, [CLUSTER], nodes=None, modes=["keeps-stale"], period=None)
        api.step(name)
        task = dict(cloud="minicloud", router=router, cluster_cidr=[CLUSTER], node_selector="pool=%s" % label,
                    kubernetes={"kubeconfig": str(cloud.state_dir / "kubeconfig")}, state="repaired")
        before = routes_of(cloud, router)
        cloud.requests(reset=True)
        result = run_module(MODULE, task, check_mode=True, diff=True).result
        assert not result.get("failed"), result.get("msg")
        assert result["route_owner"]["owner"] == "cloud-controller" and result["route_owner"]["source"] == "detected"
        assert "RouteCreated" in result["route_owner"]["evidence"]
        assert any("taken for the cloud controller's" in w for w in result.get("warnings", []))
        assert cloud.writes() == {} and routes_of(cloud, router) == before
        assert sorted((c["reason"], c["status"]) for c in result["changes"]) == [("duplicate", "planned"),
                                                                                 ("stale", "planned")]
        assert result["diff"]["before"]["routes"] != result["diff"]["after"]["routes"]
        # told otherwise, it is flightcontrol's again
        task["route_owner"] = "flightcontrol"
        told = run_module(MODULE, task, check_mode=True).result
        assert told["route_owner"]["source"] == "route_owner" and told["route_owner"]["owner"] == "flightcontrol"
    finally:
        api.stop(name)
        for node in nodes:
            cloud.cli("kube", "node", "delete", node["name"])


@pytest.mark.parametrize("owner", ["flightcontrol", "cloud-controller"])
def test_a_node_the_controller_does_not_know_yet_flaps_only_when_route_audit_owns_the_routes(
        cloud, run_module, controllers, owner):
    """The controller knows three of the four nodes (the fourth not yet in its view): it deletes the fourth's
    route as an orphan at every period. Owning the routes, route_audit adds it back at every run (the two take
    turns); beside the controller it reports the missing route and leaves it to it."""
    router, nodes = seeded_router(cloud)
    name = controllers.begin(router, nodes[:3], [])
    states, runs = [routes_of(cloud, router)], []
    for _period in range(4):
        runs.append(audit(cloud, run_module, router, nodes, route_owner=owner))
        states.append(routes_of(cloud, router))
        controllers.step(name)
        states.append(routes_of(cloud, router))
    if owner == "flightcontrol":
        assert flapping(states) is not None, states
        assert all(any(c["action"] == "add_route" for c in r["changes"]) for r in runs)
    else:
        assert flapping(states) is None, states
        assert all(not r["changed"] for r in runs[1:])
        missing = [f for f in runs[-1]["findings"] if f["kind"] == "missing"]
        assert [(f["node"], f["repaired_by"], f["controller_fault"]) for f in missing] == [
            (nodes[3]["name"], "cloud-controller", "not_reconciled")]


def test_the_controller_in_the_background_is_waited_for_by_its_period_count(cloud):
    """Started with a period it runs by itself (CLI); ``wait`` gates on the periods recorded, not on time."""
    router, nodes = seeded_router(cloud)
    name = unique("ccm")
    cloud.json("route-controller", "start", name, "--router", router, "--cluster-cidr", CLUSTER, "--period", "0.2",
               *["--node=%s=%s=%s" % (n["name"], n["pod_cidr"], n["address"]) for n in nodes])
    try:
        last = cloud.json("route-controller", "wait", name, "--periods", 3, "--timeout", 60)
        assert last["period"] >= 3 and last["wrote"] is None  # settled after its first period
        status = cloud.json("route-controller", "status", name)
        assert status["running"] and status["periods"] >= 3
    finally:
        assert cloud.json("route-controller", "stop", name)["stopped"] is True
    assert sorted(r for r in routes_of(cloud, router) if r.startswith("198.19.")) == sorted(
        "%s=%s" % (n["pod_cidr"], n["address"]) for n in nodes)


def test_bad_keep_routes_and_controller_cidr_fail_before_any_request(cloud, run_module):
    base = dict(cloud="minicloud", router="no-such-router", cluster_cidr=[CLUSTER], nodes=[])
    for extra, words in ((dict(keep_routes=[dict(destination="10.50.0.5/16", nexthop="10.180.0.200")]), "host bits"),
                         (dict(keep_routes=[dict(destination="10.50.0.0/16", nexthop="nowhere")]), "not an IP"),
                         (dict(cloud_controller=dict(cluster_cidr=["198.19.0.0"])), "not a CIDR")):
        cloud.requests(reset=True)
        result = run_module(MODULE, dict(base, **extra)).result
        assert result["failed"] and words in result["msg"], result["msg"]
        assert cloud.writes() == {} and not cloud.requests().get("requests", {}).get("network")
