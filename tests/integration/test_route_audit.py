# -*- coding: utf-8 -*-
"""route_audit against minicloud: a real Neutron router with real node ports, routes seeded broken on purpose."""

import json
import uuid

import pytest

from races import with_change_after_first_answer, with_concurrent_change

MODULE = "flightcontrol.openstack.route_audit"
CLUSTER = "198.19.0.0/16"


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:6])


def make_router(cloud, count=0, routes=True, pairs=True, prefix="node"):
    """A router on its own node network with ``count`` node ports; returns (router name, nodes)."""
    name = unique("rt")
    cloud.json("router", "create", name, "--network", unique("nodes"))
    nodes = []
    if count:
        args = ["router", "nodes", name, "--count", count, "--prefix", unique(prefix)]
        args += ["--routes"] if routes else []
        args += ["--address-pairs"] if pairs else []
        nodes = cloud.json(*args)
    return name, nodes


def node_args(nodes):
    return [{"name": n["name"], "pod_cidr": n["pod_cidr"], "address": n["address"]} for n in nodes]


def routes_of(cloud, router):
    return sorted("%s=%s" % (r["destination"], r["nexthop"]) for r in cloud.json("router", "show", router)["routes"])


def route(node):
    return "%s=%s" % (node["pod_cidr"], node["address"])


def run(run_module, router, nodes, **args):
    task = dict(cloud="minicloud", router=router, cluster_cidr=[CLUSTER], nodes=node_args(nodes))
    check_mode = args.pop("check_mode", False)
    diff = args.pop("diff", False)
    playbook = args.pop("playbook", False)
    task.update(args)
    return run_module(MODULE, task, check_mode=check_mode, diff=diff, playbook=playbook).result


def run_ok(run_module, router, nodes, **args):
    result = run(run_module, router, nodes, **args)
    assert not result.get("failed"), result.get("msg") or result
    return result


def kinds(findings):
    return sorted(f["kind"] for f in findings)


def test_kubernikus_duplicates_found_right_one_named_repair_leaves_one_then_idempotent(cloud, run_module):
    router, nodes = make_router(cloud, 1)
    live = nodes[0]
    dest = live["pod_cidr"]
    # The state after several node deletions: routes to two dead nodes written before the live one's.
    cloud.cli("router", "routes", router, "--set", dest + "=10.180.0.3", "--set", dest + "=10.180.0.4",
              "--set", route(live))
    audit = run_ok(run_module, router, nodes)
    assert kinds(audit["findings"]) == ["duplicate"] and not audit["changed"] and not audit["healthy"]
    dup = audit["findings"][0]
    assert dup["node"] == live["name"] and dup["severity"] == "error"
    assert dict((r["nexthop"], r["role"]) for r in dup["routes"]) == {
        "10.180.0.3": "stale", "10.180.0.4": "stale", live["address"]: "right"}
    assert len(routes_of(cloud, router)) == 3

    cloud.requests(reset=True)
    repaired = run_ok(run_module, router, nodes, state="repaired", playbook=True)
    assert repaired["changed"] and repaired["healthy"] and repaired["remaining"] == []
    assert sorted((c["action"], c["nexthop"], c["status"]) for c in repaired["changes"]) == [
        ("remove_route", "10.180.0.3", "done"), ("remove_route", "10.180.0.4", "done")]
    assert routes_of(cloud, router) == [route(live)]
    writes = cloud.writes()
    assert sum(writes["PUT"].values()) == 1, writes  # one remove_extraroutes for both

    cloud.requests(reset=True)
    again = run_ok(run_module, router, nodes, state="repaired")
    assert not again["changed"] and again["findings"] == [] and again["changes"] == []
    assert cloud.writes() == {}


def test_stale_route_after_a_node_is_deleted(cloud, run_module):
    router, nodes = make_router(cloud, 3)
    gone, kept = nodes[2], nodes[:2]
    audit = run_ok(run_module, router, kept)
    assert kinds(audit["findings"]) == ["stale"]
    stale = audit["findings"][0]
    assert stale["destination"] == gone["pod_cidr"] and stale["severity"] == "warning"
    assert audit["healthy"]  # a stale route alone breaks nothing until its pod CIDR is given out again
    run_ok(run_module, router, kept, state="repaired")
    assert routes_of(cloud, router) == sorted(route(n) for n in kept)


