#!/usr/bin/python
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
module: cluster_info
short_description: One normalized view of a Cluster API cluster, whichever contract version it is served in
version_added: 0.1.0
description:
  - Reads a Cluster API C(Cluster), its control plane, its infrastructure cluster and its Machines and
    returns them in one shape for the v1beta1 and the v1beta2 contracts, so a playbook can branch on
    C(cluster.provisioned) and C(cluster.ready) without knowing where the served version keeps them.
  - 'Provisioned: C(status.infrastructureReady) and C(status.controlPlaneReady) (v1beta1), or
    C(status.initialization.infrastructureProvisioned) and C(.controlPlaneInitialized) (v1beta2).
    Ready: the C(Available) condition where reported (v1beta2 conditions, on v1beta1 objects under
    C(status.v1beta2.conditions)), else the old C(Ready) condition. Failure fields where they still
    exist (C(status.failureReason) in v1beta1, C(status.deprecated.v1beta1) in v1beta2).'
  - C(blockers) lists, in plain sentences, why the cluster is not fit for a rollout or a move (paused,
    deleting, not provisioned, not ready, failed, a control-plane Machine being deleted or not ready);
    C(healthy) is true when there are none. A block-move annotation is no blocker (providers such as CAPZ
    keep it while they work on a healthy cluster, and clusterctl waits for it itself); see
    C(infrastructure.block_move).
  - Read only; runs the same in check mode.
author:
  - flightcontrol.openstack maintainers (@flightcontrol)
options:
  name:
    description:
      - Name of the Cluster API C(Cluster).
    type: str
    required: true
  namespace:
    description:
      - Namespace of the C(Cluster).
    type: str
    default: default
  api_version:
    description:
      - The Cluster API contract version to read the objects in. By default v1beta2 when the API serves
        it, else v1beta1. The result has the same shape either way.
    type: str
    choices: [v1beta1, v1beta2]
  timeout:
    description:
      - Seconds the reads may take, retries of transient API faults included.
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
- name: Read the cluster
  flightcontrol.openstack.cluster_info:
    name: prod-eu-1
    namespace: clusters
  register: info

- name: Stop unless the cluster is fit for a rollout
  ansible.builtin.assert:
    that: info.healthy
    fail_msg: "{{ info.blockers | join('; ') }}"

- name: The API load balancer and the control-plane nodes
  ansible.builtin.debug:
    msg: >-
      LB {{ info.infrastructure.api_server_load_balancer.id }} in front of
      {{ info.control_plane_machines | map(attribute='node_name') | list }}
'''

RETURN = r'''
cluster:
  description: The Cluster.
  returned: success
  type: dict
  contains:
    name: {description: Name., type: str}
    namespace: {description: Namespace., type: str}
    api_version: {description: apiVersion it was read in., type: str}
    phase: {description: status.phase., type: str}
    paused: {description: spec.paused or the paused annotation., type: bool}
    infrastructure_provisioned: {description: The infrastructure is provisioned (null when not reported)., type: bool}
    control_plane_initialized: {description: The control plane is initialized (null when not reported)., type: bool}
    provisioned: {description: Both of the above., type: bool}
    ready: {description: Available (v1beta2 conditions) or Ready (v1beta1 conditions) is True., type: bool}
    failure: {description: 'failureReason and failureMessage where the contract still has them, else null.', type: dict}
    deleting: {description: deletionTimestamp is set., type: bool}
    control_plane_endpoint: {description: spec.controlPlaneEndpoint., type: dict}
    conditions:
      description: Conditions with type, status, reason, message, observed_generation and where they were found.
      type: list
      elements: dict
control_plane:
  description: The control plane object (KubeadmControlPlane) with replicas, readiness and version; null without one.
  returned: success
  type: dict
infrastructure:
  description:
    - The infrastructure cluster (OpenStackCluster) with C(provisioned), C(ready), C(api_server_load_balancer)
      (id, name, ip, internal_ip, allowed_cidrs; null when it reports none) and C(api_server_pool) (CAPO's API pool,
      C(<load balancer name>-<API server port>)); null without one.
    - The load balancer is read in either of CAPO's API versions (C(status.apiServerManagedLoadBalancer) in v1beta2,
      C(status.apiServerLoadBalancer) in v1beta1). An OpenStackCluster naming two different load balancers gives
      none, C(api_server_load_balancer_error) says why and it is one of the C(blockers).
  returned: success
  type: dict
control_plane_machines:
  description: The control-plane Machines, oldest first, with phase, node_name, addresses, provider_id, ready,
    deleting, deletion_hooks and failure.
  returned: success
  type: list
  elements: dict
machines:
  description: All Machines of the cluster, control plane first, in the same shape.
  returned: success
  type: list
  elements: dict
blockers:
  description: Why the cluster is not fit for a change, one sentence each.
  returned: success
  type: list
  elements: str
  sample: ["Cluster clusters/prod-eu-1 is paused"]
healthy:
  description: True when there are no blockers.
  returned: success
  type: bool
topology:
  description:
    - Whether the Cluster is managed through a ClusterClass (has C(spec.topology)) and by which class. On such a
      cluster the topology controller owns the control plane's spec - a rollout starts through the Cluster
      (C(spec.topology.controlPlane.rollout.after), Cluster API v1.13 and later) and a Kubernetes upgrade through
      C(spec.topology.version); rollout_guard does so itself.
  returned: success
  type: dict
  contains:
    managed:
      description: The Cluster has C(spec.topology).
      type: bool
    class:
      description: The ClusterClass (v1beta2 C(classRef.name), v1beta1 C(class)); null when not managed.
      type: str
    class_namespace:
      description: The ClusterClass's namespace (the Cluster's when not given); null when not managed.
      type: str
    version:
      description: C(spec.topology.version), the Kubernetes version the Cluster asks for.
      type: str
    control_plane_version:
      description: The control plane's C(spec.version) as the topology controller wrote it.
      type: str
    upgrading:
      description: The two versions differ (the topology controller is taking the control plane to the new one).
      type: bool
    control_plane_replicas:
      description: C(spec.topology.controlPlane.replicas).
      type: int
    rollout_after:
      description: C(spec.topology.controlPlane.rollout.after) (Cluster API v1.13 and later); null when unset.
      type: str
  sample:
    managed: true
    class: in-memory
    class_namespace: default
    version: v1.34.0
    control_plane_version: v1.34.0
    upgrading: false
    control_plane_replicas: 3
    rollout_after: null
api_calls:
  description: HTTP requests sent to the Kubernetes API, retries and authentication requests included.
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

from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.module_base import KubernetesModule
from ansible_collections.flightcontrol.openstack.plugins.module_utils.cluster_info.runner import (
    ClusterInfoOptions,
    ClusterInfoRunner,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.module_base import SECONDS


class ClusterInfo(KubernetesModule):
    """The options; the work is the runner's, given what was asked."""

    argument_spec = dict(
        name=dict(type="str", required=True),
        namespace=dict(type="str", default="default"),
        api_version=dict(type="str", choices=["v1beta1", "v1beta2"]),
        timeout=dict(type="int", default=60),
    )
    number_ranges = dict(timeout=SECONDS)

    def run(self) -> None:
        options = ClusterInfoOptions.from_params(self.params)
        ClusterInfoRunner(self, options).run()


def main() -> None:
    ClusterInfo()()


if __name__ == "__main__":
    main()
