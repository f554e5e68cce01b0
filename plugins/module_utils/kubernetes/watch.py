# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Following Kubernetes objects by watch: per feed one list, then one watch that stays open.

A ``Feed`` names what to follow (a kind in a namespace, narrowed by a field or label selector). An
``ObjectWatch`` lists each feed once, then follows each in a thread of its own with
``?watch=true&resourceVersion=...&allowWatchBookmarks=true``, as client-go's reflector does: a watch
that ends (its ``timeoutSeconds``, a cut connection) is opened again from the last resourceVersion
seen; a 410 Gone (as an HTTP answer or as an ERROR event: the API no longer holds that
resourceVersion) is answered with a fresh list. Every object that arrives is handed to ``on_change``
with the time it arrived, so a quiet period is measured from the events themselves and no write falls
between two polls.

Where the API does not serve watch (405, 501, or a refused watch parameter), ``failure`` says so and
the caller falls back to polling; so it does when a watch keeps failing in a way a retry does not
mend. Opening a watch and every list go through ``KubernetesClient.call`` (the one retry policy,
the deadline, request counting).
"""

from __future__ import annotations

import json
import datetime
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.clock import Clock

from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.client import (
    failure_text,
    is_status,
    status_message,
    urllib3,
)

if TYPE_CHECKING:
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.client import KubernetesClient

try:
    from kubernetes.watch.watch import iter_resp_lines
except ImportError:  # the module base reports the missing library
    iter_resp_lines = None

# Seconds the server keeps one watch open (its timeoutSeconds); the watch is opened again after it.
WATCH_SECONDS = 300
# A watch with bookmarks hears from the server at least every minute; the read timeout leaves room beyond it.
READ_MARGIN = 15
CONNECT_SECONDS = 10
# Answers that mean "this API does not serve watch here": fall back to polling.
NOT_SERVED = (400, 404, 405, 406, 415, 501)
# A watch cut this many times in a row without one event is given up (polling takes over).
MAX_CUTS = 5

UPSERT, DELETE, BOOKMARK, RELIST = "upsert", "delete", "bookmark", "relist"


class WatchNotServed(Exception):
    """The API answered the watch in a way that says it does not serve it."""


@dataclass(eq=False)
class Feed:
    """One watched collection: ``plural`` of ``group/version`` in ``namespace``, with a selector."""

    group: str
    version: str
    plural: str
    kind: str
    namespace: str
    field_selector: str | None = None
    label_selector: str | None = None

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"

    def describe(self) -> str:
        selector = self.field_selector or self.label_selector
        return f"{self.plural} in {self.namespace}{f' ({selector})' if selector else ''}"

    def selectors(self) -> dict[str, str]:
        found = {}
        if self.field_selector:
            found["field_selector"] = self.field_selector
        if self.label_selector:
            found["label_selector"] = self.label_selector
        return found

    def __repr__(self) -> str:
        return f"Feed({self.describe()})"


def object_key(obj: dict[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    return metadata.get("uid") or f'{metadata.get("namespace")}/{metadata.get("name")}'


def event_effect(event: dict[str, Any]) -> tuple[str, Any]:
    """What one watch event asks of the cache (pure): ``(UPSERT|DELETE, object)``, ``(BOOKMARK,
    resourceVersion)`` or ``(RELIST, message)`` for a 410; raises WatchNotServed for another ERROR."""
    kind = event.get("type")
    obj = event.get("object") or {}
    if kind in ("ADDED", "MODIFIED"):
        return UPSERT, obj
    if kind == "DELETED":
        return DELETE, obj
    if kind == "BOOKMARK":
        return BOOKMARK, (obj.get("metadata") or {}).get("resourceVersion")
    if kind == "ERROR" and obj.get("code") == 410:
        return RELIST, obj.get("message") or "410 Gone"
    raise WatchNotServed(f'the watch answered an error event: {obj.get("code")} {obj.get("message")}')


class ObjectWatch:
    """The objects of ``feeds``, kept current by watches. ``on_change(obj, now)`` (called under the
    watch's lock) sees every object as listed and as each event brings it."""

    def __init__(self, kube: KubernetesClient, feeds: Iterable[Feed], clock: Clock,
                 on_change: Callable[[dict[str, Any], float], Any]) -> None:
        self.kube = kube
        self.feeds = list(feeds)
        self.clock = clock
        self.on_change = on_change
        self.lock = threading.Condition()
        self.cache: list[dict[str, dict[str, Any]]] = [dict() for feed in self.feeds]
        self.versions: list[str | None] = [None] * len(self.feeds)
        self.failure: str | None = None
        self.watches = 0    # watch requests opened
        self.relists = 0    # lists after a 410
        self.events = 0
        self._stopped = threading.Event()
        self._responses: list[Any] = []

    # -- what the caller sees ---------------------------------------------------------------------

    def objects(self) -> list[dict[str, Any]]:
        """Every object held, feed by feed (each sorted by name), the same object once."""
        with self.lock:
            seen: set[str] = set()
            result: list[dict[str, Any]] = []
            for cache in self.cache:
                for obj in sorted(cache.values(), key=lambda o: (o.get("metadata") or {}).get("name") or ""):
                    key = object_key(obj)
                    if key not in seen:
                        seen.add(key)
                        result.append(obj)
            return result

    def feed_objects(self, index: int) -> list[dict[str, Any]]:
        with self.lock:
            return list(self.cache[index].values())

    def offer(self, index: int, obj: dict[str, Any]) -> None:
        """An object as the caller's own write returned it, kept unless the cache holds a newer version:
        the caller reads its own writes before their watch events arrive."""
        feed = self.feeds[index]
        with self.lock:
            obj.setdefault("apiVersion", feed.api_version)
            obj.setdefault("kind", feed.kind)
            held = self.cache[index].get(object_key(obj))
            if held is None or _newer(obj, held):
                self.cache[index][object_key(obj)] = obj
                self.on_change(obj, self.clock.monotonic())

    def wait_for_change(self, seconds: float) -> None:
        """Sleep up to ``seconds``, waking at once when an event arrives or the watch fails."""
        if seconds <= 0:
            return
        with self.lock:
            seen = (self.events, self.failure)
            self.lock.wait_for(lambda: (self.events, self.failure) != seen, timeout=seconds)

    def summary(self) -> dict[str, int]:
        return dict(watches=self.watches, relists=self.relists, events=self.events)

    # -- running -----------------------------------------------------------------------------------

    def start(self, deadline: Deadline) -> ObjectWatch:
        """List every feed (in the caller's thread: their faults are the caller's), then follow each."""
        for index in range(len(self.feeds)):
            self._list(index, deadline)
        for index in range(len(self.feeds)):
            thread = threading.Thread(target=self._follow, args=(index, deadline),
                                      name=f"watch-{self.feeds[index].plural}")
            thread.daemon = True  # a wait that ends never waits for its watches
            thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        with self.lock:
            responses, self._responses = self._responses, []
        for response in responses:
            abort_watch(response)

    def _list(self, index: int, deadline: Deadline) -> None:
        feed = self.feeds[index]
        found = self.kube.call(
            lambda: self.kube.custom.list_namespaced_custom_object(
                feed.group, feed.version, feed.namespace, feed.plural, **feed.selectors()),
            f"listing {feed.describe()}", deadline)
        items = found.get("items") or []
        now = self.clock.monotonic()
        with self.lock:
            fresh = {}
            for item in items:
                item.setdefault("apiVersion", feed.api_version)
                item.setdefault("kind", feed.kind)
                fresh[object_key(item)] = item
                self.on_change(item, now)
            self.cache[index] = fresh
            self.versions[index] = (found.get("metadata") or {}).get("resourceVersion")
            self.lock.notify_all()

    def _follow(self, index: int, deadline: Deadline) -> None:
        cuts = 0
        try:
            # a watch that could stay open less than a second before the deadline is not worth its request
            while not self._stopped.is_set() and deadline.remaining() > 1.0:
                if self._watch_once(index, deadline):
                    cuts = 0
                else:
                    cuts += 1
                    if cuts >= MAX_CUTS:
                        raise WatchNotServed(f"the watch of {self.feeds[index].describe()} was cut {cuts} times in a "
                                             "row without an event")
                    self.clock.sleep(min(0.2 * cuts, deadline.remaining()))
        except Exception as exc:  # pylint: disable=broad-except
            if not self._stopped.is_set():
                with self.lock:
                    if self.failure is None:
                        self.failure = f"watching {self.feeds[index].describe()} failed: {failure_text(exc)}"
                    self.lock.notify_all()

    def _watch_once(self, index: int, deadline: Deadline) -> bool:
        """One watch request, read to its end; True when it brought events (or ended as planned)."""
        feed = self.feeds[index]
        seconds = int(max(1, min(WATCH_SECONDS, deadline.remaining())))
        try:
            response = self.kube.call(
                lambda: self.kube.custom.list_namespaced_custom_object(
                    feed.group, feed.version, feed.namespace, feed.plural, watch=True,
                    resource_version=self.versions[index], allow_watch_bookmarks=True, timeout_seconds=seconds,
                    _preload_content=False, _request_timeout=(CONNECT_SECONDS, seconds + READ_MARGIN),
                    **feed.selectors()),
                f"watching {feed.describe()}", deadline)
        except Exception as exc:  # pylint: disable=broad-except
            if is_status(exc, 410):
                self._relist(index, deadline)
                return True
            if any(is_status(exc, status) for status in NOT_SERVED):
                raise WatchNotServed(f'the API does not serve watch for {feed.describe()} (HTTP {getattr(exc, "status")}: {status_message(exc)})')
            raise
        with self.lock:
            self.watches += 1
            self._responses.append(response)
        started, brought = self.clock.monotonic(), False
        try:
            for line in iter_resp_lines(response):
                if self._stopped.is_set():
                    return True
                if not line.strip():
                    continue
                effect, value = event_effect(json.loads(line))
                brought = True
                if effect == RELIST:
                    self._relist(index, deadline)
                    return True
                self._apply(index, effect, value)
        except (OSError, ValueError) as exc:  # a cut connection, a read timeout, a broken line
            if self._stopped.is_set():
                return True
            return brought and not isinstance(exc, ValueError)
        except Exception as exc:  # pylint: disable=broad-except
            if self._stopped.is_set():
                return True
            if urllib3 is not None and isinstance(exc, urllib3.exceptions.HTTPError):
                return brought  # a cut or a read timeout (ProtocolError, ReadTimeoutError): opened again
            raise
        finally:
            with self.lock:
                if response in self._responses:
                    self._responses.remove(response)
            response.release_conn()
        # The server ended it: planned after timeoutSeconds, a cut when much earlier and empty.
        return brought or self.clock.monotonic() - started >= seconds - 1

    def _relist(self, index: int, deadline: Deadline) -> None:
        with self.lock:
            self.relists += 1
        self._list(index, deadline)

    def _apply(self, index: int, effect: str, value: Any) -> None:
        feed = self.feeds[index]
        with self.lock:
            self.events += 1
            if effect == BOOKMARK:
                if value:
                    self.versions[index] = value
            else:
                value.setdefault("apiVersion", feed.api_version)
                value.setdefault("kind", feed.kind)
                version = (value.get("metadata") or {}).get("resourceVersion")
                if version:
                    self.versions[index] = version
                if effect == DELETE:
                    self.cache[index].pop(object_key(value), None)
                else:
                    self.cache[index][object_key(value)] = value
                    self.on_change(value, self.clock.monotonic())
            self.lock.notify_all()


def _newer(obj: dict[str, Any], held: dict[str, Any]) -> bool:
    """Whether ``obj`` is a later version than ``held``. resourceVersions are opaque to clients, but etcd's (and
    every API server's in practice) are increasing integers; anything else counts as newer."""
    mine, theirs = (str((o.get("metadata") or {}).get("resourceVersion") or "") for o in (obj, held))
    if mine.isdigit() and theirs.isdigit():
        return int(mine) >= int(theirs)
    return True


def abort_watch(response: Any) -> None:
    """End a watch another thread is reading: urllib3 2.3+ shuts the socket down, which ends the blocked read
    at once (``close`` would wait for it: the reader holds the stream's lock). Older urllib3: the reading
    thread is a daemon and ends with the process or at the watch's next event."""
    shutdown = getattr(response, "shutdown", None)
    if shutdown is None:
        return
    try:
        shutdown()
    except Exception:  # pylint: disable=broad-except
        pass


def start_following(kube: KubernetesClient, feeds: Iterable[Feed], clock: Clock,
                    on_change: Callable[[dict[str, Any], float], Any], use_watch: bool,
                    deadline: Deadline) -> tuple[ObjectWatch | None, dict[str, Any]]:
    """Start an ``ObjectWatch`` of ``feeds`` (the lists happen here); ``(watch, observed_with)``, the watch
    None when ``use_watch`` is false. An API that does not serve watch answers the watch requests, in the
    watch's threads: ``failure`` then says so, and ``given_up`` hands over to polling at the next look."""
    if not use_watch:
        return None, dict(method="poll", fallback_reason="use_watch is false")
    return ObjectWatch(kube, feeds, clock, on_change).start(deadline), dict(method="watch", fallback_reason=None)


def given_up(watch: ObjectWatch | None) -> dict[str, Any] | None:
    """When ``watch`` failed: stop it and return the ``observed_with`` of the polling that takes over."""
    if watch is None or watch.failure is None:
        return None
    watch.stop()
    return dict(method="poll", fallback_reason=f"the watch stopped, polling took over: {watch.failure}",
                **watch.summary())


class WakingClock(Clock):
    """``clock`` whose ``sleep`` ends early when ``watch`` sees a change: the wait loop then judges
    the change at once instead of at its next poll."""

    def __init__(self, clock: Clock, watch: ObjectWatch) -> None:
        self.clock = clock
        self.watch = watch

    def monotonic(self) -> float:
        return self.clock.monotonic()

    def sleep(self, seconds: float) -> None:
        self.watch.wait_for_change(seconds)

    def time(self) -> float:
        return self.clock.time()

    def utc_now(self) -> datetime.datetime:
        return self.clock.utc_now()
