"""WSGI middleware put in front of every real service: counts requests, injects faults."""

from __future__ import annotations

import time

from minicloud.faults import DROP, error_response, path_template
from minicloud.traffic import TrafficStore
from minicloud.wsgi import DropConnection

# User-Agent fragments of requests that no client made: keystonemiddleware (its own
# token, and token validation through python-keystoneclient) and minicloud itself.
INTERNAL_AGENTS = ("keystonemiddleware", "python-keystoneclient", "minicloud-internal")


class TrafficMiddleware:
    """Count each request, then apply the first matching fault rule, if any.

    Requests between services (keystonemiddleware validating a token) and
    minicloud's own calls (health probes, setup, VIP ports) are counted as internal
    and never faulted, so client-visible counts and faults stay honest.
    """

    def __init__(self, app, service: str, store: TrafficStore):
        self.app = app
        self.service = service
        self.store = store

    def __call__(self, environ, start_response):
        method = environ["REQUEST_METHOD"]
        path = environ.get("PATH_INFO") or "/"
        agent = environ.get("HTTP_USER_AGENT", "")
        internal = any(marker in agent for marker in INTERNAL_AGENTS)
        self.store.count(self.service, method, path_template(path), internal)
        rule = None if internal else self.store.take_rule(self.service, method, path)
        if rule is None:
            return self.app(environ, start_response)
        if rule.delay:
            time.sleep(rule.delay)
        if rule.status == DROP:
            raise DropConnection(f"fault rule {rule.id}")
        if rule.status is None:
            return self.app(environ, start_response)
        status, headers, body = error_response(rule)
        start_response(status, headers)
        return [body]
