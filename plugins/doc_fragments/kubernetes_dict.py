# -*- coding: utf-8 -*-
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # The Kubernetes connection of the OpenStack modules that also read a Kubernetes API
    # (their top-level validate_certs, ca_cert, client_cert and client_key are the OpenStack ones).
    DOCUMENTATION = r'''
options:
  kubernetes:
    description:
      - How to reach the Kubernetes API the module reads (its description says which cluster that is). The
        options and the C(K8S_AUTH_*) environment variables are kubernetes.core's; they sit in this
        dictionary because I(validate_certs), I(ca_cert), I(client_cert) and I(client_key) name the
        OpenStack connection's.
      - When omitted (or empty), the C(K8S_AUTH_*) environment variables, the in-cluster service account, or
        C(~/.kube/config) are used, as in kubernetes.core.
    type: dict
    suboptions:
      kubeconfig:
        description: Path to a kubeconfig file, or the kubeconfig as a dictionary.
        type: raw
      context:
        description: The kubeconfig context.
        type: str
      host:
        description: URL of the Kubernetes API server.
        type: str
      api_key:
        description: Bearer token.
        type: str
      username:
        description: User name for basic authentication.
        type: str
      password:
        description: Password for basic authentication.
        type: str
      validate_certs:
        description: Whether to verify the API server's certificate.
        type: bool
        aliases: [verify_ssl]
      ca_cert:
        description: CA certificate of the API server.
        type: path
        aliases: [ssl_ca_cert]
      client_cert:
        description: Client certificate.
        type: path
        aliases: [cert_file]
      client_key:
        description: Client certificate's key.
        type: path
        aliases: [key_file]
      proxy:
        description: HTTP proxy URL.
        type: str
      no_proxy:
        description: Hosts to reach without the proxy.
        type: str
      api_timeout:
        description:
          - How long, in seconds, one HTTP request to the Kubernetes API may take (1 to 3600).
          - When not set, 30 seconds. A request never waits past the module's own deadline by more than a
            second.
        type: int
'''
