#!/usr/bin/python
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
module: cluster_pause_ack
short_description: Pause or unpause a Cluster API cluster and wait until every controller has acknowledged it
version_added: 0.1.0
description:
  - Sets (or clears) C(spec.paused) on a Cluster API C(Cluster), then waits until the pause is
    acknowledged across the cluster's objects. Setting the field is instant; controllers seeing it is
    not. Providers that reconcile out of band keep writing for a while, and a C(clusterctl move), a
    backup or manual surgery that starts meanwhile races them.
  - 'An object counts as acknowledged, strongest evidence first: no C(clusterctl.cluster.x-k8s.io/block-move)
    annotation on it (while it is set, its provider is still working, whatever else it reports);
    its C(Paused) condition C(True) with an C(observedGeneration) that has caught up with the object
    (CAPI core since v1.9; on v1beta1 objects the condition lives under C(status.v1beta2.conditions),
    where M(kubernetes.core.k8s) C(wait_condition) cannot see it; on v1beta2 objects under C(status.conditions));
    a block-move annotation seen during the wait that went away; or, for objects whose provider reports
    nothing (Cluster API Provider OpenStack), no write to the object for I(quiet_period) seconds.'
  - I(state=unpaused) clears C(spec.paused) and waits until every object reporting a C(Paused) condition
    reports it C(False). An object that carries its own C(cluster.x-k8s.io/paused) annotation stays paused
    and is named as a blocker.
  - Idempotent; C(changed) is true only when this task set or cleared C(spec.paused). When the wait
    fails, the result still says what was changed (C(changed), C(cluster.paused)) and what was not
    acknowledged; the pause is left as set, never rolled back behind the user's back.
  - 'An unpause is refused (nothing is written) while an object in scope carries the
    C(clusterctl.cluster.x-k8s.io/block-move) annotation (its provider is still pausing, and a C(clusterctl move)
    may be waiting for it) or C(clusterctl.cluster.x-k8s.io/delete-for-move) (the move is deleting the source''s
    objects): unpausing then lets controllers act in the middle of a move. I(force=true) unpauses anyway.'
  - A Cluster whose C(infrastructureRef) or C(controlPlaneRef) names an API group (or version) the API does not
    serve is refused before any write, naming the reference and the group.
  - A failure after C(spec.paused) was written (a read of the wait that keeps failing, say) still says
    C(changed=true), and carries C(cluster) and C(writes).
  - C(clusterctl move) v1.12 and later refuses to move a cluster that is already paused (it pauses and
    waits for block-move itself). Use this module around a move only with older clusterctl, or to
    acknowledge the unpause on the target after the move.
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
  state:
    description:
      - C(paused) sets C(spec.paused=true) and waits for the acknowledgement; C(unpaused) clears it and
        waits for the reverse.
    type: str
    choices: [paused, unpaused]
    default: paused
  wait:
    description:
      - Wait for the acknowledgement. With C(false) the module sets the field and reports how far each
        object is, without waiting.
    type: bool
    default: true
  quiet_period:
    description:
      - Seconds without any write to an object whose provider reports neither a C(Paused) condition nor a
        block-move annotation, before its pause counts as acknowledged. Counted from the moment the pause
        was set at the earliest (from the start of the task when the cluster was already paused).
      - The default, 30 seconds, outlasts an in-flight reconcile of Cluster API Provider OpenStack, whose
        OpenStack calls each time out well within it, and costs a paused cluster half a minute.
      - When polling, polls happen at least twice per quiet period, whatever I(poll_interval) says, so no write
        is missed.
    type: float
    default: 30
  scope:
    description:
      - C(move) waits for every reconciled object of the cluster, as C(clusterctl move) would take them
        (every object of the Cluster API groups labelled C(cluster.x-k8s.io/cluster-name), templates aside),
        plus the Cluster's references.
      - C(cluster) waits for the C(Cluster), its infrastructure cluster and its control plane only.
    type: str
    choices: [move, cluster]
    default: move
  api_version:
    description:
      - The Cluster API contract version to read the objects in. By default v1beta2 when the API serves
        it, else v1beta1.
    type: str
    choices: [v1beta1, v1beta2]
  force:
    description:
      - With I(state=unpaused), clear C(spec.paused) even while an object in scope carries the block-move or
        delete-for-move annotation of C(clusterctl move) (see the description). Without it such an unpause is
        refused with the objects named.
    type: bool
    default: false
  timeout:
    description:
      - How long to wait for the acknowledgement, in seconds, before failing. Lookups and retries of
        transient API faults count against it.
    type: int
    default: 300
  poll_interval:
    description:
      - Seconds between two polls, when the objects are read at every poll (see I(use_watch)); with a watch the
        objects are judged at every event and every quarter of a second.
    type: float
    default: 2
extends_documentation_fragment:
  - flightcontrol.openstack.kubernetes_auth
  - flightcontrol.openstack.kubernetes_watch
attributes:
  check_mode:
    support: full
    description: Makes no write request; reports whether C(spec.paused) would change and how each object stands.
  diff_mode:
    support: full
    description: Shows C(spec.paused) before and after.
