"""route_audit's parses (``cidr_cache``) live for one run: two runs in one process share none of them."""

import types

import pytest

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import cidr_cache
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import findings as route_findings
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import inputs as route_inputs
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import nodes as route_nodes
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import runner as route_runner

ROUTE = {"destination": "198.19.1.0/24", "nexthop": "10.180.0.11"}


def _parse_all():
    """What a run parses: the cluster CIDR, a node, a route; the parse objects it got back."""
    cidrs = route_inputs.normalize_cluster_cidrs(["198.19.0.0/16"])
    have = route_nodes.normalize_nodes([{"name": "n1", "pod_cidr": "198.19.1.0/24", "address": "10.180.0.11"}], cidrs)
    assert route_findings.route_findings([ROUTE], have, cidrs) == []
    return dict(address=cidr_cache.address("10.180.0.11"), destination=cidr_cache.destination("198.19.1.0/24"),
                route=cidr_cache.route_key(ROUTE["destination"], ROUTE["nexthop"]),
                pod_cidr=have[0]["pod_cidrs"][0])


def _runner(monkeypatch, seen, fail=False):
    def audit_router(self):
        seen.append(_parse_all())
        if fail:
            raise ModuleFailure("stopped")
        return {}
    monkeypatch.setattr(route_runner.RouteAuditRunner, "audit_router", audit_router)
    return route_runner.RouteAuditRunner(types.SimpleNamespace(clock=None, started=0.0, deadline=None), None)


def test_two_runs_in_one_process_share_no_parse(monkeypatch):
    seen = []
    _runner(monkeypatch, seen).run()
    with pytest.raises(ModuleFailure):
        _runner(monkeypatch, seen, fail=True).run()
    _runner(monkeypatch, seen).run()
    first, second, third = seen
    assert first["route"][0] is first["destination"] is first["pod_cidr"]  # within a run: parsed once, shared
    for later in (second, third):  # the next run (after a failed one too) parses again
        for what in first:
            assert later[what] == first[what] and later[what] is not first[what], what


def test_outside_a_run_nothing_is_kept():
    assert cidr_cache.address("10.180.0.11") is not cidr_cache.address("10.180.0.11")
    with cidr_cache.one_run() as parses:
        assert cidr_cache.current() is parses
        assert cidr_cache.address("10.180.0.11") is cidr_cache.address("10.180.0.11")
        assert "10.180.0.11" in parses.addresses
    assert cidr_cache.current() is not parses and not hasattr(cidr_cache.current(), "addresses")
