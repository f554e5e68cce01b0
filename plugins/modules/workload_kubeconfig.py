#!/usr/bin/python
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
module: workload_kubeconfig
short_description: Check a workload cluster's kubeconfig Secret and, on request, write it to a file for other tools
version_added: 0.1.0
description:
  - Reads the kubeconfig of a Cluster API workload cluster from its Secret in the management cluster
    (C(<cluster>-kubeconfig), key C(value), or any Secret and key given in I(secret)), checks that it is a
    kubeconfig a client can use (a C(current-context) naming a cluster with a server and, if any, a user; no
    C(exec) or C(auth-provider) credentials, no references to files), and by default that the workload cluster's
    API answers with it (C(/version)).
  - I(kubernetes) reaches the management cluster, where the Secret is; its credentials need C(get) on C(secrets)
    in the Secret's namespace.
  - Only when I(dest) is set is the kubeconfig written, to that path with mode C(0600), for tools that need a
    file (kubectl, helm). The collection's own modules need no file; give them
    C(kubernetes.kubeconfig_secret) instead, and the kubeconfig stays in memory.
  - The result says where the kubeconfig leads (server, context, cluster, user) and never holds a credential
    (token, key, certificate data, password); neither do errors, warnings or the diff.
author:
  - flightcontrol.openstack maintainers (@flightcontrol)
options:
  cluster:
    description:
      - Name of the Cluster API C(Cluster); the Secret is C(<cluster>-kubeconfig) in I(namespace), key C(value).
      - Exactly one of I(cluster) and I(secret) is required.
    type: str
  namespace:
    description:
      - Namespace of the C(Cluster) named by I(cluster).
    type: str
    default: default
  secret:
    description:
      - The Secret and key that hold the kubeconfig, when it is not Cluster API's C(<cluster>-kubeconfig).
    type: dict
    suboptions:
      name:
        description: Name of the Secret.
        type: str
        required: true
      namespace:
        description: Namespace of the Secret.
        type: str
        default: default
      key:
        description: The key of the Secret's data that holds the kubeconfig.
        type: str
        default: value
  check_api:
    description:
      - Check that the workload cluster's API answers with the kubeconfig (one C(GET /version)), and return
        its version in C(kubernetes_version).
      - Set to C(false) when this host cannot reach the workload cluster's API (the kubeconfig is then only
        checked for its shape).
    type: bool
    default: true
  dest:
    description:
      - Write the kubeconfig to this path, mode C(0600), replacing the file there (a new file renamed over
        it, so a reader never sees half of it). The directory must exist.
      - Unchanged when the file already holds the same kubeconfig with mode C(0600).
      - When not set, nothing is written anywhere.
    type: path
  timeout:
    description:
      - Seconds the whole task may take, retries of transient API faults included.
    type: int
    default: 60
extends_documentation_fragment:
  - flightcontrol.openstack.kubernetes_dict
attributes:
  check_mode:
    support: full
    description: Reads the Secret and checks the API; reports whether I(dest) would change without writing it.
  diff_mode:
    support: full
    description: Shows that I(dest) is created or changes, and its mode, never the kubeconfig's content.
notes:
  - The file at I(dest) holds the workload cluster's credentials. Write it where only the user that needs it can
    read it, and remove it when done.
seealso:
  - plugin: flightcontrol.openstack.capi_clusters
    plugin_type: inventory
    description: One host per workload cluster, with the C(capi_kubeconfig_secret) variable I(secret) takes.
'''

EXAMPLES = r'''
- name: Check that the kubeconfig of prod-eu-1 works, write nothing
  flightcontrol.openstack.workload_kubeconfig:
    cluster: prod-eu-1
    namespace: clusters
    kubernetes:
      kubeconfig: /etc/flightcontrol/management.kubeconfig
  register: prod_eu_1

- name: Where it leads
  ansible.builtin.debug:
    msg: "{{ prod_eu_1.server }} ({{ prod_eu_1.kubernetes_version }}) as {{ prod_eu_1.user }}"

