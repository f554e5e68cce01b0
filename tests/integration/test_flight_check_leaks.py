# -*- coding: utf-8 -*-
"""The flight_check role's leaks check (resource_leak_audit, report only) through playbooks/flight_check.yml in a
real ansible-playbook, on the leaks of test_resource_leak_audit's fixture."""

import json
import uuid

import pytest

from playbook_runner import REPO
from test_resource_leak_audit import leaks  # noqa: F401  pylint: disable=unused-import


@pytest.fixture
def run_flight_check(playbooks, tmp_path):
    """Run playbooks/flight_check.yml with these variables; returns (process, report or None)."""

    def run(**variables):
        report = tmp_path / ("report-%s.json" % uuid.uuid4().hex[:8])
        variables.setdefault("flight_check_report_path", str(report))
        proc = playbooks.run(REPO / "playbooks" / "flight_check.yml", extra_vars=variables)
        data = json.loads(report.read_text()) if report.exists() else None
        return proc, data

    return run


def test_flight_check_reports_leaks_in_its_summary_and_deletes_nothing(cloud, leaks, run_flight_check):  # noqa: F811
    resource = leaks["live"].replace("/", "-")
    variables = dict(flight_check_cluster_name="leaky", flight_check_cloud="minicloud",
                     flight_check_kubeconfig=str(cloud.state_dir / "kubeconfig"),
                     flight_check_servers=[leaks["live"].split("/")[1] + "-*"], flight_check_checks=["leaks"],
                     flight_check_leak_cluster=leaks["live"], flight_check_leak_port_grace_period=0)
    cloud.reset_counts()
    proc, report = run_flight_check(**variables)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output  # leaks need a person (flight_check_fail_on_findings)
    check = report["summary"]["checks"]["leaks"]
    assert check["status"] == "problem" and check["scope"] == resource and check["unknown"] == []
    assert check["counts"] == dict(ports=2, members=1, security_groups=0, floating_ips=0, servers=1)
    assert len(report["leaks"]["findings"]) == 4 and report["leaks"]["deleted"] == []
    assert "leaks: PROBLEM - 1 members, 2 ports, 1 servers in %s (report only" % resource in output
    assert report["summary"]["needs_person"] == ["leaks: 1 members, 2 ports, 1 servers in %s" % resource]
    assert cloud.write_count() == 0

    # A kind this user may not read is named, never taken for "no leaks".
    cloud.api.set_policy("load-balancer", {"os_load-balancer_api:member:get_all": "!"})
    proc, report = run_flight_check(**variables)
    check = report["summary"]["checks"]["leaks"]
    assert check["unknown"] == ["members"] and check["counts"]["members"] is None
    assert "(unknown, not readable: members)" in proc.stdout + proc.stderr

    # The gone cluster's groups and address, the live cluster named as existing.
    proc, report = run_flight_check(**dict(variables, flight_check_leak_cluster=leaks["gone"],
                                           flight_check_leak_clusters=[leaks["live"]]))
    check = report["summary"]["checks"]["leaks"]
    assert check["counts"]["security_groups"] == 2 and check["counts"]["floating_ips"] == 1