def test_missing_routes_after_failover_wiped_them_are_added_in_one_request(cloud, run_module):
    router, nodes = make_router(cloud, 4)
    cloud.cli("router", "routes", router, "--clear")
    audit = run_ok(run_module, router, nodes)
    assert kinds(audit["findings"]) == ["missing"] * 4 and not audit["healthy"]
    cloud.requests(reset=True)
    repaired = run_ok(run_module, router, nodes, state="repaired")
    assert [c["action"] for c in repaired["changes"]] == ["add_route"] * 4
    assert routes_of(cloud, router) == sorted(route(n) for n in nodes)
    assert sum(cloud.writes()["PUT"].values()) == 1


def test_wrong_nexthop_right_route_added_before_the_wrong_one_goes(cloud, run_module):
    router, nodes = make_router(cloud, 2)
    first, second = nodes
    cloud.cli("router", "routes", router, "--set", "%s=%s" % (first["pod_cidr"], second["address"]),
              "--set", route(second))
    audit = run_ok(run_module, router, nodes)
    assert kinds(audit["findings"]) == ["wrong_nexthop"]
    assert audit["findings"][0]["routes"][0]["role"] == "wrong" and audit["findings"][0]["routes"][0]["node"] == second["name"]
    repaired = run_ok(run_module, router, nodes, state="repaired")
    assert [c["action"] for c in repaired["changes"]] == ["add_route", "remove_route"]
    assert routes_of(cloud, router) == sorted(route(n) for n in nodes)


FOREIGN = ["10.50.0.0/16=10.180.0.200", "198.0.0.0/8=10.180.0.201", "198.20.0.0/24=10.180.0.3"]


@pytest.mark.parametrize("mode", ["audited", "check", "repaired"])
def test_foreign_routes_untouched_in_every_mode(cloud, run_module, mode):
    router, nodes = make_router(cloud, 2)
    cloud.cli("router", "routes", router, *["--add=" + f for f in FOREIGN])
    cloud.cli("router", "routes", router, "--add", "198.19.200.0/24=10.180.0.9")  # stale, inside the cluster
    cloud.cli("router", "routes", router, "--remove", route(nodes[0]))  # missing
    # An empty node list would make every cluster route stale: foreign ones must still not move.
    result = run_ok(run_module, router, nodes, state="audited" if mode == "audited" else "repaired",
                    check_mode=mode == "check")
    assert result["routes"]["foreign"] == 3
    for change in result["changes"] + result["findings"]:
        assert "%s=%s" % (change.get("destination"), change.get("nexthop")) not in FOREIGN
    after = routes_of(cloud, router)
    assert all(f in after for f in FOREIGN)
    if mode == "repaired":
        assert sorted(after) == sorted(FOREIGN + [route(n) for n in nodes])


def test_check_mode_plans_every_fix_with_zero_writes_and_diff(cloud, run_module):
    router, nodes = make_router(cloud, 3, pairs=False)
    a, b, c = nodes
    cloud.cli("router", "routes", router, "--set", "%s=10.180.0.3" % a["pod_cidr"], "--set", route(a),
              "--set", "%s=%s" % (b["pod_cidr"], c["address"]), "--set", "198.19.250.0/24=10.180.0.4")
    before = routes_of(cloud, router)
    cloud.requests(reset=True)
    result = run_ok(run_module, router, nodes, state="repaired", check_mode=True, diff=True)
    assert cloud.writes() == {} and cloud.writes("compute") == {}
    assert routes_of(cloud, router) == before
    assert result["changed"] and all(ch["status"] == "planned" for ch in result["changes"])
    expected = ["address_pair_missing"] * 3 + ["duplicate", "missing", "stale", "wrong_nexthop"]
    assert kinds(result["findings"]) == expected
    assert result["remaining"] == []
    assert sorted(result["diff"]["after"]["routes"]) == sorted("%s -> %s" % (n["pod_cidr"], n["address"])
                                                               for n in nodes)
    assert result["diff"]["after"]["address_pairs"][a["name"]] == [a["pod_cidr"]]


