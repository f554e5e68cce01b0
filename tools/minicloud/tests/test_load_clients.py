"""The load generator's kinds of client, each counted apart: a new connection per request, keep-alive clients
(one connection each, as client-go), watches; failures split into 5xx, timeouts and closed connections."""

from __future__ import annotations

import pytest

from minicloud.dataplane.apiserver import Endpoint, certificate
from minicloud.dataplane.load import LoadGenerator, Target, client_figures, failed_of, read_record, summarise
from minicloud.seeding.openstack import wait_until


def line(kind, ok=True, error=None, t=1.0):
    return {"t": t, "kind": kind, "ok": ok, "error": error, "ms": 1.0}


def test_each_kind_of_client_is_counted_apart_and_a_retried_closed_connection_is_no_failure():
    lines = [line("request"), line("request", False, "timeout"),
             line("keepalive"), line("keepalive-closed", True, "reset"), line("keepalive"),
             line("keepalive", False, "http-5xx"), line("keepalive", False, "reset"), line("keepalive", False, "tls"),
             line("watch"), line("watch", False, "timeout")]
    figures = client_figures(lines)
    assert figures["new"] == {"requests": 2, "failed": 1, "http_5xx": 0, "timeouts": 1, "closed": 0, "other": 0,
                              "closed_retried": 0}
    assert figures["keepalive"] == {"requests": 5, "failed": 3, "http_5xx": 1, "timeouts": 0, "closed": 1,
                                    "other": 1, "closed_retried": 1}
    assert figures["watch"]["requests"] == 2 and figures["watch"]["timeouts"] == 1
    assert summarise(lines)["clients"] == figures
    assert summarise(lines)["requests"] == 2  # the figures of before: the new-connection clients


@pytest.fixture
def endpoint(tmp_path):
    served = Endpoint(certificate(tmp_path / "tls"))
    yield served
    served.close()


def test_keepalive_clients_keep_their_connection_and_see_the_500s_of_a_server_without_etcd(endpoint, tmp_path):
    host, port = endpoint.address.split(":")
    accepted = []
    accept = endpoint._server.get_request
    endpoint._server.get_request = lambda: accepted.append(1) or accept()
    record = tmp_path / "load.jsonl"
    generator = LoadGenerator(Target(host, int(port)), record, rate=1, clients=1, watches=0, keepalive=2,
                              keepalive_rate=10).start()
    try:
        wait_until("keep-alive requests", lambda: client_figures(read_record(record))["keepalive"]["requests"] >= 20,
                   30, 0.05)
        figures = client_figures(read_record(record))
        # one connection per keep-alive client, one per request of the others
        assert len(accepted) <= 2 + figures["new"]["requests"] + 1
        endpoint.lose_etcd()
        wait_until("500s", lambda: client_figures(read_record(record))["keepalive"]["http_5xx"] >= 4, 30, 0.05)
    finally:
        generator.stop()
    figures = client_figures(read_record(record))
    assert figures["keepalive"]["failed"] == figures["keepalive"]["http_5xx"] >= 4
    assert figures["keepalive"]["closed_retried"] == 0
    assert figures["new"]["requests"] >= 1


def test_a_kind_of_clients_failures_in_words():
    figures = dict(requests=1835, failed=6, http_5xx=5, timeouts=1, closed=0, other=0, closed_retried=4)
    assert failed_of(figures) == "6 of 1835 (5xx 5, timeout 1); 4 closed, retried"
    assert failed_of(dict(figures, failed=0, http_5xx=0, timeouts=0, closed_retried=0)) == "0 of 1835"
