import json

import pytest

from minicloud.core.wsgi import DropConnection
from minicloud.traffic.faults import FaultRule
from minicloud.traffic.middleware import TrafficMiddleware
from minicloud.traffic.store import TrafficStore


def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"real"]


def call(mw, method="GET", path="/v2.0/networks", agent="openstacksdk", query=""):
    seen = {}

    def start_response(status, headers):
        seen["status"], seen["headers"] = status, dict(headers)

    environ = {"REQUEST_METHOD": method, "PATH_INFO": path, "HTTP_USER_AGENT": agent, "QUERY_STRING": query}
    body = b"".join(mw(environ, start_response))
    return seen["status"], seen["headers"], body


@pytest.fixture
def store(tmp_path):
    return TrafficStore(tmp_path / "t.sqlite")


def test_passes_through_and_counts(store):
    mw = TrafficMiddleware(app, "network", store)
    assert call(mw)[0] == "200 OK"
    assert store.counts()["requests"]["network"]["GET"]["/v2.0/networks"] == 1


def test_kubernetes_watches_are_counted_apart_from_lists(store):
    mw = TrafficMiddleware(app, "kubernetes", store)
    clusters = "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/clusters"
    call(mw, path=clusters, query="fieldSelector=metadata.name%3Dx&limit=500")
    call(mw, path=clusters, query="fieldSelector=metadata.name%3Dx&resourceVersion=38&watch=true")
    call(mw, path=clusters, query="watch=1")
    call(mw, path=clusters, query="watch=false")
    call(TrafficMiddleware(app, "network", store), query="watch=true")  # not a Kubernetes API: as any query
    counts = store.counts()["requests"]
    assert counts["kubernetes"]["GET"] == {clusters: 2, clusters + "?watch=true": 2}
    assert counts["network"]["GET"] == {"/v2.0/networks": 1}


def test_fault_answers_with_the_services_error(store):
    store.add_rule(FaultRule(service="network", status=503, retry_after=1, remaining=1))
    mw = TrafficMiddleware(app, "network", store)
    status, headers, body = call(mw)
    assert status.startswith("503") and headers["Retry-After"] == "1" and b"NeutronError" in body
    assert call(mw)[2] == b"real"


def test_drop_raises_drop_connection(store):
    store.add_rule(FaultRule(service="network", status="drop"))
    with pytest.raises(DropConnection):
        call(TrafficMiddleware(app, "network", store))


def test_delay_only_reaches_the_app(store):
    store.add_rule(FaultRule(service="network", delay=0.01))
    assert call(TrafficMiddleware(app, "network", store))[2] == b"real"


def test_internal_requests_are_counted_apart_and_never_faulted(store):
    store.add_rule(FaultRule(service="identity", status=500))
    mw = TrafficMiddleware(app, "identity", store)
    agent = "octavia/19.0.0 keystonemiddleware.auth_token/13.0.1 keystoneauth1/5.18.1"
    assert call(mw, path="/v3/auth/tokens", agent=agent)[2] == b"real"
    assert call(mw, path="/v3/auth/tokens", agent="python-keystoneclient")[2] == b"real"
    counts = store.counts()
    assert counts["internal"]["identity"]["GET"]["/v3/auth/tokens"] == 2
    assert counts["requests"] == {}


def neutron(environ, start_response):
    """Answers as Neutron with extraroute-atomic loaded."""
    path = environ["PATH_INFO"]
    if path == "/v2.0/extensions":
        body = json.dumps({"extensions": [{"alias": "extraroute"}, {"alias": "extraroute-atomic"}]}).encode()
    else:
        body = json.dumps({"router": {"routes": []}, "path": path}).encode()
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
    return [body]


