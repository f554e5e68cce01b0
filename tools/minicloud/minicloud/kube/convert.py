"""CAPI v1beta1 <-> v1beta2: the two served versions of a kind are views of one stored object.

Objects are stored in the hub form (v1beta2, the newest contract). A client
reading or writing v1beta1 sees, and sends, the v1beta1 shape; this module
converts the fields that differ between the contracts, after CAPI's own
conversion (``api/core/v1beta1/conversion.go`` and the proposal "Improving status
in CAPI resources"):

=====================================================  =====================================================
v1beta1                                                v1beta2 (hub)
=====================================================  =====================================================
``status.conditions`` (CAPI's old Condition type)      ``status.deprecated.v1beta1.conditions``
``status.v1beta2.conditions`` (metav1.Condition)       ``status.conditions``
``status.failureReason`` / ``failureMessage``          ``status.deprecated.v1beta1.failureReason`` / ...
Cluster ``status.infrastructureReady``                 ``status.initialization.infrastructureProvisioned``
Cluster ``status.controlPlaneReady``                   ``status.initialization.controlPlaneInitialized``
Machine ``status.bootstrapReady``                      ``status.initialization.bootstrapDataSecretCreated``
Machine ``status.infrastructureReady``                 ``status.initialization.infrastructureProvisioned``
KubeadmControlPlane ``status.initialized``             ``status.initialization.controlPlaneInitialized``
KubeadmConfig ``status.ready``                         ``status.initialization.dataSecretCreated``
replica counters (``readyReplicas``...)                ``status.deprecated.v1beta1.*``
``status.v1beta2.{ready,available,upToDate}Replicas``  ``status.{ready,available,upToDate}Replicas``
object references ``{apiVersion, kind, name, ...}``    ``{apiGroup, kind, name}``
Machine ``status.nodeRef`` (ObjectReference)           ``status.nodeRef`` ``{name}``
=====================================================  =====================================================

``spec.paused`` has the same place in both. Fields not listed pass through unchanged.
All functions are pure: they return new dicts.
"""

from __future__ import annotations

import copy

from minicloud.kube import resources

HUB = "v1beta2"

_COMMON = (
    ("status.conditions", "status.deprecated.v1beta1.conditions"),
    ("status.v1beta2.conditions", "status.conditions"),
    ("status.failureReason", "status.deprecated.v1beta1.failureReason"),
    ("status.failureMessage", "status.deprecated.v1beta1.failureMessage"),
)
_REPLICAS = (
    ("status.readyReplicas", "status.deprecated.v1beta1.readyReplicas"),
    ("status.availableReplicas", "status.deprecated.v1beta1.availableReplicas"),
    ("status.updatedReplicas", "status.deprecated.v1beta1.updatedReplicas"),
    ("status.unavailableReplicas", "status.deprecated.v1beta1.unavailableReplicas"),
    ("status.v1beta2.readyReplicas", "status.readyReplicas"),
    ("status.v1beta2.availableReplicas", "status.availableReplicas"),
    ("status.v1beta2.upToDateReplicas", "status.upToDateReplicas"),
)
# (v1beta1 path, hub path), applied in order (v1beta1 -> hub) or reversed (hub -> v1beta1).
FIELD_MOVES: dict[str, tuple[tuple[str, str], ...]] = {
    "Cluster": _COMMON + (
        ("status.infrastructureReady", "status.initialization.infrastructureProvisioned"),
        ("status.controlPlaneReady", "status.initialization.controlPlaneInitialized"),
    ),
    "Machine": _COMMON + (
        ("status.bootstrapReady", "status.initialization.bootstrapDataSecretCreated"),
        ("status.infrastructureReady", "status.initialization.infrastructureProvisioned"),
    ),
    "MachineSet": _COMMON + _REPLICAS,
    "MachineDeployment": _COMMON + _REPLICAS,
    "KubeadmControlPlane": _COMMON + _REPLICAS + (
        ("status.initialized", "status.initialization.controlPlaneInitialized"),
    ),
    "KubeadmConfig": _COMMON + (
        ("status.ready", "status.initialization.dataSecretCreated"),
    ),
}

# (v1beta1 path, hub path) of object references.
REFERENCES: dict[str, tuple[tuple[str, str], ...]] = {
    "Cluster": (("spec.infrastructureRef", "spec.infrastructureRef"), ("spec.controlPlaneRef", "spec.controlPlaneRef")),
    "Machine": (("spec.infrastructureRef", "spec.infrastructureRef"),
                ("spec.bootstrap.configRef", "spec.bootstrap.configRef")),
    "MachineSet": (("spec.template.spec.infrastructureRef", "spec.template.spec.infrastructureRef"),
                   ("spec.template.spec.bootstrap.configRef", "spec.template.spec.bootstrap.configRef")),
    "MachineDeployment": (("spec.template.spec.infrastructureRef", "spec.template.spec.infrastructureRef"),
                          ("spec.template.spec.bootstrap.configRef", "spec.template.spec.bootstrap.configRef")),
    "KubeadmControlPlane": (("spec.machineTemplate.infrastructureRef",
                             "spec.machineTemplate.spec.infrastructureRef"),),
}

