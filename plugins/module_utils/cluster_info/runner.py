# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The runner of cluster_info: read a Cluster, its control plane, infrastructure and Machines, and return
``cluster_view.build_view`` of them. The module file gives the argument spec."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.names import check_cluster
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.options import ModuleOptions, ModuleRunner
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.cluster_view import build_view
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.objects import (
    CLUSTER_NAME_LABEL,
    CORE_GROUP,
    dig,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.service import CapiService, choose_version
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.module_base import KubernetesModule


@dataclass(frozen=True)
class ClusterInfoOptions(ModuleOptions):
    """What cluster_info was asked: the runner reads nothing else."""

    name: str
    namespace: str
    api_version: Optional[str]
    timeout: int


class ClusterInfoRunner(ModuleRunner):
    """cluster_info's work. ``module`` is the module base it runs in (an ``KubernetesModule``: the connections, the clock and
    start time, warnings, exit and fail); ``options`` what was asked."""

    module: KubernetesModule
    options: ClusterInfoOptions

    def run(self) -> None:
        options = self.options
        check_cluster(options.name, options.namespace)
        deadline = self.deadline
        capi = CapiService(self.module.connect())
        contract = choose_version(capi.discover(deadline), options.api_version)
        cluster = capi.get_cluster(options.name, options.namespace, contract, deadline)
        namespace = cluster["metadata"]["namespace"]
        where = f"of Cluster {namespace}/{options.name}"
        control_plane = capi.get_ref(dig(cluster, "spec", "controlPlaneRef"), namespace, contract, deadline,
                                     "controlPlaneRef " + where)
        infrastructure = capi.get_ref(dig(cluster, "spec", "infrastructureRef"), namespace, contract, deadline,
                                      "infrastructureRef " + where)
        machines = capi.list_kind(CORE_GROUP, contract, "Machine", namespace,
                                  f"{CLUSTER_NAME_LABEL}={options.name}", deadline)
        for machine in machines:
            machine.setdefault("apiVersion", f"{CORE_GROUP}/{contract}")
            machine.setdefault("kind", "Machine")
        self.module.exit(changed=False, **build_view(cluster, control_plane, infrastructure, machines))