def test_address_pairs_added_with_the_repair(cloud, run_module):
    router, nodes = make_router(cloud, 2, pairs=False)
    result = run_ok(run_module, router, nodes, state="repaired", max_changes=2)
    assert kinds(result["findings"]) == ["address_pair_missing"] * 2
    assert sorted(c["node"] for c in result["changes"]) == sorted(n["name"] for n in nodes)
    conn = cloud.sdk()
    for node in nodes:
        pairs = conn.network.get_port(node["port"]).allowed_address_pairs
        assert [p["ip_address"] for p in pairs] == [node["pod_cidr"]]
    assert run_ok(run_module, router, nodes)["findings"] == []


def test_limit_near_is_a_warning_and_over_is_an_error_saying_what_to_raise(cloud, run_module):
    # minicloud's Neutron enforces the router_route quota, 30 by default.
    router, nodes = make_router(cloud, 31, routes=False)
    near = run_ok(run_module, router, nodes[:28])
    limit = [f for f in near["findings"] if f["kind"] == "limit"]
    assert limit and limit[0]["severity"] == "warning" and near["limit"]["limit"] == 30
    assert near["limit"]["source"] == "quota router_route"

    over = run(run_module, router, nodes)
    assert not over.get("failed")  # an audit reports
    limit = [f for f in over["findings"] if f["kind"] == "limit"][0]
    assert limit["severity"] == "error" and limit["fix"]["raise_limit_to"] == 31
    assert "raise it to at least 31" in limit["message"]

    repaired = run(run_module, router, nodes, state="repaired", max_changes=40)
    assert repaired["failed"] and repaired["stopped_by"] == "limit"
    assert "route limit leaves no room for 1 route" in repaired["msg"]
    assert len(routes_of(cloud, router)) == 30 and len(repaired["pending"]) == 1


def test_max_changes_stops_and_a_rerun_finishes(cloud, run_module):
    router, nodes = make_router(cloud, 5)
    cloud.cli("router", "routes", router, "--clear")
    first = run(run_module, router, nodes, state="repaired", max_changes=3)
    assert first["failed"] and first["stopped_by"] == "max_changes"
    assert "max_changes 3" in first["msg"] and len(first["pending"]) == 2
    assert len([c for c in first["changes"] if c["status"] == "done"]) == 3
    assert len(routes_of(cloud, router)) == 3
    second = run_ok(run_module, router, nodes, state="repaired", max_changes=3)
    assert len(second["changes"]) == 2 and second["healthy"]
    assert routes_of(cloud, router) == sorted(route(n) for n in nodes)


def test_nexthop_neutron_refuses_is_reported_others_repaired_then_rerun_finishes(cloud, run_module):
    router, nodes = make_router(cloud, 3)
    cloud.cli("router", "routes", router, "--clear")
    bad = dict(nodes[1], address="10.99.0.5")  # on no subnet of the router
    cloud.cli("router", "routes", router, "--add", "%s=10.180.0.4" % bad["pod_cidr"])  # its old, wrong route
    wanted = [nodes[0], bad, nodes[2]]
    audit = run_ok(run_module, router, wanted)
    note = [f for f in audit["findings"] if f["destination"] == bad["pod_cidr"]][0]
    assert "Neutron will likely refuse" in note["note"]

    result = run(run_module, router, wanted, state="repaired")
    assert result["failed"] and "Neutron refused 1 change" in result["msg"] and "10.99.0.5" in result["msg"]
    assert "not connected with router" in result["msg"]
    rejected = [c for c in result["changes"] if c["status"] == "rejected"]
    assert [(c["destination"], c["nexthop"]) for c in rejected] == [(bad["pod_cidr"], "10.99.0.5")]
    # The others were added; the refused destination keeps what it had (nothing removed under it).
    assert routes_of(cloud, router) == sorted([route(nodes[0]), route(nodes[2]), "%s=10.180.0.4" % bad["pod_cidr"]])
    # With the node's real address the re-run repairs the rest.
    final = run_ok(run_module, router, nodes, state="repaired")
    assert [c["action"] for c in final["changes"]] == ["add_route", "remove_route"]
    assert routes_of(cloud, router) == sorted(route(n) for n in nodes)


