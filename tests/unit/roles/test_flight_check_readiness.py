# -*- coding: utf-8 -*-
"""The readiness line of the flight_check role's summary, rendered by Ansible's templar with cluster_readiness
results as they come."""

import json
import pathlib

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

try:
    from ansible.template import trust_as_template
except ImportError:  # ansible-core before 2.19 trusts every string
    def trust_as_template(text):
        return text

TEMPLATE = pathlib.Path(__file__).resolve().parents[3] / "roles" / "flight_check" / "templates" / "summary.json.j2"


def summary(readiness=None, errors=None):
    variables = dict(flight_check_errors=errors or {}, flight_check_checks=["readiness"],
                     flight_check_cluster_name="prod", flight_check_started="t", flight_check_report_file="r.json",
                     flight_check_delete_unregistered=False, flight_check_readiness_cluster="clusters/prod")
    if readiness is not None:
        variables["flight_check_readiness"] = readiness
    text = Templar(loader=DataLoader(), variables=variables).template(trust_as_template(TEMPLATE.read_text()))
    return json.loads(text) if isinstance(text, str) else text


def finding(code, severity):
    return dict(code=code, severity=severity, view="x", message=code, action="a", numbers={}, blocking=False)


def views(**unknown):
    names = ("versions", "orc", "monitor", "control_plane", "health_checks", "v1beta1_writers")
    return dict((name, {"status": "unknown" if name in unknown else "ok"}) for name in names)


def line(result):
    return [text for text in result["lines"] if text.startswith("readiness: ")][0]


def test_critical_and_warning_findings_need_a_person_info_does_not():
    result = summary(dict(findings=[finding("orc_missing", "critical"), finding("mhc_covers_control_plane", "warning"),
                                    finding("kcp_single_replica", "info")], views=views()))
    check = result["checks"]["readiness"]
    assert check["status"] == "problem" and (check["critical"], check["warning"]) == (1, 1)
    assert result["needs_person"] == ["readiness: orc_missing, mhc_covers_control_plane"]
    assert line(result).startswith("readiness: PROBLEM - 1 critical, 1 warning: orc_missing, mhc_covers_control_plane")
    result = summary(dict(findings=[finding("kcp_single_replica", "info")], views=views()))
    assert result["ok"] and line(result) == "readiness: OK - clusters/prod fit for a change"


def test_views_that_could_not_be_read_are_partial_never_ok():
    result = summary(dict(findings=[finding("monitor_unknown", "warning")], views=views(monitor=1)))
    assert result["checks"]["readiness"]["status"] == "partial" and result["ok"]
    assert line(result) == ("readiness: PARTIAL - nothing found among what could be read "
                            "(unknown, not readable: monitor)")


def test_a_failed_report_is_an_error_that_needs_a_person():
    result = summary(errors={"readiness": "Cluster clusters/prod not found"})
    assert result["checks"]["readiness"]["status"] == "error" and not result["ok"]
    assert line(result) == "readiness: ERROR - Cluster clusters/prod not found"
