#!/usr/bin/python
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
module: resource_leak_audit
short_description: Find what Cluster API Provider OpenStack leaves behind in a project, and delete a few of them
version_added: 0.1.0
description:
  - Reports, for one Cluster API cluster or for a whole project, the OpenStack objects that cost quota (or, for
    members, send traffic to nowhere) while nothing uses them any more
    (cluster-api-provider-openstack issues 2576 and 2618).
  - C(ports) whose device is gone (C(device_owner) C(compute:*) with a C(device_id) no server of the project has),
    and ports of a cluster with no device at all I(port_grace_period) seconds after their creation.
  - C(members) of the pools of a cluster's API load balancer (C(k8s-clusterapi-cluster-<namespace>-<name>-kubeapi))
    whose address is no server of the cluster, that is no fixed IP of a live server's port on the cluster's
    network C(k8s-clusterapi-cluster-<namespace>-<name>) (every live server of the project when that network is not
    there).
  - C(security_groups) (C(k8s-cluster-<namespace>-<name>-secgroup-<role>)) and C(floating_ips) (CAPO's description
    C(Created by cluster-api-provider-openstack cluster <namespace>-<name>)) of clusters that no longer exist.
    A cluster exists when it is in I(clusters), or when its network, router or API load balancer (CAPO's names)
    is in the project; a security group that a live server's port carries is never a leak.
  - C(servers) in C(ERROR), reported only (M(flightcontrol.openstack.node_registration_audit) deletes them, with
    the Kubernetes Nodes as evidence).
  - Which cluster an object belongs to is read from CAPO's names, each kind with its own pattern cut at the end of
    the name (network and router C(k8s-clusterapi-cluster-<resource>), API load balancer C(<that>-kubeapi), its
    pools C(<lb>-<port>) and members C(<lb>-<port>-<machine>), security groups
    C(k8s-cluster-<resource>-secgroup-<role>) with the role C(controlplane), C(worker) or C(bastion)), CAPO's
    description, tags C(k8s-clusterapi-cluster-<resource>), and for a port the name of its network, where
    C(<resource>) is CAPO's cluster resource name C(<namespace>-<name>). A cluster whose name ends in one of CAPO's
    suffixes (C(pk-kubeapi)) is never read as another one (C(pk)); a port's or server's name is no evidence.
  - Every list names the project the connection is scoped to (an admin's list would hold every project's objects).
  - A list that this user may not read (HTTP 403), an API that does not serve it (404) or a service missing from
    the catalog makes the kinds that need it C(unknown) (in RV(unknown), and C(null) in RV(counts)), never
    "no leaks".
  - I(cleanup) is the explicit opt-in to delete findings of the kinds it lists, at most I(max_deletions) per run,
    oldest first. Nothing is deleted while any kind is unknown; never an object whose names, description, tags
    or network name another cluster (or, for the whole project, several clusters); never every object of a kind
    (every port in scope, every CAPO security group or floating IP of the project, every member of one pool, which
    is a broken view, not leaks); never an attached floating IP.
  - Each deletion is judged again on a read of the project made just before it; an object that changed, is no
    longer a leak or that the guards now refuse is kept and reported in RV(not_deleted).
  - Cost. One request per list (servers, ports, networks, routers, security groups, floating IPs, load balancers,
    pools; the servers one more per 1000) and one member list per pool of the clusters' API load balancers, plus
    one for the project id; per deletion the same lists again and one delete request.
author:
  - flightcontrol.openstack maintainers (@flightcontrol)
options:
  cluster:
    description:
      - The Cluster API cluster to audit, as C(namespace/name) or as CAPO's cluster resource name
        C(namespace-name). Left out, the whole project is audited.
      - A value that can name no cluster (C(default/), C(/), C(Default/C1), an empty value) is refused before any
        request; so is such an entry of I(clusters).
    type: str
  clusters:
    description:
      - Clusters that exist (C(namespace/name) or C(namespace-name)), for example every cluster of the management
        cluster (the C(capi_clusters) inventory, M(flightcontrol.openstack.cluster_info)). Their security groups
        and floating IPs are never leaks, also when their network, router and load balancer are not (or not yet,
        or not any more) in the project.
    type: list
    elements: str
    default: []
  port_grace_period:
    description:
      - Seconds after its creation a port of a cluster may have no device (CAPO makes the port before the server).
    type: int
    default: 3600
  cleanup:
    description:
      - The kinds whose findings may be deleted. Empty (the default) reports only. Servers in C(ERROR) are never
        deleted.
    type: list
    elements: str
    choices: [ports, members, security_groups, floating_ips]
    default: []
  max_deletions:
    description:
      - The most objects one run with I(cleanup) deletes, all kinds together. The others are reported in
        RV(not_deleted).
    type: int
    default: 3
  fail_on_findings:
    description:
      - Fail the task when findings remain at the end (after the deletions) or a kind is unknown. For CI and AWX
        gating.
    type: bool
    default: false
  timeout:
    description:
      - Seconds the whole task may take, retries of transient API faults included.
    type: int
    default: 300
extends_documentation_fragment:
  - flightcontrol.openstack.openstack_auth
attributes:
  check_mode:
    support: full
    description: Reads everything and reports the deletions a clean-up would make (C(planned)); makes no write request.
  diff_mode:
    support: full
    description: Shows the findings of each kind before and after the deletions.
notes:
  - Neutron's and Octavia's C(created_at) are the reference of the ages, so the controller's clock must be roughly
    right (NTP).
  - A cluster that lives on a network it did not create (CAPO's C(network) option) and has no API load balancer
    is known only through I(clusters) or a live server carrying its security group; give I(clusters) before a
    clean-up of security groups or floating IPs.
'''

EXAMPLES = r'''
- name: Report the leaks of the whole project
  flightcontrol.openstack.resource_leak_audit:
    cloud: production
  register: leaks

- name: Show them
  ansible.builtin.debug:
    msg: "{{ leaks.findings | map(attribute='why') | list }}"

- name: Report the leaks of one cluster, the management cluster's clusters taken as existing
  flightcontrol.openstack.resource_leak_audit:
    cloud: production
    cluster: default/prod
    clusters: "{{ groups['capi_clusters'] | map('extract', hostvars, 'capi_cluster_namespace') | zip(
      groups['capi_clusters'] | map('extract', hostvars, 'capi_cluster_name')) | map('join', '/') | list }}"

