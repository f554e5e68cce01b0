#!/usr/bin/python
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
module: secgroup_ensure
short_description: Keep a security group's rules and its membership on every port of chosen servers correct
version_added: 0.1.0
description:
  - Ensures that a Neutron security group exists, has a set of rules, and is on every port of the chosen
    servers. Made to repair what Neutron loses (pod-CIDR rules never applied and nodes whose group
    vanished from a port), so it can run again and again (from a playbook or a schedule).
  - Membership is checked on each Neutron port, not on Nova's server view. Nova's C(security_groups) of a
    server is the union over its ports, so a server with two ports where one lacks the group looks fine
    there; this module fixes the port.
  - Rules are matched the way Neutron detects duplicates. A protocol name equals its number (C(tcp) is
    C(6); for IPv6 C(icmp) is C(ipv6-icmp)), C(0.0.0.0/0) and C(::/0) equal no prefix, a port range of
    1-65535 equals no range, and the description is not compared. Remote prefixes are compared in network
    form (C(10.0.0.5/8) is C(10.0.0.0/8)).
  - Concurrency-safe. A rule create answered with HTTP 409 C(SecurityGroupRuleExists) means someone else
    created it meanwhile, which is success. A port update sends C(If-Match) with the port's revision
    number; when Neutron answers 412 (the port changed meanwhile) the port is read again and the change
    recomputed, so a concurrent change to the port's groups is never overwritten.
  - Rule deletes are judged on the group as it is when they are made. The group is read again just before them
    (one request); a rule already gone is skipped, a rule added after the plan's read is never deleted (only the
    rules the plan chose are), and with I(exclusive) the I(max_removal_share) guard is checked again on the
    fresh rules; a refusal there fails the task with what was already written.
  - Two runs that create the same group at the same time (two jobs started together) leave one group. After its
    create a run looks again by name; when it finds two, every run keeps the oldest (by creation time, then id),
    a run whose group is the newer one deletes it while it is still as Neutron made it and goes on with the kept
    one, and RV(conflicts) says so (C(group_created_concurrently)).
  - Cost. One request finds the group with its rules, one lists the servers (plus Nova's pagination),
    one lists the ports of up to 150 servers, and one write per real change. Nothing is read per server.
  - All input is checked, and every server, port and group is looked up, before the first write. A
    malformed CIDR, a rule Neutron would reject, a I(remote_group) (name or id) that does not exist, a name or
    description over Neutron's 255 characters, a server that does not exist, or (unless
    I(skip_ports_without_port_security)) a port without port security fails the task with no write made.
  - When a write fails halfway (Neutron refuses it, a read after it fails, or the deadline passes), the task
    fails with C(changed) true if anything was written, the results list what was done, RV(not_done) what was
    not, RV(writes) every write request made, and the message keeps Neutron's own words. A re-run finishes the
    job.
author:
  - flightcontrol.openstack maintainers (@flightcontrol)
