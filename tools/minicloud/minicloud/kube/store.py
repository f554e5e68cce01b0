"""Objects of the emulated API server: the storage rules of kube-apiserver, without HTTP.

What the store guarantees, as kube-apiserver does:

- ``metadata.resourceVersion`` is a cluster-wide counter, bumped on every real write;
  a write that changes nothing is not a write (no new resourceVersion);
- a replace carrying a stale ``resourceVersion`` fails with 409 Conflict;
- ``metadata.generation`` (custom resources) starts at 1 and is bumped only when
  something outside ``metadata`` and ``status`` changes;
- with a status subresource, writes to the object ignore ``status`` and writes to
  ``/status`` change nothing but ``status``;
- deleting an object with finalizers only sets ``deletionTimestamp``; the object
  goes away once the last finalizer is removed;
- a dry run (``dry_run=True``) validates and answers as if done, and stores nothing:
  no new resourceVersion, no event (a created object has no resourceVersion yet);
- every real write is an event (ADDED, MODIFIED, DELETED) in the store's history, which
  keeps the last ``history`` events, as etcd keeps revisions until compaction; a watch
  from a resourceVersion older than that is told it expired (:class:`Expired`).

Objects are plain dicts in their stored (hub) form; callers get deep copies.
All methods are thread-safe (one lock: writes are short).
"""

from __future__ import annotations

import copy
import datetime
import random
import string
import threading
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from minicloud.kube import errors
from minicloud.kube.resources import Kind, by_kind
from minicloud.kube.selectors import FieldSelector, LabelSelector

Key = tuple[str, str, str]  # (kind, namespace or "", name)
PROTECTED_NAMESPACES = ("default", "kube-system", "kube-public")
HISTORY = 5000
ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"


@dataclass(frozen=True)
class Change:
    """One write as watchers see it: the object before (None when added) and after (None when deleted)."""

    revision: int
    type: str
    key: Key
    old: dict | None
    new: dict | None


class Expired(Exception):
    """A watch asked for changes after a resourceVersion the history no longer reaches."""

    def __init__(self, asked: int, oldest: int):
        super().__init__(f"too old resource version: {asked} ({oldest})")
        self.asked = asked
        self.oldest = oldest


