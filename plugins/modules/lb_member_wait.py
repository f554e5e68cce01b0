#!/usr/bin/python
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
module: lb_member_wait
short_description: Wait until Octavia pool members really are there (or really are gone)
version_added: 0.1.0
description:
  - Waits until the chosen members of an Octavia pool reach the wanted state, looking at every
    member itself and not only at the load balancer.
  - With the amphora v2 provider a load balancer can be C(ACTIVE) while a member it was asked to add
    is still C(PENDING_CREATE), or in C(ERROR). A wait on the load balancer alone (what Cluster API
    Provider OpenStack did before v0.14) then lets old control-plane nodes go while the new member
    does not serve. This module sees it, fails fast on C(ERROR) and says what is stuck.
  - I(state=present) waits until each chosen member exists with provisioning_status C(ACTIVE) and,
    when I(operating_status) is given, an accepted operating_status.
  - I(state=absent) waits until each chosen member is gone.
  - By default it then waits for the load balancer to be C(ACTIVE) again, because the next mutation
    would get HTTP 409 while it is C(PENDING_UPDATE).
  - Each poll makes one request, Octavia's status tree of the load balancer (the members and the load balancer
    together), however many members there are. Where the status tree is refused (its policy rule, a proxy) or does
    not show the pool (a pool on no listener), each poll lists the pool's members and reads the load balancer
    instead (two requests); C(polled_with) in the result says which. The pool itself (its health monitor in particular) is
    read once, when the wait starts.
  - The module changes nothing; it runs the same in check mode.
author:
  - flightcontrol.openstack maintainers (@flightcontrol)
options:
  pool:
    description:
      - Name or id of the Octavia pool.
    type: str
    required: true
  loadbalancer:
    description:
      - Name or id of the load balancer the pool belongs to.
      - Needed only when the pool name is not unique; when given, the module also checks that the pool
        belongs to it. When omitted, the pool's own load balancer is used.
    type: str
  members:
    description:
      - The members to wait for. Each entry is a member id, a member name, an address
        (C(10.0.0.5), C(2001:db8::5)) meaning every member with that address, or an address with a
        port (C(10.0.0.5:6443), C([2001:db8::5]:6443)).
      - An entry that is exactly the name of a member in the pool at the first poll means the members of that
        name, also when it looks like an address or an id. It is read so once, at the first poll; a member of
        that name that leaves the pool later does not turn the entry into an address naming another member.
      - When omitted, all members of the pool. With I(state=present) a pool without members is then
        not ready.
      - With I(state=present) a member that does not exist yet is waited for, because the member may
        still be on its way (a controller may add it).
    type: list
    elements: str
  state:
    description:
      - C(present) waits for the members to be provisioned (and, with I(operating_status), serving).
      - C(absent) waits for the members to be gone.
    type: str
    choices: [present, absent]
    default: present
  operating_status:
    description:
      - Operating statuses accepted for I(state=present). When omitted, only provisioning_status
        C(ACTIVE) is required.
      - C(HEALTHY) means C(ONLINE) when the pool has a health monitor and C(NO_MONITOR) when it has
        none (without a monitor Octavia never reports C(ONLINE)). Use it to say "really serving".
      - Asking for C(ONLINE) on a pool without a health monitor (or C(NO_MONITOR) on a pool with one)
        fails at once, because it could never be met.
    type: list
    elements: str
    choices: [HEALTHY, ONLINE, DRAINING, OFFLINE, DEGRADED, ERROR, NO_MONITOR]
  wait_for_loadbalancer:
    description:
      - Also wait, at the end, for the load balancer to be C(ACTIVE) again.
    type: bool
    default: true
  report_health_monitor:
    description:
      - On success, also read the pool's health monitor (one request) and return it as RV(health_monitor), e.g. to
        judge how long a dead member would still take traffic (C(delay) x C(max_retries_down)).
    type: bool
    default: false
extends_documentation_fragment:
  - flightcontrol.openstack.openstack_auth
  - flightcontrol.openstack.wait
attributes:
  check_mode:
    support: full
    description: The module only reads; check mode runs the same wait.
  diff_mode:
    support: none
    description: The module changes nothing, so there is no diff.