_MISSING = object()


def _pop(obj: dict, path: str):
    parts = path.split(".")
    parent = obj
    for part in parts[:-1]:
        parent = parent.get(part) if isinstance(parent, dict) else None
        if not isinstance(parent, dict):
            return _MISSING
    return parent.pop(parts[-1], _MISSING)


def _put(obj: dict, path: str, value) -> None:
    parts = path.split(".")
    parent = obj
    for part in parts[:-1]:
        parent = parent.setdefault(part, {})
    parent[parts[-1]] = value


def _prune(obj: dict, path: str) -> None:
    """Remove the empty dicts along ``path`` (``status.v1beta2`` left empty by a move)."""
    parts = path.split(".")
    for depth in range(len(parts) - 1, 0, -1):
        parent = obj
        for part in parts[:depth - 1]:
            parent = parent.get(part, {})
        key = parts[depth - 1]
        if isinstance(parent, dict) and parent.get(key) == {}:
            del parent[key]


def _move_all(obj: dict, moves) -> None:
    values = [(dst, _pop(obj, src), src) for src, dst in moves]  # pop all first: paths overlap
    for _, value, src in values:
        if value is not _MISSING:
            _prune(obj, src)
    for dst, value, _ in values:
        if value is not _MISSING:
            _put(obj, dst, value)


def _ref_to_hub(ref: dict) -> dict:
    group = ref.get("apiVersion", "").rpartition("/")[0]
    return {"apiGroup": group, "kind": ref.get("kind", ""), "name": ref.get("name", "")}


def _ref_from_hub(ref: dict, namespace: str | None) -> dict:
    group = ref.get("apiGroup", "")
    try:
        kind = resources.by_kind(ref.get("kind", ""))
        version = "v1beta1" if "v1beta1" in kind.versions else kind.hub
    except KeyError:
        version = "v1beta1"
    result = {"apiVersion": f"{group}/{version}" if group else version, "kind": ref.get("kind", ""),
              "name": ref.get("name", "")}
    if namespace:
        result["namespace"] = namespace
    return result


def _convert_refs(obj: dict, kind: str, to_hub: bool) -> None:
    namespace = obj.get("metadata", {}).get("namespace")
    for old_path, hub_path in REFERENCES.get(kind, ()):
        src, dst = (old_path, hub_path) if to_hub else (hub_path, old_path)
        ref = _pop(obj, src)
        if ref is _MISSING:
            continue
        _prune(obj, src)
        if isinstance(ref, dict):
            ref = _ref_to_hub(ref) if to_hub else _ref_from_hub(ref, namespace)
        _put(obj, dst, ref)


def _convert_node_ref(obj: dict, to_hub: bool) -> None:
    ref = obj.get("status", {}).get("nodeRef")
    if not isinstance(ref, dict):
        return
    if to_hub:
        obj["status"]["nodeRef"] = {"name": ref.get("name", "")}
    else:
        obj["status"]["nodeRef"] = {"apiVersion": "v1", "kind": "Node", "name": ref.get("name", "")}


def converts(kind: str) -> bool:
    return kind in FIELD_MOVES


def to_hub(obj: dict, kind: str, version: str) -> dict:
    """The stored (hub) form of ``obj`` sent at ``version``."""
    result = copy.deepcopy(obj)
    if not converts(kind) or version == HUB:
        return result
    _move_all(result, FIELD_MOVES[kind])
    _convert_refs(result, kind, to_hub=True)
    if kind == "Machine":
        _convert_node_ref(result, to_hub=True)
    result["apiVersion"] = result.get("apiVersion", "").rpartition("/")[0] + "/" + HUB
    return result


def from_hub(obj: dict, kind: str, version: str) -> dict:
    """The view of the stored ``obj`` served at ``version``."""
    result = copy.deepcopy(obj)
    group = resources.by_kind(kind).group if converts(kind) else None
    if converts(kind) and version != HUB:
        _move_all(result, tuple((hub, old) for old, hub in FIELD_MOVES[kind]))
        _convert_refs(result, kind, to_hub=False)
        if kind == "Machine":
            _convert_node_ref(result, to_hub=False)
    if group is not None:
        result["apiVersion"] = f"{group}/{version}"
    return result