options:
  security_group:
    description:
      - Name or id of the security group. A name must not be blank and is at most 255 characters (Neutron's
        limit).
    type: str
    required: true
  description:
    description:
      - Description of the group when it is created. An existing group's description is left alone.
    type: str
  create:
    description:
      - Create the group when it does not exist (I(state=present)). With C(false) a missing group fails the
        task.
      - A group Neutron creates comes with its default rules (usually egress to anywhere, IPv4 and IPv6);
        with I(exclusive) those are removed unless they are in I(rules).
    type: bool
    default: true
  pod_cidr:
    description:
      - The shortcut for pod networks. For each CIDR, ingress C(tcp), C(udp) and C(icmp) (C(ipv6-icmp)
        for an IPv6 CIDR) from that CIDR, with the ethertype of the CIDR's family.
    type: list
    elements: str
  rules:
    description:
      - Explicit rules, in addition to those of I(pod_cidr).
    type: list
    elements: dict
    suboptions:
      direction:
        description: Direction of traffic.
        type: str
        choices: [ingress, egress]
        default: ingress
      ethertype:
        description:
          - C(IPv4) or C(IPv6). When omitted, the family of I(remote_ip_prefix), else C(IPv4).
        type: str
        choices: [IPv4, IPv6]
      protocol:
        description:
          - Protocol name (C(tcp), C(udp), C(icmp), C(ipv6-icmp), C(vrrp), ...) or number 0-255. C(any) or
            omitted means any protocol.
        type: str
      port_range_min:
        description: First port (tcp, udp, dccp, sctp) or ICMP type.
        type: int
      port_range_max:
        description: Last port (tcp, udp, dccp, sctp) or ICMP code.
        type: int
      port:
        description: One port; short for equal I(port_range_min) and I(port_range_max).
        type: int
      remote_ip_prefix:
        description: Source (ingress) or destination (egress) CIDR.
        type: str
      remote_group:
        description:
          - Name or id of the security group the traffic comes from (or goes to). Not with
            I(remote_ip_prefix).
        type: str
      description:
        description: Description of the rule when it is created (not compared).
        type: str
  exclusive:
    description:
      - Remove the group's rules that are not in I(pod_cidr) or I(rules). Only this group is touched.
      - Only with I(state=present), and only with I(pod_cidr) or I(rules) (an empty rule set would remove every
        rule of the group).
      - Refused before any write when it would remove more than I(max_removal_share) of the rules of a group
        that existed before the run.
    type: bool
    default: false
  max_removal_share:
    description:
      - With I(exclusive), the largest share (0 to 1) of an existing group's rules one run may remove. A run
        that would remove more (or every rule) refuses, names the rules and changes nothing.
      - C(1) lifts the guard. A group this run creates is not guarded (its default rules are removed as
        documented under I(create)).
    type: float
    default: 0.5
  servers:
    description:
      - Servers whose every port must carry the group (I(state=present)) or not (I(state=absent)).
      - Each entry is a server id, a server name, or a glob pattern on names (C(prod-node-*)). A name or id
        that matches no server fails the task before any write; a pattern may match none.
      - Only an entry with C(*) is a pattern; C(gm[1]) names the server called C(gm[1]), never C(gm1) (see the
        notes). An entry that is exactly a server's name means that server only, also when the name has a C(*)
        (C(web*) names the server called C(web*), not every server whose name starts with C(web)).
    type: list
    elements: str
  skip_ports_without_port_security:
    description:
      - A port with C(port_security_enabled) false cannot carry security groups. By default such a port
        fails the task (before any write). With C(true) it is reported in RV(ports_skipped) and left alone.
    type: bool
    default: false
  state:
    description:
      - C(present) ensures the group, its rules and the memberships.
      - C(absent) removes the listed rules from the group and the group from the listed servers' ports.
        The group itself is not deleted. A group that does not exist has nothing to remove.
    type: str
    choices: [present, absent]
    default: present
  timeout:
    description:
      - Seconds the whole task may take, retries of transient API faults included.
    type: int
    default: 300
extends_documentation_fragment:
  - flightcontrol.openstack.openstack_auth
  - flightcontrol.openstack.names
attributes:
  check_mode:
    support: full
    description: Reads everything and reports what would change; makes no write request at all.
  diff_mode:
    support: full
    description: Shows the group's rules and the ports' security groups before and after.
'''

EXAMPLES = r'''
- name: Pod network open inside the cluster, on every node's ports
  flightcontrol.openstack.secgroup_ensure:
    cloud: production
    security_group: kubernikus-prod
    description: Kubernetes nodes of cluster prod
    pod_cidr: 198.19.0.0/16
    servers:
      - prod-node-*

- name: Dual-stack pods, an API rule, and nothing else in the group
  flightcontrol.openstack.secgroup_ensure:
    cloud: production
    security_group: kubernikus-prod
    pod_cidr: [198.19.0.0/16, "fd00:10::/56"]
    rules:
      - protocol: tcp
        port: 6443
        remote_ip_prefix: 10.180.0.0/16
      - direction: egress
      - direction: egress
        ethertype: IPv6
    exclusive: true

- name: Take the group off a server that leaves the cluster
  flightcontrol.openstack.secgroup_ensure:
    cloud: production
    security_group: kubernikus-prod
    servers: [prod-node-7]
    state: absent

- name: Report what would be repaired
  flightcontrol.openstack.secgroup_ensure:
    cloud: production
    security_group: kubernikus-prod
    pod_cidr: 198.19.0.0/16
    servers: [prod-node-*]
    skip_ports_without_port_security: true
  check_mode: true
  register: drift

- name: Show the ports that lacked the group
  ansible.builtin.debug:
    msg: "{{ drift.ports_updated | map(attribute='port') | list }}"
'''

RETURN = r'''
security_group:
  description:
    - The group. In check mode, when the group would be created, its C(id) is null and C(created) true.
  returned: success, and a write that failed halfway (see RV(not_done))
  type: dict
  contains:
    id:
      description: Group id (null when it would be created in check mode).
      type: str
    name:
      description: Group name.
      type: str
    created:
      description: Whether this run created (or in check mode would create) the group.
      type: bool
rules_created:
  description: Rules created (or that would be created), with Neutron's field names.
  returned: success, and a write that failed halfway (see RV(not_done))
  type: list
  elements: dict
  sample:
    - direction: ingress
      ethertype: IPv4
      protocol: tcp
      port_range_min: null
      port_range_max: null
      remote_ip_prefix: 198.19.0.0/16
      remote_group_id: null
      remote_address_group_id: null
      description: null
      id: 0b8a1f0e-2c7d-4d4b-9a53-3e1f2b7c9d10