- name: A file for kubectl and helm, for this run only
  flightcontrol.openstack.workload_kubeconfig:
    cluster: prod-eu-1
    namespace: clusters
    dest: /run/user/1000/prod-eu-1.kubeconfig

- name: A kubeconfig kept under another key, without reaching the workload API
  flightcontrol.openstack.workload_kubeconfig:
    secret:
      name: prod-eu-1-admin
      namespace: clusters
      key: kubeconfig
    check_api: false

- name: Every workload cluster of the capi_clusters inventory
  flightcontrol.openstack.workload_kubeconfig:
    secret: "{{ capi_kubeconfig_secret }}"
'''

RETURN = r'''
server:
  description: The URL of the workload cluster's API (the kubeconfig's current context), without any user
    information.
  returned: success
  type: str
  sample: https://10.0.0.5:6443
context:
  description: The kubeconfig's current context.
  returned: success
  type: str
  sample: prod-eu-1-admin@prod-eu-1
cluster:
  description: The kubeconfig's cluster entry the context names.
  returned: success
  type: str
  sample: prod-eu-1
user:
  description: The kubeconfig's user entry the context names (null when the context names none).
  returned: success
  type: str
  sample: prod-eu-1-admin
kubernetes_version:
  description: The workload cluster's version (C(gitVersion) of C(/version)).
  returned: when I(check_api) is true
  type: str
  sample: v1.31.4
secret:
  description: The Secret and key the kubeconfig was read from.
  returned: success
  type: dict
  sample: {"name": "prod-eu-1-kubeconfig", "namespace": "clusters", "key": "value"}
dest:
  description: The path written (or that would be written, in check mode); null when I(dest) is not set.
  returned: success
  type: str
  sample: /run/user/1000/prod-eu-1.kubeconfig
api_calls:
  description: HTTP requests sent to the Kubernetes APIs (the management cluster's and the workload cluster's), retries and authentication requests included.
  returned: always
  type: int
elapsed:
  description: Seconds the task took.
  returned: always
  type: float
retried_faults:
  description: Transient faults that were retried (HTTP status or C(connection)).
  returned: always
  type: list
  elements: raw
writes:
  description:
    - When the task failed after writing, each write request it made (C(call)) and its C(outcome) (C(done), or
      C(unknown) when its answer was lost); at most 200 (RV(writes_total) counts them all when there are more).
    - Such a failed task also says C(changed=true).
  returned: on failure after a write
  type: list
  elements: dict
writes_total:
  description: How many writes the failed task made, when there are more than RV(writes) lists (200).
  returned: on failure after more than 200 writes
  type: int
'''

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.module_base import SECONDS
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.kubeconfig_secret import (
    kubeconfig_secret_argument_spec,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.module_base import KubernetesDictModule
from ansible_collections.flightcontrol.openstack.plugins.module_utils.workload_kubeconfig.runner import (
    WorkloadKubeconfigOptions,
    WorkloadKubeconfigRunner,
)


class WorkloadKubeconfig(KubernetesDictModule):
    """The options; the work is the runner's, given what was asked."""

    argument_spec = dict(
        cluster=dict(type="str"),
        namespace=dict(type="str", default="default"),
        secret=dict(type="dict", options=kubeconfig_secret_argument_spec(), no_log=False),
        check_api=dict(type="bool", default=True),
        dest=dict(type="path"),
        timeout=dict(type="int", default=60),
    )
    module_kwargs = dict(mutually_exclusive=[("cluster", "secret")], required_one_of=[("cluster", "secret")])
    number_ranges = dict(timeout=SECONDS)

    def run(self) -> None:
        options = WorkloadKubeconfigOptions.from_params(
            self.params, check_mode=self.ansible.check_mode, diff=self.ansible._diff)
        WorkloadKubeconfigRunner(self, options).run()


def main() -> None:
    WorkloadKubeconfig()()


if __name__ == "__main__":
    main()
