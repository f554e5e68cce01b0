# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The runner of cluster_move_check: read the Cluster and its ClusterClass on the source, the target's discovery
and its ClusterClass of that name, and return ``plan``'s verdict. Reads only. The module file gives the
argument spec."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi import topology
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.objects import CORE_GROUP
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.service import CapiService, choose_version
from ansible_collections.flightcontrol.openstack.plugins.module_utils.cluster_move_check import plan
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.names import check_cluster
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.options import ModuleOptions, ModuleRunner
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.client import (
    KubernetesClient,
    auth_settings,
    is_status,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.module_base import (
    KubernetesModule,
    _client,  # pylint: disable=protected-access
)

CLASS_PLURAL = "clusterclasses"


@dataclass(frozen=True)
class ClusterMoveCheckOptions(ModuleOptions):
    """What cluster_move_check was asked: the runner reads nothing else."""

    name: str
    namespace: str
    api_version: Optional[str]
    target_kubeconfig: Any
    target_context: Optional[str]
    timeout: int


def read_class(capi: CapiService, namespace: str, name: str, contract: str,
               deadline: Deadline) -> Optional[dict[str, Any]]:
    """The ClusterClass ``namespace/name`` read in ``contract``, or None when there is none."""
    try:
        return capi.get_object(CORE_GROUP, contract, namespace, CLASS_PLURAL, name,
                               f"reading ClusterClass {namespace}/{name}", deadline)
    except Exception as exc:  # pylint: disable=broad-except
        if is_status(exc, 404):
            return None
        raise


class ClusterMoveCheckRunner(ModuleRunner):
    """cluster_move_check's work. ``module`` is the module base it runs in (a ``KubernetesModule``: the source's
    connection, the clock, exit and fail); ``options`` what was asked."""

    module: KubernetesModule
    options: ClusterMoveCheckOptions

    def connect_target(self) -> KubernetesClient:
        """The target's client from ``target_kubeconfig`` and ``target_context`` only: the ``K8S_AUTH_*``
        environment names the source and is not read for it."""
        options = self.options
        settings = auth_settings({"kubeconfig": options.target_kubeconfig, "context": options.target_context},
                                 environ={})
        kube = _client(self.module.ansible, settings, self.clock, {})
        self.module.clients.append(kube)
        return kube

    def target_apis(self, target: CapiService, needs: list[plan.Need]) -> plan.TargetApis:
        served = target.discover(self.deadline)
        kinds = dict(((group, version), set(target.resource_list(group, version, self.deadline)))
                     for group, version in plan.versions_to_read(needs, served))
        return plan.TargetApis(served, kinds)

    def read_source(self) -> tuple[str, dict[str, Any], Optional[dict[str, Any]], list[str]]:
        """The contract, the Cluster and, for a ClusterClass cluster, its class (None when it is not on the
        source: a blocker, returned as the last item)."""
        options = self.options
        check_cluster(options.name, options.namespace)
        source = CapiService(self.module.connect())
        source.discover(self.deadline)
        contract = choose_version(source.served or {}, options.api_version)
        cluster = source.get_cluster(options.name, options.namespace, contract, self.deadline)
        class_name, class_namespace = topology.class_of(cluster)
        if not (topology.is_managed(cluster) and class_name and class_namespace):
            return contract, cluster, None, []
        cluster_class = read_class(source, class_namespace, class_name, contract, self.deadline)
        if cluster_class is None:
            missing_class = f"its ClusterClass {class_namespace}/{class_name} is not on the source"
            return contract, cluster, None, [missing_class]
        return contract, cluster, cluster_class, []

    def run(self) -> None:
        contract, cluster, cluster_class, found = self.read_source()
        class_name, class_namespace = topology.class_of(cluster)
        managed = topology.is_managed(cluster) and bool(class_name)
        needs = plan.needed_kinds(cluster, cluster_class, contract)
        target = CapiService(self.connect_target())
        apis = self.target_apis(target, needs)
        missing = plan.missing_kinds(needs, apis)
        target_class = None
        if cluster_class is not None and "ClusterClass" in apis.kinds.get((CORE_GROUP, contract), set()):
            target_class = read_class(target, cluster_class["metadata"]["namespace"],
                                      cluster_class["metadata"]["name"], contract, self.deadline)
        conflict = plan.class_conflict(cluster_class, target_class)
        found = found + plan.blockers(missing, conflict)
        self.module.exit(
            changed=False, managed=managed, contract=contract,
            cluster_class=dict(name=class_name, namespace=class_namespace) if managed else None,
            needed=[dict(api=need.api, kind=need.kind, needed_by=need.needed_by) for need in needs],
            missing=missing, class_conflict=conflict, target_has_class=target_class is not None,
            blockers=found, fit=not found)