'''

EXAMPLES = r'''
- name: Pause the cluster and wait until CAPI core and the provider have stopped
  flightcontrol.openstack.cluster_pause_ack:
    name: prod-eu-1
    namespace: clusters
    state: paused
    timeout: 600

- name: Unpause after maintenance, with a kubeconfig and context
  flightcontrol.openstack.cluster_pause_ack:
    kubeconfig: ~/.kube/management.yaml
    context: mgmt
    name: prod-eu-1
    namespace: clusters
    state: unpaused

- name: Gate an AWX job on the pause, only the Cluster and its direct references
  flightcontrol.openstack.cluster_pause_ack:
    name: prod-eu-1
    namespace: clusters
    scope: cluster
    quiet_period: 60
  register: pause

- name: Show what acknowledged how
  ansible.builtin.debug:
    msg: "{{ pause.objects | map(attribute='how') | list }}"
'''

RETURN = r'''
extends_documentation_fragment:
  - flightcontrol.openstack.kubernetes_watch
cluster:
  description: The Cluster and its pause state.
  returned: when the Cluster was found
  type: dict
  contains:
    name: {description: Name., type: str}
    namespace: {description: Namespace., type: str}
    api_version: {description: The version the objects were read in., type: str}
    paused_before: {description: C(spec.paused) when the task started., type: bool}
    paused: {description: 'C(spec.paused) now: as set by this task, unless in check mode.', type: bool}
acknowledged:
  description: Whether every object acknowledged the wanted state.
  returned: when the Cluster was found
  type: bool
objects:
  description: Every object waited for, with how its acknowledgement was seen or what it still waits for.
  returned: when the Cluster was found
  type: list
  elements: dict
  contains:
    kind: {description: Kind., type: str}
    api_version: {description: apiVersion it was read in., type: str}
    namespace: {description: Namespace., type: str}
    name: {description: Name., type: str}
    acknowledged: {description: Acknowledged., type: bool}
    how: {description: The evidence of the acknowledgement., type: str}
    waiting_for: {description: What still blocks it (null once acknowledged)., type: str}
    paused_condition: {description: The Paused condition and where it was found (null when not reported)., type: dict}
    block_move: {description: Whether the block-move annotation is set., type: bool}
    deleting: {description: Whether the object is being deleted., type: bool}
    last_write_age: {description: Seconds since the wait last saw the object change., type: float}
  sample:
    - kind: OpenStackCluster
      api_version: infrastructure.cluster.x-k8s.io/v1beta1
      namespace: clusters
      name: prod-eu-1
      acknowledged: false
      how: null
      waiting_for: the clusterctl.cluster.x-k8s.io/block-move annotation is still set (its provider has not finished)
      paused_condition: null
      block_move: true
      deleting: false
      last_write_age: 3.5
blockers:
  description: C(Kind namespace/name) of each object not acknowledged.
  returned: when the Cluster was found
  type: list
  elements: str
polls:
  description: How many times the objects were judged. When polling, each time they were read; with a watch,
    each time an event arrived or a quiet period could have ended (read from the watch, no request).
  returned: when the Cluster was found
  type: int
moving:
  description: When an unpause was refused, the objects that carry the block-move or delete-for-move annotation,
    as C(Kind namespace/name) followed by the annotation in parentheses.
  returned: when an unpause was refused for a move under way
  type: list
  elements: str
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
timed_out:
  description: Whether the wait ran out of time.
  returned: when the Cluster was found
  type: bool
elapsed:
  description: Seconds the task took.
  returned: always
  type: float
api_calls:
  description: HTTP requests sent to the Kubernetes API, retries and authentication requests included.
  returned: always
  type: int
retried_faults:
  description: Transient faults that were retried (HTTP status or C(connection)).
  returned: always
  type: list
  elements: raw
'''

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.module_base import POLL_SECONDS, SECONDS
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.module_base import KubernetesModule
from ansible_collections.flightcontrol.openstack.plugins.module_utils.cluster_pause_ack.runner import (
    PauseAckOptions,
    PauseAckRunner,
)


class ClusterPauseAck(KubernetesModule):
    """The options; the work is the runner's, given what was asked."""

    argument_spec = dict(
        name=dict(type="str", required=True),
        namespace=dict(type="str", default="default"),
        state=dict(type="str", default="paused", choices=["paused", "unpaused"]),
        wait=dict(type="bool", default=True),
        quiet_period=dict(type="float", default=30),
        scope=dict(type="str", default="move", choices=["move", "cluster"]),
        api_version=dict(type="str", choices=["v1beta1", "v1beta2"]),
        timeout=dict(type="int", default=300),
        poll_interval=dict(type="float", default=2),
        use_watch=dict(type="bool", default=True),
        force=dict(type="bool", default=False),
    )
    number_ranges = dict(timeout=SECONDS, quiet_period=SECONDS, poll_interval=POLL_SECONDS)

    def run(self) -> None:
        options = PauseAckOptions.from_params(self.params, check_mode=self.ansible.check_mode)
        PauseAckRunner(self, options).run()


def main() -> None:
    ClusterPauseAck()()


if __name__ == "__main__":
    main()
