import json

import pytest

from minicloud.traffic.faults import FaultRule, error_body, error_response, path_template


@pytest.mark.parametrize("path, template", [
    ("/v2/lbaas/pools/3f1c2a9e-8b1d-4c1e-9a57-0f5e2f9a1b2c/members", "/v2/lbaas/pools/{id}/members"),
    ("/v3/projects/0123456789abcdef0123456789abcdef/users", "/v3/projects/{id}/users"),
    ("/v2.0/networks", "/v2.0/networks"),
    ("/v2.0/networks/minicloud", "/v2.0/networks/minicloud"),
    ("/", "/"),
])
def test_path_template(path, template):
    assert path_template(path) == template


def test_rule_matches_method_and_path_glob():
    rule = FaultRule(service="load-balancer", method="GET", path="/v2/lbaas/pools/*/members", status=429)
    assert rule.matches("load-balancer", "get", "/v2/lbaas/pools/abc/members")
    assert not rule.matches("load-balancer", "POST", "/v2/lbaas/pools/abc/members")
    assert not rule.matches("network", "GET", "/v2/lbaas/pools/abc/members")
    assert not rule.matches("load-balancer", "GET", "/v2/lbaas/pools/abc")


def test_a_query_condition_matches_a_kubernetes_watch_and_not_its_list():
    rule = FaultRule(service="kubernetes", method="GET", path="/apis/cluster.x-k8s.io/*", status=405,
                     query="watch=true")
    path = "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/clusters"
    assert rule.matches("kubernetes", "GET", path, "labelSelector=a%3Db&watch=true&resourceVersion=7")
    assert not rule.matches("kubernetes", "GET", path, "labelSelector=a%3Db")
    assert not rule.matches("kubernetes", "GET", path)
    assert FaultRule(service="kubernetes", status=410).matches("kubernetes", "GET", path, "watch=true")


def test_octavia_rules_match_both_version_spellings():
    documented = FaultRule(service="load-balancer", method="GET", path="/v2/lbaas/pools/*/members", status=429)
    assert documented.matches("load-balancer", "GET", "/v2.0/lbaas/pools/abc/members")
    sdk_spelling = FaultRule(service="load-balancer", method="GET", path="/v2.0/lbaas/pools/*/members", status=429)
    assert sdk_spelling.matches("load-balancer", "GET", "/v2.0/lbaas/pools/abc/members")
    assert sdk_spelling.matches("load-balancer", "GET", "/v2/lbaas/pools/abc/members")
    assert not documented.matches("load-balancer", "GET", "/v2.0/lbaas/pools/abc")
    neutron = FaultRule(service="network", path="/v2/ports", status=503)
    assert not neutron.matches("network", "GET", "/v2.0/ports")


def test_rule_any_method_by_default():
    rule = FaultRule(service="network", status=503)
    assert rule.matches("network", "DELETE", "/v2.0/ports/x")


@pytest.mark.parametrize("kwargs, message", [
    (dict(service="dns", status=500), "unknown service"),
    (dict(service="network", status=404), "status must be"),
    (dict(service="network"), "needs a status, a delay"),
    (dict(service="network", delay=-1, status=500), "negative"),
])
def test_rule_validation(kwargs, message):
    with pytest.raises(ValueError, match=message):
        FaultRule(**kwargs)


def test_delay_only_and_drop_rules_are_valid():
    assert FaultRule(service="identity", delay=2).status is None
    assert FaultRule(service="identity", status="drop").status == "drop"


def test_spent():
    assert FaultRule(service="network", status=500, remaining=0, fired=1).spent
    assert not FaultRule(service="network", status=500).spent


@pytest.mark.parametrize("service, keys", [
    ("load-balancer", {"faultcode", "faultstring", "debuginfo"}),
    ("network", {"NeutronError"}),
    ("identity", {"error"}),
    ("compute", {"overLimit"}),
    ("image", {"message", "code", "title"}),
    ("kubernetes", {"kind", "apiVersion", "metadata", "status", "message", "reason", "code"}),
])
def test_error_bodies_look_like_the_service(service, keys):
    assert set(error_body(service, 429, "slow down")) == keys


def test_neutron_and_keystone_error_details():
    assert set(error_body("network", 503, "m")["NeutronError"]) == {"type", "message", "detail"}
    assert error_body("identity", 503, "m")["error"] == {"code": 503, "message": "m", "title": "Service Unavailable"}


def test_error_response_has_retry_after():
    status, headers, body = error_response(FaultRule(service="load-balancer", status=429, retry_after=5))
    assert status == "429 Too Many Requests"
    assert ("Retry-After", "5") in headers
    assert json.loads(body)["faultcode"] == "Client"
