# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Control-plane Machines and the KubeadmControlPlane as the rollout plan sees them (pure).

Which Machines are old (to be replaced), in this order:

1. the control plane's rollout time (v1beta1 ``spec.rolloutAfter``, v1beta2 ``spec.rollout.after``) when
   it has passed: a Machine created before it is old, as KubeadmControlPlane decides;
2. a Kubernetes version different from the control plane's (whatever the Machine's UpToDate condition still
   says: KCP sets it a pass after the version changed; on a ClusterClass cluster the control plane is taken as
   the topology controller is about to write it, ``capi/topology.control_plane_as_wanted``);
3. the Machine's ``UpToDate`` condition (Cluster API v1.9+: ``status.conditions`` of v1beta2 objects,
   ``status.v1beta2.conditions`` of v1beta1 ones) when it has one;
4. otherwise a Machine present when the run began is old while the control plane reports fewer
   up-to-date replicas than replicas (a rollout someone else started); Machines that appear later are new.
"""

from __future__ import annotations

import datetime
from typing import Any, Collection, Optional

from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.objects import (
    PRE_DRAIN_HOOK_PREFIX,
    bare_version,
    condition_holds,
    dig,
    new_condition,
    old_condition,
    parse_kube_time,
    replica_counts,
    rollout_after,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi import topology
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capo.machine import server_of_provider_id
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.terminate import (
    pre_terminate_phase,
)


TOPOLOGY_START = "cluster"
CONTROL_PLANE_START = "control_plane"


def format_time(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def rollout_time(now: datetime.datetime) -> datetime.datetime:
    """The rollout time to set at ``now``: the next whole second. The API keeps whole seconds, and the control
    plane rolls the Machines created before that time: a Machine created in the second the run started (just
    seeded, just scaled) is rolled too."""
    return now.replace(microsecond=0) + datetime.timedelta(seconds=1)


def rollout_start(cluster: Optional[dict[str, Any]], kcp: Optional[dict[str, Any]],
                  moment: datetime.datetime) -> tuple[str, dict[str, Any]]:
    """Where and how the rollout starts: ``(target, merge patch)``. On a topology-managed Cluster (a ClusterClass
    cluster) the topology controller owns the control plane's spec, so the rollout starts through the Cluster's
    ``spec.topology.controlPlane.rollout.after`` (target ``cluster``, Cluster API v1.13+), which it copies to the
    control plane; otherwise through the control plane's own rollout time (target ``control_plane``)."""
    if topology.is_managed(cluster):
        return TOPOLOGY_START, topology.rollout_after_patch(format_time(moment))
    return CONTROL_PLANE_START, rollout_after_patch(kcp, moment)


def rollout_after_patch(kcp: Optional[dict[str, Any]], moment: datetime.datetime) -> dict[str, Any]:
    """The merge patch that asks the control plane to roll every Machine created before ``moment``."""
    text = format_time(moment)
    if str((kcp or {}).get("apiVersion", "")).endswith("/v1beta2"):
        return {"spec": {"rollout": {"after": text}}}
    return {"spec": {"rolloutAfter": text}}


def kcp_replicas(kcp: Optional[dict[str, Any]]) -> Optional[int]:
    value = dig(kcp or {}, "spec", "replicas")
    return int(value) if value is not None else None


def kcp_all_up_to_date(kcp: Optional[dict[str, Any]]) -> bool:
    """Whether the control plane says every Machine is up to date (False when it does not say)."""
    replicas, up_to_date = replica_counts(kcp)
    if replicas is None or up_to_date is None:
        return False
    return up_to_date >= replicas and replicas == kcp_replicas(kcp)


def etcd_healthy(kcp: Optional[dict[str, Any]]) -> Optional[bool]:
    """The control plane's ``EtcdClusterHealthy`` condition (new-style, else old-style): True, False, or None when
    it reports none (a control plane that does not manage etcd)."""
    condition = new_condition(kcp or {}, "EtcdClusterHealthy")
    if condition is None:
        condition = old_condition(kcp or {}, "EtcdClusterHealthy")
    return condition_holds(condition)


