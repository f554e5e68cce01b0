#!/usr/bin/python
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
module: cluster_lease
short_description: Hold the Lease that lets one actor at a time change a Cluster API cluster
version_added: 0.1.0
description:
  - Takes, renews or releases a C(coordination.k8s.io/v1) C(Lease) named C(flightcontrol-<name>) in the cluster's
    namespace on the management cluster. Every entry point of the collection that changes a cluster (the roles
    control_plane_rollout, cluster_move and flight_check's repairs, and through them the fleet playbooks and the
    rulebooks) holds it while it acts, so that a rulebook's run, an AWX job (or one of its slices) and a hand-run
    playbook never act on one cluster at the same time.
  - The Lease's C(spec.holderIdentity) is I(holder.id); the holder's details (AWX job id, host, playbook,
    rulebook, action) are its annotations C(flightcontrol.openstack/<detail>), named in the message a second actor
    gets.
  - 'I(state=held): a free Lease (none, or released) is taken; our own (the same I(holder.id)) is renewed: its
    C(renewTime) moves to now and its duration becomes I(lease_duration); one held by another actor is taken over
    only once expired (C(renewTime) + C(leaseDurationSeconds) in the past, by this host''s clock), and the result
    names the old holder (RV(taken_over_from)). A live one held by another actor fails the task at once naming the
    holder, or with I(wait=true) is waited for up to I(timeout).'
  - Every write is made on what was just read, with the API's own concurrency control. A create is refused
    (409 AlreadyExists) when another actor created the Lease first, an update carries the C(resourceVersion) read
    and is refused (409 Conflict) when another actor wrote in between. A refused write is read again and decided
    again, so of two actors racing for a free Lease exactly one holds it.
  - I(state=released) clears C(spec.holderIdentity) of our own Lease (on its C(resourceVersion)), so the next actor
    takes it at once. A Lease held by another actor is left as it is, with a warning (ours had expired and was
    taken over).
  - An unreachable management cluster fails the task, naming the Lease and the cluster; an actor that cannot renew
    its Lease stops before its next step rather than act without it.
author:
  - flightcontrol.openstack maintainers (@flightcontrol)
