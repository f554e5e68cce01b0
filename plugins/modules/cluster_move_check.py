#!/usr/bin/python
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
module: cluster_move_check
short_description: Before a move, whether the target management cluster can take a Cluster API cluster
version_added: 0.1.0
description:
  - Reads a C(Cluster) on the source management cluster (the module's Kubernetes connection) and, when it is
    managed through a ClusterClass (C(spec.topology)), its C(ClusterClass); lists every kind the move needs on the
    target; reads the target's API discovery (C(/apis), then C(/apis/<group>/<version>) of each group needed) and
    names each kind the target does not serve.
  - 'The kinds: C(Cluster), the kinds of its C(infrastructureRef) and C(controlPlaneRef), and for a ClusterClass
    cluster the C(ClusterClass) and every template it references (the infrastructure cluster template, the control
    plane template and its machine infrastructure template, each worker class''s bootstrap and infrastructure
    templates, any remediation template), each with the kind the topology controller makes from it (a
    C(<Kind>Template) makes a C(<Kind>)). Providers (CAPO, CAPD, KubeadmControlPlane, the kubeadm bootstrap
    provider) serve them: a target without one of them lacks its kinds.'
  - C(clusterctl move) overwrites an object of the same name on the target. A ClusterClass of the class's name and
    namespace already on the target with a different spec is a blocker (the clusters that use it there would
    change); the same spec is not.
  - C(blockers) lists, in plain sentences, why the target cannot take the cluster; C(fit) is true when there are
    none. The module does not fail on them (the C(cluster_move) role stops on them before any write).
  - Read only; runs the same in check mode.
author:
  - flightcontrol.openstack maintainers (@flightcontrol)
options:
  name:
    description:
      - Name of the Cluster API C(Cluster) on the source.
    type: str
    required: true
  namespace:
    description:
      - Namespace of the C(Cluster).
    type: str
    default: default
  api_version:
    description:
      - The Cluster API contract version to read the objects in, on both sides. By default v1beta2 when the source
        serves it, else v1beta1.
    type: str
    choices: [v1beta1, v1beta2]
  target_kubeconfig:
    description:
      - The target management cluster's kubeconfig, a path or the kubeconfig as a dictionary. The C(K8S_AUTH_*)
        environment variables are not read for the target (they name the source).
    type: raw
    required: true
  target_context:
    description:
      - The context of I(target_kubeconfig); its current context when omitted.
    type: str
  timeout:
    description:
      - Seconds the reads may take, on both sides, retries of transient API faults included.
    type: int
    default: 60
extends_documentation_fragment:
  - flightcontrol.openstack.kubernetes_auth
attributes:
  check_mode:
    support: full
    description: Reads only.
  diff_mode:
    support: none
    description: Changes nothing.
'''

EXAMPLES = r'''
- name: Check that the target can take the cluster
  flightcontrol.openstack.cluster_move_check:
    kubeconfig: ~/.kube/bootstrap.yaml
    name: prod-eu-1
    namespace: clusters
    target_kubeconfig: ~/.kube/management.yaml
  register: move_check

- name: Stop unless it can
  ansible.builtin.assert:
    that: move_check.fit
    fail_msg: "{{ move_check.blockers | join('; ') }}"
'''

RETURN = r'''
managed:
  description: Whether the Cluster is managed through a ClusterClass (has C(spec.topology)).
  returned: always
  type: bool
contract:
  description: The Cluster API contract version the objects were read in.
  returned: always
  type: str
  sample: v1beta2
cluster_class:
  description: The Cluster's ClusterClass (C(name), C(namespace)); null for a cluster without C(spec.topology).
  returned: always
  type: dict
  sample:
    name: in-memory
    namespace: clusters
needed:
  description:
    - Every kind the move needs on the target, C(api) (C(group/version), or the group alone where the reference
      names no version), C(kind) and C(needed_by) (what on the source needs it).
  returned: always
  type: list
  elements: dict
missing:
  description:
    - The kinds the target does not serve, one entry per kind, C(api), C(kind), C(reason) (the group not served,
      served only in other versions, or the kind not served in it) and C(needed_by) (a list).
  returned: always
  type: list
  elements: dict
class_conflict:
  description: Why the target's ClusterClass of that name is in the way (its spec differs), or null.
  returned: always
  type: str
target_has_class:
  description: Whether the target already holds a ClusterClass of the class's name and namespace.
  returned: always
  type: bool
blockers:
  description: Why the target cannot take the cluster, in plain sentences naming every missing kind; empty when it can.
  returned: always
  type: list
  elements: str
fit:
  description: True when there are no blockers.
  returned: always
  type: bool
api_calls:
  description: HTTP requests sent to the two Kubernetes APIs, retries and authentication requests included.
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
'''

from typing import Any, Mapping

from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.module_base import KubernetesModule
from ansible_collections.flightcontrol.openstack.plugins.module_utils.cluster_move_check.runner import (
    ClusterMoveCheckOptions,
    ClusterMoveCheckRunner,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.module_base import SECONDS
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.secrets import kubeconfig_secrets


class ClusterMoveCheck(KubernetesModule):
    """The options; the work is the runner's, given what was asked."""

    argument_spec = dict(
        name=dict(type="str", required=True),
        namespace=dict(type="str", default="default"),
        api_version=dict(type="str", choices=["v1beta1", "v1beta2"]),
        target_kubeconfig=dict(type="raw", required=True),
        target_context=dict(type="str"),
        timeout=dict(type="int", default=60),
    )
    number_ranges = dict(timeout=SECONDS)

    @staticmethod
    def hidden_values(params: Mapping[str, Any]) -> set[str]:
        return kubeconfig_secrets(params) | kubeconfig_secrets({"kubeconfig": (params or {}).get("target_kubeconfig")})

    def run(self) -> None:
        options = ClusterMoveCheckOptions.from_params(self.params)
        ClusterMoveCheckRunner(self, options).run()


def main() -> None:
    ClusterMoveCheck()()


if __name__ == "__main__":
    main()
