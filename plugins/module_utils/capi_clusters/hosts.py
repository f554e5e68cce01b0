# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet: one inventory host per Cluster API workload cluster, named by the hostname format, with its
variables (``variables``) and groups.  Pure."""

from __future__ import annotations

import re
from typing import Any, Iterable, Optional

from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.hostnames import (
    check_hostname_format,
    DEFAULT_HOSTNAME_FORMAT,
    hostname,
    HostnameError,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.objects import meta
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi_clusters.variables import (
    host_variables,
    referenced,
)

# Labels that Cluster API sets itself (every Cluster carries its own name): no group from them.
CAPI_LABEL_PREFIXES = ("cluster.x-k8s.io/", "topology.cluster.x-k8s.io/")


def object_key(kind: str, namespace: Optional[str], name: Optional[str]) -> tuple[str, Optional[str], Optional[str]]:
    return (kind, namespace, name)


def index_objects(items: Iterable[tuple[str, list[dict[str, Any]]]]) -> dict[tuple[str, Optional[str], Optional[str]], dict[str, Any]]:
    """``(kind, namespace, name) -> object`` for listed objects (a list answer's items lack ``kind``:
    ``items`` is a list of ``(kind, objects)``)."""
    found: dict[tuple[str, Optional[str], Optional[str]], dict[str, Any]] = {}
    for kind, objects in items:
        for obj in objects:
            metadata = meta(obj)
            found[object_key(kind, metadata.get("namespace"), metadata.get("name"))] = obj
    return found


_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def group_name(*parts: Any) -> str:
    """A valid Ansible group name: every character but letters, digits and ``_`` becomes ``_``."""
    return _UNSAFE.sub("_", "_".join(str(p) for p in parts if p is not None and p != "")).lower()


def default_groups(variables: dict[str, Any]) -> list[str]:
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


def fleet_hosts(clusters: list[dict[str, Any]], related: dict[tuple[str, Optional[str], Optional[str]], dict[str, Any]],
                hostname_format: str = DEFAULT_HOSTNAME_FORMAT) -> list[dict[str, Any]]:
    """``[{"name", "vars", "groups"}]``, one per cluster, sorted by host name.  ``related``: the listed
    control-plane and infrastructure objects (``index_objects``).  Two clusters on one host name are refused."""
    check_hostname_format(hostname_format)
    hosts: dict[str, dict[str, Any]] = {}
    for cluster in clusters:
        found: list[Optional[dict[str, Any]]] = []
        for field in ("controlPlaneRef", "infrastructureRef"):
            target = referenced(cluster, field)
            found.append(related.get(object_key(target[1], target[2], target[3])) if target else None)
        variables = host_variables(cluster, control_plane=found[0], infrastructure=found[1])
        name = hostname(hostname_format, variables)
        if name in hosts:
            first = hosts[name]["vars"]
            raise HostnameError(f"hostname_format {hostname_format!r} gives two clusters the host name {name!r} "
                                f"({first['capi_cluster_namespace']}/{first['capi_cluster_name']} and "
                                f"{variables['capi_cluster_namespace']}/{variables['capi_cluster_name']}); include "
                                "{namespace}")
        hosts[name] = {"name": name, "vars": variables, "groups": default_groups(variables)}
    return [hosts[name] for name in sorted(hosts)]


def related_kinds(clusters: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """``(group, kind)`` of every control plane and infrastructure cluster the clusters point to, sorted."""
    kinds = set()
    for cluster in clusters:
        for field in ("controlPlaneRef", "infrastructureRef"):
            target = referenced(cluster, field)
            if target is not None and target[0]:
                kinds.add((target[0], target[1]))
    return sorted(kinds)