- name: Delete at most two leaked ports or members
  flightcontrol.openstack.resource_leak_audit:
    cloud: production
    cleanup: [ports, members]
    max_deletions: 2
'''

RETURN = r'''
scope:
  description: The cluster audited (CAPO's resource name C(namespace-name)), or C(project).
  returned: success, and a failure once the project's resources were read
  type: str
findings:
  description: The leaks found, before any deletion, by kind, then oldest first.
  returned: success, and a failure once the project's resources were read
  type: list
  elements: dict
  contains:
    kind:
      description: C(ports), C(members), C(security_groups), C(floating_ips) or C(servers).
      type: str
    id:
      description: The object's id.
      type: str
    name:
      description: Its name (a floating IP's address).
      type: str
    why:
      description: The evidence, in words.
      type: str
    age:
      description: Seconds since its creation, null where the service gives no time.
      type: int
    cluster:
      description: The cluster it belongs to when one is named, else null.
      type: str
    claims:
      description: Every cluster its names, description, tags or network name.
      type: list
      elements: str
    group:
      description: What "every object of a kind" means for it (a kind, or the members of one pool).
      type: str
    keep:
      description: Why a clean-up leaves it (another cluster's claim, an attached floating IP, a server), else null.
      type: str
  sample:
    - {kind: ports, id: 0b5f..., name: prod-md-0-x7k2p-0, age: 86400, cluster: default-prod,
       claims: [default-prod], group: ports, keep: null,
       why: "device_owner compute:nova, device_id 3c1d...: no server of the project has this id"}
remaining:
  description: The findings left at the end (RV(findings) without what was deleted).
  returned: success, and the failure of I(fail_on_findings)
  type: list
  elements: dict
counts:
  description: Findings per kind; C(null) for a kind that is unknown.
  returned: success, and a failure once the project's resources were read
  type: dict
  sample: {ports: 1, members: 0, security_groups: 2, floating_ips: 0, servers: null}
unknown:
  description: Kind -> why its view is not complete (a refused list, in the service's words). Empty when every
    kind was read.
  returned: success, and a failure once the project's resources were read
  type: dict
  sample: {members: "members: HTTP 403: Policy does not allow this request to be performed."}
clusters_present:
  description: The clusters (resource names) taken as existing.
  returned: success, and a failure once the project's resources were read
  type: list
  elements: str
deleted:
  description: Objects deleted (in check mode, that would be deleted), with C(status) C(done), C(planned) or
    C(gone) (already deleted by someone else).
  returned: success, and a failure once the project's resources were read
  type: list
  elements: dict
not_deleted:
  description: Findings of the I(cleanup) kinds that were not deleted, each with the C(reason) (the cap, a guard,
    what the read just before the deletion showed).
  returned: success, and a failure once the project's resources were read
  type: list
  elements: dict
refused:
  description: Why the clean-up deleted nothing at all (a partial view), else null.
  returned: success, and a failure once the project's resources were read
  type: str
healthy:
  description: No finding remains and no kind is unknown.
  returned: success, and the failure of I(fail_on_findings)
  type: bool
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

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.module_base import NumberRange, SECONDS, TIMEOUT
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.module_base import OpenStackModule
from ansible_collections.flightcontrol.openstack.plugins.module_utils.resource_leak_audit.runner import (
    ResourceLeakAuditOptions,
    ResourceLeakAuditRunner,
)


class ResourceLeakAudit(OpenStackModule):
    """The options; the work is the runner's."""

    argument_spec = dict(
        cluster=dict(type="str"),
        clusters=dict(type="list", elements="str", default=[]),
        port_grace_period=dict(type="int", default=3600),
        cleanup=dict(type="list", elements="str", default=[],
                     choices=["ports", "members", "security_groups", "floating_ips"]),
        max_deletions=dict(type="int", default=3),
        fail_on_findings=dict(type="bool", default=False),
        timeout=dict(type="int", default=300),
    )
    number_ranges = dict(
        timeout=TIMEOUT, port_grace_period=SECONDS,
        max_deletions=NumberRange(minimum=1, maximum=100, hint="leave cleanup empty to delete nothing"))
    module_kwargs = dict()

    def run(self) -> None:
        options = ResourceLeakAuditOptions.from_params(
            self.params, check_mode=self.ansible.check_mode, diff=self.ansible._diff)
        ResourceLeakAuditRunner(self, options).run()


def main() -> None:
    ResourceLeakAudit()()


if __name__ == "__main__":
    main()
