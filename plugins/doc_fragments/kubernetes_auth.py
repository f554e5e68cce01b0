# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

class ModuleDocFragment:
    # Connection options of the Kubernetes modules; names, environment variables and lookup order as
    # in kubernetes.core, so module_defaults and variables written for it carry over.
    DOCUMENTATION = r'''
options:
  kubeconfig:
    description:
      - Path to a kubeconfig file, or the kubeconfig itself as a dictionary.
      - When neither this, I(context), nor I(host) with I(api_key) (or I(username) and I(password), or
        I(client_cert) and I(client_key)) are given, the in-cluster service account is used, else
        C(~/.kube/config) (or C(KUBECONFIG)).
      - Each option given beside it (or set by its E(K8S_AUTH_*) variable) wins over what the kubeconfig says,
        as in kubernetes.core; credentials given (I(api_key), I(username) and I(password), I(client_cert))
        replace the kubeconfig's user as a whole. Half a pair (I(username) without I(password), I(client_key)
        without I(client_cert)) and credentials of two kinds are refused before any request.
      - Can be set with the E(K8S_AUTH_KUBECONFIG) environment variable.
    type: raw
  context:
    description:
      - The kubeconfig context to use. Can be set with E(K8S_AUTH_CONTEXT).
    type: str
  host:
    description:
      - URL of the Kubernetes API server. Can be set with E(K8S_AUTH_HOST).
    type: str
  api_key:
    description:
      - Bearer token to authenticate with. Can be set with E(K8S_AUTH_API_KEY).
    type: str
  username:
    description:
      - User name for basic authentication. Can be set with E(K8S_AUTH_USERNAME).
    type: str
  password:
    description:
      - Password for basic authentication. Can be set with E(K8S_AUTH_PASSWORD).
    type: str
  validate_certs:
    description:
      - Whether to verify the API server's certificate. Can be set with E(K8S_AUTH_VERIFY_SSL)
        (C(0), C(false) or C(no) turn it off).
    type: bool
    aliases: [verify_ssl]
  ca_cert:
    description:
      - Path to a CA certificate that signed the API server's certificate. Can be set with
        E(K8S_AUTH_SSL_CA_CERT).
    type: path
    aliases: [ssl_ca_cert]
  client_cert:
    description:
      - Path to a client certificate. Can be set with E(K8S_AUTH_CERT_FILE).
    type: path
    aliases: [cert_file]
  client_key:
    description:
      - Path to the client certificate's key. Can be set with E(K8S_AUTH_KEY_FILE).
    type: path
    aliases: [key_file]
  proxy:
    description:
      - HTTP proxy URL for connecting to the API server. Can be set with E(K8S_AUTH_PROXY).
    type: str
  no_proxy:
    description:
      - Comma-separated hosts to reach without the proxy. Can be set with E(K8S_AUTH_NO_PROXY).
    type: str
  api_timeout:
    description:
      - How long, in seconds, one HTTP request to the Kubernetes API may take (1 to 3600).
      - When not set, 30 seconds. Either way a request never waits past the module's own deadline
        (I(timeout)) by more than one second.
    type: int
  impersonate_user:
    description:
      - The user to act as, sent in the C(Impersonate-User) header of every request (the credentials need the
        C(impersonate) verb on that user). Can be set with E(K8S_AUTH_IMPERSONATE_USER).
    type: str
  impersonate_groups:
    description:
      - The groups to act as, one C(Impersonate-Group) header each. Can be set with
        E(K8S_AUTH_IMPERSONATE_GROUPS) (comma-separated).
    type: list
    elements: str
  persist_config:
    description:
      - Accepted so that C(module_defaults) written for kubernetes.core carry over, and ignored with a
        warning naming it (the module never writes a kubeconfig).
    type: bool
  proxy_headers:
    description:
      - Headers sent to the HTTP proxy of I(proxy), as in kubernetes.core.
    type: dict
    suboptions:
      proxy_basic_auth:
        description: C(user:password) for the proxy's basic authentication (C(Proxy-Authorization)).
        type: str
      basic_auth:
        description: C(user:password) for basic authentication (C(Authorization)).
        type: str
      user_agent:
        description: The C(User-Agent) header.
        type: str
requirements:
  - kubernetes (the official Python client)
notes:
  - Transient API faults (HTTP 429 honouring C(Retry-After), 502, 503, 504, dropped connections) are
    retried with jittered backoff within the module's deadline. An API that never answered is reported
    unreachable after 10 seconds.
'''
