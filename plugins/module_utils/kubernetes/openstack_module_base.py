# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The base class of the OpenStack modules that also read a Kubernetes API (route_audit, node_registration_audit,
rollout_guard). Apart from ``kubernetes.module_base`` so that a Kubernetes-only module does not import
openstacksdk at every start."""

from __future__ import annotations

from typing import Any, Mapping

from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.client import KubernetesClient
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.module_base import (
    connect_kubernetes,
    describe_kubernetes_error,
    kubernetes_dict_argument_spec,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.module_base import OpenStackModule
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.secrets import kubeconfig_secrets


class OpenStackKubernetesModule(OpenStackModule):
    """An OpenStack module that also reads a Kubernetes API, reached with kubernetes.core's options in a
    ``kubernetes`` dictionary (doc fragment ``kubernetes_dict``): at the top level, validate_certs, ca_cert,
    client_cert and client_key already name the OpenStack connection's."""

    @staticmethod
    def connection_argument_spec() -> dict[str, Any]:
        spec = OpenStackModule.connection_argument_spec()
        spec["kubernetes"] = dict(type="dict", options=kubernetes_dict_argument_spec())
        return spec

    @staticmethod
    def hidden_values(params: Mapping[str, Any]) -> set[str]:
        return OpenStackModule.hidden_values(params) | kubeconfig_secrets(params.get("kubernetes"))

    def connect_kubernetes(self) -> KubernetesClient:
        """The client of the Kubernetes API ``kubernetes`` names: through ``kubernetes.kubeconfig_secret``, the
        workload cluster whose kubeconfig that Secret holds (read within the run's deadline)."""
        return connect_kubernetes(self.ansible, self.params.get("kubernetes") or {}, self.clock, self.clients,
                                  self.deadline)

    def describe_error(self, exc: Exception) -> str | None:
        return super().describe_error(exc) or describe_kubernetes_error(exc)
