"""The infrastructure provider (OpenStackCluster, OpenStackMachine): how it reacts to a pause
depends on the run-time mode (:mod:`minicloud.kube.capo_mode`).

A block-move provider that drops its annotation because of a pause records an Event ``Paused`` on
the object, and ``Unpaused`` when it puts it back after the pause: minicloud's own reasons (CAPO
records none; in ``silent`` mode, CAPO's, nothing is reported at all).
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable

from minicloud.kube import errors
from minicloud.kube.capo_mode import BLOCK_MOVE, SILENT, STUCK, CapoMode
from minicloud.kube.controllers import events, paused, reasons
from minicloud.kube.resources import INFRA_KINDS, by_kind
from minicloud.kube.store import Store

WRITE_INTERVAL = 0.5


def wants_block_move(mode: CapoMode, paused_for: float | None) -> bool:
    """Whether the annotation belongs on an object paused for ``paused_for`` seconds (None: not paused)."""
    if mode.name == STUCK:
        return True
    if mode.name == BLOCK_MOVE:
        return paused_for is None or paused_for < mode.delay
    return False


def keeps_writing(mode: CapoMode, paused_for: float | None) -> bool:
    """Silent mode: an in-flight reconcile goes on writing for ``delay`` seconds after the pause."""
    return mode.name == SILENT and paused_for is not None and paused_for < mode.delay


class InfraProvider:
    def __init__(self, store: Store, mode: Callable[[], CapoMode], clock: Callable[[], float] = time.monotonic,
                 write_interval: float = WRITE_INTERVAL):
        self.store = store
        self.mode = mode
        self.clock = clock
        self.write_interval = write_interval
        self._paused_since: dict[tuple, float] = {}
        self._last_write: dict[tuple, float] = {}
        self._dropped: set[tuple] = set()  # objects whose annotation went because of a pause
        self._timed = False

    def waiting(self) -> bool:
        """Whether the last pass's outcome depended on how long something has been paused (block-move and
        silent act differently once ``delay`` seconds have passed): then a pass is due with nothing changed.
        A cluster that stays paused in any other mode needs no pass until something changes."""
        return self._timed


    def tick(self) -> CapoMode:
        """One pass over the provider's objects; returns the mode it applied."""
        mode = self.mode()
        now = self.clock()
        clusters = {(c["metadata"]["namespace"], c["metadata"]["name"]): c
                    for c in self.store.list(by_kind("Cluster"))[0]}
        seen = set()
        timed = False
        for kind_name in INFRA_KINDS:
            kind = by_kind(kind_name)
            for obj in self.store.list(kind)[0]:
                key = (kind_name, obj["metadata"]["namespace"], obj["metadata"]["name"])
                seen.add(key)
                cluster = clusters.get((key[1], paused.cluster_name(obj)))
                if paused.is_paused(cluster, obj):
                    paused_for = now - self._paused_since.setdefault(key, now)
                else:
                    self._paused_since.pop(key, None)
                    paused_for = None
                timed = timed or (paused_for is not None and paused_for < mode.delay)
                self._annotate(kind, key, obj, wants_block_move(mode, paused_for), paused_for is not None)
                if keeps_writing(mode, paused_for) and now - self._last_write.get(key, -1e9) >= self.write_interval:
                    self._touch(kind, key)
                    self._last_write[key] = now
        for key in set(self._paused_since) - seen:
            del self._paused_since[key]
        self._dropped &= seen
        self._timed = timed and mode.name in (BLOCK_MOVE, SILENT)
        return mode

    def _annotate(self, kind, key: tuple, obj: dict, wanted: bool, is_paused: bool) -> None:
        if (paused.BLOCK_MOVE_ANNOTATION in (obj["metadata"].get("annotations") or {})) == wanted:
            return

        def change(current: dict) -> dict:
            annotations = current["metadata"].setdefault("annotations", {})
            if wanted:
                annotations[paused.BLOCK_MOVE_ANNOTATION] = "true"
            else:
                annotations.pop(paused.BLOCK_MOVE_ANNOTATION, None)
            return current

        written = self._update(kind, key, change, None)
        if written is None:
            return
        if not wanted and is_paused:
            self._dropped.add(key)
            events.record(self.store, written, reasons.PAUSED, f"pause acknowledged: "
                          f"{paused.BLOCK_MOVE_ANNOTATION} removed", reasons.CAPO_MANAGER)
        elif wanted and not is_paused and key in self._dropped:
            self._dropped.discard(key)
            events.record(self.store, written, reasons.UNPAUSED, f"reconciling again: "
                          f"{paused.BLOCK_MOVE_ANNOTATION} back", reasons.CAPO_MANAGER)

    def _touch(self, kind, key: tuple) -> None:
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

        def change(current: dict) -> dict:
            current.setdefault("status", {})["lastReconcileTime"] = stamp
            return current

        self._update(kind, key, change, "status")

    def _update(self, kind, key, change, subresource) -> dict | None:
        """The object as written; None when it is gone meanwhile."""
        try:
            return self.store.update(kind, key[1], key[2], change, subresource=subresource)
        except errors.ApiError:
            return None  # deleted meanwhile
