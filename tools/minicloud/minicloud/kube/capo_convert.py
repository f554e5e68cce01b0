"""CAPO's OpenStackCluster and OpenStackMachine between ``infrastructure.cluster.x-k8s.io/v1beta1`` (CAPO v0.10 to
v0.14) and ``v1beta2`` (CAPO v0.15): what CAPO's conversion webhook does (``api/v1beta1/conversion.go``,
``api/v1beta2/conversion_helpers.go``, the book's "v1beta1 to v1beta2" page).  Pure: every function returns new
dicts.

===============================================================  ==================================================
v1beta1                                                          v1beta2
===============================================================  ==================================================
OSC ``spec.apiServerLoadBalancer``                               ``spec.apiServer.managedLoadBalancer``
OSC ``spec.apiServerPort`` / ``apiServerFixedIP`` /              ``spec.apiServer.port`` / ``fixedIP`` /
``apiServerFloatingIP``                                          ``floatingIP``
OSC ``spec.disableAPIServerFloatingIP``                          ``spec.apiServer.enableFloatingIP`` (negated)
OSC ``spec.disableExternalNetwork``                              ``spec.enableExternalNetwork`` (negated)
OSC ``spec.networkMTU`` / ``spec.disablePortSecurity``           ``spec.managedNetwork.mtu`` / ``.enablePortSecurity``
                                                                 (negated)
OSC ``spec.externalRouterIPs``                                   ``spec.managedRouter.externalIPs``
OSC ``spec.managedSecurityGroups.allNodesSecurityGroupRules``    ``...clusterNodesSecurityGroupRules``
OSC ``spec.bastion.spec`` and OSM ``spec``: ``flavor`` (a name)  ``flavor`` ``{filter: {name}}`` / ``{id}``
/ ``flavorID``
``ports[].disablePortSecurity`` (OSM and bastion ``spec``)       ``ports[].enablePortSecurity`` (negated)
OSC ``status.apiServerLoadBalancer``                             ``status.apiServerManagedLoadBalancer``
OSC ``status.failureDomains`` (a map by name)                    a list of ``{name, controlPlane, attributes}``,
                                                                 sorted by name
``status.conditions`` (CAPI's v1beta1 Condition, ``severity``)   ``metav1.Condition`` (``observedGeneration``:
                                                                 the object's generation; no ``severity``)
``status.ready``                                                 (removed; v1beta1's is the Ready condition's
                                                                 status)
``status.failureReason`` / ``failureMessage``                    (removed)
===============================================================  ==================================================

Every other field passes through (``status.network``, ``router``, ``externalNetwork``, the security groups,
``initialization``, ``instanceID``, ``addresses``, ...).  CAPO keeps what v1beta2 cannot say in the annotation
``cluster.x-k8s.io/conversion-data``; minicloud instead keeps ``failureReason``/``failureMessage`` of an object
stored at v1beta1 when it is written at v1beta2 (:func:`keep_lost`).
"""

from __future__ import annotations

import copy

V1BETA1, V1BETA2 = "v1beta1", "v1beta2"
VERSIONS = (V1BETA1, V1BETA2)
KINDS = ("OpenStackCluster", "OpenStackMachine")
GROUP = "infrastructure.cluster.x-k8s.io"

# (v1beta1 path, v1beta2 path) of the fields that moved without changing their value
_OSC_SPEC_MOVES = (
    ("spec.apiServerLoadBalancer", "spec.apiServer.managedLoadBalancer"),
    ("spec.apiServerPort", "spec.apiServer.port"),
    ("spec.apiServerFixedIP", "spec.apiServer.fixedIP"),
    ("spec.apiServerFloatingIP", "spec.apiServer.floatingIP"),
    ("spec.networkMTU", "spec.managedNetwork.mtu"),
    ("spec.externalRouterIPs", "spec.managedRouter.externalIPs"),
    ("spec.managedSecurityGroups.allNodesSecurityGroupRules",
     "spec.managedSecurityGroups.clusterNodesSecurityGroupRules"),
    ("status.apiServerLoadBalancer", "status.apiServerManagedLoadBalancer"),
)
# (v1beta1 path, v1beta2 path) of the booleans whose name and sense were inverted
_OSC_NEGATED = (
    ("spec.disableAPIServerFloatingIP", "spec.apiServer.enableFloatingIP"),
    ("spec.disableExternalNetwork", "spec.enableExternalNetwork"),
    ("spec.disablePortSecurity", "spec.managedNetwork.enablePortSecurity"),
)
DROPPED = ("status.ready", "status.failureReason", "status.failureMessage")
_MISSING = object()


def _parent(obj: dict, parts: list[str], make: bool):
    for part in parts:
        if not isinstance(obj, dict):
            return None
        if part not in obj and make:
            obj[part] = {}
        obj = obj.get(part)
    return obj if isinstance(obj, dict) else None


def _pop(obj: dict, path: str):
    parts = path.split(".")
    parent = _parent(obj, parts[:-1], False)
    value = parent.pop(parts[-1], _MISSING) if parent is not None else _MISSING
    _prune(obj, parts[:-1])
    return value


def _prune(obj: dict, parts: list[str]) -> None:
    """Remove the dicts along ``parts`` that a move left empty (``spec.apiServer`` without its fields)."""
    for depth in range(len(parts), 0, -1):
        parent = _parent(obj, parts[:depth - 1], False)
        if parent is not None and parent.get(parts[depth - 1]) == {}:
            del parent[parts[depth - 1]]


