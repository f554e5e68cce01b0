#!/usr/bin/python
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
module: node_registration_audit
short_description: Find Nova servers of a cluster that never became Kubernetes Nodes, and delete a few of them
version_added: 0.1.0
description:
  - A server that boots but never registers as a Node (DHCP or port-binding latency, a missing security group,
    a broken first boot) costs quota and hides a problem. This module lists the cluster's Nova servers and the
    cluster's Kubernetes Nodes and reports every server that is no Node I(registration_timeout) seconds after
    it was created (Nova's C(created) time), and every server in C(ERROR) without a Node. Kubernikus' Flight
    Control deleted such servers after 10, later 45 minutes.
  - I(kubernetes) reaches the workload cluster's Kubernetes API, whose Nodes the servers become.
  - A server is a Node when a Node's C(spec.providerID) is C(openstack:///<server id>) (or
    C(openstack://<region>/<server id>)); Nodes without an OpenStack providerID are matched by name
    (case-insensitive).
  - I(state=audited) (the default) only reports. I(state=cleaned) is the explicit opt-in to delete the
    reported servers, at most I(max_deletions) per run, oldest first, so a mistake costs one server per run and a
    person can look before the next. A server that is a Node is never deleted, and nothing is deleted when no
    Node is visible at all or when none of the cluster's servers is a Node (that means the Node source or the
    server selection is wrong, not the servers), so a clean-up can never remove every server of the cluster.
  - Each deletion is judged again on a read made just before it (the servers and the Nodes read again). A server
    that became a Node, left the selection, was renamed, carries another cluster's mark or is already being
    deleted since the audit read is kept and reported in RV(not_deleted); so is every server when no Node is
    visible any more or none of the cluster's servers is a Node.
  - A server that a pattern matched only through C(?) or a character class (C(gm[1]*) matching C(gm1)) is reported
    but never deleted (see the notes).
  - A server whose Nova metadata contradicts what every registered server of the cluster carries (say
    C(cluster=staging) where all of the cluster's Nodes are C(cluster=prod)) belongs to another cluster that a
    too wide I(servers) pattern caught; it is reported in RV(not_deleted) and never deleted.
  - Servers being deleted (task state C(deleting)) or shelved are reported as such and left alone.
  - Deleting asks Nova to delete the server and does not wait for it to be gone; whatever re-creates nodes (a
    MachineSet, a node pool controller) replaces it.
  - Cost. One Nova request lists the project's servers (plus one per 1000 servers), one Kubernetes request lists
    the Nodes (plus one per 500), and per deleted server the same two lists again and one delete request.
author:
  - flightcontrol.openstack maintainers (@flightcontrol)
options:
  servers:
    description:
      - The cluster's servers. Each entry is a server id, a name, or a glob pattern on names (C(prod-node-*)); an
        entry that is exactly an existing server's name means that server only, and only an entry with C(*) is a
        pattern (see the notes).
      - A name that several servers have fails the task before any request that changes something (use ids or a
        pattern), as in M(flightcontrol.openstack.secgroup_ensure).
      - An entry that matches no server fails the task (an audit of fewer servers than named is no healthy audit),
        with the audit of the servers found in the result and nothing deleted; so does a selection that chooses no
        server at all (I(server_metadata) that no server carries).
      - With I(server_metadata), a server must match both.
      - At least one of I(servers) and I(server_metadata) is required.
    type: list
    elements: str
  server_metadata:
    description:
      - Only servers whose Nova metadata has all of these keys with these values (Cluster API Provider OpenStack
        and many provisioning tools tag the cluster's servers so).
      - At least one of I(servers) and I(server_metadata) is required; an empty dict without I(servers) is
        refused (it would choose every server of the project).
    type: dict
  node_selector:
    description:
      - Label selector of the Nodes to match the servers against (default all Nodes).
    type: str
  registration_timeout:
    description:
      - Seconds after its creation a server may take to become a Node. Younger servers are reported as
        C(waiting), never as findings.
      - The default is 45 minutes, what Kubernikus uses. Cluster API's MachineHealthCheck C(nodeStartupTimeout)
        defaults to 10 minutes.
    type: int
    default: 2700
  state:
    description:
      - C(audited) reports and changes nothing.
      - C(cleaned) also deletes unregistered and C(ERROR) servers, at most I(max_deletions), oldest first.
    type: str
    choices: [audited, cleaned]
    default: audited
  max_deletions:
    description:
      - The most servers one run with I(state=cleaned) deletes. The others are reported in RV(not_deleted).
    type: int
    default: 1
  fail_on_findings:
    description:
      - Fail the task when unregistered or C(ERROR) servers remain at the end (after the deletions). For CI and
        AWX gating.
    type: bool
    default: false
  timeout:
    description:
      - Seconds the whole task may take, retries of transient API faults included.
    type: int
    default: 300
extends_documentation_fragment:
  - flightcontrol.openstack.openstack_auth
  - flightcontrol.openstack.kubernetes_dict
  - flightcontrol.openstack.names
attributes:
  check_mode:
    support: full
    description: Reads everything and reports the deletions a clean-up would make; makes no write request.
  diff_mode:
    support: full
    description: Shows the cluster's server names before and after the deletions.
notes:
  - Nova's C(created) time is the reference, so the controller's clock must be roughly right (NTP).
'''

EXAMPLES = r'''
- name: Report servers that never became Nodes
  flightcontrol.openstack.node_registration_audit:
    cloud: production
    servers: ["prod-node-*"]
    kubernetes:
      kubeconfig: /etc/flightcontrol/prod.kubeconfig
  register: registration

- name: Show them
  ansible.builtin.debug:
    msg: "{{ registration.unregistered | map(attribute='name') | list }}"

- name: Delete at most one of them (CAPO-tagged servers), oldest first
  flightcontrol.openstack.node_registration_audit:
    cloud: production
    server_metadata:
      cluster: prod
    registration_timeout: 1800
    state: cleaned
    max_deletions: 1
'''

RETURN = r'''
servers:
  description: The cluster's servers, oldest first, each with what was found.
  returned: success, and a failure once the servers and the Nodes were read
  type: list
  elements: dict
  contains:
    id:
      description: Server id.
      type: str
    name:
      description: Server name.
      type: str
    status:
      description: Nova status.
      type: str
    created:
      description: Nova's creation time.
      type: str
    age:
      description: Seconds since creation.
      type: int
    node:
      description: The Node the server is, or null.
      type: str
    matched_by:
      description: C(providerID) or C(name), null without a Node.
      type: str
    state:
      description: C(registered), C(waiting) (no Node yet, within the timeout), C(unregistered), C(error) or
        C(deleting).
      type: str
    reason:
      description: The state in words.
      type: str
  sample:
    - {id: 0b5f..., name: prod-node-7, status: ACTIVE, created: "2025-05-01T10:00:00Z", age: 3900, node: null,
       matched_by: null, state: unregistered, reason: "no Node after 1h05m (registration_timeout 45m)"}
unregistered:
  description: The findings - servers in state C(unregistered) or C(error), before any deletion.
  returned: success, and a failure once the servers and the Nodes were read
  type: list
  elements: dict
remaining:
  description: The findings left at the end (RV(unregistered) without what was deleted).
  returned: success, and the failures of the audit (I(fail_on_findings), servers asked for that are not there)
  type: list
  elements: dict
deleted:
  description: Servers deleted (in check mode, that would be deleted), with C(status) C(done), C(planned) or
    C(gone) (already deleted by someone else).
  returned: success, and a failure once the servers and the Nodes were read
  type: list
  elements: dict
not_deleted:
  description:
    - "Findings a clean-up did not delete, each with the C(reason) (the cap, the refusal, a server matched only
      through C(?) or C([...]), or what the read just before the deletion showed, such as
      C(not deleted: since the audit: registered as Node prod-node-7 (matched by name)))."
  returned: success, and a failure once the servers and the Nodes were read
  type: list
  elements: dict
refused:
  description: Why the clean-up deleted nothing at all (no Node visible, or no server is a Node), else null.
  returned: success, and a failure once the servers and the Nodes were read
  type: str
counts:
  description: Number of servers per state, and C(servers), C(nodes) (Nodes visible).
  returned: success, and a failure once the servers and the Nodes were read
  type: dict
  sample: {servers: 5, nodes: 4, registered: 4, waiting: 0, unregistered: 1, error: 0, deleting: 0}
healthy:
  description: No unregistered or C(ERROR) server remains, and every I(servers) entry matched a server.
  returned: success, and the failures of the audit (I(fail_on_findings), servers asked for that are not there)
  type: bool
unmatched:
  description: The I(servers) entries that matched no server (the task then fails, deleting nothing).
  returned: success, and a failure once the servers and the Nodes were read
  type: list
  elements: str
elapsed:
  description: Seconds the task took.
  returned: always
  type: float
api_calls:
  description: HTTP requests sent to OpenStack and Kubernetes, retries and authentication requests included.
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

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.module_base import NumberRange, SECONDS
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.openstack_module_base import (
    OpenStackKubernetesModule,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.node_registration_audit.runner import (
    RegistrationOptions,
    RegistrationRunner,
)


class NodeRegistrationAudit(OpenStackKubernetesModule):
    """The options; the work is the runner's, given what was asked."""

    argument_spec = dict(
        servers=dict(type="list", elements="str"),
        server_metadata=dict(type="dict"),
        node_selector=dict(type="str"),
        registration_timeout=dict(type="int", default=2700),
        state=dict(type="str", default="audited", choices=["audited", "cleaned"]),
        max_deletions=dict(type="int", default=1),
        fail_on_findings=dict(type="bool", default=False),
        timeout=dict(type="int", default=300),
    )
    number_ranges = dict(
        timeout=SECONDS, registration_timeout=SECONDS,
        max_deletions=NumberRange(minimum=1, maximum=1000, hint="use state=audited to delete nothing"))
    module_kwargs = dict(required_one_of=[["servers", "server_metadata"]])

    def run(self) -> None:
        options = RegistrationOptions.from_params(
            self.params, check_mode=self.ansible.check_mode, diff=self.ansible._diff)
        RegistrationRunner(self, options).run()


def main() -> None:
    NodeRegistrationAudit()()


if __name__ == "__main__":
    main()
