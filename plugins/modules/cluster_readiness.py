#!/usr/bin/python
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
module: cluster_readiness
short_description: Is a Cluster API cluster on OpenStack fit for a control-plane rollout or an upgrade?
version_added: 0.1.0
description:
  - Reports, before a change, what could make it unsafe, each as a finding with a C(severity) (C(info),
    C(warning), C(critical)), the numbers and what to do. Read only.
  - 'C(versions): the providers as installed, from clusterctl''s inventory (C(providers.clusterctl.cluster.x-k8s.io/v1alpha3))
    and the images of their controller Deployments where they may be listed; whether Cluster API is still
    supported (v1.10 and v1.11 are out of support; the table, with its source and date, is returned as
    RV(support)); a provider whose inventory version and controller image disagree.'
  - 'C(orc): whether CAPO v0.12 or later has ORC (openstack-resource-controller) beside it: its API group
    C(openstack.k-orc.cloud) served, a provider or a controller image of it.'
  - 'C(monitor): how long a dead member keeps traffic on the API load balancer''s pool (health monitor C(delay) x
    C(max_retries_down)) against O(monitor_max_window); needs an OpenStack connection. The same computation as
    the control_plane_rollout role''s preflight (which reads it from here). On C(ovn) it says the checks are OVN''s
    own service monitor (the same window).'
  - 'C(load_balancer): the API load balancer''s C(provider) (one more OpenStack request) and what it means for a
    rollout, as one finding: how rollout_guard''s drain takes a member out of rotation there (C(amphora): weight
    0; C(ovn): C(admin_state_up) false, as ovn-octavia-provider ignores weights), whether it can fail over
    (C(ovn) refuses a failover), or, for a provider the guard does not know, that it refuses C(drain=true).'
  - 'C(control_plane): KubeadmControlPlane replicas and rollout strategy (a single replica with C(maxSurge: 0)
    means downtime). C(health_checks): MachineHealthChecks that cover control-plane Machines (they could
    remediate one in the middle of a guarded rollout). C(v1beta1_writers): objects of Cluster API''s own groups
    last written in v1beta1 (C(metadata.managedFields)), which stops being served in v1.16.'
  - A view the module cannot complete (a forbidden kind, a kind or CRD that is not served, no OpenStack
    connection) is C(unknown) in RV(views) and a C(<view>_unknown) finding, never fine.
  - Fails only on findings the user marks as blocking (O(fail_on), O(fail_on_severity)); by default it reports
    every finding and fails on none.
  - Without O(name) (a control plane outside Cluster API) only the pool's health monitor (O(pool)) is judged.
author:
  - flightcontrol.openstack maintainers (@flightcontrol)
options:
  name:
    description:
      - Name of the Cluster API C(Cluster). Without it only the C(monitor) and C(load_balancer) views of O(pool)
        are judged.
    type: str
  namespace:
    description:
      - Namespace of the C(Cluster).
    type: str
    default: default
  pool:
    description:
      - The Octavia pool (name or id) in front of the API servers. By default CAPO's pool of the
        C(OpenStackCluster)'s API load balancer (C(status.apiServerManagedLoadBalancer) in CAPO's v1beta2 API,
        C(status.apiServerLoadBalancer) in v1beta1), C(<load balancer name>-<port>) with CAPO's API server port
        (the OpenStackCluster's C(spec.controlPlaneEndpoint.port), else C(spec.apiServer.port) or
        C(spec.apiServerPort), else 6443).
      - Setting it asks for the C(monitor) and C(load_balancer) views (an OpenStack connection is needed).
    type: str
  monitor_max_window:
    description:
      - Seconds a dead member may keep taking traffic (health monitor C(delay) x C(max_retries_down)) before the
        C(monitor_window_long) finding is reported.
    type: int
    default: 30
  fail_on:
    description:
      - Finding codes that block (the module fails when one is found). C(unknown) stands for every view that
        could not be read (C(versions_unknown), C(monitor_unknown), ...). A code no finding has is refused.
      - 'Codes: C(capi_out_of_support), C(capi_version_unknown), C(provider_image_mismatch),
        C(controller_images_unknown), C(orc_missing), C(kcp_single_replica_no_surge), C(kcp_single_replica),
        C(kcp_no_surge), C(mhc_covers_control_plane), C(v1beta1_writers), C(monitor_missing),
        C(monitor_window_long), C(lb_provider), C(lb_provider_drain_refused), C(topology_managed),
        C(topology_upgrading), and C(<view>_unknown) for each view.'
    type: list
    elements: str
    default: []
  fail_on_severity:
    description:
      - Every finding of this severity or a higher one blocks. Unset, no severity blocks.
    type: str
    choices: [info, warning, critical]
  timeout:
    description:
      - Seconds the reads may take, retries of transient API faults included.
    type: int
    default: 60
extends_documentation_fragment:
  - flightcontrol.openstack.openstack_auth
  - flightcontrol.openstack.kubernetes_dict
notes:
  - The OpenStack connection is optional. Without O(cloud), O(auth), C(OS_CLOUD) or O(pool) the C(monitor) and
    C(load_balancer) views are unknown (C(info) findings).
attributes:
  check_mode:
    support: full
    description: Reads only.
  diff_mode:
    support: none
    description: Changes nothing.
'''

EXAMPLES = r'''
- name: Report, fail on nothing
  flightcontrol.openstack.cluster_readiness:
    cloud: production
    name: prod-eu-1
    namespace: clusters
    kubernetes:
      kubeconfig: /etc/flightcontrol/management.kubeconfig
  register: readiness

- name: What a person should read
  ansible.builtin.debug:
    msg: "{{ readiness.summary }}"