def rfc3339(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def spec_of(obj: dict) -> dict:
    """What ``generation`` tracks: everything but metadata, status and the type fields."""
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


def _without_version(obj: dict) -> dict:
    result = dict(obj)
    result["metadata"] = {k: v for k, v in obj.get("metadata", {}).items() if k != "resourceVersion"}
    return result


class Store:
    def __init__(self, clock: Callable[[], datetime.datetime] = utc_now, history: int = HISTORY):
        self._clock = clock
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._objects: dict[Key, dict] = {}
        self._revision = 0
        self._history: deque[Change] = deque(maxlen=history)
        self._compacted = 0  # the newest revision no longer in the history
        self.open_watches = 0  # watches being served (kept by minicloud.kube.watch; tests wait on it)
        self.watch_lock = threading.Lock()

    # -- reading -----------------------------------------------------------------------

    @property
    def revision(self) -> int:
        return self._revision

    def get(self, kind: Kind, namespace: str | None, name: str) -> dict:
        with self._lock:
            return copy.deepcopy(self._current(kind, namespace, name))

    def find(self, kind: Kind, namespace: str | None, name: str) -> dict | None:
        with self._lock:
            obj = self._objects.get(self._key(kind, namespace, name))
            return copy.deepcopy(obj) if obj else None

    def list(self, kind: Kind, namespace: str | None = None, label_selector: str | None = None,
             field_selector: str | None = None) -> tuple[list[dict], str]:
        """Matching objects sorted by namespace and name, and the list's resourceVersion."""
        labels = LabelSelector.parse(label_selector)
        fields = FieldSelector.parse(field_selector, self._selectable(kind))
        with self._lock:
            items = [
                copy.deepcopy(obj) for (k, ns, _), obj in sorted(self._objects.items())
                if k == kind.storage and (namespace is None or ns == namespace)
                and labels.matches(obj["metadata"].get("labels")) and fields.matches(obj)
            ]
            return items, str(self._revision)

    def changes(self, kind: Kind, after: int) -> tuple[list[Change], int]:
        """The writes to ``kind`` after revision ``after``, oldest first (deep copies), and the
        revision they reach (every write up to it is in the list or was to another kind).

        Raises :class:`Expired` when the history no longer holds all of them."""
        with self._lock:
            if after < self._compacted:
                raise Expired(after, self._compacted + 1)
            found = [copy.deepcopy(c) for c in self._history if c.revision > after and c.key[0] == kind.storage]
            return found, max(after, self._revision)

    def wait_for_write(self, after: int, timeout: float) -> int:
        """Block until the revision passes ``after`` or ``timeout`` seconds passed; the revision then."""
        with self._changed:
            self._changed.wait_for(lambda: self._revision > after, timeout)
            return self._revision

    def selectable(self, kind: Kind) -> tuple[str, ...]:
        return self._selectable(kind)

    @staticmethod
    def _selectable(kind: Kind) -> tuple[str, ...]:
        own = ("metadata.name", "metadata.namespace") if kind.namespaced else ("metadata.name",)
        return own + kind.selectable_fields

    # -- writing -----------------------------------------------------------------------

    def create(self, kind: Kind, obj: dict, namespace: str | None = None, dry_run: bool = False) -> dict:
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        if kind.namespaced:
            meta["namespace"] = namespace or meta.get("namespace") or "default"
        else:
            meta.pop("namespace", None)
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + "".join(random.choices(string.ascii_lowercase + string.digits, k=5))
        if not meta.get("name"):
            raise errors.invalid(kind.group, kind.plural, kind.kind, "",
                                 [("metadata.name", "FieldValueRequired",
                                   "Required value: name or generateName is required")])
        with self._lock:
            if kind.namespaced:
                namespace_kind = by_kind("Namespace")
                if self._key(namespace_kind, None, meta["namespace"]) not in self._objects:
                    raise errors.not_found("", "namespaces", meta["namespace"])
            key = self._key(kind, meta.get("namespace"), meta["name"])
            if key in self._objects:
                raise errors.already_exists(kind.group, kind.plural, meta["name"])
            for field in ("deletionTimestamp", "deletionGracePeriodSeconds"):
                meta.pop(field, None)
            meta["uid"] = str(uuid.uuid4())
            meta["creationTimestamp"] = rfc3339(self._clock())
            if kind.custom:
                meta["generation"] = 1
            else:
                meta.pop("generation", None)
            if kind.status_subresource and kind.custom:
                obj.pop("status", None)  # a custom resource's status is set through /status only
            if kind.kind == "Namespace":
                obj.setdefault("spec", {"finalizers": ["kubernetes"]})
                obj["status"] = {"phase": "Active"}
            if kind.kind == "Secret" and not obj.get("type"):
                obj["type"] = "Opaque"  # core/v1 defaulting (SetDefaults_Secret)
            if dry_run:
                meta.pop("resourceVersion", None)
                return obj
            return self._write(key, obj, None)

    def replace(self, kind: Kind, obj: dict, namespace: str | None, name: str, subresource: str | None = None,
                dry_run: bool = False) -> dict:
        """PUT: the whole object; a ``resourceVersion`` in it must be the current one."""
        with self._lock:
            current = self._current(kind, namespace, name)
            sent = obj.get("metadata", {}).get("resourceVersion")
            if sent and sent != current["metadata"]["resourceVersion"]:
                raise errors.conflict(kind.group, kind.plural, name)
            return self._commit(kind, current, copy.deepcopy(obj), subresource, dry_run)

    def update(self, kind: Kind, namespace: str | None, name: str, change: Callable[[dict], dict],
               subresource: str | None = None, dry_run: bool = False) -> dict:
        """Read-modify-write under the lock (patches, controllers): ``change`` gets a copy of the
        current object and returns the new one. A ``resourceVersion`` it sets must be the current one."""
        with self._lock:
            current = self._current(kind, namespace, name)
            new = change(copy.deepcopy(current))
            sent = new.get("metadata", {}).get("resourceVersion")
            if sent and sent != current["metadata"]["resourceVersion"]:
                raise errors.conflict(kind.group, kind.plural, name)
            return self._commit(kind, current, new, subresource, dry_run)

    def delete(self, kind: Kind, namespace: str | None, name: str, dry_run: bool = False) -> tuple[dict, bool]:
        """Returns the object and whether it is gone (False: finalizers hold it, deletionTimestamp set)."""
        with self._lock:
            current = self._current(kind, namespace, name)
            key = self._key(kind, namespace, name)
            if kind.kind == "Namespace":
                if name in PROTECTED_NAMESPACES:
                    raise errors.ApiError(403, "Forbidden", f'namespaces "{name}" is forbidden: this namespace '
                                          "may not be deleted", {"name": name, "kind": "namespaces"})
                if not dry_run:
                    for other in sorted(k for k in self._objects if k[1] == name and k != key):
                        self._remove(other)  # what the namespace controller would do, at once
            if current["metadata"].get("finalizers"):
                if current["metadata"].get("deletionTimestamp"):
                    return copy.deepcopy(current), False
                deleting = copy.deepcopy(current)
                deleting["metadata"]["deletionTimestamp"] = rfc3339(self._clock())
                deleting["metadata"]["deletionGracePeriodSeconds"] = 0
                if deleting["metadata"].get("generation"):
                    deleting["metadata"]["generation"] += 1  # as rest.BeforeDelete does
                if dry_run:
                    return deleting, False
                return self._write(key, deleting, current), False
            if dry_run:
                return copy.deepcopy(current), True
            return self._remove(key), True

    # -- rules -------------------------------------------------------------------------

    def _commit(self, kind: Kind, current: dict, new: dict, subresource: str | None, dry_run: bool = False) -> dict:
        if subresource == "status":
            result = copy.deepcopy(current)
            if "status" in new:
                result["status"] = new["status"]
            else:
                result.pop("status", None)
        else:
            result = new
            if kind.status_subresource:
                if "status" in current:
                    result["status"] = copy.deepcopy(current["status"])
                else:
                    result.pop("status", None)
            result["metadata"] = self._merged_metadata(current["metadata"], new.get("metadata", {}))
        result["apiVersion"], result["kind"] = current.get("apiVersion"), current.get("kind")
        meta = result["metadata"]
        if kind.custom and spec_of(result) != spec_of(current):
            meta["generation"] = current["metadata"].get("generation", 1) + 1
        key = self._key(kind, meta.get("namespace"), meta["name"])
        if _without_version(result) == _without_version(current):
            return copy.deepcopy(current)  # nothing changed: no write, no new resourceVersion
        if dry_run:
            meta["resourceVersion"] = current["metadata"]["resourceVersion"]
            return copy.deepcopy(result)
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            self._objects[key] = result  # the last state, as the DELETED event carries it
            return self._remove(key)
        return self._write(key, result, current)

    @staticmethod
    def _merged_metadata(current: dict, sent: dict) -> dict:
        """Clients may change labels, annotations, finalizers, ownerReferences; the rest is the server's."""
        meta = copy.deepcopy(sent)
        for field in ("name", "namespace", "uid", "creationTimestamp", "generation", "deletionTimestamp",
                      "deletionGracePeriodSeconds", "resourceVersion"):
            if field in current:
                meta[field] = current[field]
            else:
                meta.pop(field, None)
        for field in ("labels", "annotations", "finalizers", "ownerReferences"):
            if not meta.get(field):
                meta.pop(field, None)
        return meta

    def _write(self, key: Key, obj: dict, old: dict | None) -> dict:
        """Store ``obj`` at a new revision (``old``: what it replaces, None for a new object)."""
        self._revision += 1
        obj["metadata"]["resourceVersion"] = str(self._revision)
        self._objects[key] = obj
        self._record(Change(self._revision, MODIFIED if old else ADDED, key, copy.deepcopy(old), copy.deepcopy(obj)))
        return copy.deepcopy(obj)

    def _remove(self, key: Key) -> dict:
        """Delete the object at ``key`` at a new revision; its last state, carrying that revision."""
        gone = self._objects.pop(key)
        self._revision += 1
        last = copy.deepcopy(gone)
        last["metadata"]["resourceVersion"] = str(self._revision)
        self._record(Change(self._revision, DELETED, key, gone, copy.deepcopy(last)))
        return last

    def _record(self, change: Change) -> None:
        if len(self._history) == self._history.maxlen:
            self._compacted = self._history[0].revision
        self._history.append(change)
        self._changed.notify_all()

    def _current(self, kind: Kind, namespace: str | None, name: str) -> dict:
        obj = self._objects.get(self._key(kind, namespace, name))
        if obj is None:
            raise errors.not_found(kind.group, kind.plural, name)
        return obj

    @staticmethod
    def _key(kind: Kind, namespace: str | None, name: str) -> Key:
        return kind.storage, (namespace or "") if kind.namespaced else "", name
