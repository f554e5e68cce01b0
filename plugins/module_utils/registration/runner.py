# -*- coding: utf-8 -*-
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The runner of node_registration_audit: read the Nodes and the servers, classify with
``registration.plan``, and with state=cleaned delete what the plan allows. The module file gives the
argument spec."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import (
    DeadlineExceeded,
    ModuleFailure,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.http import is_sdk_error
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.openstack_module_base import (
    OpenStackKubernetesModule,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.nodes import list_nodes
from ansible_collections.flightcontrol.openstack.plugins.module_utils.nova.server_service import ServerService
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.http import (
    describe_fault,
    service_message,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.registration import plan as registration_plan


class RegistrationRunner(OpenStackKubernetesModule):
    def validate(self):
        params = self.params
        if params["servers"] is not None and not [p for p in params["servers"] if p]:
            raise ModuleFailure("servers is empty; name the cluster's servers (a glob such as prod-node-*)")
        if params["server_metadata"] is not None and not params["server_metadata"] and not params["servers"]:
            raise ModuleFailure("server_metadata is empty and servers is not given: that would be every server of "
                                "the project")

    def run(self):
        self.validate()
        params = self.params
        deadline = self.started + params["timeout"]
        nodes = list_nodes(self.connect_kubernetes(), deadline, label_selector=params.get("node_selector"))
        self.connect()
        api = ServerService(self.client)
        servers = registration_plan.select_servers(api.list_servers(deadline), params["servers"],
                                                   params["server_metadata"])
        now = registration_plan.epoch_time(self.clock.time())
        records = registration_plan.classify(servers, nodes, now, params["registration_timeout"])
        findings = [r for r in records if r["state"] in (registration_plan.UNREGISTERED, registration_plan.ERROR)]
        counts = registration_plan.counts(records)
        counts["nodes"] = len(nodes)
        result = dict(servers=records, unregistered=findings, deleted=[], not_deleted=[], refused=None, counts=counts)
        if not records:
            self.ansible.warn("no server matched servers=%s server_metadata=%s" % (
                params["servers"], params["server_metadata"]))
        if params["state"] == "cleaned":
            self.clean(api, records, servers, nodes, deadline, result)
        self.conclude(result, records, findings)

    def conclude(self, result, records, findings):
        """Finish the result (what remains, healthy, changed, diff); fail on findings when asked."""
        gone = set(d["id"] for d in result["deleted"])
        result["remaining"] = [r for r in findings if r["id"] not in gone]
        result["healthy"] = not result["remaining"]
        result["changed"] = bool(result["deleted"]) and any(d["status"] in ("done", "planned")
                                                            for d in result["deleted"])
        if self.ansible._diff:
            kept = [r for r in records if r["state"] != registration_plan.DELETING]
            result["diff"] = dict(before=dict(servers=[r["name"] for r in kept]),
                                  after=dict(servers=[r["name"] for r in kept if r["id"] not in gone]))
        if self.params["fail_on_findings"] and result["remaining"]:
            raise ModuleFailure("%d server(s) never became a Node or are in ERROR: %s" % (
                len(result["remaining"]), "; ".join("%s (%s): %s" % (r["name"], r["id"], r["reason"])
                                                    for r in result["remaining"])), **result)
        self.exit(**result)

    def clean(self, api, records, servers, nodes, deadline, result):
        check = self.ansible.check_mode
        delete, skipped, refusal = registration_plan.plan_deletions(
            records, self.params["max_deletions"], len(nodes), dict((s["id"], s.get("metadata")) for s in servers))
        result["not_deleted"], result["refused"] = skipped, refusal
        if refusal:
            self.ansible.warn(refusal)
        for record in delete:
            entry = dict(id=record["id"], name=record["name"], status="planned" if check else "done",
                         state=record["state"], age=record["age"], created=record["created"], reason=record["reason"])
            if not check:
                try:
                    if not api.delete_server(record["id"], deadline):
                        entry["status"] = "gone"
                except Exception as exc:  # pylint: disable=broad-except
                    if not isinstance(exc, DeadlineExceeded) and describe_fault(exc) is None \
                            and not is_sdk_error(exc):
                        raise
                    result["changed"] = bool(result["deleted"])
                    raise ModuleFailure("deleting server %s (%s, %s) failed: %s; deleted before it: %s" % (
                        record["name"], record["id"], record["reason"], service_message(exc),
                        ", ".join(d["name"] for d in result["deleted"]) or "none"), **result)
            result["deleted"].append(entry)