- name: Refuse to start on critical findings, on a long monitor window, and on anything that could not be read
  flightcontrol.openstack.cluster_readiness:
    cloud: production
    name: prod-eu-1
    namespace: clusters
    kubernetes:
      kubeconfig: /etc/flightcontrol/management.kubeconfig
    fail_on_severity: critical
    fail_on: [monitor_window_long, unknown]
    monitor_max_window: 20

- name: Only the health monitor of a pool (a control plane outside Cluster API)
  flightcontrol.openstack.cluster_readiness:
    cloud: production
    pool: k8s-api-6443
'''

RETURN = r'''
findings:
  description: Every finding, with C(code), C(severity) (info, warning, critical), C(view), C(message),
    C(action) (what to do), C(numbers) (the values it rests on) and C(blocking).
  returned: success and blocking failures
  type: list
  elements: dict
  sample:
    - code: kcp_single_replica_no_surge
      severity: critical
      view: control_plane
      message: "KubeadmControlPlane c1-control-plane has a single replica and maxSurge 0: ..."
      action: set the rollout strategy's maxSurge to 1 (or scale to 3 replicas) before the rollout
      numbers: {replicas: 1, max_surge: 0, strategy: RollingUpdate}
      blocking: false
views:
  description: Per view (versions, orc, monitor, load_balancer, control_plane, health_checks, v1beta1_writers) its
    C(status) (C(ok), C(findings), C(unknown), C(skipped)) and, when unknown, the C(reason).
  returned: success and blocking failures
  type: dict
blocking:
  description: The codes of the blocking findings.
  returned: success and blocking failures
  type: list
  elements: str
ready:
  description: True when no finding blocks.
  returned: success and blocking failures
  type: bool
summary:
  description: One line for a person, then one line per finding (most severe first) with what to do.
  returned: success and blocking failures
  type: list
  elements: str
providers:
  description: clusterctl's Provider objects as C(name), C(type), C(namespace), C(version), and C(images) of
    their controller Deployments (null when Deployments could not be listed).
  returned: with O(name)
  type: list
  elements: dict
orc:
  description: C(present) (true, false, or null when unknown or not needed), C(seen) (where ORC was seen) and
    C(capo_version).
  returned: with O(name)
  type: dict
control_plane:
  description: The KubeadmControlPlane's C(kind), C(name), C(replicas), C(strategy), C(max_surge) (1 when
    unset, KCP's default) and C(max_surge_set); null when unknown.
  returned: with O(name)
  type: dict
topology:
  description:
    - Whether the Cluster is managed through a ClusterClass and by which class (C(managed), C(class),
      C(class_namespace), C(version), C(control_plane_version), C(upgrading), C(control_plane_replicas),
      C(rollout_after)), as cluster_info returns it. A topology-managed cluster gives the C(topology_managed) finding
      (info, in the control_plane view; the topology controller owns the control plane's spec, so a change starts
      through the Cluster) and, while the Cluster asks for another Kubernetes version than its control plane runs,
      C(topology_upgrading) (warning).
  returned: with O(name)
  type: dict
machine_health_checks:
  description: MachineHealthChecks of the namespace, each with C(name) and the C(control_plane_machines) it covers.
  returned: with O(name)
  type: list
  elements: dict
v1beta1_writers:
  description: Objects last written in v1beta1, with C(object), C(manager), C(operation), C(time), C(api_version).
  returned: with O(name)
  type: list
  elements: dict
monitor:
  description: The pool's C(health_monitor) (id, name, type, delay, timeout, max_retries, max_retries_down,
    admin_state_up; null without one), C(window) (seconds, C(delay x max_retries_down)), C(limit), C(finding)
    (empty when within the limit) and C(pool); null when the view is unknown.
  returned: success and blocking failures
  type: dict
load_balancer:
  description: The API pool's load balancer as C(id), C(name), C(provider), C(drain_method) (C(weight),
    C(admin_state), or null when rollout_guard refuses to drain on that provider), C(failover) (true, false, or
    null when not known) and C(pool); null when the view is unknown.
  returned: success and blocking failures
  type: dict
  sample: {id: 5d1c..., name: k8s-clusterapi-cluster-clusters-prod-eu-1-kubeapi, provider: ovn,
           drain_method: admin_state, failover: false, pool: k8s-clusterapi-cluster-clusters-prod-eu-1-kubeapi-6443}
support:
  description: The support table the versions are judged by, with its C(source) and the date it was C(checked).
  returned: success and blocking failures
  type: dict
api_calls:
  description: HTTP requests sent to the Kubernetes and OpenStack APIs, retries and authentication requests included.
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

from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.openstack_module_base import (
    OpenStackKubernetesModule,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.cluster_readiness.runner import (
    ClusterReadinessOptions,
    ClusterReadinessRunner,
    openstack_given,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.module_base import SECONDS


class ClusterReadiness(OpenStackKubernetesModule):
    """The options; the work is the runner's, given what was asked."""

    argument_spec = dict(
        name=dict(type="str"),
        namespace=dict(type="str", default="default"),
        pool=dict(type="str"),
        monitor_max_window=dict(type="int", default=30),
        fail_on=dict(type="list", elements="str", default=[]),
        fail_on_severity=dict(type="str", choices=["info", "warning", "critical"]),
        timeout=dict(type="int", default=60),
    )
    number_ranges = dict(timeout=SECONDS, monitor_max_window=SECONDS)
    module_kwargs = dict(required_one_of=[("name", "pool")])

    def run(self) -> None:
        options = ClusterReadinessOptions.from_params(self.params, openstack=openstack_given(self.params))
        ClusterReadinessRunner(self, options).run()


def main() -> None:
    ClusterReadiness()()


if __name__ == "__main__":
    main()
