# -*- coding: utf-8 -*-
"""The flight_check role's summary template, rendered by Ansible's templar with route_audit results as they come."""

import json
import pathlib

import pytest

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

try:
    from ansible.template import trust_as_template
except ImportError:  # ansible-core before 2.19 trusts every string
    def trust_as_template(text):
        return text

TEMPLATE = pathlib.Path(__file__).resolve().parents[3] / "roles" / "flight_check" / "templates" / "summary.json.j2"


def finding(kind, severity="error", node=None):
    return dict(kind=kind, severity=severity, node=node, destination=None, message="%s finding" % kind)


def summary(routes):
    variables = dict(flight_check_errors={}, flight_check_checks=["routes"], flight_check_router="rt",
                     flight_check_route_state="repaired", flight_check_cluster_name="prod", flight_check_started="t",
                     flight_check_report_file="report.json", flight_check_delete_unregistered=False,
                     flight_check_routes=routes)
    text = Templar(loader=DataLoader(), variables=variables).template(trust_as_template(TEMPLATE.read_text()))
    return json.loads(text) if isinstance(text, str) else text


def routes_result(findings, remaining, counts, omitted_findings=0, omitted_remaining=0, changes=()):
    return dict(findings=findings, remaining=remaining, counts=counts, changes=list(changes),
                omitted=dict(findings=omitted_findings, remaining=omitted_remaining, pending=0, nodes=0,
                             incomplete_nodes=0))


def test_a_node_still_joining_is_reported_but_needs_no_person():
    joining = finding("incomplete_node", "warning", "prod-node-9")
    result = summary(routes_result([joining], [joining], dict(incomplete_node=1, stale=0)))
    routes = result["checks"]["routes"]
    assert routes["status"] == "ok" and result["ok"] and result["needs_person"] == []
    assert routes["joining"] == 1 and routes["joining_nodes"] == ["prod-node-9"]
    assert "1 node(s) still joining, not routable yet: prod-node-9" in result["lines"][2]


def test_a_node_joining_beside_a_real_finding_is_a_problem_of_that_finding_only():
    joining, stale = finding("incomplete_node", "warning", "prod-node-9"), finding("stale")
    result = summary(routes_result([stale, joining], [stale, joining], dict(incomplete_node=1, stale=1)))
    routes = result["checks"]["routes"]
    assert routes["status"] == "problem" and routes["remaining_kinds"] == ["stale"]
    assert result["needs_person"] == ["routes: 1 stale on router rt"]


def test_capped_lists_are_counted_with_what_route_audit_left_out():
    listed = [finding("missing") for _index in range(200)]
    result = summary(routes_result(listed, listed, dict(missing=450), omitted_findings=250, omitted_remaining=250))
    routes = result["checks"]["routes"]
    assert routes["status"] == "problem"
    assert routes["findings"] == 450 and routes["remaining"] == 450 and routes["remaining_unlisted"] == 250
    assert "200 missing, 250 more finding(s) not listed" in result["needs_person"][0]


def test_capped_lists_of_joining_nodes_alone_are_no_problem():
    listed = [finding("incomplete_node", "warning", "n%d" % i) for i in range(200)]
    result = summary(routes_result(listed, listed, dict(incomplete_node=230), omitted_findings=30,
                                   omitted_remaining=30))
    routes = result["checks"]["routes"]
    assert routes["status"] == "ok" and routes["joining"] == 230 and result["ok"]


@pytest.mark.parametrize("changes, status", [([], "ok"), ([dict(status="done")], "repaired")])
def test_no_finding_left(changes, status):
    result = summary(routes_result([finding("stale")], [], dict(stale=1), changes=changes))
    assert result["checks"]["routes"]["status"] == status and result["checks"]["routes"]["remaining"] == 0
