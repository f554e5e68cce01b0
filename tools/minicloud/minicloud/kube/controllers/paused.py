"""When an object counts as paused, and the Paused condition CAPI sets for it (pure).

After cluster-api's ``util/paused``: an object is paused when its Cluster has
``spec.paused: true`` or the object has the ``cluster.x-k8s.io/paused`` annotation.
The condition is ``Paused`` True/``Paused`` with a message naming why, or
False/``NotPaused``, with ``observedGeneration`` the object's generation.
"""

from __future__ import annotations

PAUSED_ANNOTATION = "cluster.x-k8s.io/paused"
BLOCK_MOVE_ANNOTATION = "clusterctl.cluster.x-k8s.io/block-move"
CLUSTER_NAME_LABEL = "cluster.x-k8s.io/cluster-name"
PAUSED = "Paused"
NOT_PAUSED = "NotPaused"


def cluster_name(obj: dict) -> str | None:
    """The name of the Cluster an object belongs to."""
    if obj.get("kind") == "Cluster":
        return obj["metadata"]["name"]
    return obj.get("spec", {}).get("clusterName") or obj["metadata"].get("labels", {}).get(CLUSTER_NAME_LABEL)


def has_paused_annotation(obj: dict) -> bool:
    return PAUSED_ANNOTATION in (obj.get("metadata", {}).get("annotations") or {})


def is_paused(cluster: dict | None, obj: dict) -> bool:
    return bool(cluster and cluster.get("spec", {}).get("paused")) or has_paused_annotation(obj)


def paused_condition(cluster: dict | None, obj: dict) -> dict:
    """The Paused condition (without lastTransitionTime) CAPI wants on ``obj``."""
    generation = obj["metadata"].get("generation", 0)
    if not is_paused(cluster, obj):
        return {"type": PAUSED, "status": "False", "observedGeneration": generation, "reason": NOT_PAUSED,
                "message": ""}
    reasons = []
    if cluster and cluster.get("spec", {}).get("paused"):
        reasons.append("Cluster spec.paused is set to true")
    if has_paused_annotation(obj):
        reasons.append(f"{obj.get('kind', 'Object')} has the {PAUSED_ANNOTATION} annotation")
    return {"type": PAUSED, "status": "True", "observedGeneration": generation, "reason": PAUSED,
            "message": ", ".join(reasons)}


def find_condition(conditions: list | None, kind: str) -> dict | None:
    return next((c for c in conditions or [] if c.get("type") == kind), None)


def same_state(current: dict | None, wanted: dict) -> bool:
    """What ``conditions.HasSameState`` compares: everything but lastTransitionTime."""
    if current is None:
        return False
    return all(current.get(k) == wanted.get(k) for k in ("status", "reason", "message", "observedGeneration"))


def set_condition(conditions: list | None, wanted: dict, now: str) -> list:
    """``conditions`` with ``wanted`` set; lastTransitionTime moves only when the status does."""
    result = [dict(c) for c in conditions or []]
    current = find_condition(result, wanted["type"])
    condition = dict(wanted)
    condition["lastTransitionTime"] = (current["lastTransitionTime"]
                                       if current and current.get("status") == wanted["status"]
                                       and current.get("lastTransitionTime") else now)
    if current is None:
        result.append(condition)
    else:
        result[result.index(current)] = condition
    return result
