"""Watch: a list request with ``watch=true``, answered as a stream of JSON events, as kube-apiserver does.

- without ``resourceVersion`` (or ``0``), or with ``sendInitialEvents=true``: first an ADDED
  event per object that exists, then the changes; with ``sendInitialEvents`` a BOOKMARK
  annotated ``k8s.io/initial-events-end`` marks the end of those (``allowWatchBookmarks``);
- with a ``resourceVersion``: the changes after it, in order; one the history no longer
  reaches is answered with an ERROR event carrying a 410 Expired Status (clients re-list);
- selectors filter events as the watch cache does: an object that stops matching is
  DELETED for the watcher, one that starts matching is ADDED;
- ``allowWatchBookmarks``: a BOOKMARK with the current resourceVersion every
  ``BOOKMARK_INTERVAL`` seconds and before the watch ends;
- ``timeoutSeconds`` ends the stream (default: ``DEFAULT_TIMEOUT``, kube-apiserver's
  minimum request timeout).

:func:`filtered` is pure; :func:`stream` drives it from the store.
"""

from __future__ import annotations

import json
import select
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from minicloud.kube import errors
from minicloud.kube.resources import Kind
from minicloud.kube.selectors import FieldSelector, LabelSelector
from minicloud.kube.store import ADDED, DELETED, MODIFIED, Change, Expired, Store

DEFAULT_TIMEOUT = 1800.0
BOOKMARK_INTERVAL = 10.0
POLL = 1.0  # how often a quiet watch looks whether its client went away
INITIAL_EVENTS_END = "k8s.io/initial-events-end"


@dataclass(frozen=True)
class WatchRequest:
    namespace: str | None
    labels: LabelSelector
    fields: FieldSelector
    resource_version: int | None  # None: from now (after the objects that exist, with initial_events)
    initial_events: bool  # an ADDED event for each object that exists first
    initial_events_end: bool  # asked with sendInitialEvents=true: a bookmark marks their end
    bookmarks: bool
    timeout: float

    @classmethod
    def parse(cls, args, kind: Kind, namespace: str | None, selectable: tuple[str, ...]) -> WatchRequest:
        raw_version = args.get("resourceVersion") or ""
        try:
            version = int(raw_version) if raw_version not in ("", "0") else None
        except ValueError:
            raise errors.bad_request(f'invalid resource version: "{raw_version}"') from None
        send_initial = args.get("sendInitialEvents")
        if send_initial not in (None, "", "true", "false"):
            raise errors.bad_request(f"sendInitialEvents: Invalid value: {send_initial!r}")
        initial = send_initial == "true" or (version is None and send_initial != "false")
        if send_initial == "true" and args.get("resourceVersionMatch") != "NotOlderThan":
            raise errors.invalid("meta.k8s.io", "", "ListOptions", "", [(
                "resourceVersionMatch", "FieldValueForbidden",
                "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")])
        try:
            timeout = float(args.get("timeoutSeconds") or DEFAULT_TIMEOUT)
        except ValueError:
            raise errors.bad_request(f"timeoutSeconds: invalid value {args.get('timeoutSeconds')!r}") from None
        return cls(namespace, LabelSelector.parse(args.get("labelSelector")),
                   FieldSelector.parse(args.get("fieldSelector"), selectable), version,
                   initial, send_initial == "true", args.get("allowWatchBookmarks") in ("true", "1"), timeout)

    def matches(self, obj: dict | None) -> bool:
        if obj is None:
            return False
        meta = obj["metadata"]
        return ((self.namespace is None or meta.get("namespace") == self.namespace)
                and self.labels.matches(meta.get("labels")) and self.fields.matches(obj))


def filtered(change: Change, request: WatchRequest) -> tuple[str, dict] | None:
    """What a watcher with ``request``'s selectors sees of ``change`` (type and stored object), if anything."""
    was, now = request.matches(change.old), request.matches(change.new if change.type != DELETED else None)
    if change.type == DELETED:
        return (DELETED, change.new) if was else None
    if was and now:
        return MODIFIED, change.new
    if now:
        return ADDED, change.new
    if was:
        return DELETED, change.new
    return None


def _line(event_type: str, obj: dict) -> bytes:
    return (json.dumps({"type": event_type, "object": obj}) + "\n").encode()


def expired_event(exc: Expired) -> bytes:
    status = errors.ApiError(410, "Expired", str(exc), None).status()
    return _line("ERROR", status)


def stream(store: Store, kind: Kind, request: WatchRequest, serve: Callable[[dict], dict],
           bookmark: Callable[[int, dict], dict], client_gone: Callable[[], bool] = lambda: False,
           clock: Callable[[], float] = time.monotonic) -> Iterator[bytes]:
    """The event lines of one watch. ``serve`` turns a stored object into the served one; ``bookmark``
    makes a BOOKMARK object for a resourceVersion (with annotations)."""
    with store.watch_lock:
        store.open_watches += 1
    try:
        yield b""  # the status line and headers go out now, as kube-apiserver sends them before any event
        yield from _events(store, kind, request, serve, bookmark, client_gone, clock)
    finally:
        with store.watch_lock:
            store.open_watches -= 1


def _events(store, kind, request, serve, bookmark, client_gone, clock) -> Iterator[bytes]:
    end = clock() + request.timeout
    if request.initial_events:
        items, revision = store.list(kind, request.namespace)
        after = int(revision)
        for obj in items:
            if request.matches(obj):
                yield _line(ADDED, serve(obj))
        if request.initial_events_end and request.bookmarks:
            yield _line("BOOKMARK", bookmark(after, {INITIAL_EVENTS_END: "true"}))
    else:
        after = store.revision if request.resource_version is None else request.resource_version
    next_bookmark = clock() + BOOKMARK_INTERVAL
    while True:
        try:
            changes, reached = store.changes(kind, after)
        except Expired as exc:
            yield expired_event(exc)
            return
        for change in changes:
            seen = filtered(change, request)
            if seen is not None:
                yield _line(seen[0], serve(seen[1]))
        after = reached
        now = clock()
        if request.bookmarks and (now >= next_bookmark or now >= end):
            yield _line("BOOKMARK", bookmark(after, {}))
            next_bookmark = now + BOOKMARK_INTERVAL
        if now >= end or client_gone():
            return
        store.wait_for_write(after, quiet_wait(request.bookmarks, now, end, next_bookmark))


def quiet_wait(bookmarks: bool, now: float, end: float, next_bookmark: float) -> float:
    """How long a watch waits for the next write at ``now``: until its client should be looked at again, its
    end, or (only when it asked for bookmarks) its next bookmark is due. A watch without bookmarks never waits
    for one: past ``next_bookmark`` it would wait for nothing and spin."""
    deadlines = [POLL, end - now] + ([next_bookmark - now] if bookmarks else [])
    return max(0.0, min(deadlines))


def client_gone(environ: dict) -> Callable[[], bool]:
    """Whether the client is done with the watch. A watch client sends nothing after its request,
    so anything readable on the connection is its end (end of file, or TLS close_notify). Best
    effort: the WSGI server's input stream carries the socket; without it the watch ends at its
    timeout, or at the first event it cannot write."""
    sock = getattr(getattr(environ.get("wsgi.input"), "raw", None), "_sock", None)
    if sock is None:
        return lambda: False

    def gone() -> bool:
        try:
            return bool(select.select([sock], [], [], 0)[0])
        except (OSError, ValueError):
            return True

    return gone
