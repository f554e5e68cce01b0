"""How kube-apiserver prints the built-in kinds as table rows (its ``pkg/printers/internalversion``), pure.

The server always computes the wide cells; ``kubectl get`` hides the columns of priority > 0
unless ``-o wide``. Each printer takes the object and the current time.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from dataclasses import dataclass

from minicloud.kube.durations import since

NAME_DESCRIPTION = "Name must be unique within a namespace; it cannot be changed."


@dataclass(frozen=True)
class Printer:
    columns: tuple[tuple[str, str, int, str], ...]  # (name, type, priority, description)
    cells: Callable[[dict, datetime.datetime], list]


def _meta(obj: dict) -> dict:
    return obj.get("metadata") or {}


def _age(obj: dict, now: datetime.datetime) -> str:
    return since(_meta(obj).get("creationTimestamp"), now)


NAME = ("Name", "string", 0, NAME_DESCRIPTION)
AGE = ("Age", "string", 0, "Time since the object was created.")


def _namespace(obj: dict, now) -> list:
    return [_meta(obj).get("name", ""), (obj.get("status") or {}).get("phase", ""), _age(obj, now)]


def _secret(obj: dict, now) -> list:
    return [_meta(obj).get("name", ""), obj.get("type", ""), len(obj.get("data") or {}), _age(obj, now)]


def _config_map(obj: dict, now) -> list:
    return [_meta(obj).get("name", ""), len(obj.get("data") or {}) + len(obj.get("binaryData") or {}),
            _age(obj, now)]


def node_roles(labels: dict) -> str:
    roles = set()
    for key, value in (labels or {}).items():
        if key.startswith("node-role.kubernetes.io/") and key.split("/", 1)[1]:
            roles.add(key.split("/", 1)[1])
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    return ",".join(sorted(roles)) or "<none>"


def _address(obj: dict, kind: str) -> str:
    for address in (obj.get("status") or {}).get("addresses") or []:
        if address.get("type") == kind:
            return address.get("address", "")
    return "<none>"


def _node(obj: dict, now) -> list:
    status = obj.get("status") or {}
    ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
    states = [] if ready is None else ["Ready" if ready.get("status") == "True" else "NotReady"]
    states = states or ["Unknown"]
    if (obj.get("spec") or {}).get("unschedulable"):
        states.append("SchedulingDisabled")
    info = status.get("nodeInfo") or {}
    return [_meta(obj).get("name", ""), ",".join(states), node_roles(_meta(obj).get("labels")), _age(obj, now),
            info.get("kubeletVersion", ""), _address(obj, "InternalIP"), _address(obj, "ExternalIP"),
            info.get("osImage") or "<unknown>", info.get("kernelVersion") or "<unknown>",
            info.get("containerRuntimeVersion") or "<unknown>"]


def core_event(obj: dict) -> dict:
    """An events.k8s.io/v1 Event in the core/v1 shape (what the server converts both to before printing)."""
    source = obj.get("deprecatedSource") or {}
    return {"metadata": obj.get("metadata", {}), "involvedObject": obj.get("regarding") or {},
            "type": obj.get("type", ""), "reason": obj.get("reason", ""), "message": obj.get("note", ""),
            "source": source, "reportingComponent": obj.get("reportingController", ""),
            "reportingInstance": obj.get("reportingInstance", ""), "eventTime": obj.get("eventTime"),
            "firstTimestamp": obj.get("deprecatedFirstTimestamp"), "lastTimestamp": obj.get("deprecatedLastTimestamp"),
            "count": obj.get("deprecatedCount", 0), "series": obj.get("series")}


def _event(obj: dict, now) -> list:
    first = since(obj.get("firstTimestamp") or obj.get("eventTime"), now)
    last = since(obj["lastTimestamp"], now) if obj.get("lastTimestamp") else first
    count = obj.get("count") or 0
    if obj.get("series"):
        last = since(obj["series"].get("lastObservedTime"), now)
        count = obj["series"].get("count", 0)
    elif not count:
        count = 1
    involved = obj.get("involvedObject") or {}
    target = (involved.get("kind") or "").lower()
    if involved.get("name"):
        target = f"{target}/{involved['name']}"
    source = obj.get("source") or {}
    component = source.get("component") or obj.get("reportingComponent") or ""
    instance = source.get("host") or obj.get("reportingInstance") or ""
    return [last, obj.get("type", ""), obj.get("reason", ""), target, involved.get("fieldPath", ""),
            f"{component}, {instance}" if instance else component, (obj.get("message") or "").strip(), first,
            count, _meta(obj).get("name", "")]


PRINTERS: dict[tuple[str, str], Printer] = {
    ("", "Namespace"): Printer((NAME, ("Status", "string", 0, "The phase of the namespace."), AGE), _namespace),
    ("", "Secret"): Printer((NAME, ("Type", "string", 0, "The type of the secret."),
                             ("Data", "string", 0, "How many keys the secret holds."), AGE), _secret),
    ("", "ConfigMap"): Printer((NAME, ("Data", "string", 0, "How many keys the config map holds."), AGE),
                               _config_map),
    ("", "Node"): Printer((NAME, ("Status", "string", 0, "Whether the node is Ready, and cordoned."),
                           ("Roles", "string", 0, "The node's roles, from its node-role labels."), AGE,
                           ("Version", "string", 0, "The kubelet's version."),
                           ("Internal-IP", "string", 1, "The node's internal address."),
                           ("External-IP", "string", 1, "The node's external address."),
                           ("OS-Image", "string", 1, "The node's OS image."),
                           ("Kernel-Version", "string", 1, "The node's kernel."),
                           ("Container-Runtime", "string", 1, "The node's container runtime.")), _node),
}
_EVENT_COLUMNS = (("Last Seen", "string", 0, "Time since the event was last seen."),
                  ("Type", "string", 0, "Normal or Warning."), ("Reason", "string", 0, "Why it happened."),
                  ("Object", "string", 0, "The object it is about."),
                  ("Subobject", "string", 1, "The part of the object it is about."),
                  ("Source", "string", 1, "Who reported it."), ("Message", "string", 0, "What happened."),
                  ("First Seen", "string", 1, "Time since the event was first seen."),
                  ("Count", "string", 1, "How many times it happened."), ("Name", "string", 1, NAME_DESCRIPTION))
PRINTERS[("", "Event")] = Printer(_EVENT_COLUMNS, _event)
PRINTERS[("events.k8s.io", "Event")] = Printer(_EVENT_COLUMNS, lambda obj, now: _event(core_event(obj), now))


def printer(group: str, kind: str) -> Printer | None:
    return PRINTERS.get((group, kind))
