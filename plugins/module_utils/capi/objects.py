# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading Cluster API objects the same way whichever contract version they are served in.

Pure functions over the plain dicts the Kubernetes API returns.  Cluster API v1.9 and v1.10 serve
v1beta1 objects whose new-style conditions (``Paused`` among them) live under
``status.v1beta2.conditions`` while ``status.conditions`` holds the old ones; v1.11 and later serve
v1beta2 objects with the new conditions under ``status.conditions`` and the old ones under
``status.deprecated.v1beta1.conditions``.  Readiness moved from ``status.ready`` /
``status.infrastructureReady`` / ``status.controlPlaneReady`` to ``status.initialization.*``.
"""

import datetime

from typing import Any, Optional, Tuple

PAUSED_ANNOTATION = "cluster.x-k8s.io/paused"
BLOCK_MOVE_ANNOTATION = "clusterctl.cluster.x-k8s.io/block-move"
# Set by clusterctl move on the source's objects it has made on the target, before it deletes them.
DELETE_FOR_MOVE_ANNOTATION = "clusterctl.cluster.x-k8s.io/delete-for-move"
CLUSTER_NAME_LABEL = "cluster.x-k8s.io/cluster-name"
CONTROL_PLANE_LABEL = "cluster.x-k8s.io/control-plane"
# Machine deletion hooks: annotations ``<prefix><name>`` that keep a Machine from being drained / terminated.
PRE_DRAIN_HOOK_PREFIX = "pre-drain.delete.hook.machine.cluster.x-k8s.io/"
PRE_TERMINATE_HOOK_PREFIX = "pre-terminate.delete.hook.machine.cluster.x-k8s.io/"
DELETION_HOOK_PREFIXES = (PRE_DRAIN_HOOK_PREFIX, PRE_TERMINATE_HOOK_PREFIX)

CORE_GROUP = "cluster.x-k8s.io"
# The groups whose objects belong to a cluster and are reconciled by a controller.
CLUSTER_GROUPS = ("cluster.x-k8s.io", "controlplane.cluster.x-k8s.io", "bootstrap.cluster.x-k8s.io",
                  "infrastructure.cluster.x-k8s.io")
CONTRACT_VERSIONS = ("v1beta1", "v1beta2")


def dig(obj: Any, *path: str) -> Any:
    """``obj[path[0]][path[1]]...`` or None when any step is missing."""
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def meta(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("metadata") or {}


def annotations(obj: dict[str, Any]) -> dict[str, str]:
    return meta(obj).get("annotations") or {}


def labels(obj: dict[str, Any]) -> dict[str, str]:
    return meta(obj).get("labels") or {}


def api_group(api_version: Optional[str]) -> str:
    return (api_version or "").split("/")[0] if "/" in (api_version or "") else ""


def api_version_of(obj: dict[str, Any]) -> str:
    return obj.get("apiVersion") or ""


def contract_version(obj: dict[str, Any]) -> str:
    """``v1beta1`` or ``v1beta2``: the contract the object is served in (other versions read as v1beta1)."""
    version = api_version_of(obj).split("/")[-1]
    return "v1beta2" if version == "v1beta2" else "v1beta1"


def identity(obj: dict[str, Any]) -> str:
    """``Kind namespace/name``, the way messages name an object."""
    metadata = meta(obj)
    where = f"{metadata.get('namespace')}/{metadata.get('name')}" if metadata.get("namespace") \
        else metadata.get("name")
    return f"{obj.get('kind') or 'object'} {where}"


def new_conditions(obj: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    """The new-style (metav1) conditions, wherever the served version keeps them, and where that is."""
    nested = dig(obj, "status", "v1beta2", "conditions")
    if isinstance(nested, list):
        return nested, "status.v1beta2.conditions"
    if contract_version(obj) == "v1beta2" or api_group(api_version_of(obj)) not in CLUSTER_GROUPS[:3]:
        # v1beta2 objects, and provider objects, keep new-style conditions in status.conditions
        return dig(obj, "status", "conditions") or [], "status.conditions"
    return [], "status.v1beta2.conditions"


def old_conditions(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The old-style (v1beta1, with severity) conditions, wherever the served version keeps them."""
    if contract_version(obj) == "v1beta2" and api_group(api_version_of(obj)) in CLUSTER_GROUPS[:3]:
        return dig(obj, "status", "deprecated", "v1beta1", "conditions") or []
    return dig(obj, "status", "conditions") or []


def find_condition(conditions: list[dict[str, Any]], kind: str) -> Optional[dict[str, Any]]:
    for condition in conditions or []:
        if isinstance(condition, dict) and condition.get("type") == kind:
            return condition
    return None


def paused_condition(obj: dict[str, Any]) -> tuple[Optional[dict[str, Any]], Optional[str]]:
    """The ``Paused`` condition and where it was found, or (None, None)."""
    conditions, where = new_conditions(obj)
    condition = find_condition(conditions, "Paused")
    if condition is None:
        # a provider may report Paused among its own conditions whatever the layout
        condition = find_condition(dig(obj, "status", "conditions"), "Paused")
        where = "status.conditions"
    return (condition, where) if condition is not None else (None, None)


def new_condition(obj: dict, kind: str) -> Optional[dict]:
    """The new-style condition ``kind`` of ``obj``, or None."""
    return find_condition(new_conditions(obj)[0], kind)


