# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

class ModuleDocFragment:
    # The Kubernetes connection given as one dictionary option: in the OpenStack modules that also read a Kubernetes
    # API (their top-level validate_certs, ca_cert, client_cert and client_key are the OpenStack ones) and in
    # workload_kubeconfig.
    DOCUMENTATION = r'''
options:
  kubernetes:
    description:
      - How to reach the Kubernetes API the module reads (its description says which cluster that is). The
        options and the C(K8S_AUTH_*) environment variables are kubernetes.core's. They sit in this
        dictionary, apart from the module's own options; in the modules that also talk to OpenStack, the
        top-level I(validate_certs), I(ca_cert), I(client_cert) and I(client_key) are the OpenStack
        connection's.
      - When omitted (or empty), the C(K8S_AUTH_*) environment variables, the in-cluster service account, or
        C(~/.kube/config) are used, as in kubernetes.core.
      - With I(kubeconfig_secret), the module reads a workload cluster's Kubernetes API with the kubeconfig kept
        in a Secret (Cluster API's C(<cluster>-kubeconfig)); the other options then reach the cluster that holds
        that Secret (the management cluster).
    type: dict
    suboptions:
      kubeconfig_secret:
        description:
          - A Secret that holds the kubeconfig of the cluster to talk to, such as the C(<cluster>-kubeconfig)
            Secret Cluster API keeps for every workload cluster (the C(capi_kubeconfig_secret) host variable of
            the C(flightcontrol.openstack.capi_clusters) inventory has this shape).
          - The other options (and C(K8S_AUTH_*)) say how to reach the cluster that holds the Secret. The module
            reads the Secret there (one GET, retried like every request; the credentials need C(get) on
            C(secrets) in its namespace), decodes the kubeconfig from the key and talks to the cluster of its
            C(current-context).
          - The kubeconfig stays in the module's memory. It is never written to a file (certificate and key data
            are handed to the TLS layer as in-memory files on Linux; on other systems the kubernetes client's
            own temporary files, mode 0600, removed when the module ends) and never appears in a result, an
            error or a warning. The option holds only the reference, so the task's C(invocation) shows no secret
            and needs no C(no_log).
          - Refused, with a message that names the Secret and the key, when the Secret does not exist, the key is
            missing, its value is not base64 or not a kubeconfig, the kubeconfig has no usable
            C(current-context), or its user runs a program (C(exec), C(auth-provider)) or names a file on the
            host instead of carrying its data.
          - To hand the kubeconfig to other tools as a file, see M(flightcontrol.openstack.workload_kubeconfig).
        type: dict
        suboptions:
          name:
            description: Name of the Secret.
            type: str
            required: true
          namespace:
            description: Namespace of the Secret (the Cluster's namespace for Cluster API).
            type: str
            default: default
          key:
            description: The key of the Secret's data that holds the kubeconfig.
            type: str
            default: value
      kubeconfig:
        description:
          - Path to a kubeconfig file, or the kubeconfig as a dictionary.
          - Each option given beside it wins over what the kubeconfig says, as in kubernetes.core; credentials given
            replace the kubeconfig's user as a whole; half a pair and credentials of two kinds are refused.
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
      impersonate_user:
        description:
          - The user to act as (C(Impersonate-User) header), on the cluster the other options reach.
        type: str
      impersonate_groups:
        description: The groups to act as, one C(Impersonate-Group) header each.
        type: list
        elements: str
      persist_config:
        description: Accepted for C(module_defaults) written for kubernetes.core, and ignored with a warning.
        type: bool
      proxy_headers:
        description: Headers sent to the HTTP proxy of I(proxy), as in kubernetes.core.
        type: dict
        suboptions:
          proxy_basic_auth:
            description: C(user:password) for the proxy's basic authentication.
            type: str
          basic_auth:
            description: C(user:password) for basic authentication.
            type: str
          user_agent:
            description: The C(User-Agent) header.
            type: str
'''
