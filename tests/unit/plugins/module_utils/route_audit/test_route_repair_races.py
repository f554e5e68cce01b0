# -*- coding: utf-8 -*-
"""route_audit's repair against a router another writer changes while the repair runs: at any request of the
repair, routes added, removed or pointed elsewhere, with and without extraroute-atomic and If-Match.

The router is a fake that checks, at every write the repair makes, what the write does to the router as it
stands then: a removal never takes a route that was not there when the plan was made, never a foreign route,
and never leaves a node's pod CIDR without a route."""

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import (
    ModuleFailure,
    RouterChanged,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import guards as route_guards
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import inputs as route_inputs
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import nodes as route_nodes
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import routes as route_routes
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import steps as route_steps
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit.repair import (
    RepairInput,
    RouteRepair,
)

CLUSTER = route_inputs.normalize_cluster_cidrs(["198.19.0.0/16"])
NODES = [("n%d" % i, "198.19.%d.0/24" % i, "10.180.0.1%d" % i) for i in range(1, 5)]
FOREIGN = {"destination": "10.50.0.0/16", "nexthop": "10.180.0.200"}
MODES = {"atomic": (True, True), "if_match": (False, True), "plain": (False, False)}


def r(destination, nexthop):
    return {"destination": destination, "nexthop": nexthop}


def pairs(routes):
    return set((x["destination"], x["nexthop"]) for x in routes)


class Violation(AssertionError):
    pass


class FakeRouter:
    """A Neutron router answering the repair's requests; ``change`` (the other writer) runs once, just before
    the repair's request number ``at`` (0: between the audit's read and the repair's first request)."""

    def __init__(self, routes, atomic, if_match, change=None, at=0, nodes=None, planned=None):
        self.routes = [dict(x) for x in routes]
        self.revision = 1
        self.atomic, self.if_match = atomic, if_match
        self.change, self.at = change, at
        self.requests = []
        self.nodes = nodes
        self.planned = pairs(routes) if planned is None else planned  # what the repair may remove
        self.theirs = set()  # the other writer's routes

    def request(self, what):
        if self.change is not None and len(self.requests) == self.at:
            before = pairs(self.routes)
            self.routes = self.change([dict(x) for x in self.routes])
            self.theirs |= pairs(self.routes) - before
            self.revision += 1
            self.change = None
        self.requests.append(what)

    def commit(self, new):
        """Check what replacing the routes with ``new`` removes, then make it so."""
        gone = pairs(self.routes) - pairs(new)
        foreign = [g for g in gone if not route_routes.split_routes([r(*g)], CLUSTER)[0]]
        if foreign:
            raise Violation("foreign route(s) removed: %s" % foreign)
        if gone - self.planned:
            raise Violation("removed route(s) that appeared after the plan: %s" % sorted(gone - self.planned))
        before = route_routes.by_destination(route_routes.split_routes(self.routes, CLUSTER)[0])
        after = route_routes.by_destination(route_routes.split_routes(new, CLUSTER)[0])
        for destination in route_nodes.needed_routes(self.nodes):
            if before.get(destination) and not after.get(destination):
                raise Violation("%s left without a route" % destination)
        self.routes = [dict(x) for x in new]
        self.revision += 1

    def get_router(self, router_id, deadline):
        self.request("GET")
        return {"id": router_id, "routes": [dict(x) for x in self.routes], "revision_number": self.revision}

    def add_routes(self, router_id, routes, deadline):
        assert self.atomic
        self.request("add")
        self.commit(route_steps.apply_routes(self.routes, add=routes))
        return [dict(x) for x in self.routes]

    def remove_routes(self, router_id, routes, deadline):
        assert self.atomic
        self.request("remove")
        self.commit(route_steps.apply_routes(self.routes, remove=routes))
        return [dict(x) for x in self.routes]

    def replace_routes(self, router_id, routes, revision, deadline):
        assert not self.atomic
        self.request("PUT")
        if self.if_match and revision != self.revision:
            error = RouterChanged("revision %s is not %s" % (revision, self.revision))
            error.after_lost_answer = False
            raise error
        self.commit(routes)
        return [dict(x) for x in self.routes], self.revision


def repair_input(router, nodes, atomic, if_match, max_share, limit):
    """RepairInput with the fields this version of it has."""
    wanted = dict(router=router, nodes=nodes, cidrs=CLUSTER, node_ports={}, findings=[], limit=limit,
                  atomic=atomic, if_match=if_match, node_source="nodes", max_removal_share=max_share)
    names = set(f.name for f in dataclasses.fields(RepairInput))
    return RepairInput(**dict((k, v) for k, v in wanted.items() if k in names))


def run_repair(fake, nodes, max_share=1.0, limit=None):
    """Run the repair on the router ``fake`` as the audit read it. Without If-Match (and with the atomic
    extraroute calls, which take no If-Match either) the router is read again before each write, and a change
    between that read and the write cannot be seen by any client: there, the other writer's change is moved to the
    next read."""
    if fake.atomic or not fake.if_match:
        fake.request = racing_before_reads(fake)
    router = {"id": "r1", "routes": [dict(x) for x in fake.routes], "revision_number": fake.revision}
    result = dict(changes=[], pending=[], stopped_by=None, conflicts=[])
    repair = RouteRepair(fake, repair_input(router, nodes, fake.atomic, fake.if_match, max_share, limit),
                         False, 1000, False, float("inf"), result)
    try:
        repair.run()
    except ModuleFailure as exc:
        return result, exc
    return result, None


def the_nodes():
    return route_nodes.normalize_nodes([{"name": n, "pod_cidrs": c, "address": a} for n, c, a in NODES], CLUSTER)


def world(kinds, stale_count):
    """The router as the audit reads it: per node its routes (right, missing, wrong, duplicate), stale routes
    and a foreign route."""
    routes = [dict(FOREIGN)]
    for (name, cidr, address), kind in zip(NODES, kinds):
        if kind in ("right", "duplicate"):
            routes.append(r(cidr, address))
        if kind == "duplicate":
            routes.append(r(cidr, "10.180.0.9%s" % name[1:]))
        if kind == "wrong":
            routes.append(r(cidr, NODES[0][2] if address != NODES[0][2] else NODES[1][2]))
    routes += [r("198.19.%d.0/24" % (100 + i), "10.180.0.5%d" % i) for i in range(stale_count)]
    return routes


# -- the other writer's changes ---------------------------------------------------------------

def add_stale(count):
    def change(routes):
        return routes + [r("198.19.%d.0/24" % (200 + i), "10.180.0.7%d" % i) for i in range(count)]
    return change


def remove_right(index):
    name, cidr, address = NODES[index]

    def change(routes):
        return [x for x in routes if (x["destination"], x["nexthop"]) != (cidr, address)]
    return change


def repoint(index):
    """The node's route now points at another address (its right route replaced)."""
    name, cidr, address = NODES[index]

    def change(routes):
        return [x for x in routes if x["destination"] != cidr] + [r(cidr, "10.180.0.66")]
    return change


def add_foreign(routes):
    return routes + [r("10.60.0.0/16", "10.180.0.201")]


CHANGES = {"add 5 stale": add_stale(5), "add 1 stale": add_stale(1), "remove n1's right route": remove_right(0),
           "remove n3's right route": remove_right(2), "repoint n2": repoint(1), "add a foreign route": add_foreign}


# -- the example of the issue: routes added while the repair runs -------------------------------------------

@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("at", [0, 1, 2])
def test_routes_added_by_another_writer_during_the_repair_are_never_removed(mode, at):
    atomic, if_match = MODES[mode]
    nodes = the_nodes()
    fake = FakeRouter(world(["right", "missing", "duplicate", "right"], 1), atomic, if_match, add_stale(5), at=at,
                      nodes=nodes)
    result, failure = run_repair(fake, nodes, max_share=0.5)
    assert failure is None, failure
    assert fake.theirs and fake.theirs <= pairs(fake.routes)  # all five are still there
    assert sorted((c["destination"], c["nexthop"]) for c in result["conflicts"] if c["kind"] == "route_appeared") \
        == sorted(fake.theirs)
    # what the plan was made for is done: the missing route added, the duplicate and the stale route removed
    assert pairs(fake.routes) == pairs([FOREIGN] + [r(c, a) for _n, c, a in NODES]) | fake.theirs


@pytest.mark.parametrize("mode", sorted(MODES))
def test_removal_guard_is_judged_on_the_router_as_it_is_at_the_removal(mode):
    """Planned on 4 routed pod CIDRs of which 1 stale (0.25, allowed by max_removal_share 0.4). Before the
    removal, another writer removed two live routes and filled the router's limit with foreign routes: the stale
    removal, now made to make room, would leave 1 of the 2 pod CIDRs routed now without a route (0.5): refused,
    nothing removed."""
    atomic, if_match = MODES[mode]
    nodes = route_nodes.normalize_nodes([{"name": n, "pod_cidrs": c, "address": a} for n, c, a in NODES[:3]],
                                        CLUSTER)
    stale = r("198.19.100.0/24", "10.180.0.50")
    seen = [r(c, a) for _n, c, a in NODES[:3]] + [stale]

    def shrink(current):
        return [x for x in current if x["destination"] not in (NODES[1][1], NODES[2][1])] + [
            r("10.61.0.0/16", "10.180.0.201"), r("10.62.0.0/16", "10.180.0.202")]

    assert route_guards.removal_refusal_now(seen, nodes, CLUSTER, "nodes", 0.4) is None
    fake = FakeRouter(seen, atomic, if_match, shrink, at=0, nodes=nodes)
    result, failure = run_repair(fake, nodes, max_share=0.4, limit=4)
    assert failure is not None and "refusing to repair" in str(failure), (result, fake.requests)
    assert "1 of the 2 pod CIDRs" in str(failure)
    assert (stale["destination"], stale["nexthop"]) in pairs(fake.routes)
    assert result["stopped_by"] == "max_removal_share"


# -- many interleavings ---------------------------------------------------------------------------

@settings(max_examples=150, deadline=None)
@given(kinds=st.lists(st.sampled_from(["right", "missing", "wrong", "duplicate"]), min_size=4, max_size=4),
       stale=st.integers(0, 2), change=st.sampled_from(sorted(CHANGES)), at=st.integers(0, 8),
       mode=st.sampled_from(sorted(MODES)), max_share=st.sampled_from([0.5, 1.0]))
def test_any_change_at_any_request_never_makes_a_removal_unsafe(kinds, stale, change, at, mode, max_share):
    atomic, if_match = MODES[mode]
    nodes = the_nodes()
    fake = FakeRouter(world(kinds, stale), atomic, if_match, CHANGES[change], at=at, nodes=nodes)
    result, failure = run_repair(fake, nodes, max_share=max_share)  # a removal the fake finds unsafe raises
    if failure is not None:
        assert "refusing to repair" in str(failure), failure
        return
    assert fake.theirs <= pairs(fake.routes), (fake.routes, fake.requests)  # the other writer's routes stay
    if fake.change is not None or not change.startswith(("remove", "repoint")):
        # nothing took a node's route after the repair's last read: every node has its right route
        assert all((c, a) in pairs(fake.routes) for _n, c, a in NODES), (fake.routes, fake.requests)


def racing_before_reads(fake):
    original = FakeRouter.request

    def request(what):
        if fake.change is not None and len(fake.requests) == fake.at and what != "GET":
            fake.at += 1  # move the change to a moment the repair can see
        original(fake, what)
    return request


def test_a_route_that_appeared_is_listed_once_in_conflicts():
    nodes = the_nodes()
    fake = FakeRouter(world(["missing", "missing", "right", "right"], 0), True, True, add_stale(2), at=0,
                      nodes=nodes)
    result, failure = run_repair(fake, nodes)
    assert failure is None
    appeared = [c for c in result["conflicts"] if c["kind"] == "route_appeared"]
    assert sorted((c["destination"], c["nexthop"]) for c in appeared) == sorted(fake.theirs)