def test_faults_until_the_deadline_leave_the_router_consistent(cloud, run_module):
    router, nodes = make_router(cloud, 2)
    cloud.cli("router", "routes", router, "--set", "%s=10.180.0.3" % nodes[0]["pod_cidr"], "--set", route(nodes[1]))
    cloud.fault("network", "/v2.0/routers/*/remove_extraroutes", 503, method="PUT")
    # 8 s: the add before the failing removal must answer within the deadline on a loaded machine (with 4 s, the
    # add's answer was once cut by the deadline, and the run stopped there instead of at the 503)
    result = run(run_module, router, nodes, state="repaired", timeout=8, playbook=True)
    assert result["failed"] and "503" in result["msg"], result["msg"]
    # The right route went in, the wrong one stayed: traffic was never left without a route.
    assert routes_of(cloud, router) == sorted(["%s=10.180.0.3" % nodes[0]["pod_cidr"], route(nodes[0]), route(nodes[1])])
    cloud.clear_faults()
    run_ok(run_module, router, nodes, state="repaired", playbook=True)
    assert routes_of(cloud, router) == sorted(route(n) for n in nodes)


def test_invalid_input_fails_before_any_request(cloud, run_module):
    router, nodes = make_router(cloud, 1)
    cloud.requests(reset=True)
    bad = [dict(nodes[0], pod_cidr="198.19.1.5/24")]
    result = run(run_module, router, bad, state="repaired")
    assert result["failed"] and "host bits" in result["msg"] and "198.19.1.0/24" in result["msg"]
    assert cloud.requests().get("totals", {}).get("by_service", {}) in ({}, None) or \
        sum(cloud.requests()["totals"]["by_service"].values()) == 0
    result = run(run_module, router, [dict(nodes[0], pod_cidr="fd00::/64")], cluster_cidr=[CLUSTER, "fd00::/48"])
    assert result["failed"] and "no IPv6 address" in result["msg"]


def test_unknown_router_is_named(cloud, run_module):
    result = run(run_module, "no-such-router", [])
    assert result["failed"] and "router no-such-router not found" in result["msg"]


def test_audit_request_count_is_constant(cloud, run_module):
    small, small_nodes = make_router(cloud, 2)
    large, large_nodes = make_router(cloud, 25)
    counts = []
    for router, nodes in ((small, small_nodes), (large, large_nodes)):
        result = run_ok(run_module, router, nodes)
        counts.append(result["api_calls"])
    assert counts[0] == counts[1], counts


def test_nodes_from_kubernetes(cloud, run_module):
    """Nodes read from the Kubernetes API (with a label selector); a node deleted there leaves a stale route."""
    router, nodes = make_router(cloud, 2)
    label = unique("pool")
    for node in nodes:
        cloud.cli("kube", "node", "create", node["name"], "--pod-cidr", node["pod_cidr"], "--address", node["address"],
                  "--label", "pool=%s" % label)
    other = unique("elsewhere")
    cloud.cli("kube", "node", "create", other, "--pod-cidr", "10.250.0.0/24", "--address", "10.250.0.1")
    task = dict(cloud="minicloud", router=router, cluster_cidr=[CLUSTER], node_selector="pool=%s" % label,
                kubernetes={"kubeconfig": str(cloud.state_dir / "kubeconfig")})
    try:
        result = run_module(MODULE, task).result
        assert not result.get("failed"), result.get("msg") or result
        assert result["node_source"] == "kubernetes"
        assert sorted(n["name"] for n in result["nodes"]) == sorted(n["name"] for n in nodes)
        assert result["healthy"] is True and result["findings"] == []
        cloud.cli("kube", "node", "delete", nodes[0]["name"])
        result = run_module(MODULE, task).result
        assert [f["kind"] for f in result["findings"]] == ["stale"]
        (stale,) = result["findings"][0]["routes"]
        assert (stale["destination"], stale["nexthop"]) == (nodes[0]["pod_cidr"], nodes[0]["address"])
    finally:
        cloud.cli("kube", "node", "delete", other)


