#!/usr/bin/python
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
module: fleet_wave
short_description: Waves of a fleet change with a gate between them, shared by every executor of the run
version_added: 0.1.0
description:
  - Plans and keeps the waves of a fleet run (C(playbooks/fleet_rollout.yml)) on the management cluster, so that
    any number of executors (AWX job slices, each with a slice of the inventory) follow one global order, each
    wave starts only once the whole fleet's previous wave passed its gate, and a wave that failed above its
    budget halts the fleet for every actor.
  - 'Records (ConfigMaps in I(records_namespace)): C(flightcontrol-fleet-run-<run>) holds the run''s plan (C(plan),
    JSON) and each cluster''s outcome (C(outcomes), JSON); C(flightcontrol-fleet-halt) is the fleet''s halt. Every
    write is made on the C(resourceVersion) just read (409 read again and applied again).'
  - 'I(action=plan): orders I(clusters) (the whole fleet: canaries, those with I(canary_label), first, then the
    inventory''s order) and cuts the waves of I(waves); refuses waves that do not cover the fleet, a percentage
    over 100, a negative I(soak), a budget above its wave''s size, before any write. The first executor records
    the plan; the others adopt it (a different plan is refused). Returns this executor''s clusters (I(mine)) in
    the fleet''s order with their wave.'
  - 'I(action=await): before starting I(cluster): waits until every earlier wave of the whole fleet passed (each of
    its clusters finished, failures within budget); fails at once when the fleet is halted, or after I(timeout).'
  - 'I(action=record): after I(cluster): records its I(outcome); with I(gate) (the signals measured after the soak)
    a C(done) cluster whose gate fails is recorded C(failed). When its wave''s failures exceed the wave''s budget
    the fleet is halted.'
  - I(action=status) returns the summary (a line per wave); I(action=lift) removes the halt (with
    I(retry_failed), the failed clusters of the halted run are forgotten, so that the run retries them; without,
    they stay failed but no longer count against their wave).
  - 'A run is halted by its own record too: while a wave of it holds more failures than its budget, no cluster of
    it starts (I(action=await) fails), even when the halt record was deleted by hand mid-wave. I(action=lift)
    with this I(run) lifts both.'
author:
  - flightcontrol.openstack maintainers (@flightcontrol)
