# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One normalized view of a Cluster API cluster, the same for v1beta1 and v1beta2 objects.  Pure.

Readiness moved between the contracts (see ``seeds``/CAPI's "improving status" proposal):

=================  ==========================================  ==============================================
                   v1beta1                                     v1beta2
=================  ==========================================  ==============================================
provisioned        status.infrastructureReady and              status.initialization.infrastructureProvisioned
                   status.controlPlaneReady                    and .controlPlaneInitialized
ready              Ready condition (status.conditions)         Available condition (status.conditions)
failure            status.failureReason / failureMessage       status.deprecated.v1beta1.failureReason / ...
conditions         status.v1beta2.conditions (new style)        status.conditions
=================  ==========================================  ==============================================
"""

from typing import Any, Optional

from ansible_collections.flightcontrol.openstack.plugins.module_utils.capo import cluster as capo
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi import topology
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.objects import (
    BLOCK_MOVE_ANNOTATION,
    CONTROL_PLANE_LABEL,
    DELETION_HOOK_PREFIXES,
    PAUSED_ANNOTATION,
    annotations,
    condition_holds,
    contract_version,
    deleting,
    dig,
    labels,
    meta,
    new_condition,
    new_conditions,
    old_condition,
    old_conditions,
    simple_condition,
)


def _bool(value: Any) -> Optional[bool]:
    return None if value is None else bool(value)


def _both(*values: Optional[bool]) -> Optional[bool]:
    """True if all are True, False if any is False, None when unknown."""
    if any(v is False for v in values):
        return False
    if all(v is True for v in values):
        return True
    return None


def failure(obj: dict[str, Any]) -> Optional[dict[str, Any]]:
    """The terminal failure fields where they still exist (removed from the v1beta2 contract)."""
    status = obj.get("status") or {}
    if contract_version(obj) == "v1beta2":
        status = dig(status, "deprecated", "v1beta1") or {}
    reason, message = status.get("failureReason"), status.get("failureMessage")
    if not reason and not message:
        return None
    return {"reason": reason, "message": message}


def conditions(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """New-style conditions first (they carry reasons CAPI documents), then old-style ones not already named."""
    new, where = new_conditions(obj)
    result: list[Any] = [simple_condition(c, where) for c in new]
    names = set(c["type"] for c in result)
    old_where = "status.deprecated.v1beta1.conditions" if contract_version(obj) == "v1beta2" else "status.conditions"
    for condition in old_conditions(obj):
        if where == old_where and condition in new:
            continue
        if condition.get("type") not in names:
            result.append(simple_condition(condition, old_where))
    return result


def _ready_condition(obj: dict[str, Any], new_type: str) -> Optional[bool]:
    """Readiness from the new-style condition ``new_type`` where present, else the old Ready condition."""
    condition = new_condition(obj, new_type)
    return condition_holds(condition if condition is not None else old_condition(obj, "Ready"))


def _initialized(obj: dict[str, Any], v1beta2_name: str, v1beta1_name: str) -> Optional[bool]:
    """An initialization flag in either contract: ``status.initialization.<v1beta2_name>`` (v1beta2) or
    ``status.<v1beta1_name>`` (v1beta1)."""
    status = obj.get("status") or {}
    if contract_version(obj) == "v1beta2":
        return _bool((status.get("initialization") or {}).get(v1beta2_name))
    return _bool(status.get(v1beta1_name))


def cluster_summary(cluster: dict[str, Any]) -> dict[str, Any]:
    status = cluster.get("status") or {}
    infrastructure = _initialized(cluster, "infrastructureProvisioned", "infrastructureReady")
    control_plane = _initialized(cluster, "controlPlaneInitialized", "controlPlaneReady")
    metadata = meta(cluster)
    return {
        "name": metadata.get("name"),
        "namespace": metadata.get("namespace"),
        "api_version": cluster.get("apiVersion"),
        "uid": metadata.get("uid"),
        "generation": metadata.get("generation"),
        "phase": status.get("phase"),
        "paused": bool(dig(cluster, "spec", "paused")) or PAUSED_ANNOTATION in annotations(cluster),
        "infrastructure_provisioned": infrastructure,
        "control_plane_initialized": control_plane,
        "provisioned": _both(infrastructure, control_plane),
        "ready": _ready_condition(cluster, "Available"),
        "failure": failure(cluster),
        "deleting": deleting(cluster),
        "control_plane_endpoint": dig(cluster, "spec", "controlPlaneEndpoint"),
        "conditions": conditions(cluster),
    }


def _addresses(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": a.get("type"), "address": a.get("address")}
            for a in (dig(obj, "status", "addresses") or []) if isinstance(a, dict)]


def machine_summary(machine: dict[str, Any]) -> dict[str, Any]:
    status = machine.get("status") or {}
    metadata = meta(machine)
    infrastructure = _initialized(machine, "infrastructureProvisioned", "infrastructureReady")
    bootstrap = _initialized(machine, "bootstrapDataSecretCreated", "bootstrapReady")
    hooks = sorted(k for k in annotations(machine) if k.startswith(DELETION_HOOK_PREFIXES))
    return {
        "name": metadata.get("name"),
        "namespace": metadata.get("namespace"),
        "phase": status.get("phase"),
        "control_plane": CONTROL_PLANE_LABEL in labels(machine),
        "provider_id": dig(machine, "spec", "providerID"),
        "version": dig(machine, "spec", "version"),
        "node_name": dig(status, "nodeRef", "name"),
        "addresses": _addresses(machine),
        "infrastructure_provisioned": infrastructure,
        "bootstrap_ready": bootstrap,
        "ready": _ready_condition(machine, "Ready"),
        "deleting": deleting(machine),
        "deletion_timestamp": metadata.get("deletionTimestamp"),
        "deletion_hooks": hooks,
        "failure": failure(machine),
        "created": metadata.get("creationTimestamp"),
    }


def control_plane_summary(control_plane: Optional[dict[str, Any]]) -> Optional[dict[str, Any]]:
    if control_plane is None:
        return None
    status = control_plane.get("status") or {}
    spec = control_plane.get("spec") or {}
    metadata = meta(control_plane)
    if contract_version(control_plane) == "v1beta2":
        initialized = _bool(dig(status, "initialization", "controlPlaneInitialized"))
        ready_replicas = status.get("readyReplicas")
        available_replicas = status.get("availableReplicas")
        up_to_date = status.get("upToDateReplicas")
    else:
        initialized = _bool(status.get("initialized"))
        ready_replicas = status.get("readyReplicas")
        available_replicas = status.get("availableReplicas", ready_replicas)
        up_to_date = status.get("updatedReplicas")
    return {
        "kind": control_plane.get("kind"),
        "name": metadata.get("name"),
        "api_version": control_plane.get("apiVersion"),
        "version": spec.get("version"),
        "replicas": spec.get("replicas"),
        "status_replicas": status.get("replicas"),
        "ready_replicas": ready_replicas,
        "available_replicas": available_replicas,
        "up_to_date_replicas": up_to_date,
        "initialized": initialized,
        "ready": _ready_condition(control_plane, "Available"),
        "failure": failure(control_plane),
        "deleting": deleting(control_plane),
    }


def _api_load_balancer(infra: dict[str, Any]) -> tuple[Any, Any, Optional[str]]:
    """(load balancer, pool, error) of the infrastructure cluster, read by ``capo.cluster`` in either CAPO version."""
    try:
        return capo.api_load_balancer(infra), capo.api_pool_name(infra), None
    except capo.CapoError as exc:
        return None, None, str(exc)


def infrastructure_summary(infra: Optional[dict[str, Any]]) -> Optional[dict[str, Any]]:
    """The infrastructure cluster (an OpenStackCluster for CAPO), with its API load balancer and pool."""
    if infra is None:
        return None
    load_balancer, pool, error = _api_load_balancer(infra)
    metadata = meta(infra)
    return {
        "kind": infra.get("kind"),
        "name": metadata.get("name"),
        "api_version": infra.get("apiVersion"),
        "provisioned": capo.provisioned(infra),
        "ready": _ready_condition(infra, "Ready"),
        "api_server_load_balancer": load_balancer,
        "api_server_pool": pool,
        "api_server_load_balancer_error": error,
        "failure": capo.failure(infra),
        "deleting": deleting(infra),
        "block_move": BLOCK_MOVE_ANNOTATION in annotations(infra),
    }


def blockers(view: dict[str, Any]) -> list[str]:
    """Why the cluster is not fit for a change (a rollout, a move): plain sentences, empty when fit.

    A block-move annotation is no blocker: providers such as CAPZ keep it while they reconcile a healthy
    cluster, and clusterctl waits for it after pausing (``infrastructure.block_move`` still shows it)."""
    found = []
    cluster = view["cluster"]
    name = f"Cluster {cluster['namespace']}/{cluster['name']}"
    if cluster["deleting"]:
        found.append(f"{name} is being deleted")
    if cluster["paused"]:
        found.append(f"{name} is paused")
    if cluster["provisioned"] is not True:
        found.append(f"{name} is not provisioned (infrastructure {_word(cluster['infrastructure_provisioned'])}, "
                     f"control plane {_word(cluster['control_plane_initialized'])})")
    if cluster["ready"] is not True:
        found.append(f"{name} is not ready/available")
    if cluster["failure"]:
        found.append(f"{name} failed: {cluster['failure']['message'] or cluster['failure']['reason']}")
    infra = view.get("infrastructure")
    if infra:
        if infra["provisioned"] is not True:
            found.append(f"{infra['kind']} {infra['name']} is not provisioned")
        if infra["failure"]:
            found.append(f"{infra['kind']} {infra['name']} failed: "
                         f"{infra['failure']['message'] or infra['failure']['reason']}")
        if infra["api_server_load_balancer_error"]:
            found.append(infra["api_server_load_balancer_error"])
    for machine in view.get("control_plane_machines") or []:
        if machine["deleting"]:
            found.append(f"control-plane Machine {machine['name']} is being deleted")
        elif machine["ready"] is False:
            found.append(f"control-plane Machine {machine['name']} is not ready")
        if machine["failure"]:
            found.append(f"control-plane Machine {machine['name']} failed: "
                         f"{machine['failure']['message'] or machine['failure']['reason']}")
    return found


def _word(value: Optional[bool]) -> str:
    return {True: "yes", False: "no", None: "unknown"}[value]


def build_view(cluster: dict[str, Any], control_plane: Optional[dict[str, Any]], infrastructure: Optional[dict[str, Any]],
               machines: list[dict[str, Any]]) -> dict[str, Any]:
    """The whole normalized view; machines sorted by creation, control-plane ones first."""
    summaries = [machine_summary(m) for m in machines]
    summaries.sort(key=lambda m: (not m["control_plane"], m["created"] or "", m["name"] or ""))
    view: dict[str, Any] = {
        "cluster": cluster_summary(cluster),
        "control_plane": control_plane_summary(control_plane),
        "infrastructure": infrastructure_summary(infrastructure),
        "control_plane_machines": [m for m in summaries if m["control_plane"]],
        "machines": summaries,
        "topology": topology.topology_view(cluster, control_plane),
    }
    view["blockers"] = blockers(view)
    view["healthy"] = not view["blockers"]
    return view