@pytest.fixture
def older_neutron(cloud):
    """Neutron answering as a cloud older than Ussuri: no extraroute-atomic (extension list, 404 on its calls)."""
    cloud.cli("extension", "hide", "extraroute-atomic")
    try:
        yield cloud
    finally:
        cloud.cli("extension", "restore")


def router_puts(cloud):
    return dict((path, n) for path, n in cloud.writes().get("PUT", {}).items())


def test_without_extraroute_atomic_the_repair_updates_the_whole_router_in_safe_order(older_neutron, run_module):
    cloud = older_neutron
    router, nodes = make_router(cloud, 3)
    first, second, third = nodes
    cloud.cli("router", "routes", router, "--set", "%s=10.180.0.3" % first["pod_cidr"], "--set", route(first),
              "--set", route(second), "--set", "198.19.200.0/24=10.180.0.9", "--set", FOREIGN[0])
    cloud.requests(reset=True)
    result = run_ok(run_module, router, nodes, state="repaired")
    assert result["router"]["atomic"] is False
    assert sorted((c["action"], c["reason"], c["status"]) for c in result["changes"]) == [
        ("add_route", "missing", "done"), ("remove_route", "duplicate", "done"), ("remove_route", "stale", "done")]
    assert result["conflicts"] == []
    assert routes_of(cloud, router) == sorted([FOREIGN[0]] + [route(n) for n in nodes])
    # plain router updates only, one per step (add, then the duplicate, then the stale route)
    assert router_puts(cloud) == {"/v2.0/routers/{id}": 3}, cloud.writes()
    again = run_ok(run_module, router, nodes, state="repaired")
    assert not again["changed"] and again["findings"] == []


def test_without_extraroute_atomic_a_concurrent_change_is_read_again_and_kept(older_neutron, run_module):
    """The module's router update is held back; another client adds a route meanwhile; If-Match gets 412,
    the module reads the router again and its update keeps the other client's route."""
    cloud = older_neutron
    router, nodes = make_router(cloud, 2)
    cloud.cli("router", "routes", router, "--clear")
    result, other = with_concurrent_change(
        cloud, "network", "PUT", "/v2.0/routers/*",
        lambda: run_ok(run_module, router, nodes, state="repaired", playbook=True),
        lambda: cloud.json("router", "routes", router, "--add", FOREIGN[1]))
    assert FOREIGN[1].split("=", maxsplit=1)[0] in json.dumps(other)  # the other client's route went in first
    assert [c["kind"] for c in result["conflicts"]] == ["router_changed"]
    assert routes_of(cloud, router) == sorted([FOREIGN[1]] + [route(n) for n in nodes])
    assert [c["action"] for c in result["changes"]] == ["add_route", "add_route"]


# -- a writer running during the repair: every removal judged on the router as it stands then --------------------

QUOTA_GET = ("network", "GET", "/v2.0/quotas/*")  # the last read before the repair's first write
APPEARED = ["198.19.%d.0/24=10.180.0.%d" % (210 + i, 70 + i) for i in range(5)]


def pair_of(text):
    destination, nexthop = text.split("=")
    return destination, nexthop


def racing_router(cloud):
    """Three nodes with their routes, a duplicate of the first one's (to a dead node) and a stale route: the plan
    removes the duplicate, then the stale route."""
    router, nodes = make_router(cloud, 3)
    cloud.cli("router", "routes", router, "--add", "%s=10.180.0.3" % nodes[0]["pod_cidr"],
              "--add", "198.19.250.0/24=10.180.0.9")
    return router, nodes


