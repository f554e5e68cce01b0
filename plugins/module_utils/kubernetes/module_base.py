# -*- coding: utf-8 -*-
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The base class of the Kubernetes modules: kubernetes.core's connection options, errors a person can act on."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import UnreachableError
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.client import (
    ApiException,
    auth_settings,
    CONFIG_ERRORS,
    describe_fault,
    K8S_IMPORT_ERROR,
    kubernetes_argument_spec,
    KubernetesClient,
    name_problem,
    status_message,
    tls_error,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.module_base import BaseModule
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.secrets import kubeconfig_secrets

STATUS_HINTS = {
    401: "the credentials were refused (check api_key, the kubeconfig's user, or client_cert/client_key)",
    403: "the credentials may not do this (check the user's RBAC permissions)",
}


def connect_kubernetes(module, params, clock):
    """A ``KubernetesClient`` from kubernetes.core-style ``params``; fails the module with a plain message
    when the client library is missing or the settings cannot be used."""
    if K8S_IMPORT_ERROR is not None:
        module.fail_json(msg=missing_required_lib("kubernetes"), exception=K8S_IMPORT_ERROR)
    try:
        return KubernetesClient(auth_settings(params), clock=clock, request_timeout=params.get("api_timeout"))
    except CONFIG_ERRORS as exc:
        raise ModuleFailure("Kubernetes connection settings are invalid: %s" % (exc,))


def check_object_names(params, kinds):
    """Refuse, before any request, option values that can never name a Kubernetes object: ``kinds`` maps an
    option to ``subdomain``, ``label`` or ``qualified`` (see ``kubernetes.client.name_problem``)."""
    problems = [name_problem(option, params.get(option), kind) for option, kind in kinds.items()]
    problems = [p for p in problems if p]
    if problems:
        raise ModuleFailure("; ".join(problems) + "; nothing was changed")


def describe_kubernetes_error(exc):
    """A message for an error of the kubernetes client, or None."""
    if isinstance(exc, UnreachableError):
        return str(exc)
    if ApiException is not None and isinstance(exc, ApiException) and exc.status:
        message = "Kubernetes API error: HTTP %s: %s" % (exc.status, status_message(exc))
        hint = STATUS_HINTS.get(exc.status)
        return "%s; %s" % (message, hint) if hint else message
    tls = tls_error(exc)
    if tls is not None:
        return ("TLS verification of the Kubernetes API failed: %s. Check ca_cert (or the kubeconfig's "
                "certificate-authority) and the API's host name; validate_certs: false skips the check (test "
                "clusters only)" % (getattr(tls, "reason", None) or getattr(tls, "strerror", None) or tls,))
    if describe_fault(exc) is not None:
        return "Kubernetes API error: %s" % (exc,)
    return None


class KubernetesModule(BaseModule):
    """A module that talks to a Kubernetes API with kubernetes.core's connection options."""

    def __init__(self, clock=None):
        super(KubernetesModule, self).__init__(clock=clock)
        self.kube = None

    @staticmethod
    def connection_argument_spec():
        return kubernetes_argument_spec()

    @staticmethod
    def hidden_values(params):
        return kubeconfig_secrets(params)

    def connect(self):
        self.kube = connect_kubernetes(self.ansible, self.params, self.clock)
        self.clients.append(self.kube)
        return self.kube

    def describe_error(self, exc):
        return describe_kubernetes_error(exc)
