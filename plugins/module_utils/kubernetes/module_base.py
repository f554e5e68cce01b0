# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The base class of the Kubernetes modules: kubernetes.core's connection options, errors a person can act on."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.clock import Clock
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import UnreachableError
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.names import name_problem
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.client import (
    ApiException,
    auth_settings,
    CONFIG_ERRORS,
    describe_fault,
    K8S_IMPORT_ERROR,
    kubernetes_argument_spec,
    KubernetesClient,
    status_message,
    tls_error,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.kubeconfig_secret import (
    client_settings,
    kubeconfig_secret_argument_spec,
    read_kubeconfig_secret,
    SecretRef,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.module_base import BaseModule
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.secrets import kubeconfig_secrets

if TYPE_CHECKING:
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.kubeconfig_secret import (
        WorkloadKubeconfig,
    )

STATUS_HINTS = {
    401: "the credentials were refused (check api_key, the kubeconfig's user, or client_cert/client_key)",
    403: "the credentials may not do this (check the user's RBAC permissions)",
}


def kubernetes_dict_argument_spec() -> dict[str, Any]:
    """The ``kubernetes`` dictionary option (doc fragment ``kubernetes_dict``): kubernetes.core's connection
    options and ``kubeconfig_secret``."""
    spec = kubernetes_argument_spec()
    spec["kubeconfig_secret"] = dict(type="dict", options=kubeconfig_secret_argument_spec(), no_log=False)
    return spec


def _client(module: Any, settings: Mapping[str, Any], clock: Clock, params: Mapping[str, Any],
            refusal: Callable[[BaseException], str] | None = None) -> KubernetesClient:
    """A ``KubernetesClient`` for ``settings``; settings the client refuses fail the module with
    ``refusal(exc)`` (by default: they are invalid, quoting the client)."""
    if K8S_IMPORT_ERROR is not None:
        raise ModuleFailure(missing_required_lib("kubernetes"), exception=K8S_IMPORT_ERROR)
    try:
        return KubernetesClient(settings, clock=clock, request_timeout=params.get("api_timeout"))
    except CONFIG_ERRORS as exc:
        raise ModuleFailure(refusal(exc) if refusal else f"Kubernetes connection settings are invalid: {exc}")


def connect_kubernetes(module: Any, params: Mapping[str, Any], clock: Clock, clients: list[Any],
                       deadline: Deadline) -> KubernetesClient:
    """A ``KubernetesClient`` from kubernetes.core-style ``params``; fails the module with a plain message
    when the client library is missing or the settings cannot be used. With ``kubeconfig_secret`` in
    ``params`` the other settings reach the cluster that holds the Secret, and the client returned talks to the
    cluster the Secret's kubeconfig names (``connect_through_secret``). Every client made is added to
    ``clients``; ``deadline`` (the run's ``Deadline``) bounds reading the Secret."""
    kube = _client(module, auth_settings(params), clock, params)
    clients.append(kube)
    if not params.get("kubeconfig_secret"):
        return kube
    ref = secret_ref(params["kubeconfig_secret"])
    workload = read_kubeconfig_secret(kube, ref, deadline)
    return connect_workload(module, workload, clock, params, clients)


def secret_ref(options: Mapping[str, Any], option: str = "kubeconfig_secret") -> SecretRef:
    """The ``SecretRef`` of ``options`` (name, namespace, key), refused before any request when it can never
    name a Secret's key."""
    ref = SecretRef.from_options(options)
    problems = ref.problems(option)
    if problems:
        raise ModuleFailure("; ".join(problems) + "; nothing was changed")
    return ref


def connect_workload(module: Any, workload: WorkloadKubeconfig, clock: Clock, params: Mapping[str, Any],
                     clients: list[Any]) -> KubernetesClient:
    """A client for the cluster ``workload`` (a ``WorkloadKubeconfig``) names; its secrets are added to the
    values the module masks in its output."""
    module.no_log_values.update(workload.secret_values)

    def refusal(exc: BaseException) -> str:
        reason = str(exc)
        if any(value in reason for value in workload.secret_values):  # never quote the kubeconfig
            reason = type(exc).__name__
        return f"the kubeconfig in key {workload.ref.key!r} of {workload.ref} cannot be used: {reason}"

    kube = _client(module, client_settings(workload), clock, params, refusal)
    clients.append(kube)
    return kube


def check_object_names(params: Mapping[str, Any], kinds: Mapping[str, str]) -> None:
    """Refuse, before any request, option values that can never name a Kubernetes object: ``kinds`` maps an
    option to ``subdomain``, ``label`` or ``qualified`` (see ``core.names.name_problem``)."""
    found = [name_problem(option, params.get(option), kind) for option, kind in kinds.items()]
    problems = [p for p in found if p]
    if problems:
        raise ModuleFailure("; ".join(problems) + "; nothing was changed")


def describe_kubernetes_error(exc: BaseException) -> str | None:
    """A message for an error of the kubernetes client, or None."""
    if isinstance(exc, UnreachableError):
        return str(exc)
    if ApiException is not None and isinstance(exc, ApiException) and exc.status:
        message = f"Kubernetes API error: HTTP {exc.status}: {status_message(exc)}"
        hint = STATUS_HINTS.get(exc.status)
        return f"{message}; {hint}" if hint else message
    tls = tls_error(exc)
    if tls is not None:
        return ("TLS verification of the Kubernetes API failed: "
                f"{getattr(tls, 'reason', None) or getattr(tls, 'strerror', None) or tls}. Check ca_cert (or the "
                "kubeconfig's certificate-authority) and the API's host name; validate_certs: false skips the check "
                "(test clusters only)")
    if describe_fault(exc) is not None:
        return f"Kubernetes API error: {exc}"
    return None


class KubernetesModule(BaseModule):
    """A module that talks to a Kubernetes API with kubernetes.core's connection options."""

    def __init__(self, clock: Clock | None = None) -> None:
        super().__init__(clock=clock)
        self.kube: KubernetesClient | None = None

    @staticmethod
    def connection_argument_spec() -> dict[str, Any]:
        return kubernetes_argument_spec()

    @staticmethod
    def hidden_values(params: Mapping[str, Any]) -> set[str]:
        return kubeconfig_secrets(params)

    def connect(self) -> KubernetesClient:
        """The client of the Kubernetes API the options name (through ``kubeconfig_secret``: read within the run's
        deadline)."""
        self.kube = connect_kubernetes(self.ansible, self.params, self.clock, self.clients, self.deadline)
        return self.kube

    def describe_error(self, exc: Exception) -> str | None:
        return describe_kubernetes_error(exc)


class KubernetesDictModule(BaseModule):
    """A module that reaches a Kubernetes API only through kubernetes.core's options in a ``kubernetes``
    dictionary (doc fragment ``kubernetes_dict``), without an OpenStack connection: workload_kubeconfig."""

    @staticmethod
    def connection_argument_spec() -> dict[str, Any]:
        return dict(kubernetes=dict(type="dict", options=kubernetes_dict_argument_spec()))

    @staticmethod
    def hidden_values(params: Mapping[str, Any]) -> set[str]:
        return kubeconfig_secrets(params.get("kubernetes"))

    def connect_kubernetes(self) -> KubernetesClient:
        """The client of the Kubernetes API ``kubernetes`` names (through ``kubeconfig_secret``: read within the
        run's deadline)."""
        return connect_kubernetes(self.ansible, self.params.get("kubernetes") or {}, self.clock, self.clients,
                                  self.deadline)

    def connect_workload(self, workload: WorkloadKubeconfig) -> KubernetesClient:
        """A client of the workload cluster ``workload`` (a ``WorkloadKubeconfig``) names, with the options of
        ``kubernetes`` that apply to it."""
        return connect_workload(self.ansible, workload, self.clock, self.params.get("kubernetes") or {},
                                self.clients)

    def hide(self, values: Iterable[str]) -> None:
        """Mask ``values`` (secrets read during the run) in the module's output."""
        self.ansible.no_log_values.update(values)

    def describe_error(self, exc: Exception) -> str | None:
        return describe_kubernetes_error(exc)