def add_routes(cloud, router, nodes):
    return cloud.json("router", "routes", router, *["--add=" + x for x in APPEARED])


def remove_right_route(cloud, router, nodes):
    return cloud.json("router", "routes", router, "--remove", route(nodes[0]))


def repoint(cloud, router, nodes):
    return cloud.json("router", "routes", router, "--remove", route(nodes[1]),
                      "--add", "%s=10.180.0.66" % nodes[1]["pod_cidr"])


def check_added(cloud, router, nodes, result):
    after = routes_of(cloud, router)
    assert all(x in after for x in APPEARED), after  # never removed by a plan made before they were there
    appeared = sorted("%s=%s" % (c["destination"], c["nexthop"]) for c in result["conflicts"]
                      if c["kind"] == "route_appeared")
    assert appeared == sorted(APPEARED)
    assert sorted(after) == sorted(APPEARED + [route(n) for n in nodes])  # the plan's own removals were made
    assert kinds(result["remaining"]) == ["stale"] * 5  # still stale by this view: a fresh run judges them


def check_removed(cloud, router, nodes, result):
    # the right route went away before the duplicate's removal: the right route comes back first, so the
    # destination is never without a route
    ours = [(c["action"], c["nexthop"]) for c in result["changes"] if c["destination"] == nodes[0]["pod_cidr"]]
    assert ours == [("add_route", nodes[0]["address"]), ("remove_route", "10.180.0.3")], result["changes"]
    assert routes_of(cloud, router) == sorted(route(n) for n in nodes)


def check_repointed(cloud, router, nodes, result):
    after = routes_of(cloud, router)
    theirs = "%s=10.180.0.66" % nodes[1]["pod_cidr"]
    assert theirs in after and route(nodes[1]) in after, after  # the right route added, theirs kept
    assert [f["destination"] for f in result["remaining"]] == [nodes[1]["pod_cidr"]]
    assert any(c["kind"] == "route_appeared" and c["nexthop"] == "10.180.0.66" for c in result["conflicts"])


WRITERS = {"routes added": (add_routes, check_added), "a right route removed": (remove_right_route, check_removed),
           "a nexthop changed": (repoint, check_repointed)}


def race_repair(cloud, run_module, router, nodes, writer, gate=QUOTA_GET, **args):
    return with_concurrent_change(cloud, *gate, lambda: run(run_module, router, nodes, state="repaired",
                                                            playbook=True, **args),
                                  lambda: writer(cloud, router, nodes))


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_writer_during_the_repair_is_never_overwritten(cloud, run_module, writer):
    change, check = WRITERS[writer]
    router, nodes = racing_router(cloud)
    result, _other = race_repair(cloud, run_module, router, nodes, change)
    assert not result.get("failed"), result.get("msg")
    assert result["router"]["atomic"] is True
    check(cloud, router, nodes, result)


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_without_extraroute_atomic_a_writer_during_the_repair_is_never_overwritten(
        older_neutron, run_module, writer):
    cloud = older_neutron
    change, check = WRITERS[writer]
    router, nodes = racing_router(cloud)
    result, _other = race_repair(cloud, run_module, router, nodes, change)
    assert not result.get("failed"), result.get("msg")
    assert result["router"]["atomic"] is False
    assert any(c["kind"] == "router_changed" for c in result["conflicts"])  # If-Match: the update was refused
    check(cloud, router, nodes, result)


def test_routes_added_between_the_repairs_last_read_and_its_removal_are_kept(cloud, run_module):
    """The gate holds the read the repair makes of the router just before its removal (the last GET)."""
    router, nodes = racing_router(cloud)
    result, _other = race_repair(cloud, run_module, router, nodes, add_routes,
                                 gate=("network", "GET", "/v2.0/routers/*"))
    assert not result.get("failed"), result.get("msg")
    check_added(cloud, router, nodes, result)


