"""HTTP fault rules: what they match, and the error responses they produce.

A rule fires before the service sees the request (the service never hears of it: a gateway answering
503, a connection refused) or, with ``after``, once the service has answered (it committed the write,
the client never hears of it: a gateway's 504 after the backend's answer, a connection reset on the way
back, an answer slower than the client's timeout). A gate rule holds matching requests until it is
released (or ``GATE_TIMEOUT`` passes, then 503), then lets them through to the service: tests of races
start a write, wait until it is held, change things concurrently and release it.

Pure logic; storage lives in :mod:`minicloud.traffic.store`, the WSGI side in
:mod:`minicloud.traffic.middleware`.
"""

from __future__ import annotations

import fnmatch
import json
import re
from dataclasses import asdict, dataclass
from http import HTTPStatus
from urllib.parse import parse_qsl

SERVICES = ("identity", "network", "load-balancer", "compute", "image", "kubernetes", "kubernetes-target")
# 405 and 410 for the Kubernetes API: an API (or a proxy before it) that does not serve watch, a watch
# whose resourceVersion the API no longer holds
FAULT_STATUSES = (401, 405, 410, 429, 500, 502, 503, 504)
DROP = "drop"
# How long a gate holds a request at most; then the request is answered 503.
GATE_TIMEOUT = 120.0

# keystonemiddleware's words when it refuses a token (keystone's own for its API)
UNAUTHORIZED = "The request you have made requires authentication."

_UUID = re.compile(r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$")


def path_template(path: str) -> str:
    """Replace id segments (UUIDs, with or without dashes) by ``{id}``."""
    return "/".join("{id}" if _UUID.match(part) else part for part in path.split("/"))


def octavia_canonical(path: str) -> str:
    """Octavia serves its API under both ``/v2/`` (the API reference) and ``/v2.0/`` (what openstacksdk's
    version discovery picks); rules and requests are compared in the ``/v2/`` spelling."""
    if path.startswith("/v2.0/lbaas"):
        return "/v2" + path[len("/v2.0"):]
    return path


@dataclass(frozen=True)
class FaultRule:
    """One fault: on matching requests, wait ``delay`` then answer ``status``.

    ``status`` is an HTTP code, ``"drop"`` (close the connection) or None (delay only).
    ``remaining`` is how many more times it fires (None: unlimited).
    ``gate``: hold matching requests until the rule is released, then let them through;
    ``held`` is how many requests it holds now.
    ``after``: let the request through to the service first (it commits), then wait ``delay`` and answer
    ``status`` instead of the service's answer (None: the service's answer, late).
    ``401`` answers as keystonemiddleware (or the Kubernetes API) does for an expired token.
    ``query``: ``key=value`` pairs joined with ``&`` the request's query must hold (a Kubernetes watch is a
    list with ``watch=true``), or None for any query.
    """

    service: str
    method: str = "*"
    path: str = "*"
    status: int | str | None = None
    retry_after: float | None = None
    remaining: int | None = None
    delay: float = 0.0
    id: int | None = None
    fired: int = 0
    gate: bool = False
    held: int = 0
    after: bool = False
    query: str | None = None

    def __post_init__(self):
        if self.service not in SERVICES:
            raise ValueError(f"unknown service {self.service!r}; choose from {', '.join(SERVICES)}")
        if self.gate and (self.status is not None or self.delay or self.retry_after is not None or self.after):
            raise ValueError("a gate holds requests and then lets them through: no status, delay, retry-after "
                             "or after")
        if self.gate:
            return
        if self.status is not None and self.status != DROP and int(self.status) not in FAULT_STATUSES:
            raise ValueError(f"status must be one of {FAULT_STATUSES} or {DROP!r}, not {self.status!r}")
        if self.status is None and not self.delay:
            raise ValueError("a fault needs a status, a delay, or both")
        if self.delay < 0:
            raise ValueError("delay must not be negative")

    @staticmethod
    def parse_status(value: str | int | None) -> int | str | None:
        if value is None or value == DROP:
            return value
        return int(value)

    def matches(self, service: str, method: str, path: str, query: str = "") -> bool:
        return (
            service == self.service
            and (self.method == "*" or self.method.upper() == method.upper())
            and (fnmatch.fnmatchcase(path, self.path)
                 or fnmatch.fnmatchcase(octavia_canonical(path), octavia_canonical(self.path)))
            and (not self.query or set(parse_qsl(self.query)) <= set(parse_qsl(query or "")))
        )

    @property
    def spent(self) -> bool:
        return self.remaining is not None and self.remaining <= 0

    def to_dict(self) -> dict:
        data = asdict(self)
        data["spent"] = self.spent
        return data


def error_body(service: str, status: int, message: str) -> dict:
    """An error body shaped like the real service's own."""
    phrase = HTTPStatus(status).phrase
    if service == "identity" or (status == 401 and not service.startswith("kubernetes")):
        # keystone's own errors; keystonemiddleware in front of the other services answers 401 the same way
        return {"error": {"code": status, "message": message, "title": phrase}}
    if service == "load-balancer":
        return {"faultcode": "Client" if status < 500 else "Server", "faultstring": message, "debuginfo": None}
    if service == "network":
        kind = "OverQuota" if status == 429 else "ServiceUnavailable"
        return {"NeutronError": {"type": kind, "message": message, "detail": ""}}
    if service == "compute":
        key = "overLimit" if status == 429 else "computeFault"
        return {key: {"code": status, "message": message}}
    if service == "image":  # webob's JSON error, as Glance answers
        return {"message": message, "code": f"{status} {phrase}", "title": phrase}
    return {  # kubernetes
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": phrase.replace(" ", ""),
        "code": status,
    }


def _json_error(service: str, status: int, message: str,
                retry_after: float | None = None) -> tuple[str, list[tuple[str, str]], bytes]:
    body = json.dumps(error_body(service, status, message)).encode()
    headers = [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
    if retry_after is not None:
        headers.append(("Retry-After", f"{retry_after:g}"))
    return f"{status} {HTTPStatus(status).phrase}", headers, body


def error_response(rule: FaultRule) -> tuple[str, list[tuple[str, str]], bytes]:
    """(status line, headers, body) for a rule with an HTTP status."""
    status = int(rule.status)
    if status == 401:  # what the service's own authentication answers: the client cannot tell
        message = "Unauthorized" if rule.service.startswith("kubernetes") else UNAUTHORIZED
        return _json_error(rule.service, status, message)
    return _json_error(rule.service, status, f"minicloud fault injection: {HTTPStatus(status).phrase}",
                       rule.retry_after)


def gate_timeout_response(rule: FaultRule, waited: float) -> tuple[str, list[tuple[str, str]], bytes]:
    """503 for a request a gate held longer than its bound (the gate was never released)."""
    return _json_error(rule.service, 503, f"minicloud fault injection: gate {rule.id} was not released "
                                          f"within {waited:g} s")
