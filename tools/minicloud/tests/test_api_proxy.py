"""The fault proxy of the upstream control plane (minicloud.upstream.api_proxy), in front of an API server in this
process (the emulated one stands in for kube-apiserver), used by the kubernetes Python client: requests and the
client's bearer token go through unchanged, a watch streams event by event, and the traffic middleware's rules
fault and count what clients send."""

from __future__ import annotations

import http.client
import threading
import urllib.error
import urllib.request

import pytest
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

from minicloud.core.wsgi import CONTENT_TYPE_GIVEN, bind
from minicloud.traffic.faults import FaultRule
from minicloud.traffic.middleware import TrafficMiddleware
from minicloud.traffic.store import TrafficStore
from minicloud.upstream.api_proxy import ApiProxy, request_headers, response_headers

from kube_harness import KubeServer


@pytest.fixture
def proxied(tmp_path):
    """(the API server, the traffic store, a kubernetes client of the proxy)."""
    server = KubeServer(tmp_path / "server").start()
    traffic = TrafficStore(tmp_path / "traffic.sqlite")
    proxy = bind("127.0.0.1", 0, server.credentials.server_context())
    proxy.set_app(TrafficMiddleware(ApiProxy(server.url, server.credentials.client_context()), "kubernetes", traffic))
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    kubeconfig = tmp_path / "proxy.kubeconfig"
    server.credentials.write_kubeconfig(kubeconfig, f"https://127.0.0.1:{proxy.server_port}")
    api = config.new_client_from_config(config_file=str(kubeconfig))
    try:
        yield server, traffic, api
    finally:
        api.close()
        proxy.shutdown()
        proxy.server_close()
        server.stop()


def test_requests_and_a_watch_go_through_unchanged(proxied):
    _server, traffic, api = proxied
    core = client.CoreV1Api(api)
    listed = core.list_namespace()
    stream = watch.Watch().stream(core.list_namespace, resource_version=listed.metadata.resource_version,
                                  timeout_seconds=3)
    core.create_namespace({"metadata": {"name": "through-the-proxy"}})
    event = next(stream)  # arrives while the watch is open: the answer is streamed, not buffered
    assert (event["type"], event["object"].metadata.name) == ("ADDED", "through-the-proxy")
    stream.close()
    counts = traffic.counts("kubernetes")["requests"]["kubernetes"]
    assert counts["POST"] == {"/api/v1/namespaces": 1}
    assert counts["GET"]["/api/v1/namespaces"] == 1 and counts["GET"]["/api/v1/namespaces?watch=true"] == 1


def test_fault_rules_apply_and_an_unknown_token_is_the_servers_to_refuse(proxied):
    server, traffic, api = proxied
    core = client.CoreV1Api(api)
    # (a 429 with Retry-After the client's urllib3 retries by itself)
    traffic.add_rule(FaultRule(service="kubernetes", method="GET", path="/api/v1/namespaces", status=503,
                               remaining=1))
    with pytest.raises(ApiException) as refused:
        core.list_namespace()
    assert refused.value.status == 503 and "minicloud fault injection" in refused.value.body
    assert [n.metadata.name for n in core.list_namespace().items]  # the rule is spent: served
    # the client's own credentials go through: an unknown token gets the server's own 401
    request = urllib.request.Request(api.configuration.host + "/api/v1/namespaces",
                                     headers={"Authorization": "Bearer not-the-token"})
    with pytest.raises(urllib.error.HTTPError) as unknown:
        urllib.request.urlopen(request, context=server.credentials.client_context(), timeout=10)
    assert unknown.value.code == 401


def test_hop_by_hop_headers_stay_on_their_connection():
    environ = {"HTTP_AUTHORIZATION": "Bearer t", "HTTP_CONNECTION": "keep-alive", "HTTP_HOST": "proxy:6443",
               "HTTP_USER_AGENT": "kubectl", "CONTENT_TYPE": "application/merge-patch+json", "CONTENT_LENGTH": "2"}
    assert request_headers(environ) == {"Authorization": "Bearer t", "User-Agent": "kubectl",
                                        "Content-Type": "application/merge-patch+json"}
    # a GET has no Content-Type, whatever the WSGI server fills in
    assert "Content-Type" not in request_headers({"CONTENT_TYPE": "text/plain", "CONTENT_LENGTH": ""})
    assert response_headers([("Content-Type", "application/json"), ("Transfer-Encoding", "chunked"),
                             ("Audit-Id", "x")]) == [("Content-Type", "application/json"), ("Audit-Id", "x")]


def test_a_watch_answers_its_headers_before_any_event(proxied):
    """kube-apiserver sends a watch's headers at once: so does the proxy, before the first event (client-go logs
    and times a request by its headers)."""
    server, _traffic, api = proxied
    version = client.CoreV1Api(api).list_namespace().metadata.resource_version
    host, port = api.configuration.host.rsplit("/", 1)[-1].split(":")
    connection = http.client.HTTPSConnection(host, int(port), timeout=5,
                                             context=server.credentials.client_context())
    try:
        connection.request("GET", f"/api/v1/namespaces?watch=true&resourceVersion={version}",
                           headers={"Authorization": f"Bearer {server.credentials.token}"})
        answer = connection.getresponse()  # no event happens: only the headers can come
        assert answer.status == 200
        assert answer.getheader("Content-Type").startswith("application/json")
    finally:
        connection.close()



def test_a_body_sent_without_content_type_is_forwarded_without_one():
    """The kubernetes client (37.x) sends a create's JSON body with no Content-Type; kube-apiserver reads such a
    body as JSON, but wsgiref says ``text/plain``, which the proxy forwarded and kube-apiserver refused (415)."""
    body = {"CONTENT_TYPE": "text/plain", "CONTENT_LENGTH": "2"}
    assert "Content-Type" not in request_headers(dict(body, **{CONTENT_TYPE_GIVEN: False}))
    assert request_headers(dict(body, **{CONTENT_TYPE_GIVEN: True}))["Content-Type"] == "text/plain"


def test_the_server_says_whether_the_client_sent_a_content_type():
    seen = []

    def app(environ, start_response):
        seen.append((environ[CONTENT_TYPE_GIVEN], environ.get("CONTENT_TYPE")))
        start_response("204 No Content", [])
        return [b""]

    server = bind("127.0.0.1", 0)
    server.set_app(app)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        for headers in ({}, {"Content-Type": "application/json"}):
            connection = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=5)
            connection.request("POST", "/x", body=b"{}", headers=headers)
            connection.getresponse().read()
            connection.close()
    finally:
        server.shutdown()
        server.server_close()
    assert seen == [(False, "text/plain"), (True, "application/json")]
