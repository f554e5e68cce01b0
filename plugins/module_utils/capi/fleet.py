# -*- coding: utf-8 -*-
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet: one inventory host per Cluster API workload cluster, its variables and groups.  Pure.

The variables come from three objects of each cluster, listed once per kind: the ``Cluster`` (v1beta1 or
v1beta2, read through ``cluster_view``), its control plane (a KubeadmControlPlane) and its infrastructure
cluster (an OpenStackCluster), read in either of CAPO's API versions by ``capo.cluster`` (the API load
balancer, its pool, the network, subnets, router and security groups).  What a provider does not report is None
(or an empty list); an OpenStackCluster naming two different API load balancers gives none, and
``capi_api_load_balancer_error`` says why.
"""

import re

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
DEFAULT_HOSTNAME_FORMAT = "{namespace}/{name}"
HOSTNAME_FIELDS = ("name", "namespace", "uid")
# Labels that Cluster API sets itself (every Cluster carries its own name): no group from them.
CAPI_LABEL_PREFIXES = ("cluster.x-k8s.io/", "topology.cluster.x-k8s.io/")


class FleetError(ValueError):
    """A configuration that cannot give a valid inventory (a hostname format, two clusters on one name)."""


def object_key(kind, namespace, name):
    return (kind, namespace, name)


def index_objects(items):
    """``(kind, namespace, name) -> object`` for listed objects (a list answer's items lack ``kind``:
    ``items`` is a list of ``(kind, objects)``)."""
    found = {}
    for kind, objects in items:
        for obj in objects:
            metadata = meta(obj)
            found[object_key(kind, metadata.get("namespace"), metadata.get("name"))] = obj
    return found


def referenced(cluster, field):
    """``(group, kind, namespace, name)`` of the object ``spec.<field>`` points to, or None."""
    target = reference(dig(cluster, "spec", field), meta(cluster).get("namespace"))
    if target is None:
        return None
    return target["group"], target["kind"], target["namespace"], target["name"]


def openstack_variables(infra):
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


def _kind_and_name(target, obj):
    if target is None:
        return None
    return {"kind": target[1], "name": target[3], "found": obj is not None}


def host_variables(cluster, control_plane=None, infrastructure=None):
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
        "capi_kubeconfig_secret": {"namespace": namespace, "name": "%s-kubeconfig" % name,
                                   "key": KUBECONFIG_SECRET_KEY},
    }
    variables.update(openstack_variables(infrastructure))
    return variables


def check_hostname_format(hostname_format):
    """Refuse a format that names a field the hosts do not have, or no field at all."""
    try:
        sample = hostname_format.format(**dict((f, "x") for f in HOSTNAME_FIELDS))
    except (KeyError, IndexError, ValueError) as exc:
        raise FleetError("hostname_format %r is not a format of {name}, {namespace} and {uid}: %s"
                         % (hostname_format, exc))
    if sample == hostname_format:
        raise FleetError("hostname_format %r names no field: every cluster would get the same host name "
                         "(use {namespace}/{name} or {name})" % hostname_format)


def hostname(hostname_format, variables):
    return hostname_format.format(name=variables["capi_cluster_name"], namespace=variables["capi_cluster_namespace"],
                                  uid=variables["capi_cluster_uid"])


_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def group_name(*parts):
    """A valid Ansible group name: every character but letters, digits and ``_`` becomes ``_``."""
    return _UNSAFE.sub("_", "_".join(str(p) for p in parts if p is not None and p != "")).lower()


def default_groups(variables):
    """``capi_namespace_<namespace>``, ``capi_phase_<phase>`` and ``capi_label_<key>_<value>`` (labels that
    Cluster API sets itself excepted)."""
    groups = [group_name("capi_namespace", variables["capi_cluster_namespace"])]
    if variables["capi_phase"]:
        groups.append(group_name("capi_phase", variables["capi_phase"]))
    for key, value in sorted(variables["capi_labels"].items()):
        if key.startswith(CAPI_LABEL_PREFIXES):
            continue
        groups.append(group_name("capi_label", key, value))
    return groups


def fleet_hosts(clusters, related, hostname_format=DEFAULT_HOSTNAME_FORMAT):
    """``[{"name", "vars", "groups"}]``, one per cluster, sorted by host name.  ``related``: the listed
    control-plane and infrastructure objects (``index_objects``).  Two clusters on one host name are refused."""
    check_hostname_format(hostname_format)
    hosts = {}
    for cluster in clusters:
        found = []
        for field in ("controlPlaneRef", "infrastructureRef"):
            target = referenced(cluster, field)
            found.append(related.get(object_key(target[1], target[2], target[3])) if target else None)
        variables = host_variables(cluster, control_plane=found[0], infrastructure=found[1])
        name = hostname(hostname_format, variables)
        if name in hosts:
            raise FleetError("hostname_format %r gives two clusters the host name %r (%s/%s and %s/%s); include "
                             "{namespace}" % (hostname_format, name, hosts[name]["vars"]["capi_cluster_namespace"],
                                              hosts[name]["vars"]["capi_cluster_name"],
                                              variables["capi_cluster_namespace"], variables["capi_cluster_name"]))
        hosts[name] = {"name": name, "vars": variables, "groups": default_groups(variables)}
    return [hosts[name] for name in sorted(hosts)]


def related_kinds(clusters):
    """``(group, kind)`` of every control plane and infrastructure cluster the clusters point to, sorted."""
    kinds = set()
    for cluster in clusters:
        for field in ("controlPlaneRef", "infrastructureRef"):
            target = referenced(cluster, field)
            if target is not None and target[0]:
                kinds.add((target[0], target[1]))
    return sorted(kinds)
