# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cluster's nodes as the Kubernetes API sees them: every node's ``spec.podCIDRs`` and InternalIPs.

One list request per 500 nodes (the API's pagination), through ``KubernetesClient.call`` (retries,
deadline, counting).  The answer is read as JSON, not into the client's models (building and validating a model
per Node costs more than the request).  Plain data out, the shape route_audit's ``nodes`` option has.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.client import KubernetesClient

PAGE_SIZE = 500


def node_record(node: dict[str, Any]) -> dict[str, Any]:
    """``{"name", "pod_cidrs", "address", "provider_id", "route_created"}`` of one Node (a dict as the API sends
    it)."""
    metadata = node.get("metadata") or {}
    spec = node.get("spec") or {}
    pod_cidrs = spec.get("podCIDRs") or ([spec["podCIDR"]] if spec.get("podCIDR") else [])
    addresses = [a.get("address") for a in ((node.get("status") or {}).get("addresses") or [])
                 if isinstance(a, dict) and a.get("type") == "InternalIP" and a.get("address")]
    return {"name": metadata.get("name"), "pod_cidrs": list(pod_cidrs), "address": addresses,
            "provider_id": spec.get("providerID"), "route_created": route_created(node)}


def route_created(node: dict[str, Any]) -> bool:
    """Whether the Node carries the condition a cloud route controller sets once it routed the node's pod CIDR
    (``NetworkUnavailable`` false with reason ``RouteCreated``)."""
    for condition in (node.get("status") or {}).get("conditions") or []:
        if isinstance(condition, dict) and condition.get("type") == "NetworkUnavailable":
            return condition.get("status") == "False" and condition.get("reason") == "RouteCreated"
    return False


def list_nodes(kube: KubernetesClient, deadline: Deadline, label_selector: str | None = None) -> list[dict[str, Any]]:
    """Every Node (matching ``label_selector``) of the cluster ``kube`` talks to, as ``node_record``
    dicts, sorted by name."""
    records: list[dict[str, Any]] = []
    token = None
    while True:
        kwargs: dict[str, Any] = {"limit": PAGE_SIZE}
        if label_selector:
            kwargs["label_selector"] = label_selector
        if token:
            kwargs["_continue"] = token
        page = kube.call(lambda: json.loads(kube.core.list_node(_preload_content=False, **kwargs).data),
                         "listing Kubernetes nodes", deadline)
        records.extend(node_record(node) for node in page.get("items") or [])
        token = (page.get("metadata") or {}).get("continue")
        if not token:
            break
    return sorted(records, key=lambda r: r["name"] or "")