@pytest.mark.parametrize("atomic", [True, False])
def test_removal_guard_is_judged_on_the_router_at_the_removal(cloud, run_module, atomic):
    """Read: 3 live routes and 1 stale (1 of 4, allowed by max_removal_share 0.4), at the route limit 4. Before
    the repair writes, another writer takes two live routes and fills the limit with foreign routes: removing the
    stale route (to make room) would leave 1 of the 2 pod CIDRs routed now without a route: refused."""
    if not atomic:
        cloud.cli("extension", "hide", "extraroute-atomic")
    try:
        router, nodes = make_router(cloud, 3)
        cloud.cli("router", "routes", router, "--add", "198.19.250.0/24=10.180.0.9")

        def shrink(cloud, router, nodes):
            return cloud.json("router", "routes", router, "--remove", route(nodes[1]), "--remove", route(nodes[2]),
                              "--add", FOREIGN[0], "--add", "10.51.0.0/16=10.180.0.202")

        ports = ("network", "GET", "/v2.0/ports")  # with route_limit given, the network's ports are read last
        result, _other = with_change_after_first_answer(
            cloud, *ports, lambda: run(run_module, router, nodes, state="repaired", playbook=True,
                                       max_removal_share=0.4, route_limit=4),
            lambda: shrink(cloud, router, nodes))
    finally:
        if not atomic:
            cloud.cli("extension", "restore")
    assert result["failed"] and "refusing to repair" in result["msg"], result.get("msg")
    assert "1 of the 2 pod CIDRs" in result["msg"]
    assert "198.19.250.0/24=10.180.0.9" in routes_of(cloud, router)
    assert result["stopped_by"] == "max_removal_share"


# -- a node that exists is never gone ------------------------------------------------------------------------

def kube_task(router, label, **args):
    task = dict(cloud="minicloud", router=router, cluster_cidr=[CLUSTER], node_selector="pool=%s" % label,
                state="repaired")
    task.update(args)
    return task


def kube_nodes(cloud, nodes, label, without=None):
    """Create ``nodes`` as Kubernetes Nodes; ``without``: {index: "pod_cidr" or "address"} left out."""
    for index, node in enumerate(nodes):
        args = ["kube", "node", "create", node["name"], "--label", "pool=%s" % label]
        if (without or {}).get(index) != "pod_cidr":
            args += ["--pod-cidr", node["pod_cidr"]]
        if (without or {}).get(index) != "address":
            args += ["--address", node["address"]]
        cloud.cli(*args)


@pytest.mark.parametrize("missing", ["pod_cidr", "address"])
def test_a_live_node_without_pod_cidr_or_address_keeps_its_route_and_is_reported(cloud, run_module, missing):
    router, nodes = make_router(cloud, 4)
    label = unique("pool")
    kube_nodes(cloud, nodes, label, without={1: missing})
    cloud.cli("router", "routes", router, "--add", "198.19.250.0/24=10.180.0.9")  # really stale
    task = kube_task(router, label, kubernetes={"kubeconfig": str(cloud.state_dir / "kubeconfig")})
    try:
        result = run_module(MODULE, task, playbook=True).result
        assert not result.get("failed"), result.get("msg")
        assert [n["name"] for n in result["incomplete_nodes"]] == [nodes[1]["name"]]
        incomplete = [f for f in result["findings"] if f["kind"] == "incomplete_node"]
        assert [f["node"] for f in incomplete] == [nodes[1]["name"]]
        assert [(r["destination"], r["nexthop"]) for r in incomplete[0]["routes"]] == [
            (nodes[1]["pod_cidr"], nodes[1]["address"])]
        assert [(c["action"], c["destination"]) for c in result["changes"]] == [
            ("remove_route", "198.19.250.0/24")]
        assert routes_of(cloud, router) == sorted(route(n) for n in nodes)
        assert any(nodes[1]["name"] in w for w in result.get("warnings", [])), result.get("warnings")
        assert [f["destination"] for f in result["findings"] if f["kind"] == "stale"] == ["198.19.250.0/24"]
    finally:
        for node in nodes:
            cloud.cli("kube", "node", "delete", node["name"])


