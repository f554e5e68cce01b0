# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Has every controller of a cluster acknowledged a pause (or an unpause)?  Pure decisions.

An object counts as acknowledged when it says so, in the strongest way its controller can:

1. the ``clusterctl.cluster.x-k8s.io/block-move`` annotation is gone (while it is set, its provider is
   still working on it, whatever else it reports; CAPZ does this);
2. its ``Paused`` condition has the wanted status and its ``observedGeneration`` has caught up with
   the object's generation (CAPI core since v1.9, wherever the served version keeps the condition);
3. a block-move annotation seen during the wait went away (the provider finished);
4. it reports nothing (CAPO): nobody has written to it for the quiet period, counted from the moment
   the pause was set at the earliest.

Unpausing waits for ``Paused`` to turn False where it is reported, and for an object whose status is still
empty (no controller has reconciled it on this API server: what ``clusterctl move`` leaves on the target until
the target's controllers take the objects up) to be reconciled; an object that carries its own
``cluster.x-k8s.io/paused`` annotation stays paused and is named as a blocker.

``Tracker`` remembers, across polls, when each object's resourceVersion last changed and whether its
block-move annotation was seen; ``assess`` and ``judge`` are pure over that record.
"""

# no ``from __future__ import annotations``: ``annotations`` below is capi.objects' helper; hence Optional
from typing import Any, Iterable, Optional, Tuple

from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.objects import (
    BLOCK_MOVE_ANNOTATION,
    DELETE_FOR_MOVE_ANNOTATION,
    PAUSED_ANNOTATION,
    annotations,
    condition_true,
    deleting,
    generation,
    identity,
    meta,
    never_reconciled,
    paused_condition,
    resource_version,
    simple_condition,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.waiter import DONE, WAITING, Verdict

# How many blockers a failure message names before it says "and N more".
MESSAGE_BLOCKERS = 8


def object_key(obj: dict[str, Any]) -> str:
    metadata = meta(obj)
    return metadata.get("uid") or f'{obj.get("apiVersion")}/{obj.get("kind")}/{metadata.get("namespace")}/{metadata.get("name")}'


class Record:
    """What the wait has seen of one object."""

    def __init__(self, resource_version: Optional[str], now: float, block_move: bool) -> None:
        self.resource_version = resource_version
        self.changed_at = now          # first seen counts as a write: its past is unknown
        self.writes_seen = 0
        self.block_move_seen = block_move
        self.block_move_gone_at: Optional[float] = None


class Tracker:
    """Remembers, across polls, each object's last resourceVersion change and its block-move annotation."""

    def __init__(self) -> None:
        self.records: dict[str, Record] = {}

    def observe(self, objects: Iterable[dict[str, Any]], now: float) -> None:
        for obj in objects:
            key = object_key(obj)
            version = resource_version(obj)
            block_move = BLOCK_MOVE_ANNOTATION in annotations(obj)
            record = self.records.get(key)
            if record is None:
                self.records[key] = Record(version, now, block_move)
                continue
            if version != record.resource_version:
                record.resource_version = version
                record.changed_at = now
                record.writes_seen += 1
            if block_move:
                record.block_move_seen = True
                record.block_move_gone_at = None
            elif record.block_move_seen and record.block_move_gone_at is None:
                record.block_move_gone_at = now

    def get(self, obj: dict[str, Any]) -> Optional[Record]:
        return self.records.get(object_key(obj))


def assess(obj: dict[str, Any], paused: bool, record: Optional[Record], now: float, quiet_period: float,
           since: float) -> dict[str, Any]:
    """How ``obj`` stands: a dict with ``acknowledged`` and either ``how`` or ``waiting_for``.

    ``paused`` is the wanted state; ``since`` is when it was set (quiet periods start there at the
    earliest); ``record`` is the Tracker's record of the object (None: seen for the first time now).
    """
    condition, where = paused_condition(obj)
    item: dict[str, Any] = {
        "kind": obj.get("kind"),
        "api_version": obj.get("apiVersion"),
        "namespace": meta(obj).get("namespace"),
        "name": meta(obj).get("name"),
        "paused_condition": simple_condition(condition, where),
        "block_move": BLOCK_MOVE_ANNOTATION in annotations(obj),
        "deleting": deleting(obj),
    }
    if record is not None:
        item["last_write_age"] = round(max(0.0, now - record.changed_at), 1)
    acknowledged_by = _pause_ack if paused else _unpause_ack
    how, waiting_for = acknowledged_by(obj, condition, where, record, now, quiet_period, since)
    item["acknowledged"] = waiting_for is None
    item["how"] = how
    item["waiting_for"] = waiting_for
    return item


def _condition_caught_up(obj: dict[str, Any], condition: dict[str, Any]) -> bool:
    observed = condition.get("observedGeneration")
    current = generation(obj)
    return observed is None or current is None or observed >= current


def _describe_condition(condition: dict[str, Any], where: Optional[str]) -> str:
    text = f'Paused condition {condition.get("status")} (reason {condition.get("reason")}) in {where}'
    if condition.get("observedGeneration") is not None:
        text += f', observedGeneration {condition.get("observedGeneration")}'
    return text


def _pause_ack(obj: dict[str, Any], condition: Optional[dict[str, Any]], where: Optional[str], record: Optional[Record],
               now: float, quiet_period: float, since: float) -> Tuple[Optional[str], Optional[str]]:
    if BLOCK_MOVE_ANNOTATION in annotations(obj):
        return None, f"the {BLOCK_MOVE_ANNOTATION} annotation is still set (its provider has not finished)"
    if condition is not None:
        if not condition_true(condition):
            return None, f"{_describe_condition(condition, where)}: not paused yet"
        if not _condition_caught_up(obj, condition):
            return None, (f"{_describe_condition(condition, where)}, but the object is at generation "
                          f"{generation(obj)}: its controller has not seen the pause yet")
        return _describe_condition(condition, where), None
    if record is not None and record.block_move_gone_at is not None:
        return f"the {BLOCK_MOVE_ANNOTATION} annotation was removed by its provider", None
    quiet_since = max(since, record.changed_at if record is not None else now)
    quiet_for = now - quiet_since
    if quiet_for >= quiet_period:
        return (f"reports no pause state; no writes for {quiet_for:.1f} s (quiet period {quiet_period} s)"), None
    seen = f", {record.writes_seen} write(s) seen during the wait" if record is not None and record.writes_seen else ""
    return None, (f"reports no pause state; waiting for {quiet_period} s without writes (quiet for "
                  f"{max(0.0, quiet_for):.1f} s{seen})")


def _unpause_ack(obj: dict[str, Any], condition: Optional[dict[str, Any]], where: Optional[str], record: Optional[Record],
                 now: float, quiet_period: float, since: float) -> Tuple[Optional[str], Optional[str]]:
    if PAUSED_ANNOTATION in annotations(obj):
        return None, (f"it carries the {PAUSED_ANNOTATION} annotation, so it stays paused whatever the Cluster says; remove the "
                      "annotation to unpause it")
    if condition is not None:
        if condition_true(condition):
            return None, f"{_describe_condition(condition, where)}: still paused"
        if not _condition_caught_up(obj, condition):
            return None, (f"{_describe_condition(condition, where)}, but the object is at generation "
                          f"{generation(obj)}: its controller has not seen the unpause yet")
        return _describe_condition(condition, where), None
    if never_reconciled(obj):
        return None, ("its status is empty: no controller has reconciled it on this API server yet (clusterctl move "
                      "creates objects without their status; are the controllers of its provider running here?)")
    return "reports no pause state; nothing to wait for", None


def judge(items: list[dict[str, Any]]) -> Verdict:
    """DONE when every object is acknowledged, else WAITING with the blockers named."""
    blockers = [item for item in items if not item["acknowledged"]]
    if not blockers:
        return Verdict(DONE, f"all {len(items)} objects acknowledged")
    return Verdict(WAITING, describe_blockers(blockers))


def describe_blockers(blockers: list[dict[str, Any]]) -> str:
    parts = [f'{b["kind"]} {b["namespace"]}/{b["name"]}: {b["waiting_for"]}'
             for b in blockers[:MESSAGE_BLOCKERS]]
    if len(blockers) > MESSAGE_BLOCKERS:
        parts.append(f"and {len(blockers) - MESSAGE_BLOCKERS} more")
    return "; ".join(parts)


def moving(objects: Iterable[dict[str, Any]]) -> list[str]:
    """The objects that say a pause is still being worked on or a ``clusterctl move`` is under way (an unpause
    now would let their controllers act in the middle of it), each as "Kind namespace/name (annotation)"."""
    found = []
    for obj in objects:
        marks = [a for a in (BLOCK_MOVE_ANNOTATION, DELETE_FOR_MOVE_ANNOTATION) if a in annotations(obj)]
        if marks:
            found.append(f'{identity(obj)} ({", ".join(marks)})')
    return found


def blocker_identities(items: Iterable[dict[str, Any]]) -> list[str]:
    return [identity({"kind": i["kind"], "metadata": {"namespace": i["namespace"], "name": i["name"]}})
            for i in items if not i["acknowledged"]]
