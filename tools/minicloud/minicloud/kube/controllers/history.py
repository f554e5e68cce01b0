"""Where rollouts leave their traces in the state folder, and the sampler that records them.

``capi/<namespace>.<cluster>.rollout.json``: the rollout controller's view (phase, machines,
what it waits for), rewritten when it changes. ``capi/<namespace>.<cluster>.history.jsonl``:
one record per sample, every ``interval`` seconds while a rollout runs and ``linger`` seconds
after it completed with no old Machine left (see :func:`record`).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

from minicloud.kube.controllers import rollout

FOLDER = "capi"
INTERVAL = 0.25
LINGER = 3.0
SETTLE = 120.0


def status_file(root: Path, namespace: str, cluster: str) -> Path:
    return Path(root) / FOLDER / f"{namespace}.{cluster}.rollout.json"


def history_file(root: Path, namespace: str, cluster: str) -> Path:
    return Path(root) / FOLDER / f"{namespace}.{cluster}.history.jsonl"


def write_status(root: Path, namespace: str, cluster: str, data: dict) -> None:
    path = status_file(root, namespace, cluster)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, path)


def read_status(root: Path, namespace: str, cluster: str) -> dict | None:
    try:
        return json.loads(status_file(root, namespace, cluster).read_text())
    except FileNotFoundError:
        return None


def append(root: Path, namespace: str, cluster: str, item: dict) -> None:
    path = history_file(root, namespace, cluster)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as out:
        out.write(json.dumps(item, sort_keys=True) + "\n")


def read_history(root: Path, namespace: str, cluster: str, rollout_number: int | None = None) -> list[dict]:
    """The records of rollout ``rollout_number`` (default: the latest one recorded)."""
    try:
        lines = history_file(root, namespace, cluster).read_text().splitlines()
    except FileNotFoundError:
        return []
    records = [json.loads(line) for line in lines if line.strip()]
    if rollout_number is None and records:
        rollout_number = max(r["rollout"] for r in records)
    return [r for r in records if r["rollout"] == rollout_number]


def record(now: float, rollout_number: int, capo_wait: str, phase: str, lb_status: str | None,
           members: list[rollout.MemberView], old: list[str], new: list[str], released: list[str]) -> dict:
    """One sample: pool members (all / provisioning ACTIVE / serving), the Machines present
    (outdated ``old``, up-to-date ``new``) and which are ``released`` (being deleted)."""
    return {
        "time": round(now, 3), "rollout": rollout_number, "capoWait": capo_wait, "phase": phase,
        "lb": lb_status, "members": len(members),
        "active": sum(1 for m in members if m.provisioning_status == rollout.ACTIVE),
        "serving": sum(1 for m in members if m.serving),
        "memberStatus": {m.name: f"{m.provisioning_status}/{m.operating_status}" for m in members},
        "old": sorted(old), "new": sorted(new), "released": sorted(released),
    }


class HistorySampler:
    """Samples every cluster the rollout controller tracks (``targets()``) while it rolls."""

    def __init__(self, root: Path, targets: Callable[[], list[dict]], openstack: Callable[[], object],
                 clock: Callable[[], float] = time.time, linger: float = LINGER,
                 revision: Callable[[], object] | None = None):
        self.root = Path(root)
        self.revision = revision or (lambda: None)
        self._idle_at = object()  # the revision of the last pass that sampled nothing
        self.targets = targets
        self.openstack = openstack
        self.clock = clock
        self.linger = linger
        self._until: dict[tuple[str, str], tuple[int, float]] = {}
        # when each cluster's rollout (its number) was first seen Completed
        self._completed: dict[tuple[str, str], tuple[int, float]] = {}

    def tick(self) -> None:
        revision = self.revision()
        if revision is not None and revision == self._idle_at:
            return  # no cluster rolls or lingers, and nothing changed since
        self._idle_at = revision if self._sample(self.clock()) == 0 else object()

    def _completed_at(self, key: tuple[str, str], rollout_number: int, now: float) -> float:
        seen = self._completed.get(key)
        if seen is None or seen[0] != rollout_number:
            seen = self._completed[key] = (rollout_number, now)
        return seen[1]

    def _sample(self, now: float) -> int:
        """One sample of every cluster that rolls or lingers; returns how many were taken."""
        taken = 0
        for target in self.targets():
            key = (target["namespace"], target["cluster"])
            if target["rollout"] == 0:
                continue
            if target["phase"] != "Completed":
                self._completed.pop(key, None)
                self._until[key] = (target["rollout"], now + self.linger)
            elif target["old"] and now - self._completed_at(key, target["rollout"], now) < SETTLE:
                # an old Machine still there after KCP's Completed (its deletion may end seconds later): the
                # history's end is the first sample without one, then ``linger`` seconds more (one kept for ever, by
                # a hook of someone else, ends it SETTLE seconds after Completed)
                self._until[key] = (target["rollout"], now + self.linger)
            elif self._until.get(key, (None, 0))[0] != target["rollout"]:
                self._until[key] = (target["rollout"], now + self.linger)  # completed before we saw it roll
            if now > self._until[key][1]:
                continue
            conn = self.openstack()
            members = conn.members(target["pool_id"])
            lb_status = conn.lb_status(target["lb_id"])
            append(self.root, *key, record(now, target["rollout"], target["capoWait"], target["phase"], lb_status,
                                           members, target["old"], target["new"], target["released"]))
            taken += 1
        return taken
