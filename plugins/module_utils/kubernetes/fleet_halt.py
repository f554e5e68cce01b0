# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet's halt record, pure: a ConfigMap ``flightcontrol-fleet-halt`` (in namespace ``default`` unless told
otherwise) on the management cluster. While it exists no actor of the collection starts on a cluster: the
cluster_lease module refuses to take a cluster's Lease (its own renewals go on), and fleet_wave starts no
cluster. It is written by the fleet run whose wave failed more than its budget allowed, and removed only by an
explicit action (``playbooks/fleet_resume.yml``, or ``kubectl delete configmap -n default flightcontrol-fleet-halt``).

Its ``data``: ``run`` (the fleet run), ``wave`` (its number), ``reason``, ``failed`` (a JSON list of the clusters
that failed), ``halted_at`` (UTC), ``by`` (who wrote it: AWX job, host, playbook)."""

from __future__ import annotations

import json
from typing import Any, Iterable

HALT_NAME = "flightcontrol-fleet-halt"
DEFAULT_NAMESPACE = "default"
MANAGED_BY = {"app.kubernetes.io/managed-by": "flightcontrol.openstack",
              "app.kubernetes.io/component": "fleet-halt"}
FIELDS = ("run", "wave", "reason", "failed", "halted_at", "by")


def read_halt(configmap: dict[str, Any] | None) -> dict[str, Any] | None:
    """The halt as a dict (``failed`` a list, ``wave`` an int where it is one), None when there is none."""
    if configmap is None:
        return None
    data = dict(configmap.get("data") or {})
    halt: dict[str, Any] = dict((key, data.get(key)) for key in FIELDS)
    try:
        halt["failed"] = json.loads(halt["failed"] or "[]")
    except ValueError:
        halt["failed"] = [halt["failed"]]
    try:
        halt["wave"] = int(halt["wave"]) if halt["wave"] is not None else None
    except ValueError:
        pass
    halt["namespace"] = (configmap.get("metadata") or {}).get("namespace")
    halt["name"] = (configmap.get("metadata") or {}).get("name")
    return halt


def halt_body(namespace: str, run: object, wave: object, reason: object, failed: Iterable[str], halted_at: object,
              by: object) -> dict[str, Any]:
    """The ConfigMap that halts the fleet."""
    data = dict(run=str(run), wave=str(wave), reason=str(reason), failed=json.dumps(list(failed)),
                halted_at=str(halted_at), by=str(by or ""))
    return dict(apiVersion="v1", kind="ConfigMap", data=data,
                metadata=dict(name=HALT_NAME, namespace=namespace, labels=dict(MANAGED_BY)))


def lift_command(namespace: str | None) -> str:
    return f"kubectl delete configmap -n {namespace} {HALT_NAME}"


def halt_message(halt: dict[str, Any]) -> str:
    """Why nothing may start: the halt, who wrote it, and how to lift it."""
    failed = ", ".join(halt.get("failed") or []) or "none named"
    return (f"The fleet is halted (ConfigMap {halt.get('namespace')}/{HALT_NAME}): run {halt.get('run')}, wave "
            f"{halt.get('wave')}: {halt.get('reason')} (failed: {failed}; halted at {halt.get('halted_at')} by "
            f"{halt.get('by') or 'unknown'}). Lift it with playbooks/fleet_resume.yml or "
            f"`{lift_command(halt.get('namespace'))}` once the cause is understood")