options:
  name:
    description:
      - Name of the Cluster API C(Cluster) the Lease is for. The Lease is C(flightcontrol-<name>).
    type: str
    required: true
  namespace:
    description:
      - Namespace of the C(Cluster); the Lease lives there too.
    type: str
    default: default
  state:
    description:
      - C(held) takes or renews the Lease; C(released) gives it up.
    type: str
    choices: [held, released]
    default: held
  holder:
    description:
      - Who holds the Lease.
    type: dict
    required: true
    suboptions:
      id:
        description:
          - C(spec.holderIdentity), one per run, the same in every task of the run (its renewals and its release
            match on it), different for every other run. The roles make one per run.
        type: str
        required: true
      job_id:
        description:
          - The AWX (automation controller) job id. By default the C(JOB_ID) environment variable AWX sets for the
            playbook it runs, when set.
        type: str
      host:
        description:
          - Where the actor runs. By default this host's name.
        type: str
      playbook:
        description:
          - The playbook acting.
        type: str
      rulebook:
        description:
          - The rulebook that started the playbook, when one did.
        type: str
      action:
        description:
          - What the actor does (C(control_plane_rollout), C(cluster_move), C(flight_check repairs)).
        type: str
  lease_duration:
    description:
      - Seconds the Lease stays live after each take or renewal. Another actor takes it over only after that
        much time without a renewal, so make it longer than the longest step between two renewals (a role
        renews it before and after each long step, with a duration covering that step's own timeout).
    type: int
    default: 300
  wait:
    description:
      - While another actor holds a live Lease, wait (up to I(timeout)) instead of failing at once.
    type: bool
    default: false
  timeout:
    description:
      - Seconds the whole task may take, its requests included; with I(wait=true) also how long it waits for
        another actor's Lease before failing naming its holder.
    type: int
    default: 60
    aliases: [wait_timeout]
  poll_interval:
    description:
      - Seconds between two reads of the Lease while waiting.
    type: float
    default: 5
  honour_halt:
    description:
      - Before taking the Lease (not before renewing this actor's own), read the fleet's halt record, the ConfigMap
        C(flightcontrol-fleet-halt) in I(halt_namespace), and fail naming it while it exists. A fleet run whose wave
        failed more than its budget writes it (M(flightcontrol.openstack.fleet_wave)); it is lifted only by
        C(playbooks/fleet_resume.yml) or C(kubectl delete configmap -n <halt_namespace> flightcontrol-fleet-halt).
      - Needs C(get) on C(configmaps) in I(halt_namespace).
    type: bool
    default: true
  halt_namespace:
    description:
      - Namespace of the fleet's halt record on the management cluster.
    type: str
    default: default
  renew_only:
    description:
      - With I(state=held), only renew this actor's own Lease (the same I(holder.id), live or expired). A Lease
        that is not this actor's any more (deleted, released, or held by another actor, which took it over once it
        expired) fails the task naming it, instead of being taken again; another actor may have changed the
        cluster since this actor last renewed it. The fleet's halt is not read (a renewal takes no Lease).
      - The roles renew their Lease between their steps with it; their first step takes it without.
      - Not judged in check mode, where no Lease was taken.
    type: bool
    default: false
notes:
  - 'See the holder: C(kubectl get lease -n <namespace> flightcontrol-<name> -o yaml). Remove a Lease whose
    holder is known to be gone: C(kubectl delete lease -n <namespace> flightcontrol-<name>) (docs/fleet.md, "One
    actor per cluster").'
extends_documentation_fragment:
  - flightcontrol.openstack.kubernetes_auth
attributes:
  check_mode:
    support: full
    description: Takes no Lease and releases none; reads the Lease and reports what would be done (RV(would)).
  diff_mode:
    support: none
    description: A Lease is coordination, not configuration; there is nothing to show as a diff.
'''

EXAMPLES = r'''
- name: Take the cluster's lease, or fail naming who holds it
  flightcontrol.openstack.cluster_lease:
    name: prod-eu-1
    namespace: clusters
    holder:
      id: "{{ run_id }}"
      playbook: maintenance.yml
    lease_duration: 300

- name: Wait up to ten minutes for another actor to finish
  flightcontrol.openstack.cluster_lease:
    name: prod-eu-1
    namespace: clusters
    holder: {id: "{{ run_id }}"}
    wait: true
    timeout: 600

- name: Give it up
  flightcontrol.openstack.cluster_lease:
    name: prod-eu-1
    namespace: clusters
    holder: {id: "{{ run_id }}"}
    state: released
'''

RETURN = r'''
lease:
  description: The Lease.
  returned: success, and when another actor holds the Lease
  type: dict
  contains:
    name:
      description: Name (C(flightcontrol-<cluster>)).
      type: str
    namespace:
      description: Namespace (the cluster's).
      type: str
holder:
  description: Who holds the Lease now (this actor after a take or renewal; the other actor when it holds it); null
    when nobody does.
  returned: success, and when another actor holds the Lease
  type: dict
  contains:
    id:
      description: C(spec.holderIdentity).
      type: str
    description:
      description: The holder in words (AWX job id, host, playbook or rulebook).
      type: str
    job_id:
      description: AWX job id, when there is one.
      type: str
    host:
      description: Where the holder runs.
      type: str
    playbook:
      description: The holder's playbook.
      type: str
    rulebook:
      description: The rulebook that started it.
      type: str
    action:
      description: What the holder does.
      type: str
    acquired_at:
      description: C(spec.acquireTime).
      type: str
    renewed_at:
      description: C(spec.renewTime).
      type: str
    lease_duration:
      description: C(spec.leaseDurationSeconds).
      type: int
    expires_in:
      description: Seconds until the Lease expires unless renewed (negative once expired).
      type: float
  sample:
    id: fc-3f9a2c71
    description: AWX job 41 (host awx-ee-7d9, playbook fleet_rollout.yml, holder fc-3f9a2c71)
    job_id: "41"
    host: awx-ee-7d9
    playbook: fleet_rollout.yml
    acquired_at: "2026-05-01T10:00:00.000000Z"
    renewed_at: "2026-05-01T10:04:00.000000Z"
    lease_duration: 300
    expires_in: 299.9
acquired:
  description: Whether this task took the Lease (it was free, expired, or lost to nobody).
  returned: success, and when another actor holds the Lease
  type: bool
renewed:
  description: Whether this task renewed a Lease this actor already held.
  returned: success, and when another actor holds the Lease
  type: bool
released:
  description: Whether this task released the Lease.
  returned: success, and when another actor holds the Lease
  type: bool
taken_over_from:
  description: The holder of the expired Lease this task took over (in check mode, the one it would take over);
    null otherwise.
  returned: success, and when another actor holds the Lease
  type: dict
waited:
  description: Seconds spent waiting for another actor's Lease.
  returned: success, and when another actor holds the Lease
  type: float
polls:
  description: How many times the Lease was read and judged.
  returned: success, and when another actor holds the Lease
  type: int
halt:
  description: The fleet's halt record that stopped the task (run, wave, reason, failed, halted_at, by, namespace,
    name).
  returned: when the fleet is halted and the Lease was not this actor's already
  type: dict
would:
  description: In check mode, what taking the Lease would do (C(acquire), C(renew), C(take over), C(wait) or C(fail)).
  returned: in check mode with state=held
  type: str
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

import os
import socket

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.module_base import (
    MAX_SECONDS,
    NumberRange,
    POLL_SECONDS,
    SECONDS,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.module_base import KubernetesModule
from ansible_collections.flightcontrol.openstack.plugins.module_utils.cluster_lease.runner import (
    ClusterLeaseOptions,
    ClusterLeaseRunner,
)

#: A Lease lives from 5 seconds (tests) to 30 days.
LEASE_SECONDS = NumberRange(minimum=5, maximum=MAX_SECONDS, unit=" seconds")


class ClusterLease(KubernetesModule):
    """The options; the work is the runner's, given what was asked."""

    argument_spec = dict(
        name=dict(type="str", required=True),
        namespace=dict(type="str", default="default"),
        state=dict(type="str", default="held", choices=["held", "released"]),
        holder=dict(type="dict", required=True, options=dict(
            id=dict(type="str", required=True),
            job_id=dict(type="str"),
            host=dict(type="str"),
            playbook=dict(type="str"),
            rulebook=dict(type="str"),
            action=dict(type="str"),
        )),
        lease_duration=dict(type="int", default=300),
        wait=dict(type="bool", default=False),
        timeout=dict(type="int", default=60, aliases=["wait_timeout"]),
        poll_interval=dict(type="float", default=5),
        honour_halt=dict(type="bool", default=True),
        halt_namespace=dict(type="str", default="default"),
        renew_only=dict(type="bool", default=False),
    )
    number_ranges = dict(lease_duration=LEASE_SECONDS, timeout=SECONDS, poll_interval=POLL_SECONDS)

    def run(self) -> None:
        holder = dict(self.params["holder"])
        holder["job_id"] = holder.get("job_id") or os.environ.get("JOB_ID") or None
        holder["host"] = holder.get("host") or socket.gethostname()
        options = ClusterLeaseOptions.from_params(dict(self.params, holder=holder), check_mode=self.ansible.check_mode)
        ClusterLeaseRunner(self, options).run()


def main() -> None:
    ClusterLease()()


if __name__ == "__main__":
    main()