def old_condition(obj: dict, kind: str) -> Optional[dict]:
    """The old-style condition ``kind`` of ``obj``, or None."""
    return find_condition(old_conditions(obj), kind)


def condition_true(condition: Optional[dict]) -> bool:
    return condition is not None and str(condition.get("status")) == "True"


def condition_false(condition: Optional[dict]) -> bool:
    return condition is not None and str(condition.get("status")) == "False"


def condition_holds(condition: Optional[dict]) -> Optional[bool]:
    """Whether ``condition`` is True; None when there is no condition."""
    return None if condition is None else condition_true(condition)


def replica_counts(control_plane: Optional[dict]) -> Tuple[Optional[int], Optional[int]]:
    """``(replicas, up_to_date)`` of a control plane's status in either contract, each None when not said."""
    status = (control_plane or {}).get("status") or {}
    up_to_date = status.get("upToDateReplicas")
    if up_to_date is None:
        up_to_date = status.get("updatedReplicas")
    if up_to_date is None:
        up_to_date = dig(status, "deprecated", "v1beta1", "updatedReplicas")
    return status.get("replicas"), up_to_date


ROLLOUT_AFTER_PATHS = (("spec", "rolloutAfter"), ("spec", "rollout", "after"))


def bare_version(version: str) -> str:
    """A Kubernetes version without its leading ``v`` (Machines and control planes write it either way)."""
    return version[1:] if version.startswith("v") else version


def parse_kube_time(text: Optional[str]) -> Optional[datetime.datetime]:
    """An RFC 3339 time (as Kubernetes writes it) as an aware datetime, whole seconds, or None."""
    if not text:
        return None
    text = str(text).strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    if "." in text:  # fractional seconds: drop them (Kubernetes timestamps are whole seconds)
        head, _dot, tail = text.partition(".")
        zone = ""
        for sign in ("+", "-"):
            if sign in tail:
                zone = sign + tail.split(sign, 1)[1]
        text = head + zone
    try:
        return datetime.datetime.strptime(text.replace(":", ""), "%Y-%m-%dT%H%M%S%z")
    except ValueError:
        return None


def rollout_after(control_plane: Optional[dict]) -> Optional[str]:
    """The time before which the control plane rolls its Machines, in either contract, or None."""
    for path in ROLLOUT_AFTER_PATHS:
        value = dig(control_plane or {}, *path)
        if value:
            return value
    return None


def generation(obj: dict[str, Any]) -> Optional[int]:
    return meta(obj).get("generation")


def resource_version(obj: dict[str, Any]) -> Optional[str]:
    return meta(obj).get("resourceVersion")


def never_reconciled(obj: dict[str, Any]) -> bool:
    """True when the object's status holds nothing but empty or false values: no controller has written it on
    this API server. ``clusterctl move`` creates the objects on the target without their status (the status
    subresource is not written by a create), so until the target's controllers reconcile them they look like
    this, through either served version (a v1beta1 read of an empty v1beta2 status still shows
    ``infrastructureReady: false``)."""
    return not any(_holds_something(value) for value in (dig(obj, "status") or {}).values())


def _holds_something(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_holds_something(v) for v in value.values())
    if isinstance(value, list):
        return bool(value)
    return bool(value)


def deleting(obj: dict[str, Any]) -> bool:
    return bool(meta(obj).get("deletionTimestamp"))


def is_paused(obj: dict[str, Any], cluster: Optional[dict[str, Any]] = None) -> bool:
    """Whether CAPI considers ``obj`` paused: its Cluster's spec.paused or its own paused annotation."""
    if PAUSED_ANNOTATION in annotations(obj):
        return True
    if cluster is not None and dig(cluster, "spec", "paused"):
        return True
    return obj.get("kind") == "Cluster" and bool(dig(obj, "spec", "paused"))


def simple_condition(condition: Optional[dict[str, Any]], location: Optional[str] = None) -> Optional[dict[str, Any]]:
    """A condition as results show it, whichever style it has."""
    if condition is None:
        return None
    result = {
        "type": condition.get("type"),
        "status": condition.get("status"),
        "reason": condition.get("reason"),
        "message": condition.get("message"),
        "last_transition_time": condition.get("lastTransitionTime"),
    }
    if "observedGeneration" in condition:
        result["observed_generation"] = condition.get("observedGeneration")
    if "severity" in condition:
        result["severity"] = condition.get("severity")
    if location:
        result["location"] = location
    return result


def reference(ref: Optional[dict[str, Any]], namespace: Optional[str], default_group: Optional[str] = None) -> Optional[dict[str, Any]]:
    """A spec reference (v1beta1 ``apiVersion`` or v1beta2 ``apiGroup``) as (group, version, kind, name,
    namespace); version is None when the reference does not say (v1beta2)."""
    if not isinstance(ref, dict) or not ref.get("name"):
        return None
    if ref.get("apiVersion"):
        group, version = ref["apiVersion"].rsplit("/", 1) if "/" in ref["apiVersion"] else ("", ref["apiVersion"])
    else:
        group, version = ref.get("apiGroup") or default_group, None
    return dict(group=group, version=version, kind=ref.get("kind"), name=ref["name"],
                namespace=ref.get("namespace") or namespace)
