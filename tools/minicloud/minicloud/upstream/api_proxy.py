"""The Kubernetes API of an upstream cloud as its clients see it: a proxy in front of the real kube-apiserver.

kube-apiserver serves on a port of its own (``kube-apiserver``); the kubeconfig in the state folder names the
``kubernetes`` port, where this proxy forwards each request unchanged (method, path, query, headers, body: the
client's own bearer token) and streams the answer back as it comes (a watch stays open, event by event). It runs
behind minicloud's traffic middleware, as the emulated API server does, so the same fault rules (429, 503, 401,
``drop``, delays, gates, answers lost after the commit) and request counts apply to the real server under the
service name ``kubernetes``. Cluster API's managers, minicloud's CAPO controller and minicloud itself talk to
kube-apiserver directly: faults are for the clients under test.
"""

from __future__ import annotations

import http.client
import json
import ssl
from collections.abc import Iterator
from urllib.parse import quote, urlsplit

from minicloud.core.wsgi import CONTENT_TYPE_GIVEN

# Headers of one connection only (RFC 9110 7.6.1), never forwarded; the WSGI server writes its own framing.
HOP_BY_HOP = frozenset(("connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding",
                        "upgrade", "host", "content-length"))
CHUNK = 64 * 1024


def request_headers(environ: dict) -> dict[str, str]:
    """The client's headers from a WSGI environ, without the hop-by-hop ones. Content-Type only as the client sent
    it: the WSGI server fills in ``text/plain`` for a request that had none (a GET, or a body the kubernetes client
    sends without one), which kube-apiserver refuses (415) while it reads a body without one as JSON."""
    headers = {}
    for key, value in environ.items():
        if key.startswith("HTTP_"):
            name = key[5:].replace("_", "-").title()
            if name.lower() not in HOP_BY_HOP:
                headers[name] = value
    given = environ.get(CONTENT_TYPE_GIVEN, True)
    if given and environ.get("CONTENT_TYPE") and int(environ.get("CONTENT_LENGTH") or 0):
        headers["Content-Type"] = environ["CONTENT_TYPE"]
    return headers


def response_headers(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(name, value) for name, value in headers if name.lower() not in HOP_BY_HOP]


class ApiProxy:
    """WSGI application forwarding every request to ``upstream`` (``https://host:port``) over TLS with
    ``context`` (the cloud's CA)."""

    def __init__(self, upstream: str, context: ssl.SSLContext, timeout: float | None = None):
        parts = urlsplit(upstream)
        self.host, self.port = parts.hostname, parts.port
        self.context = context
        self.timeout = timeout  # None: a watch may stay open as long as the client keeps it

    def __call__(self, environ, start_response):
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else None
        target = quote(environ.get("PATH_INFO") or "/", safe="/:@!$&'()*+,;=-._~")  # WSGI gives it decoded
        if environ.get("QUERY_STRING"):
            target += "?" + environ["QUERY_STRING"]
        connection = http.client.HTTPSConnection(self.host, self.port, context=self.context, timeout=self.timeout)
        try:
            connection.request(environ["REQUEST_METHOD"], target, body=body, headers=request_headers(environ))
            answer = connection.getresponse()
        except OSError as exc:
            connection.close()
            data = json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 502,
                               "reason": "BadGateway", "message": f"kube-apiserver did not answer: {exc}"}).encode()
            start_response("502 Bad Gateway", [("Content-Type", "application/json"),
                                               ("Content-Length", str(len(data)))])
            return [data]
        start_response(f"{answer.status} {answer.reason}", response_headers(answer.getheaders()))
        return _stream(answer, connection)


def _stream(answer: http.client.HTTPResponse, connection: http.client.HTTPSConnection) -> Iterator[bytes]:
    """The answer's body as it arrives (read1: what is there, without waiting for a full chunk), after an empty
    first piece: minicloud's WSGI server sends the status line and headers on it. kube-apiserver sends a watch's
    headers at once and its first event only when something changes; without it a client would see the headers
    only with that event (kubectl logs its requests, and client-go times them, by the headers)."""
    try:
        yield b""
        while True:
            data = answer.read1(CHUNK)
            if not data:
                return
            yield data
    finally:
        connection.close()