rules_deleted:
  description: Rules deleted (or that would be deleted).
  returned: success, and a write that failed halfway (see RV(not_done))
  type: list
  elements: dict
rules_unchanged:
  description: Wanted rules that were already there (including those another client created meanwhile).
  returned: success, and a write that failed halfway (see RV(not_done))
  type: list
  elements: dict
ports_updated:
  description: Ports whose security groups changed (or would change).
  returned: success, and a write that failed halfway (see RV(not_done))
  type: list
  elements: dict
  contains:
    server:
      description: Server name.
      type: str
    server_id:
      description: Server id.
      type: str
    port:
      description: Port id.
      type: str
    port_name:
      description: Port name.
      type: str
    before:
      description: Security group ids of the port before.
      type: list
      elements: str
    after:
      description: Security group ids of the port after.
      type: list
      elements: str
    attempts:
      description: Update requests sent (more than one when the port changed concurrently, HTTP 412).
      type: int
ports_skipped:
  description: Ports left alone, each with the reason (a port without port security).
  returned: success, and a write that failed halfway or the refusal of ports without port security
  type: list
  elements: dict
  sample:
    - server: prod-node-3
      server_id: 8e0c3f0b-51f4-4c1e-8f3c-1d2f3a4b5c6d
      port: 5b1d0a2e-6f7c-4e8d-9a0b-1c2d3e4f5a6b
      port_name: prod-node-3-port-1
      reason: port security is disabled on this port (port_security_enabled false), so it cannot carry security groups
servers:
  description: The servers chosen by I(servers) (empty without I(servers)), each with its C(id) and C(name).
  returned: success, and a write that failed halfway (see RV(not_done))
  type: list
  elements: dict
  contains:
    id:
      description: Server id.
      type: str
    name:
      description: Server name.
      type: str
servers_without_ports:
  description: Chosen servers that have no Neutron port at all.
  returned: success, and a write that failed halfway (see RV(not_done))
  type: list
  elements: str
not_done:
  description:
    - Present when a write failed halfway - the rules to create, the rules to delete and the ports to update
      that were not reached, each with C(what) and C(item).
  returned: failure
  type: list
  elements: dict
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
conflicts:
  description:
    - Concurrent changes met and resolved, each C(rule_exists) (a create answered 409
      SecurityGroupRuleExists), C(port_changed) (an update answered 412, the port was read again) or
      C(group_created_concurrently) (another run created a group of the name at the same time; C(group) is the
      group kept, C(detail) says whether this run's own group was deleted).
  returned: success, and a write that failed halfway (see RV(not_done))
  type: list
  elements: dict
elapsed:
  description: Seconds the task took.
  returned: always
  type: float
api_calls:
  description: HTTP requests sent to OpenStack, retries and authentication requests included.
  returned: always
  type: int
retried_faults:
  description: Transient faults that were retried (HTTP status or C(connection)).
  returned: always
  type: list
  elements: raw
'''

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.module_base import (
    DEFAULT_MAX_REMOVAL_SHARE,
    NumberRange,
    SECONDS,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.module_base import OpenStackModule
from ansible_collections.flightcontrol.openstack.plugins.module_utils.secgroup_ensure.runner import (
    SecgroupOptions,
    SecgroupRunner,
)

RULE_OPTIONS = dict(
    direction=dict(type="str", choices=["ingress", "egress"], default="ingress"),
    ethertype=dict(type="str", choices=["IPv4", "IPv6"]),
    protocol=dict(type="str"),
    port_range_min=dict(type="int"),
    port_range_max=dict(type="int"),
    port=dict(type="int"),
    remote_ip_prefix=dict(type="str"),
    remote_group=dict(type="str"),
    description=dict(type="str"),
)


class SecgroupEnsure(OpenStackModule):
    """The options; the work is the runner's, given what was asked."""

    argument_spec = dict(
        security_group=dict(type="str", required=True),
        description=dict(type="str"),
        create=dict(type="bool", default=True),
        pod_cidr=dict(type="list", elements="str"),
        rules=dict(type="list", elements="dict", options=RULE_OPTIONS),
        exclusive=dict(type="bool", default=False),
        max_removal_share=dict(type="float", default=DEFAULT_MAX_REMOVAL_SHARE),
        servers=dict(type="list", elements="str"),
        skip_ports_without_port_security=dict(type="bool", default=False),
        state=dict(type="str", default="present", choices=["present", "absent"]),
        timeout=dict(type="int", default=300),
    )
    number_ranges = dict(timeout=SECONDS, max_removal_share=NumberRange(minimum=0, maximum=1))

    def run(self) -> None:
        options = SecgroupOptions.from_params(
            self.params, check_mode=self.ansible.check_mode, diff=self.ansible._diff)
        SecgroupRunner(self, options).run()


def main() -> None:
    SecgroupEnsure()()


if __name__ == "__main__":
    main()
