"""WSGI middleware put in front of every real service: counts requests, injects faults (before the service
sees a request, or after it answered: a write committed whose answer is lost), holds requests at gates,
hides API extensions (an older API, see :mod:`minicloud.traffic.hidden_extensions`)."""

from __future__ import annotations

import time
from urllib.parse import parse_qsl

from minicloud.core.wsgi import DropConnection
from minicloud.traffic import hidden_extensions
from minicloud.traffic.faults import DROP, GATE_TIMEOUT, error_response, gate_timeout_response, path_template
from minicloud.traffic.store import TrafficStore

# User-Agent fragments of requests that no client made: keystonemiddleware (its own
# token, and token validation through python-keystoneclient) and minicloud itself.
INTERNAL_AGENTS = ("keystonemiddleware", "python-keystoneclient", "python-neutronclient", "minicloud-internal")


def counted_path(service: str, path: str, query: str) -> str:
    """The path a request is counted under: its template, and for the Kubernetes APIs ``?watch=true`` after it when
    the request is a watch (a list with ``watch=true`` or ``watch=1``), so counts tell a watch from a list, as
    kube-apiserver's request metrics do with their verb ``WATCH``."""
    template = path_template(path)
    if service.startswith("kubernetes") and query and "watch=" in query:
        if any(key == "watch" and value.lower() in ("true", "1") for key, value in parse_qsl(query)):
            return template + "?watch=true"
    return template


class TrafficMiddleware:
    """Count each request, then apply the first matching fault rule, if any.

    Requests between services (keystonemiddleware validating a token) and
    minicloud's own calls (health probes, setup, VIP ports) are counted as internal
    and never faulted, so client-visible counts and faults stay honest.
    """

    def __init__(self, app, service: str, store: TrafficStore, gate_timeout: float = GATE_TIMEOUT):
        self.app = app
        self.service = service
        self.store = store
        self.gate_timeout = gate_timeout

    def __call__(self, environ, start_response):
        method = environ["REQUEST_METHOD"]
        path = environ.get("PATH_INFO") or "/"
        agent = environ.get("HTTP_USER_AGENT", "")
        internal = any(marker in agent for marker in INTERNAL_AGENTS)
        self.store.count(self.service, method, counted_path(self.service, path, environ.get("QUERY_STRING", "")),
                         internal)
        rule = None if internal else self.store.take_rule(self.service, method, path,
                                                          environ.get("QUERY_STRING", ""))
        if rule is not None and rule.gate:
            # Held in this request's own thread, outside the service lock: other requests go on.
            if not self.store.hold(rule.id, self.gate_timeout):
                status, headers, body = gate_timeout_response(rule, self.gate_timeout)
                start_response(status, headers)
                return [body]
        elif rule is not None:
            return self._fault(rule, internal, environ, start_response)
        return self._serve(internal, environ, start_response)

    def _serve(self, internal, environ, start_response):
        """The service's own answer (as an older API, when extensions are hidden)."""
        hides = self.service in hidden_extensions.SERVICES and not internal
        hidden = self.store.hidden_extensions(self.service) if hides else []
        if hidden:
            return self._older_api(hidden, environ, start_response)
        return self.app(environ, start_response)

    def _fault(self, rule, internal, environ, start_response):
        """Wait ``rule.delay``, then answer ``rule.status``, drop the connection, or (no status) let the request
        through. With ``rule.after`` the service handles the request in full first (it commits), and what the
        client gets instead of that answer comes after it (with no status: the answer itself, late)."""
        answer = self._answered(lambda env, sr: self._serve(internal, env, sr), environ) if rule.after else None
        if rule.delay:
            time.sleep(rule.delay)
        if rule.status == DROP:
            raise DropConnection(f"fault rule {rule.id}" + (f", after the service answered {answer[0]}"
                                                            if answer else ""))
        if rule.status is not None:
            answer = error_response(rule)
        if answer is None:
            return self._serve(internal, environ, start_response)
        status, headers, body = answer
        start_response(status, headers)
        return [body]

    @staticmethod
    def _answered(app, environ):
        """(status line, headers, body) of ``app``'s whole answer to ``environ``."""
        seen = {}

        def keep(status, headers, exc_info=None):
            seen["status"], seen["headers"] = status, headers
            return lambda _data: None

        result = app(environ, keep)
        try:
            body = b"".join(result)
        finally:
            getattr(result, "close", lambda: None)()
        return seen["status"], seen["headers"], body

    def _older_api(self, hidden: list[str], environ, start_response):
        """Answer as the service would without the ``hidden`` extensions."""
        method, path = environ["REQUEST_METHOD"], environ.get("PATH_INFO") or "/"
        answer = hidden_extensions.hidden_answer(hidden, method, path)
        if answer is not None:
            status, headers, body = answer
            start_response(status, headers)
            return [body]
        if not hidden_extensions.lists_extensions(method, path):
            return self.app(environ, start_response)
        status, headers, body = self._answered(self.app, environ)
        if status.startswith("200"):
            body = hidden_extensions.without_extensions(body, hidden)
        headers = [(k, v) for k, v in headers if k.lower() != "content-length"]
        start_response(status, headers + [("Content-Length", str(len(body)))])
        return [body]
