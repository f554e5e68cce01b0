"""What the emulated controllers read and write of CAPO's objects in the version each is kept in (v1beta1 or
v1beta2, see :mod:`minicloud.kube.capo_crds`).  Pure.

- the API load balancer: ``status.apiServerLoadBalancer`` (v1beta1), ``status.apiServerManagedLoadBalancer``
  (v1beta2);
- readiness: v1beta1's ``status.ready``; v1beta2 has none, CAPO v0.15 sets ``status.initialization.provisioned``
  once (and the Ready condition, a ``metav1.Condition``).
"""

from __future__ import annotations

from minicloud.kube import capo_convert

LOAD_BALANCER = {capo_convert.V1BETA1: "apiServerLoadBalancer", capo_convert.V1BETA2: "apiServerManagedLoadBalancer"}


def version(obj: dict | None) -> str:
    """The version ``obj`` is kept in (v1beta1 when there is no object)."""
    return capo_convert.version_of(obj) if obj else capo_convert.V1BETA1


def load_balancer_field(obj: dict | None) -> str:
    """The status field of the API load balancer in ``obj``'s version."""
    return LOAD_BALANCER[version(obj)]


def load_balancer(osc: dict) -> dict | None:
    """The API load balancer an OpenStackCluster reports in its own version, or None."""
    return (osc.get("status") or {}).get(load_balancer_field(osc))


def at_version(body: dict, kind: str, like: dict | None) -> dict:
    """``body`` (v1beta1-shaped, as the controllers write it) in the version of ``like`` (its cluster's
    OpenStackCluster)."""
    return capo_convert.convert(dict(body, apiVersion=f"{capo_convert.GROUP}/{capo_convert.V1BETA1}"), kind,
                                version(like))


def ready_fields(obj: dict | None, ready: bool, conditions: list[dict] | None = None) -> dict:
    """The status fields that say ``ready`` (and carry ``conditions``, CAPI's v1beta1 kind) in ``obj``'s version:
    v1beta1 ``ready`` and the conditions; v1beta2 ``initialization.provisioned`` once ready, and the conditions as
    ``metav1.Condition``."""
    if version(obj) == capo_convert.V1BETA1:
        fields = {"ready": ready}
        if conditions is not None:
            fields["conditions"] = conditions
        return fields
    fields = {"initialization": {"provisioned": True}} if ready else {}
    if conditions is not None:
        generation = (obj.get("metadata") or {}).get("generation") or 1
        fields["conditions"] = [dict({k: v for k, v in c.items() if k != "severity"},
                                     reason=c.get("reason") or c["type"], observedGeneration=generation)
                                for c in conditions]
    return fields
