"""events.k8s.io/v1 Event <-> core/v1 Event: one stored object, two served shapes (pure).

kube-apiserver keeps both in one resource and converts field by field
(``k8s.io/kubernetes/pkg/apis/events/v1``); the stored form here is core/v1.
"""

from __future__ import annotations

# (events.k8s.io/v1 field, core/v1 field)
_RENAMES = (
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
)
CORE_API_VERSION = "v1"
EVENTS_API_VERSION = "events.k8s.io/v1"


def _renamed(obj: dict, pairs) -> dict:
    result = {k: v for k, v in obj.items() if k not in {old for old, _ in pairs}}
    for old, new in pairs:
        if obj.get(old) not in (None, "", {}, 0):
            result[new] = obj[old]
    return result


def to_core(event: dict) -> dict:
    """An events.k8s.io/v1 Event in its stored core/v1 form."""
    result = _renamed(event, _RENAMES)
    result["apiVersion"], result["kind"] = CORE_API_VERSION, "Event"
    return result


def from_core(event: dict) -> dict:
    """A stored core/v1 Event as events.k8s.io/v1 serves it."""
    result = _renamed(event, [(new, old) for old, new in _RENAMES])
    result["apiVersion"], result["kind"] = EVENTS_API_VERSION, "Event"
    return result
