# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The variables of a fleet's host: one per Cluster API workload cluster.  Pure.

The variables come from three objects of each cluster, listed once per kind: the ``Cluster`` (v1beta1 or
v1beta2, read through ``cluster_view``), its control plane (a KubeadmControlPlane) and its infrastructure
cluster (an OpenStackCluster), read in either of CAPO's API versions by ``capo.cluster`` (the API load
balancer, its pool, the network, subnets, router and security groups).  What a provider does not report is None
(or an empty list); an OpenStackCluster naming two different API load balancers gives none, and
``capi_api_load_balancer_error`` says why.
"""

from __future__ import annotations

from typing import Any

from ansible_collections.flightcontrol.openstack.plugins.module_utils.capo import cluster as capo
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.cluster_view import (
    cluster_summary,
    control_plane_summary,
    infrastructure_summary,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.objects import (
    contract_version,
    dig,
    labels,
    meta,
    reference,
)

KUBECONFIG_SECRET_KEY = "value"


def referenced(cluster: dict[str, Any], field: str) -> tuple[str, str, str, str] | None:
    """``(group, kind, namespace, name)`` of the object ``spec.<field>`` points to, or None."""
    target = reference(dig(cluster, "spec", field), meta(cluster).get("namespace"))
    if target is None:
        return None
    return target["group"], target["kind"], target["namespace"], target["name"]


def openstack_variables(infra: dict[str, Any] | None) -> dict[str, Any]:
    """The OpenStack resources CAPO reports on the infrastructure cluster (read by ``capo.cluster``)."""
    summary = infrastructure_summary(infra) or {}
    provisioned = summary.get("provisioned")
    if infra is not None and provisioned is None:
        provisioned = False
    return {
        "capi_infrastructure_provisioned": provisioned,
        "capi_api_load_balancer": summary.get("api_server_load_balancer"),
        "capi_api_pool": summary.get("api_server_pool"),
        "capi_api_load_balancer_error": summary.get("api_server_load_balancer_error"),
        "capi_network": capo.network(infra),
        "capi_subnets": capo.subnets(infra),
        "capi_external_network": capo.external_network(infra),
        "capi_router": capo.router(infra),
        "capi_security_groups": capo.security_groups(infra),
    }


def _kind_and_name(target: tuple[str, str, str, str] | None, obj: dict[str, Any] | None) -> dict[str, Any] | None:
    if target is None:
        return None
    return {"kind": target[1], "name": target[3], "found": obj is not None}


def host_variables(cluster: dict[str, Any], control_plane: dict[str, Any] | None = None,
                   infrastructure: dict[str, Any] | None = None) -> dict[str, Any]:
    """The host variables of one workload cluster (see the table in docs/fleet.md)."""
    summary = cluster_summary(cluster)
    cp = control_plane_summary(control_plane) or {}
    metadata = meta(cluster)
    name, namespace = metadata.get("name"), metadata.get("namespace")
    variables = {
        "capi_cluster_name": name,
        "capi_cluster_namespace": namespace,
        "capi_cluster_uid": metadata.get("uid"),
        "capi_contract_version": contract_version(cluster),
        "capi_labels": dict(labels(cluster)),
        "capi_phase": summary["phase"],
        "capi_provisioned": summary["provisioned"],
        "capi_ready": summary["ready"],
        "capi_paused": summary["paused"],
        "capi_deleting": summary["deleting"],
        "capi_failure": summary["failure"],
        "capi_control_plane_endpoint": summary["control_plane_endpoint"],
        "capi_control_plane": _kind_and_name(referenced(cluster, "controlPlaneRef"), control_plane),
        "capi_control_plane_replicas": cp.get("replicas"),
        "capi_control_plane_ready_replicas": cp.get("ready_replicas"),
        "capi_kubernetes_version": cp.get("version"),
        "capi_infrastructure": _kind_and_name(referenced(cluster, "infrastructureRef"), infrastructure),
        "capi_pod_cidrs": list(dig(cluster, "spec", "clusterNetwork", "pods", "cidrBlocks") or []),
        "capi_service_cidrs": list(dig(cluster, "spec", "clusterNetwork", "services", "cidrBlocks") or []),
        "capi_kubeconfig_secret": {"namespace": namespace, "name": f"{name}-kubeconfig",
                                   "key": KUBECONFIG_SECRET_KEY},
    }
    variables.update(openstack_variables(infrastructure))
    return variables
