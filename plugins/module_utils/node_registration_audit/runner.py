# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The runner of node_registration_audit: read the Nodes and the servers, classify with
``node_registration_audit.plan``, and with state=cleaned delete what the plan allows. The module file gives the
argument spec."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.options import ModuleOptions, ModuleRunner
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import (
    DeadlineExceeded,
    ModuleFailure,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.http import is_sdk_error
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.client import KubernetesClient
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.nodes import list_nodes
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.openstack_module_base import (
    OpenStackKubernetesModule,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.nova.selection import Selection
from ansible_collections.flightcontrol.openstack.plugins.module_utils.nova.server_service import ServerService
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.http import (
    describe_fault,
    service_message,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.node_registration_audit import plan as registration_plan


@dataclass(frozen=True)
class RegistrationOptions(ModuleOptions):
    """What node_registration_audit was asked (with check mode and diff): the runner reads nothing else."""

    servers: Optional[list[str]]
    server_metadata: Optional[dict[str, Any]]
    node_selector: Optional[str]
    registration_timeout: int
    state: str
    max_deletions: int
    fail_on_findings: bool
    timeout: int
    check_mode: bool = False
    diff: bool = False


class RegistrationRunner(ModuleRunner):
    """node_registration_audit's work. ``module`` is the module base it runs in (an ``OpenStackKubernetesModule``: the connections, the clock and
    start time, warnings, exit and fail); ``options`` what was asked."""

    module: OpenStackKubernetesModule
    options: RegistrationOptions
    node_source: KubernetesClient

    def validate(self) -> None:
        options = self.options
        if options.servers is not None and not [p for p in options.servers if p]:
            raise ModuleFailure("servers is empty; name the cluster's servers (a glob such as prod-node-*)")
        if options.server_metadata is not None and not options.server_metadata and not options.servers:
            raise ModuleFailure("server_metadata is empty and servers is not given: that would be every server of "
                                "the project")

    def run(self) -> None:
        self.validate()
        options = self.options
        deadline = self.deadline
        self.node_source = self.module.connect_kubernetes()
        nodes = list_nodes(self.node_source, deadline, label_selector=options.node_selector)
        api = ServerService(self.module.connect())
        listed = api.list_servers(deadline)
        selection = registration_plan.choose_servers(listed, options.servers, options.server_metadata)
        servers = selection.chosen
        now = registration_plan.epoch_time(self.clock.time())
        records = registration_plan.classify(servers, nodes, now, options.registration_timeout)
        findings = [r for r in records if r["state"] in (registration_plan.UNREGISTERED, registration_plan.ERROR)]
        counts = registration_plan.counts(records)
        counts["nodes"] = len(nodes)
        result: dict[str, Any] = dict(servers=records, unregistered=findings, deleted=[], not_deleted=[], refused=None,
                                      counts=counts, unmatched=selection.missing)
        if selection.missing or not records:
            # an audit of fewer servers than asked for is no healthy audit: fail before any deletion
            result.update(remaining=findings, healthy=False, changed=False)
            raise ModuleFailure(registration_plan.unmatched_message(
                selection.missing, options.server_metadata, len(listed)), **result)
        if options.state == "cleaned":
            self.clean(api, records, servers, nodes, deadline, result, selection)
        self.conclude(result, records, findings)

    def conclude(self, result: dict[str, Any], records: list[dict[str, Any]], findings: list[dict[str, Any]]) -> None:
        """Finish the result (what remains, healthy, changed, diff); fail on findings when asked."""
        gone = set(d["id"] for d in result["deleted"])
        result["remaining"] = [r for r in findings if r["id"] not in gone]
        result["healthy"] = not result["remaining"]
        result["changed"] = bool(result["deleted"]) and any(d["status"] in ("done", "planned")
                                                            for d in result["deleted"])
        if self.options.diff:
            kept = [r for r in records if r["state"] != registration_plan.DELETING]
            result["diff"] = dict(before=dict(servers=[r["name"] for r in kept]),
                                  after=dict(servers=[r["name"] for r in kept if r["id"] not in gone]))
        if self.options.fail_on_findings and result["remaining"]:
            remaining = "; ".join(f'{r["name"]} ({r["id"]}): {r["reason"]}' for r in result["remaining"])
            raise ModuleFailure(f"{len(result['remaining'])} server(s) never became a Node or are in ERROR: "
                                f"{remaining}", **result)
        self.module.exit(**result)

    def clean(self, api: ServerService, records: list[dict[str, Any]], servers: list[dict[str, Any]],
              nodes: list[dict[str, Any]], deadline: Deadline, result: dict[str, Any], selection: Selection) -> None:
        check = self.options.check_mode
        metadata_by_id = dict((s["id"], s.get("metadata")) for s in servers)
        delete, skipped, refusal = registration_plan.plan_deletions(
            records, self.options.max_deletions, len(nodes), metadata_by_id, selection)
        result["not_deleted"], result["refused"] = skipped, refusal
        if refusal:
            self.module.warn(refusal)
        marks = registration_plan.cluster_marks(records, metadata_by_id)
        for record in delete:
            entry = dict(id=record["id"], name=record["name"], status="planned" if check else "done",
                         state=record["state"], age=record["age"], created=record["created"], reason=record["reason"])
            if not check:
                try:
                    why = self.recheck(api, record, marks, deadline)
                    if why == registration_plan.GONE_SINCE:
                        entry["status"] = "gone"
                    elif why is not None:
                        result["not_deleted"].append(dict(registration_plan.brief(record), reason="not deleted: " + why))
                        continue
                    elif not api.delete_server(record["id"], deadline):
                        entry["status"] = "gone"
                except Exception as exc:  # pylint: disable=broad-except
                    known = describe_fault(exc) is not None or is_sdk_error(exc)
                    message = service_message(exc) if known else self.module.describe_error(exc)
                    if isinstance(exc, DeadlineExceeded):
                        message = str(exc)
                    if message is None:
                        raise
                    result["changed"] = bool(result["deleted"])
                    raise ModuleFailure(f"deleting server {record['name']} ({record['id']}, {record['reason']}) "
                                        f"failed: {message}; deleted before it: "
                                        f"{', '.join(d['name'] for d in result['deleted']) or 'none'}", **result)
            result["deleted"].append(entry)

    def recheck(self, api: ServerService, record: dict[str, Any], marks: dict[str, Any], deadline: Deadline) -> str | None:
        """Read the servers and the Nodes again just before deleting ``record``'s server: None when the guards
        still hold on that read, else why the server is kept (``node_registration_audit.plan.recheck``)."""
        options = self.options
        nodes = list_nodes(self.node_source, deadline, label_selector=options.node_selector)
        servers = api.list_servers(deadline)
        now = registration_plan.epoch_time(self.clock.time())
        return registration_plan.recheck(record, servers, nodes, options.servers, options.server_metadata, marks,
                                         now, options.registration_timeout)
