# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Deployments (apps/v1) as plain records: namespace, name, labels and the images of their containers.

One list request (all namespaces, or one namespace), read as JSON through ``KubernetesClient.call`` (retries,
deadline, counting) without building the client's models.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.client import KubernetesClient


def deployment_record(deployment: dict[str, Any]) -> dict[str, Any]:
    """``{"namespace", "name", "labels", "images"}`` of one Deployment (a dict as the API sends it)."""
    metadata = deployment.get("metadata") or {}
    pod = ((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}
    containers = (pod.get("containers") or []) + (pod.get("initContainers") or [])
    return {"namespace": metadata.get("namespace"), "name": metadata.get("name"),
            "labels": metadata.get("labels") or {},
            "images": sorted(set(c.get("image") for c in containers if isinstance(c, dict) and c.get("image")))}


def list_deployments(kube: KubernetesClient, deadline: Deadline, namespace: str | None = None) -> list[dict[str, Any]]:
    """Every Deployment (of ``namespace``, else of all namespaces) as ``deployment_record`` dicts, sorted."""
    if namespace:
        def request() -> Any:
            return json.loads(kube.apps.list_namespaced_deployment(namespace, _preload_content=False).data)
    else:
        def request() -> Any:
            return json.loads(kube.apps.list_deployment_for_all_namespaces(_preload_content=False).data)

    found = kube.call(request, f"listing Deployments in {namespace or 'all namespaces'}", deadline)
    return sorted((deployment_record(d) for d in found.get("items") or []),
                  key=lambda r: (r["namespace"] or "", r["name"] or ""))
