# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One kind in one namespace (or all), listed then watched for as long as the caller wants: the
``capi_events`` event source's connection to the API.

``EventFeed.list`` lists (and raises ``FeedError`` with a plain message for what no retry mends: a namespace
the credentials may not read, a kind the API does not serve). ``EventFeed.follow`` then watches from the list's
resourceVersion until ``stop`` is set, handing ``(UPSERT|DELETE, object)`` and ``(RELIST, objects)`` to
``emit``: a watch that ends or is cut is opened again from the last resourceVersion seen, with a growing,
jittered pause after a failure (reset by the next event); a 410 Gone (answer or ERROR event) is answered with a
fresh list. Blocking calls: the event source runs ``follow`` in a thread of its own.
"""

from __future__ import annotations

import json
import random
import threading
from typing import Any, Callable

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.clock import Clock
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.client import (
    KubernetesClient,
    failure_text,
    is_status,
    status_message,
    urllib3,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.watch import (
    abort_watch,
    BOOKMARK,
    DELETE,
    event_effect,
    iter_resp_lines,
    RELIST,
    UPSERT,
)

WATCH_SECONDS = 300
READ_MARGIN = 15
CONNECT_SECONDS = 10
LIST_SECONDS = 60
BACKOFF_FIRST = 0.5
BACKOFF_MAX = 30.0
# A failing watch is given up (the source stops, saying why) after this many failures in a row.
MAX_FAILURES = 20
NOT_WATCHED = (405, 501)
TERMINAL = {401: "the credentials were refused (check api_key, the kubeconfig's user, or client_cert/client_key)",
            403: "the credentials may not do this (check the user's RBAC permissions)",
            404: "the API does not serve it (is Cluster API installed, and the namespace there?)"}


class FeedError(Exception):
    """The feed cannot go on; the message says why in words a person can act on."""


def backoff(failures: int, rand: Callable[[], float] = random.random) -> float:
    """Seconds to wait before the next attempt after ``failures`` failures in a row (jittered, capped)."""
    if failures <= 0:
        return 0.0
    return min(BACKOFF_MAX, BACKOFF_FIRST * (2 ** (failures - 1))) * (0.5 + rand() / 2)


class EventFeed:
    """``plural`` of ``group/version`` (kind ``kind``) in ``namespace`` (None: every namespace)."""

    def __init__(self, kube: KubernetesClient, group: str, version: str, plural: str, kind: str,
                 namespace: str | None = None, label_selector: str | None = None, clock: Clock | None = None) -> None:
        self.kube = kube
        self.group, self.version, self.plural, self.kind = group, version, plural, kind
        self.namespace = namespace
        self.label_selector = label_selector
        self.clock = clock or kube.clock
        self.resource_version: str | None = None
        self.relists = 0
        self.watches = 0
        self.response = None

    def describe(self) -> str:
        where = f"namespace {self.namespace}" if self.namespace else "all namespaces"
        selector = f" ({self.label_selector})" if self.label_selector else ""
        return f"{self.plural}.{self.group}/{self.version} in {where}{selector}"

    def _request(self, **kwargs: Any) -> Any:
        if self.label_selector:
            kwargs["label_selector"] = self.label_selector
        custom = self.kube.custom
        if self.namespace:
            return custom.list_namespaced_custom_object(self.group, self.version, self.namespace, self.plural,
                                                        **kwargs)
        return custom.list_cluster_custom_object(self.group, self.version, self.plural, **kwargs)

    def list(self) -> list[dict[str, Any]]:
        """The objects now (each with apiVersion and kind); remembers the list's resourceVersion."""
        deadline = Deadline.after(self.clock, LIST_SECONDS)
        try:
            found = self.kube.call(self._request, f"listing {self.describe()}", deadline)
        except Exception as exc:  # pylint: disable=broad-except
            raise self.refusal(exc, "listing")
        items = found.get("items") or []
        for item in items:
            item.setdefault("apiVersion", f"{self.group}/{self.version}")
            item.setdefault("kind", self.kind)
        self.resource_version = (found.get("metadata") or {}).get("resourceVersion")
        return items

    def refusal(self, exc: Exception, doing: str) -> Exception:
        status = getattr(exc, "status", None)
        if status in TERMINAL:
            return FeedError(f"{doing} {self.describe()} was refused: HTTP {status}: {status_message(exc)}; {TERMINAL[status]}")
        return exc

    def follow(self, emit: Callable[[str, Any], Any], stop: threading.Event) -> None:
        """Watch until ``stop`` (a threading.Event) is set; raises FeedError when the watch cannot go on."""
        failures = 0
        while not stop.is_set():
            try:
                brought = self.watch_once(emit, stop)
            except FeedError:
                raise
            except Exception as exc:  # pylint: disable=broad-except
                if stop.is_set():
                    return
                if any(is_status(exc, status) for status in tuple(TERMINAL) + NOT_WATCHED):
                    raise FeedError(f"watching {self.describe()} failed: {failure_text(exc)}")
                brought = False
            failures = 0 if brought else failures + 1
            if failures >= MAX_FAILURES:
                raise FeedError(f"the watch of {self.describe()} failed {failures} times in a row")
            stop.wait(backoff(failures))

    def watch_once(self, emit: Callable[[str, Any], Any], stop: threading.Event) -> bool:
        """One watch request read to its end; True when it brought an event or ended as planned."""
        try:
            response = self._request(
                watch=True, resource_version=self.resource_version, allow_watch_bookmarks=True,
                timeout_seconds=WATCH_SECONDS, _preload_content=False,
                _request_timeout=(CONNECT_SECONDS, WATCH_SECONDS + READ_MARGIN))
        except Exception as exc:  # pylint: disable=broad-except
            if is_status(exc, 410):
                return self.relist(emit)
            raise
        self.watches += 1
        self.response = response
        started, brought = self.clock.monotonic(), False
        try:
            for line in iter_resp_lines(response):
                if stop.is_set():
                    return True
                if line.strip():
                    brought = self.apply(json.loads(line), emit) or brought
        except (OSError, ValueError):
            return brought
        except Exception as exc:  # pylint: disable=broad-except
            if urllib3 is not None and isinstance(exc, urllib3.exceptions.HTTPError):
                return brought  # a cut or a read timeout: opened again
            raise
        finally:
            self.response = None
            response.release_conn()
        return brought or self.clock.monotonic() - started >= WATCH_SECONDS - 1

    def apply(self, event: dict[str, Any], emit: Callable[[str, Any], Any]) -> bool:
        effect, value = event_effect(event)
        if effect == RELIST:
            return self.relist(emit)
        if effect == BOOKMARK:
            if value:
                self.resource_version = value
            return True
        value.setdefault("apiVersion", f"{self.group}/{self.version}")
        value.setdefault("kind", self.kind)
        version = (value.get("metadata") or {}).get("resourceVersion")
        if version:
            self.resource_version = version
        emit(effect, value)
        return True

    def relist(self, emit: Callable[[str, Any], Any]) -> bool:
        """A fresh list after a 410: the objects as they are now, in one RELIST."""
        self.relists += 1
        emit(RELIST, self.list())
        return True

    def abort(self) -> None:
        """End the watch another thread reads (urllib3 2.3+ shuts the socket down)."""
        abort_watch(self.response)


__all__ = ["EventFeed", "FeedError", "backoff", "UPSERT", "DELETE", "RELIST"]