def test_warnings_of_many_nodes_are_summarised(cloud, run_module):
    """Nodes without a port on the router's networks: one warning each up to 20, then one for the rest."""
    router, nodes = make_router(cloud, 1)
    absent = [{"name": "gone-%d" % i, "pod_cidr": "198.19.%d.0/24" % (100 + i), "address": "10.180.0.%d" % (100 + i)}
              for i in range(25)]
    result = run_ok(run_module, router, nodes + absent)
    warnings = result.get("warnings", [])
    assert len([w for w in warnings if "no port with address" in w]) == 20
    assert any(w.startswith("5 more node(s) have no port") for w in warnings), warnings
    assert result["omitted"] == dict(findings=0, remaining=0, pending=0, nodes=0, incomplete_nodes=0)


# -- keep_routes: a kept route is never removed, whatever it looks like inside cluster_cidr ----------------------

def test_a_kept_route_inside_cluster_cidr_and_stale_stays_on_every_run(cloud, run_module):
    router, nodes = make_router(cloud, 2)
    kept = dict(destination="198.19.9.0/24", nexthop=nodes[1]["address"])  # no node has 198.19.9.0/24: stale
    cloud.cli("router", "routes", router, "--add", "%s=%s" % (kept["destination"], kept["nexthop"]))
    before = routes_of(cloud, router)
    for _run in range(2):
        result = run_ok(run_module, router, nodes, state="repaired", keep_routes=[kept], fail_on_findings=True)
        assert result["changed"] is False and result["changes"] == [], result["changes"]
        assert "foreign_dropped" not in kinds(result["findings"]) and "stale" not in kinds(result["findings"])
        assert routes_of(cloud, router) == before


def test_a_kept_second_route_of_a_nodes_pod_cidr_is_reported_and_never_removed(cloud, run_module):
    router, nodes = make_router(cloud, 2)
    kept = dict(destination=nodes[0]["pod_cidr"], nexthop=nodes[1]["address"])  # beside node 0's right route
    cloud.cli("router", "routes", router, "--add", "%s=%s" % (kept["destination"], kept["nexthop"]))
    before = routes_of(cloud, router)
    result = run(run_module, router, nodes, state="repaired", keep_routes=[kept])
    assert not result.get("failed"), result.get("msg")
    assert result["changed"] is False and routes_of(cloud, router) == before
    duplicate = [f for f in result["remaining"] if f["kind"] == "duplicate"]
    assert duplicate and duplicate[0]["fix"]["remove"] == [] and not result["healthy"]
    assert "keep_routes" in duplicate[0]["message"]


@pytest.mark.parametrize("args, message", [
    (dict(keep_routes=[dict(destination="fd00:9::/64", nexthop="10.180.0.12")]), "is IPv6 but the nexthop"),
    (dict(keep_routes=[dict(destination="198.19.9.0/24", nexthop="fd00::12")]), "is IPv4 but the nexthop"),
    (dict(keep_routes=[dict(destination="198.19.9.5/24", nexthop="10.180.0.12")]), "host bits"),
    (dict(cloud_controller=dict(cluster_cidr=["0.0.0.0/0"])),
     r"cloud_controller.cluster_cidr 0.0.0.0/0 is every address of its family"),
    (dict(cloud_controller=dict(cluster_cidr=["::/0"])), "cloud_controller.cluster_cidr ::/0 is every address"),
    (dict(cloud_controller=dict(cluster_cidr=["198.19.1.1/16"])), "host bits"),
    (dict(cluster_cidr=["0.0.0.0/0"]), "cluster_cidr 0.0.0.0/0 is every address of its family"),
])
def test_route_inputs_that_make_no_sense_are_refused_before_any_request(cloud, run_module, args, message):
    router, nodes = make_router(cloud, 1)
    before = routes_of(cloud, router)
    cloud.requests(reset=True)
    result = run(run_module, router, nodes, state="repaired", **args)
    assert result["failed"] and message in result["msg"] and result["changed"] is False, result.get("msg")
    assert sum((cloud.requests().get("totals") or {}).get("by_service", {}).values()) == 0
    assert routes_of(cloud, router) == before