def test_a_hidden_extension_is_answered_as_an_older_neutron_does(store):
    mw = TrafficMiddleware(neutron, "network", store)
    assert [e["alias"] for e in json.loads(call(mw, path="/v2.0/extensions")[2])["extensions"]] == [
        "extraroute", "extraroute-atomic"]
    store.hide_extension("network", "extraroute-atomic")
    status, headers, body = call(mw, path="/v2.0/extensions")
    assert status == "200 OK" and [e["alias"] for e in json.loads(body)["extensions"]] == ["extraroute"]
    assert headers["Content-Length"] == str(len(body))
    status, headers, body = call(mw, method="PUT", path="/v2.0/routers/r1/add_extraroutes")
    assert status.startswith("404") and json.loads(body)["NeutronError"]["type"] == "HTTPNotFound"
    status, headers, body = call(mw, path="/v2.0/extensions/extraroute-atomic")
    assert status.startswith("404") and b"Extension with alias extraroute-atomic does not exist" in body
    # everything else still reaches the service, and minicloud's own calls see the whole API
    assert json.loads(call(mw, method="PUT", path="/v2.0/routers/r1")[2])["path"] == "/v2.0/routers/r1"
    assert call(mw, method="PUT", path="/v2.0/routers/r1/add_extraroutes", agent="minicloud-internal")[0] == "200 OK"
    assert store.restore_extensions() == 1
    assert call(mw, method="PUT", path="/v2.0/routers/r1/add_extraroutes")[0] == "200 OK"


def test_only_known_extensions_can_be_hidden():
    from minicloud.traffic import hidden_extensions

    assert hidden_extensions.service_of("extraroute-atomic") == "network"
    with pytest.raises(ValueError, match="cannot be hidden"):
        hidden_extensions.check_alias("l3-ha")


class Committing:
    """An app that records each request it handled (a write it committed)."""

    def __init__(self):
        self.handled = []

    def __call__(self, environ, start_response):
        self.handled.append((environ["REQUEST_METHOD"], environ["PATH_INFO"]))
        start_response("201 Created", [("Content-Type", "application/json")])
        return [b'{"security_group": {"id": "sg1"}}']


@pytest.mark.parametrize("status", [502, 504])
def test_after_the_commit_the_client_gets_the_fault_not_the_answer(store, status):
    store.add_rule(FaultRule(service="network", method="POST", status=status, after=True, remaining=1))
    committing = Committing()
    mw = TrafficMiddleware(committing, "network", store)
    answer, _headers, body = call(mw, method="POST", path="/v2.0/security-groups")
    assert answer.startswith(str(status)) and b"NeutronError" in body
    assert committing.handled == [("POST", "/v2.0/security-groups")]  # the service did it all the same
    assert call(mw, method="POST", path="/v2.0/security-groups")[0] == "201 Created"
    assert len(committing.handled) == 2


def test_a_fault_before_the_service_never_reaches_it(store):
    store.add_rule(FaultRule(service="network", method="POST", status=504, remaining=1))
    committing = Committing()
    assert call(TrafficMiddleware(committing, "network", store), method="POST")[0].startswith("504")
    assert committing.handled == []


def test_a_drop_after_the_commit_closes_the_connection_once_the_service_answered(store):
    store.add_rule(FaultRule(service="network", status="drop", after=True))
    committing = Committing()
    with pytest.raises(DropConnection, match="after the service answered 201"):
        call(TrafficMiddleware(committing, "network", store), method="POST")
    assert len(committing.handled) == 1


def test_a_late_answer_after_the_commit_is_the_services_own(store):
    store.add_rule(FaultRule(service="network", delay=0.01, after=True))
    committing = Committing()
    answer, _headers, body = call(TrafficMiddleware(committing, "network", store), method="POST")
    assert answer == "201 Created" and b"sg1" in body and len(committing.handled) == 1


@pytest.mark.parametrize("service, words", [
    ("network", b'"message": "The request you have made requires authentication."'),
    ("load-balancer", b'"title": "Unauthorized"'),
    ("kubernetes", b'"reason": "Unauthorized"'),
])
def test_401_is_answered_in_the_services_own_words(store, service, words):
    store.add_rule(FaultRule(service=service, status=401))
    answer, _headers, body = call(TrafficMiddleware(app, service, store))
    assert answer == "401 Unauthorized" and words in body and b"minicloud" not in body


def test_after_and_gate_do_not_mix():
    with pytest.raises(ValueError, match="no status, delay, retry-after or after"):
        FaultRule(service="network", gate=True, after=True)