options:
  action:
    description:
      - What to do (see the description).
    type: str
    choices: [plan, await, record, status, lift]
    required: true
  run:
    description:
      - The fleet run, the same for every executor (slice) of it; lower-case letters, digits and C(-). The
        fleet playbook uses C(awx-wf-<awx_workflow_job_id>) (the workflow job of a sliced job) when AWX gives it.
    type: str
    required: true
  records_namespace:
    description:
      - Namespace of the run's record and of the halt on the management cluster.
    type: str
    default: default
  clusters:
    description:
      - Without I(discover), the whole fleet (every slice's clusters), each C(host) with its C(labels).
        I(action=plan).
      - With I(discover), the clusters this executor's inventory sees; each must be in the fleet read from the
        management cluster (else the filters differ from the inventory source's, and the plan is refused).
    type: list
    elements: dict
  discover:
    description:
      - 'Read the whole fleet from the management cluster, as the C(capi_clusters) inventory source lists it with
        the same filters, whatever slice of the inventory this executor was given (an AWX sliced job gives each
        slice an inventory holding only its own hosts). I(action=plan).'
    type: dict
    suboptions:
      namespaces:
        description:
          - The inventory source's C(namespaces); all namespaces when empty.
        type: list
        elements: str
      label_selector:
        description:
          - The inventory source's C(label_selector).
        type: str
      hostname_format:
        description:
          - The inventory source's C(hostname_format).
        type: str
        default: '{namespace}/{name}'
      api_version:
        description:
          - The inventory source's C(api_version) (the Cluster API contract); the newest served when empty.
        type: str
      hosts:
        description:
          - 'The play''s host pattern over the inventory''s default groups (C(capi_namespace_<namespace>),
            C(capi_phase_<phase>), C(capi_label_<key>_<value>)) and host names: C(,) or C(:) between terms, C(&)
            an intersection, C(!) an exclusion, C(*) wildcards, C(~) a regular expression.'
        type: str
        default: capi_phase_provisioned
  mine:
    description:
      - The host names of this executor's slice. I(action=plan).
    type: list
    elements: str
  waves:
    description:
      - 'The waves: each entry a number of clusters (C(3): the next 3) or a share of the fleet (C("25%"): up to a
        quarter done, rounded up), e.g. C([1, 3, "25%", "100%"]). Empty waves are dropped; the waves must cover the
        fleet.'
    type: list
    elements: raw
  budgets:
    description:
      - Per wave, how many of its clusters may fail (their rollout or their gate) before the fleet halts; a number
        or a share of the wave (C("10%"), rounded down). Waves without an entry have 0.
    type: list
    elements: raw
  soak:
    description:
      - Seconds each cluster soaks after its rollout before its gate is measured (kept in the plan).
    type: int
    default: 0
  canary_label:
    description:
      - C(key) or C(key=value) of the Cluster label that marks canaries, planned first.
    type: str
    default: flightcontrol.openstack/canary
  cluster:
    description:
      - The cluster (its inventory host name) to wait for or record. I(action=await) and I(action=record).
    type: str
  outcome:
    description:
      - The cluster's outcome. I(action=record).
    type: str
    choices: [done, failed]
  reason:
    description:
      - Why it failed. I(action=record).
    type: str
  gate:
    description:
      - 'The signals measured after the soak: C(kcp) (C(replicas), C(ready_replicas)), C(machines) (C(name),
        C(ready)), C(members) (C(serving), C(message)), C(readyz) (C(status), C(message)), C(critical_before),
        C(critical_after) (codes of critical cluster_readiness findings). I(action=record).'
    type: dict
  started_at:
    description:
      - When the cluster started (seconds since the epoch, C(now) of I(action=await), as text). I(action=record).
    type: str
  by:
    description:
      - Who acts (AWX job, host, playbook), kept with the outcome and in a halt.
    type: str
  retry_failed:
    description:
      - With I(action=lift), forget the failed clusters of the halted run so that the next run retries them.
    type: bool
    default: true
  timeout:
    description:
      - Seconds the task may take; with I(action=await) how long it waits for the earlier waves.
    type: int
    default: 3600
  poll_interval:
    description:
      - Seconds between two reads while waiting.
    type: float
    default: 5
extends_documentation_fragment:
  - flightcontrol.openstack.kubernetes_auth
attributes:
  check_mode:
    support: full
    description: Plans and judges without writing a record or a halt; I(action=await) reads once and does not wait.
  diff_mode:
    support: none
    description: Records of coordination, not configuration.
notes:
  - 'Lift a halt by hand: C(kubectl delete configmap -n <records_namespace> flightcontrol-fleet-halt). See the run:
    C(kubectl get configmap -n <records_namespace> flightcontrol-fleet-run-<run> -o yaml). docs/fleet.md, "Waves".'
'''

EXAMPLES = r'''
- name: Plan the waves of the whole fleet; this slice's clusters in order
  flightcontrol.openstack.fleet_wave:
    action: plan
    run: awx-42
    clusters: "{{ fleet | map('combine', {}) | list }}"
    mine: "{{ ansible_play_hosts_all }}"
    waves: [1, 3, "25%", "100%"]
    soak: 60

- name: Wait for the earlier waves of the whole fleet
  flightcontrol.openstack.fleet_wave:
    action: await
    run: awx-42
    cluster: "{{ inventory_hostname }}"

- name: Lift the halt
  flightcontrol.openstack.fleet_wave:
    action: lift
    run: awx-42
'''

RETURN = r'''
run:
  description: The fleet run.
  returned: always
  type: str
record:
  description: The run's record (C(namespace), C(name) of its ConfigMap).
  returned: success
  type: dict
plan:
  description: The run's plan (C(waves) with C(wave), C(clusters), C(budget); C(soak), C(spec), C(budgets),
    C(canary_label), C(fleet), and C(source), the filters the fleet was read from the management cluster with).
  returned: action=plan
  type: dict
