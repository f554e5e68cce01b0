"""The emulated cloud route controller's decisions (no cloud)."""

import pytest

from minicloud.route_controller.reconcile import check_modes, plan

CLUSTER = ["198.19.0.0/16"]
NODES = [{"name": "n1", "pod_cidr": "198.19.1.0/24", "address": "10.180.0.11"},
         {"name": "n2", "pod_cidr": "198.19.2.0/24", "address": "10.180.0.12"}]
RIGHT = [{"destination": "198.19.1.0/24", "nexthop": "10.180.0.11"},
         {"destination": "198.19.2.0/24", "nexthop": "10.180.0.12"}]
FOREIGN = {"destination": "10.50.0.0/16", "nexthop": "10.180.0.200"}
STALE = {"destination": "198.19.250.0/24", "nexthop": "10.180.0.97"}
DUP = {"destination": "198.19.1.0/24", "nexthop": "10.180.0.98"}
WRONG = {"destination": "198.19.2.0/24", "nexthop": "10.180.0.11"}


def test_in_order_nothing_is_written():
    assert plan(RIGHT + [FOREIGN], NODES, CLUSTER).routes is None


def test_it_adds_missing_routes_and_deletes_orphans_and_wrong_routes_of_its_cluster_cidr_only():
    decided = plan([RIGHT[0], DUP, STALE, WRONG, FOREIGN], NODES, CLUSTER)
    assert decided.added == [RIGHT[1]]
    assert decided.removed == [DUP, STALE, WRONG]
    assert decided.routes == [RIGHT[0], FOREIGN, RIGHT[1]]  # the whole list, replaced


def test_drops_foreign_deletes_routes_it_does_not_own():
    decided = plan(RIGHT + [FOREIGN], NODES, CLUSTER, ["drops-foreign"])
    assert decided.removed == [FOREIGN] and decided.routes == RIGHT


def test_keeps_stale_never_deletes_a_route_whose_nexthop_is_no_node():
    decided = plan(RIGHT + [DUP, STALE, WRONG], NODES, CLUSTER, ["keeps-stale"])
    assert decided.removed == [WRONG]  # another node's address: resolved, deleted
    assert DUP in decided.routes and STALE in decided.routes and WRONG not in decided.routes


def test_modes_are_checked():
    assert check_modes(["non-atomic", "keeps-stale", "non-atomic"]) == ["keeps-stale", "non-atomic"]
    with pytest.raises(ValueError, match="unknown route controller mode"):
        check_modes(["eats-routes"])