def _put(obj: dict, path: str, value) -> None:
    parts = path.split(".")
    _parent(obj, parts[:-1], True)[parts[-1]] = value


def version_of(obj: dict) -> str:
    """The version an object is written in (its ``apiVersion``); v1beta1 when it names none."""
    return (obj.get("apiVersion") or "").rpartition("/")[2] or V1BETA1


def _moves(obj: dict, moves, up: bool, negate: bool = False) -> None:
    for old, new in moves:
        src, dst = (old, new) if up else (new, old)
        value = _pop(obj, src)
        if value is not _MISSING:
            _put(obj, dst, (not value) if negate and isinstance(value, bool) else value)


def _flavor_up(spec) -> None:
    if not isinstance(spec, dict):
        return
    flavor_id, flavor = spec.pop("flavorID", None), spec.get("flavor")
    if flavor_id:
        spec["flavor"] = {"id": flavor_id}
    elif isinstance(flavor, str):
        spec["flavor"] = {"filter": {"name": flavor}}
    _ports(spec, up=True)


def _flavor_down(spec) -> None:
    if not isinstance(spec, dict):
        return
    flavor = spec.pop("flavor", None)
    if isinstance(flavor, dict) and flavor.get("id"):
        spec["flavorID"] = flavor["id"]
    elif isinstance(flavor, dict) and (flavor.get("filter") or {}).get("name"):
        spec["flavor"] = flavor["filter"]["name"]
    elif flavor is not None and not isinstance(flavor, dict):
        spec["flavor"] = flavor
    _ports(spec, up=False)


def _ports(spec: dict, up: bool) -> None:
    src, dst = ("disablePortSecurity", "enablePortSecurity") if up else ("enablePortSecurity", "disablePortSecurity")
    for port in spec.get("ports") or []:
        if isinstance(port, dict) and isinstance(port.get(src), bool):
            port[dst] = not port.pop(src)


def _conditions_up(status: dict, generation) -> None:
    if isinstance(status.get("conditions"), list):
        status["conditions"] = [
            dict({k: v for k, v in c.items() if k != "severity"}, observedGeneration=generation or 0)
            if isinstance(c, dict) else c for c in status["conditions"]]


def _conditions_down(status: dict) -> None:
    conditions = status.get("conditions")
    if isinstance(conditions, list):
        status["conditions"] = [{k: v for k, v in c.items() if k != "observedGeneration"}
                                if isinstance(c, dict) else c for c in conditions]
    status["ready"] = any(isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") == "True"
                          for c in conditions or [])


def _failure_domains_up(status: dict) -> None:
    domains = status.get("failureDomains")
    if isinstance(domains, dict):
        status["failureDomains"] = [
            {"name": name, "controlPlane": bool((domains[name] or {}).get("controlPlane")),
             **({"attributes": domains[name]["attributes"]} if (domains[name] or {}).get("attributes") else {})}
            for name in sorted(domains)]


def _failure_domains_down(status: dict) -> None:
    domains = status.get("failureDomains")
    if isinstance(domains, list):
        status["failureDomains"] = {
            d["name"]: {"controlPlane": bool(d.get("controlPlane")),
                        **({"attributes": d["attributes"]} if d.get("attributes") else {})}
            for d in domains if isinstance(d, dict) and d.get("name")}


def _up(obj: dict, kind: str) -> None:
    if kind == "OpenStackCluster":
        _moves(obj, _OSC_SPEC_MOVES, up=True)
        _moves(obj, _OSC_NEGATED, up=True, negate=True)
        _flavor_up((obj.get("spec", {}).get("bastion") or {}).get("spec"))
    else:
        _flavor_up(obj.get("spec"))
    status = obj.get("status")
    if isinstance(status, dict):
        for path in DROPPED:
            _pop(obj, path)
        _conditions_up(status, (obj.get("metadata") or {}).get("generation"))
        _failure_domains_up(status)


def _down(obj: dict, kind: str) -> None:
    if kind == "OpenStackCluster":
        _moves(obj, _OSC_SPEC_MOVES, up=False)
        _moves(obj, _OSC_NEGATED, up=False, negate=True)
        _flavor_down((obj.get("spec", {}).get("bastion") or {}).get("spec"))
    else:
        _flavor_down(obj.get("spec"))
    status = obj.get("status")
    if isinstance(status, dict):
        _conditions_down(status)
        _failure_domains_down(status)


def convert(obj: dict, kind: str, version: str) -> dict:
    """``obj`` (an OpenStackCluster or OpenStackMachine at the version its ``apiVersion`` names) at ``version``."""
    if version not in VERSIONS:
        raise ValueError(f"CAPO API version must be one of {', '.join(VERSIONS)}, not {version!r}")
    result = copy.deepcopy(obj)
    source = version_of(obj)
    if source != version:
        (_up if version == V1BETA2 else _down)(result, kind)
    result["apiVersion"] = f"{GROUP}/{version}"
    result.setdefault("kind", kind)
    return result


def keep_lost(new: dict, current: dict | None) -> dict:
    """``new`` (to be stored at ``current``'s version) with what a write at v1beta2 could not carry of the v1beta1
    object ``current``: its ``failureReason`` and ``failureMessage`` (CAPO keeps them in its conversion-data
    annotation)."""
    if current is None or version_of(current) != V1BETA1:
        return new
    status = current.get("status") or {}
    kept = {k: status[k] for k in ("failureReason", "failureMessage") if k in status}
    if not kept or not isinstance(new.get("status"), dict):
        return new
    result = copy.deepcopy(new)
    for key, value in kept.items():
        result["status"].setdefault(key, value)
    return result