mine:
  description: This executor's clusters in the fleet's order, each C(host), C(wave) and C(outcome) so far.
  returned: action=plan
  type: list
  elements: dict
adopted:
  description: The plan was recorded by another executor (or an earlier run of this one) and adopted.
  returned: action=plan
  type: bool
halt:
  description: The fleet's halt (run, wave, reason, failed, halted_at, by, namespace, name); null when none.
  returned: success, and when the fleet is halted
  type: dict
state:
  description: For I(action=await), C(go), C(wait) (check mode) or C(halted).
  returned: action=await
  type: str
skip:
  description: The cluster is already done in this run (a resumed run skips it).
  returned: action=await
  type: bool
now:
  description: The time the wait ended (seconds since the epoch).
  returned: action=await
  type: float
outcome:
  description: The outcome recorded (C(failed) when the gate failed).
  returned: action=record
  type: str
gate:
  description: The gate's verdict (C(passed), C(reasons)); null without signals.
  returned: action=record
  type: dict
wave:
  description: The wave (I(action=record), a verdict with C(state), C(clusters), C(failed), C(budget)), or its
    number (I(action=await)).
  returned: action=record, action=await
  type: raw
halted:
  description: The fleet is halted after this record.
  returned: action=record
  type: bool
summary:
  description: Per wave its verdict and times, the fleet's counts (done, failed, not_started), and C(halted).
  returned: action=status
  type: dict
lines:
  description: One line per wave (clusters, gate result, time).
  returned: action=status, action=plan
  type: list
  elements: str
outcomes:
  description: Each cluster's outcome as recorded.
  returned: action=status
  type: dict
lifted:
  description: The halt was removed.
  returned: action=lift
  type: bool
forgotten:
  description: Failed clusters of the halted run whose outcome was removed, to be retried.
  returned: action=lift
  type: list
  elements: str
kept:
  description: Without I(retry_failed), failed clusters of the halted run kept as failed but no longer counted
    against their wave's budget.
  returned: action=lift
  type: list
  elements: str
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

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.module_base import POLL_SECONDS, SECONDS
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.module_base import KubernetesModule
from ansible_collections.flightcontrol.openstack.plugins.module_utils.fleet_wave.runner import (
    FleetWaveOptions,
    FleetWaveRunner,
)


class FleetWave(KubernetesModule):
    """The options; the work is the runner's, given what was asked."""

    argument_spec = dict(
        action=dict(type="str", required=True, choices=["plan", "await", "record", "status", "lift"]),
        run=dict(type="str", required=True),
        records_namespace=dict(type="str", default="default"),
        clusters=dict(type="list", elements="dict"),
        discover=dict(type="dict", options=dict(
            namespaces=dict(type="list", elements="str"),
            label_selector=dict(type="str"),
            hostname_format=dict(type="str", default="{namespace}/{name}"),
            api_version=dict(type="str"),
            hosts=dict(type="str", default="capi_phase_provisioned"),
        )),
        mine=dict(type="list", elements="str"),
        waves=dict(type="list", elements="raw"),
        budgets=dict(type="list", elements="raw"),
        soak=dict(type="int", default=0),
        canary_label=dict(type="str", default="flightcontrol.openstack/canary"),
        cluster=dict(type="str"),
        outcome=dict(type="str", choices=["done", "failed"]),
        reason=dict(type="str"),
        gate=dict(type="dict"),
        started_at=dict(type="str"),
        by=dict(type="str"),
        retry_failed=dict(type="bool", default=True),
        timeout=dict(type="int", default=3600),
        poll_interval=dict(type="float", default=5),
    )
    number_ranges = dict(timeout=SECONDS, poll_interval=POLL_SECONDS, soak=SECONDS)

    def run(self) -> None:
        options = FleetWaveOptions.from_params(self.params, check_mode=self.ansible.check_mode)
        FleetWaveRunner(self, options).run()


def main() -> None:
    FleetWave()()


if __name__ == "__main__":
    main()