def machine_ready(machine: dict[str, Any]) -> bool:
    """Whether a Machine is ready: its ``Ready`` condition (new-style, else old-style), else a Node reference."""
    ready = condition_holds(new_condition(machine, "Ready"))
    if ready is None:
        ready = condition_holds(old_condition(machine, "Ready"))
    return bool(dig(machine, "status", "nodeRef", "name")) if ready is None else ready


def deletion_view(machine: dict[str, Any]) -> dict[str, Any]:
    """What the pre-terminate hold reads of a Machine: its server (from ``spec.providerID``), whether it is
    ready, its pre-drain hooks (anyone's) and whether the Machine controller waits for its pre-terminate hooks."""
    hooks = sorted(k for k in (dig(machine, "metadata", "annotations") or {}) if k.startswith(PRE_DRAIN_HOOK_PREFIX))
    phase, words = pre_terminate_phase(machine)
    return {"server_id": server_of_provider_id(dig(machine, "spec", "providerID")), "ready": machine_ready(machine),
            "pre_drain_hooks": hooks, "pre_terminate_phase": phase, "pre_terminate_words": words,
            "infrastructure_ref": dig(machine, "spec", "infrastructureRef")}


def up_to_date_condition(machine: dict[str, Any]) -> Optional[bool]:
    """Whether the Machine's ``UpToDate`` condition is True; None when it has none."""
    return condition_holds(new_condition(machine, "UpToDate"))


def machine_data(machine: dict[str, Any], kcp: Optional[dict[str, Any]], baseline: Collection[str],
                 now: datetime.datetime, started_after: Optional[datetime.datetime] = None) -> dict[str, Any]:
    """A Machine as the plan wants it.  ``kcp``: the control plane as wanted (on a ClusterClass cluster,
    ``topology.control_plane_as_wanted``: the Cluster's version and rollout time count from the Cluster's change);
    ``baseline``: names present when the run began; ``started_after``:
    the rollout time this run set (before the control plane shows it), which counts at once: it may still be
    ahead of ``now`` by up to a second (``rollout_time``). A rollout time someone else set counts once it has come."""
    metadata = machine.get("metadata") or {}
    name = metadata.get("name")
    created = parse_kube_time(metadata.get("creationTimestamp"))
    after = parse_kube_time(rollout_after(kcp)) or started_after
    if started_after is not None and after is not None and started_after > after:
        after = started_after
    due = after is not None and (after <= now or after == started_after) and created is not None
    up_to_date: Optional[bool]
    version, wanted = dig(machine, "spec", "version"), dig(kcp or {}, "spec", "version")
    if due and created is not None and after is not None and created < after:
        # the control plane replaces every Machine created before its rollout time: until it has seen the new
        # time, the Machine's UpToDate condition still says True (Cluster API v1.12's KCP)
        up_to_date, why = False, "created before the rollout time"
    elif version and wanted and bare_version(version) != bare_version(wanted):
        # the control plane replaces every Machine of another version: until KCP has seen the new version (or the
        # topology controller has written it), the Machine's UpToDate condition still says True
        up_to_date, why = False, f"version {version}, control plane wants {wanted}"
    else:
        up_to_date = up_to_date_condition(machine)
        why = "UpToDate condition"
        if up_to_date is None and due:
            up_to_date, why = True, "created after the rollout time"
    if up_to_date is None:
        up_to_date = name not in baseline or kcp_all_up_to_date(kcp)
        why = "present before the run" if not up_to_date else "control plane up to date"
    addresses = [a.get("address") for a in dig(machine, "status", "addresses") or []
                 if isinstance(a, dict) and a.get("address")]
    return dict(deletion_view(machine), **{
        "name": name,
        "created": metadata.get("creationTimestamp") or "",
        "deleting": bool(metadata.get("deletionTimestamp")),
        "hooks": sorted((metadata.get("annotations") or {}).keys()),
        "addresses": addresses,
        "node_name": dig(machine, "status", "nodeRef", "name"),
        "up_to_date": bool(up_to_date),
        "up_to_date_reason": why,
    })