'''

EXAMPLES = r'''
- name: Wait until the new control-plane member serves before touching the old ones
  flightcontrol.openstack.lb_member_wait:
    cloud: production
    pool: k8s-clusterapi-cluster-default-prod-kubeapi-6443
    members:
      - 10.6.0.23:6443
    operating_status: [HEALTHY]
    timeout: 600

- name: Wait until every member of the pool is provisioned
  flightcontrol.openstack.lb_member_wait:
    cloud: production
    pool: 2f8c7a1e-1d6b-4f4e-9f55-8a3f5b1c2d3e

- name: Wait until a removed member is really gone and the load balancer accepts changes again
  flightcontrol.openstack.lb_member_wait:
    cloud: production
    loadbalancer: k8s-clusterapi-cluster-default-prod-kubeapi
    pool: k8s-clusterapi-cluster-default-prod-kubeapi-6443
    members: [k8s-clusterapi-cluster-default-prod-kubeapi-6443-prod-control-plane-x7k2p]
    state: absent

- name: Branch on the members' states in AWX
  flightcontrol.openstack.lb_member_wait:
    cloud: production
    pool: kubeapi
    operating_status: [HEALTHY]
    timeout: 120
  register: wait
  ignore_errors: true

- name: Show what is stuck
  ansible.builtin.debug:
    msg: "{{ wait.members | rejectattr('ready') | map(attribute='name') | list }}"
  when: wait is failed
'''

RETURN = r'''
extends_documentation_fragment:
  - flightcontrol.openstack.pool_polls
members:
  description:
    - The chosen members as last seen (all members of the pool when I(members) was omitted).
    - For I(state=absent), the chosen members that still exist.
    - Null when no poll completed (the API kept failing until the deadline).
  returned: when the pool was found
  type: list
  elements: dict
  contains:
    id:
      description: Member id.
      type: str
    name:
      description: Member name.
      type: str
    address:
      description: Member address.
      type: str
    protocol_port:
      description: Member port.
      type: int
    provisioning_status:
      description: Octavia provisioning_status of the member.
      type: str
      sample: ACTIVE
    operating_status:
      description: Octavia operating_status of the member.
      type: str
      sample: NO_MONITOR
    admin_state_up:
      description:
        - Whether the member is administratively up.
        - This and the member's other fields that the status tree does not carry (weight, backup, monitor_address,
          monitor_port, subnet_id) come from one member list read when the wait succeeded; they are null in the
          result of a failed wait polled with the status tree.
      type: bool
    ready:
      description: Whether this member is where the wait wants it.
      type: bool
    waiting_for:
      description: Why the member is not ready yet, empty when it is.
      type: str
    selected_by:
      description: The I(members) entries that chose this member (only when I(members) was given).
      type: list
      elements: str
    serving_since:
      description:
        - When the member was judged serving (UTC), with I(operating_status) C(HEALTHY), C(ONLINE) or C(NO_MONITOR);
          null while it is not. See RV(serving_rule).
      type: str
    serving_after:
      description:
        - Why it was judged serving, for example C(ONLINE for 35 s since creation (created_at), the full monitor
          window of 35 s) on C(ovn); null while it is not.
      type: str
  sample:
    - id: 6f1c1f4e-5d1b-4a51-9c3e-0b0b6c1e2f10
      name: kubeapi-member-2
      address: 10.6.0.23
      protocol_port: 6443
      provisioning_status: PENDING_CREATE
      operating_status: OFFLINE
      admin_state_up: true
      ready: false
      waiting_for: provisioning_status is PENDING_CREATE
serving_rule:
  description:
    - What serving means on the pool's load balancer, read when I(operating_status) asks for C(HEALTHY), C(ONLINE) or
      C(NO_MONITOR) (null otherwise). C(provider); C(health_monitor), whether the pool has one; C(window), on
      C(ovn) with a monitor the seconds an ONLINE member must have been ONLINE since its creation before it counts
      (C(delay) x C(max_retries_down) + C(timeout); ovn-octavia-provider reports a new member ONLINE before OVN has
      checked it), else null; C(rule) in words; C(finding), a warning where nothing checks the members (C(ovn)
      without a monitor), else null.
  returned: when the pool was found
  type: dict
  sample:
    provider: ovn
    health_monitor: true
    window: 35.0
    finding: null
