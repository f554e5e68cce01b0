# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: capi_clusters
short_description: Cluster API workload clusters of a management cluster as inventory hosts
version_added: 0.1.0
description:
  - Reads the Cluster API C(Cluster) objects of a management cluster and makes one inventory host per
    workload cluster, with host variables taken from the C(Cluster), its control plane (a
    C(KubeadmControlPlane)) and its infrastructure cluster (a CAPO C(OpenStackCluster)) - readiness,
    pause, the API load balancer and its pool, network, subnets, router, security groups, pod CIDRs and
    where the cluster's kubeconfig Secret is. The table of every variable is in the collection's
    C(docs/fleet.md).
  - Works the same for the v1beta1 and the v1beta2 contract (Cluster API v1.9 to v1.11 and later); the
    variables have the same names and meaning either way.
  - One list request per kind (Clusters, control planes, infrastructure clusters), cluster-wide or one
    per namespace in O(namespaces); never one request per cluster. Transient API faults are retried
    with jittered backoff within O(timeout).
  - The host name is C(<namespace>/<name>) unless O(hostname_format) says otherwise. The hosts use the
    local connection (see O(local_connection)), as a workload cluster is reached through its API, not SSH.
  - Hosts are grouped by namespace (C(capi_namespace_<namespace>)), phase (C(capi_phase_<phase>), for
    example C(capi_phase_provisioned)) and the Cluster's labels (C(capi_label_<key>_<value>); labels that
    Cluster API sets itself, C(cluster.x-k8s.io/*), are left out). Characters other than letters, digits
    and C(_) become C(_), and names are lower case.
  - The inventory file's name must end with C(capi_clusters.yml) or C(capi_clusters.yaml).
  - The kubeconfig Secret's content is never read; only its namespace, name and key are given.
author:
  - flightcontrol.openstack maintainers (@flightcontrol)
options:
  plugin:
    description:
      - Marks the file as a configuration of this plugin.
    type: str
    required: true
    choices: [flightcontrol.openstack.capi_clusters]
  namespaces:
    description:
      - Namespaces to read Clusters from. All namespaces when empty (one cluster-wide list per kind,
        which needs permission to list across namespaces).
      - A namespace that does not exist gives no hosts and a warning that names it (one read of the namespace
        when it gave no Cluster; a namespace the credentials may not read is not warned about).
    type: list
    elements: str
    default: []
  label_selector:
    description:
      - Only Clusters whose labels match this Kubernetes label selector, for example C(env=prod,tier!=dev).
    type: str
  api_version:
    description:
      - The Cluster API contract version to read the objects in. By default v1beta2 when the API serves
        it, else v1beta1. The host variables are the same either way.
    type: str
    choices: [v1beta1, v1beta2]
  hostname_format:
    description:
      - The inventory host name of a cluster, a Python format string of C({namespace}), C({name}) and
        C({uid}).
      - C({name}) alone is shorter, but two clusters of one name in different namespaces are then refused.
    type: str
    default: '{namespace}/{name}'
  local_connection:
    description:
      - Set C(ansible_connection=local) and C(ansible_python_interpreter={{ ansible_playbook_python }}) on
        every host, so that tasks run on the controller (or in the execution environment) with the Python
        that has the C(kubernetes) and C(openstacksdk) libraries. O(compose) can override both.
    type: bool
    default: true
  timeout:
    description:
      - Seconds reading the inventory may take, retries of transient API faults included.
    type: int
    default: 60
  kubeconfig:
    description:
      - Path to the management cluster's kubeconfig file, or the kubeconfig itself as a dictionary.
      - When neither this, O(context), nor O(host) with O(api_key) (or O(username) and O(password)) are
        given, the in-cluster service account is used, else C(~/.kube/config) (or C(KUBECONFIG)).
    type: raw
    env:
      - name: K8S_AUTH_KUBECONFIG
  context:
    description:
      - The kubeconfig context to use.
    type: str
    env:
      - name: K8S_AUTH_CONTEXT
  host:
    description:
      - URL of the management cluster's Kubernetes API server.
    type: str
    env:
      - name: K8S_AUTH_HOST
  api_key:
    description:
      - Bearer token to authenticate with.
    type: str
    env:
      - name: K8S_AUTH_API_KEY
  username:
    description:
      - User name for basic authentication.
    type: str
    env:
      - name: K8S_AUTH_USERNAME
  password:
    description:
      - Password for basic authentication.
    type: str
    env:
      - name: K8S_AUTH_PASSWORD
  validate_certs:
    description:
      - Whether to verify the API server's certificate.
    type: bool
    aliases: [verify_ssl]
    env:
      - name: K8S_AUTH_VERIFY_SSL
      - name: K8S_AUTH_VALIDATE_CERTS
  ca_cert:
    description:
      - Path to a CA certificate that signed the API server's certificate.
    type: path
    aliases: [ssl_ca_cert]
    env:
      - name: K8S_AUTH_SSL_CA_CERT
      - name: K8S_AUTH_CA_CERT
  client_cert:
    description:
      - Path to a client certificate.
    type: path
    aliases: [cert_file]
    env:
      - name: K8S_AUTH_CERT_FILE
      - name: K8S_AUTH_CLIENT_CERT
  client_key:
    description:
      - Path to the client certificate's key.
    type: path
    aliases: [key_file]
    env:
      - name: K8S_AUTH_KEY_FILE
      - name: K8S_AUTH_CLIENT_KEY
  proxy:
    description:
      - HTTP proxy URL for connecting to the API server.
    type: str
    env:
      - name: K8S_AUTH_PROXY
  no_proxy:
    description:
      - Comma-separated hosts to reach without the proxy.
    type: str
    env:
      - name: K8S_AUTH_NO_PROXY
  api_timeout:
    description:
      - How long, in seconds, one HTTP request to the Kubernetes API may take; 30 when not set.
    type: int
requirements:
  - kubernetes (the official Python client)
notes:
  - Errors (an API that does not answer, refused credentials, an API without Cluster API) fail the
    inventory source with a message that names the cause. C(ansible-inventory) and C(ansible-playbook)
    report a source that failed as a warning unless C(ANSIBLE_INVENTORY_UNPARSED_FAILED=true) (AWX
    inventory updates fail on it).
extends_documentation_fragment:
  - constructed
  - inventory_cache
'''

EXAMPLES = r'''
# The smallest file, fleet.capi_clusters.yml (every workload cluster of the management cluster in
# ~/.kube/config), is the single line:
#   plugin: flightcontrol.openstack.capi_clusters

# prod.capi_clusters.yml -- two namespaces, only Clusters labelled env=prod, a group of the clusters that
# are not ready, the kubeconfig Secret's name as a short variable, groups by Kubernetes version
plugin: flightcontrol.openstack.capi_clusters
kubeconfig: ~/.kube/management.yaml
context: management
namespaces: [team-a, team-b]
label_selector: env=prod
groups:
  capi_not_ready: not capi_ready
  capi_paused_clusters: capi_paused
compose:
  kubeconfig_secret_name: capi_kubeconfig_secret.name
keyed_groups:
  - key: capi_kubernetes_version
    prefix: k8s
cache: true
cache_plugin: ansible.builtin.jsonfile
cache_connection: ~/.cache/capi_clusters
cache_timeout: 300

# The credentials from the environment instead (an AWX credential or a CI secret):
#   K8S_AUTH_HOST=https://management.example.com:6443 K8S_AUTH_API_KEY=... \
#     ansible-inventory -i fleet.capi_clusters.yml --graph
'''

from typing import Any

from ansible.errors import AnsibleParserError
from ansible.plugins.inventory import BaseInventoryPlugin, Cacheable, Constructable

from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.hostnames import HostnameError
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.objects import CORE_GROUP
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.service import CapiService, choose_version
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi_clusters.hosts import (
    fleet_hosts,
    index_objects,
    related_kinds,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.clock import Clock
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import FlightcontrolError, NotServed
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.names import name_problem
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.client import (
    AUTH_OPTIONS,
    auth_settings,
    CONFIG_ERRORS,
    is_status,
    K8S_IMPORT_ERROR,
    KubernetesClient,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.module_base import (
    describe_kubernetes_error,
)

try:  # ansible-core 2.19+: what an inventory plugin sets is never a template unless trusted
    from ansible.template import trust_as_template
    wrap_var = None
except ImportError:  # older: what it sets is a template unless wrapped as unsafe
    from ansible.utils.unsafe_proxy import wrap_var  # type: ignore[no-redef]

    def trust_as_template(value: Any) -> Any:
        return value

SUFFIXES = ("capi_clusters.yml", "capi_clusters.yaml")
# The Python that runs the playbook has the libraries the collection needs (implicit localhost uses it too).
PLAYBOOK_PYTHON = "{{ ansible_playbook_python }}"


class InventoryModule(BaseInventoryPlugin, Constructable, Cacheable):
    NAME = "flightcontrol.openstack.capi_clusters"

    def __init__(self) -> None:
        super().__init__()
        self.api_calls = 0

    def verify_file(self, path: str) -> bool:
        return super().verify_file(path) and path.endswith(SUFFIXES)

    def parse(self, inventory: Any, loader: Any, path: str, cache: bool = True) -> None:
        super().parse(inventory, loader, path, cache=cache)
        self._read_config_data(path)
        cache_key = self.get_cache_key(path)
        use_cache = self.get_option("cache") and cache
        update_cache = self.get_option("cache") and not cache
        hosts = None
        if use_cache:
            try:
                hosts = self._cache[cache_key]
            except KeyError:
                update_cache = True
        if hosts is None:
            hosts = self.read_hosts()
        if update_cache:
            self._cache[cache_key] = hosts
        self.populate(hosts)

    # -- reading -------------------------------------------------------------------------------------------

    def read_hosts(self) -> list[dict[str, Any]]:
        """The hosts of the fleet (``fleet.fleet_hosts``), from one list request per kind."""
        namespaces = self.get_option("namespaces") or []
        problems = [p for p in (name_problem("namespaces", n, "label") for n in namespaces) if p]
        if problems:
            raise AnsibleParserError("; ".join(problems))
        try:
            return self._read(namespaces)
        except HostnameError as exc:
            raise AnsibleParserError(str(exc))
        except FlightcontrolError as exc:  # NotServed (no Cluster API there), UnreachableError, DeadlineExceeded
            raise AnsibleParserError(f"{self.NAME}: {exc}")
        except Exception as exc:  # pylint: disable=broad-except
            message = describe_kubernetes_error(exc)
            if message is None:
                raise
            raise AnsibleParserError(f"{self.NAME}: {message}")

    def connect(self, clock: Clock) -> KubernetesClient:
        if K8S_IMPORT_ERROR is not None:
            raise AnsibleParserError(f"{self.NAME} needs the Python library kubernetes (the official client) on the "
                                     "controller: pip install kubernetes")
        params = dict((option, self.get_option(option)) for option, _attribute in AUTH_OPTIONS)
        try:
            return KubernetesClient(auth_settings(params), clock=clock, request_timeout=self.get_option("api_timeout"))
        except CONFIG_ERRORS as exc:
            raise AnsibleParserError(f"{self.NAME}: Kubernetes connection settings are invalid: {exc}")

    def _read(self, namespaces: list[str]) -> list[dict[str, Any]]:
        clock = Clock()
        deadline = Deadline.after(clock, self.get_option("timeout"))
        kube = self.connect(clock)
        try:
            capi = CapiService(kube)
            served = capi.discover(deadline)
            contract = choose_version(served, self.get_option("api_version"))
            clusters = capi.list_across(CORE_GROUP, contract, "clusters", namespaces,
                                        self.get_option("label_selector"), deadline)
            self.warn_missing_namespaces(kube, namespaces, clusters, deadline)
            for cluster in clusters:
                cluster.setdefault("apiVersion", f"{CORE_GROUP}/{contract}")
                cluster.setdefault("kind", "Cluster")
            related = []
            for group, kind in related_kinds(clusters):
                items = self._list_related(capi, group, kind, contract, namespaces, deadline)
                if items is not None:
                    related.append((kind, items))
            hosts = fleet_hosts(clusters, index_objects(related), self.get_option("hostname_format"))
        finally:
            self.api_calls = kube.api_calls
        self.display.vvv(f"{self.NAME}: {len(hosts)} clusters (contract {contract}) in {kube.api_calls} API requests")
        return hosts

    def warn_missing_namespaces(self, kube: KubernetesClient, namespaces: list[str], clusters: list[dict[str, Any]],
                                deadline: Deadline) -> None:
        """Warn for each listed namespace that gave no Cluster and does not exist (the API answers an empty list for
        a namespace that does not exist): a typo must not look like an empty fleet. One read per empty namespace; a
        namespace the credentials may not read is not warned about."""
        seen = set((c.get("metadata") or {}).get("namespace") for c in clusters)
        for namespace in namespaces:
            if namespace in seen:
                continue
            try:
                kube.call(lambda where=namespace: kube.core.read_namespace(where),  # type: ignore[misc]
                          f"reading namespace {namespace}", deadline)
            except Exception as exc:  # pylint: disable=broad-except
                if is_status(exc, 404):
                    self.display.warning(f"{self.NAME}: namespace {namespace} does not exist; no Clusters were read from it (check "
                                         "namespaces)")
                elif describe_kubernetes_error(exc) is None:
                    raise

    def _list_related(self, capi: CapiService, group: str, kind: str, contract: str, namespaces: list[str],
                      deadline: Deadline) -> list[dict[str, Any]] | None:
        """Every object of one kind the Clusters point to (one list), or None when the API does not serve it."""
        version = capi.version_for(group, contract)
        try:
            if version is None:
                raise NotServed(f"the Kubernetes API does not serve {group}")
            plural = capi.plural(group, version, kind, deadline)
        except NotServed as exc:
            self.display.warning(f"{self.NAME}: {exc}; the clusters' {kind} variables are left empty")
            return None
        items = capi.list_across(group, version, plural, namespaces, None, deadline)
        for item in items:
            item.setdefault("apiVersion", f"{group}/{version}")
            item.setdefault("kind", kind)
        return items

    # -- the inventory -------------------------------------------------------------------------------------

    def populate(self, hosts: list[dict[str, Any]]) -> None:
        strict = self.get_option("strict")
        for host in hosts:
            name = host["name"]
            self.inventory.add_host(name)
            # Values from the Kubernetes objects are data, never templates (a label of "{{ ... }}" stays text).
            variables = wrap_var(host["vars"]) if wrap_var is not None else dict(host["vars"])
            if self.get_option("local_connection"):
                variables["ansible_connection"] = "local"
                variables["ansible_python_interpreter"] = trust_as_template(PLAYBOOK_PYTHON)
            for key, value in variables.items():
                self.inventory.set_variable(name, key, value)
            for group in host["groups"]:
                self.inventory.add_group(group)
                self.inventory.add_child(group, name)
            self._set_composite_vars(self.get_option("compose"), variables, name, strict=strict)
            self._add_host_to_composed_groups(self.get_option("groups"), variables, name, strict=strict)
            self._add_host_to_keyed_groups(self.get_option("keyed_groups"), variables, name, strict=strict)
