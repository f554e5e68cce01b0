"""Events the controllers write for what they do, as client-go's event recorder writes them.

An Event is a core/v1 object in the regarding object's namespace (``default`` for
cluster-scoped objects), named ``<object name>.<hex nanoseconds>``, with ``eventTime`` set (which events.k8s.io/v1 requires). Like the recorder's
correlator, a repeat of the same reason and message for the same object within
``AGGREGATE_WINDOW`` bumps ``count`` and ``lastTimestamp`` of the first one instead of
adding another.
"""

from __future__ import annotations

import datetime
import time

from minicloud.kube import errors
from minicloud.kube.resources import by_kind
from minicloud.kube.store import Store, rfc3339, utc_now

EVENT = by_kind("Event")
NORMAL = "Normal"
WARNING = "Warning"
AGGREGATE_WINDOW = datetime.timedelta(minutes=10)


def reference(obj: dict) -> dict:
    """``involvedObject``: who the Event is about."""
    meta = obj["metadata"]
    ref = {"apiVersion": obj.get("apiVersion", ""), "kind": obj.get("kind", ""), "name": meta["name"],
           "uid": meta.get("uid", ""), "resourceVersion": meta.get("resourceVersion", "")}
    if meta.get("namespace"):
        ref["namespace"] = meta["namespace"]
    return ref


def record(store: Store, regarding: dict, reason: str, message: str, component: str,
           event_type: str = NORMAL, action: str = "") -> None:
    """Write (or aggregate into) the Event. Never raises: an event is not worth a failed reconcile."""
    try:
        _record(store, regarding, reason, message, component, event_type, action)
    except errors.ApiError:
        pass  # namespace gone meanwhile


def _record(store, regarding, reason, message, component, event_type, action) -> None:
    ref = reference(regarding)
    namespace = ref.get("namespace", "default")
    now = utc_now()
    stamp = rfc3339(now)
    same = [e for e in store.list(EVENT, namespace, field_selector=f"involvedObject.uid={ref['uid']}")[0]
            if e.get("reason") == reason and e.get("message") == message and e.get("type") == event_type
            and _within(e.get("lastTimestamp"), now)]
    if same:
        def bump(event: dict) -> dict:
            event["count"] = int(event.get("count") or 1) + 1
            event["lastTimestamp"] = stamp
            return event

        store.update(EVENT, namespace, same[0]["metadata"]["name"], bump)
        return
    event = {"apiVersion": "v1", "kind": "Event",
             "metadata": {"name": f"{ref['name']}.{time.time_ns():x}", "namespace": namespace},
             "involvedObject": ref, "reason": reason, "message": message, "type": event_type,
             "source": {"component": component}, "reportingComponent": component,
             "reportingInstance": f"{component}-minicloud", "firstTimestamp": stamp, "lastTimestamp": stamp,
             "count": 1, "eventTime": now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")}
    if action:
        event["action"] = action
    store.create(EVENT, event, namespace)


def _within(stamp: str | None, now: datetime.datetime) -> bool:
    if not stamp:
        return False
    seen = datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
    return now - seen <= AGGREGATE_WINDOW