missing:
  description:
    - For I(state=present), the I(members) entries that matched no member at the last poll (the first 1000 of
      them; I(missing_total) counts them all). A failure message names the first 10 and counts the others.
    - Null when no poll completed.
  returned: when the pool was found
  type: list
  elements: str
  sample: ["10.6.0.24:6443"]
missing_total:
  description:
    - How many I(members) entries matched no member at the last poll (0 for I(state=absent)).
    - Null when no poll completed.
  returned: when the pool was found
  type: int
  sample: 1
not_seen_at_start:
  description:
    - The I(members) entries that matched no member at the first poll. With I(state=absent) the module
      also warns about them, because a misspelt member is "gone" from the start.
  returned: when the pool was found
  type: list
  elements: str
  sample: []
loadbalancer:
  description: The load balancer as last seen; null when no poll completed.
  returned: when the pool was found
  type: dict
  contains:
    id:
      description: Load balancer id.
      type: str
    name:
      description: Load balancer name.
      type: str
    provisioning_status:
      description: Its provisioning_status.
      type: str
    operating_status:
      description: Its operating_status.
      type: str
health_monitor:
  description: The pool's health monitor (null when the pool has none).
  returned: success, with I(report_health_monitor)
  type: dict
  contains:
    id:
      description: Its id.
      type: str
    name:
      description: Its name.
      type: str
    type:
      description: C(TCP), C(HTTP), C(HTTPS), C(TLS-HELLO), C(PING) or C(UDP-CONNECT).
      type: str
    delay:
      description: Seconds between two checks of a member.
      type: int
    timeout:
      description: Seconds a check may take.
      type: int
    max_retries:
      description: Successful checks in a row that bring a member ONLINE.
      type: int
    max_retries_down:
      description: Failed checks in a row that take a member out (ERROR).
      type: int
    admin_state_up:
      description: Whether the monitor is enabled.
      type: bool
pool:
  description: The pool.
  returned: when the pool was found
  type: dict
  contains:
    id:
      description: Pool id.
      type: str
    name:
      description: Pool name.
      type: str
    provisioning_status:
      description: Pool provisioning_status when the wait started.
      type: str
    healthmonitor_id:
      description: Id of the pool's health monitor, null without one.
      type: str
accepted_operating_status:
  description: The operating statuses accepted, after C(HEALTHY) was resolved for this pool; null for any.
  returned: when the pool was found
  type: list
  elements: str
  sample: [NO_MONITOR]
polls:
  description: How many polls completed (one request each with the status tree, see C(polled_with)).
  returned: when the pool was found
  type: int
  sample: 3
elapsed:
  description: Seconds the task took.
  returned: always
  type: float
  sample: 12.4
api_calls:
  description: HTTP requests sent to OpenStack, retries and authentication requests included.
  returned: always
  type: int
  sample: 8
timed_out:
  description: Whether the wait failed because I(timeout) passed (and not because of an C(ERROR)).
  returned: when the wait ran and failed
  type: bool
  sample: true
retried_faults:
  description: Transient faults that were retried (HTTP status or C(connection)).
  returned: always
  type: list
  elements: raw
  sample: [429, 503]
'''

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.module_base import POLL_SECONDS, SECONDS
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.module_base import OpenStackModule
from ansible_collections.flightcontrol.openstack.plugins.module_utils.lb_member_wait.runner import (
    MemberWaitOptions,
    MemberWaitRunner,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.members import OPERATING_STATUSES


class LbMemberWait(OpenStackModule):
    """The options; the work is the runner's, given what was asked."""

    argument_spec = dict(
        pool=dict(type="str", required=True),
        loadbalancer=dict(type="str"),
        members=dict(type="list", elements="str"),
        state=dict(type="str", default="present", choices=["present", "absent"]),
        operating_status=dict(type="list", elements="str", choices=list(OPERATING_STATUSES) + ["HEALTHY"]),
        wait_for_loadbalancer=dict(type="bool", default=True),
        report_health_monitor=dict(type="bool", default=False),
        timeout=dict(type="int", default=300),
        poll_interval=dict(type="float", default=5),
    )
    number_ranges = dict(timeout=SECONDS, poll_interval=POLL_SECONDS)

    def run(self) -> None:
        options = MemberWaitOptions.from_params(self.params)
        MemberWaitRunner(self, options).run()


def main() -> None:
    LbMemberWait()()


if __name__ == "__main__":
    main()
