# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The runner of resource_leak_audit: read the project (a list refused with 403, or a service missing from the
catalog, makes that view unknown), judge with ``resource_leak_audit.plan``, and with ``cleanup`` delete what the
plan allows, each deletion judged again on a fresh read. The module file gives the argument spec."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.names import cluster_reference_problem
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.options import ModuleOptions, ModuleRunner
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import (
    DeadlineExceeded,
    ModuleFailure,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.neutron.project_service import (
    ProjectNetworkService,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.nova.server_service import ServerService
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.listing import BUSY, LoadBalancerListing
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.http import (
    describe_fault,
    http_status,
    is_sdk_error,
    service_message,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.connection import OpenStackClient
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.module_base import OpenStackModule
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.sdk import ksa_exceptions
from ansible_collections.flightcontrol.openstack.plugins.module_utils.resource_leak_audit import plan as leak_plan

#: Answers to a list that mean "this view cannot be read by this user" (never "empty"): a policy that forbids
#: it (403), an API that does not serve it (404).
REFUSED = (403, 404)


def refusal_of(exc: BaseException) -> str | None:
    """Why a list could not be read, when the answer means the view is unknown to this user; else None."""
    if http_status(exc) in REFUSED:
        return service_message(exc)
    if ksa_exceptions is not None and isinstance(exc, ksa_exceptions.EndpointNotFound):
        return f"the service is not in the catalog ({exc})"
    return None


class Reader:
    """One read of the project into a ``plan.View``: each list once; a refused list is an unknown view."""

    def __init__(self, client: OpenStackClient, deadline: Deadline, scope: str | None) -> None:
        self.network = ProjectNetworkService(client)
        self.servers = ServerService(client)
        self.octavia = LoadBalancerListing(client)
        self.deadline = deadline
        self.scope = scope
        self.project_id: Any = None  # read once, at the first read

    def attempt(self, lists: dict[str, Any], unknown: dict[str, str], name: str, read: Callable[[], Any]) -> None:
        try:
            lists[name] = read()
        except Exception as exc:  # pylint: disable=broad-except
            why = refusal_of(exc)
            if why is None:
                raise
            unknown[name] = why

    def read(self) -> leak_plan.View:
        deadline = self.deadline
        if self.project_id is None:
            self.project_id = self.network.project_id(deadline)
        lists: dict[str, Any] = {}
        unknown: dict[str, str] = {}
        self.attempt(lists, unknown, "servers", lambda: self.servers.list_servers(deadline))
        for kind in ("ports", "networks", "routers", "security_groups", "floating_ips"):
            self.attempt(lists, unknown, kind,
                         lambda k=kind: self.network.list_kind(k, self.project_id, deadline))  # type: ignore[misc]
        self.attempt(lists, unknown, "loadbalancers", lambda: self.octavia.list_loadbalancers(self.project_id, deadline))
        if "loadbalancers" in lists:
            self.attempt(lists, unknown, "pools", lambda: self.octavia.list_pools(self.project_id, deadline))
        else:
            unknown["pools"] = unknown["members"] = "the load balancers could not be listed"
        if "pools" in lists:
            self.attempt(lists, unknown, "members", lambda: self.members(lists))
        return leak_plan.View(unknown=unknown, **lists)

    def members(self, lists: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
        """pool id -> members, for the pools of CAPO's API load balancers (of the scope's cluster): one list each."""
        wanted = set()
        for lb in lists["loadbalancers"]:
            claimed = leak_plan.loadbalancer_claims(lb.get("name"))
            if claimed and (self.scope is None or self.scope in claimed):
                wanted.add(lb["id"])
        result: dict[str, list[dict[str, Any]]] = {}
        for pool in lists["pools"]:
            if wanted & set(x["id"] if isinstance(x, dict) else x for x in pool.get("loadbalancers") or []):
                result[pool["id"]] = self.octavia.list_members(pool["id"], self.deadline)
        return result


@dataclass(frozen=True)
class ResourceLeakAuditOptions(ModuleOptions):
    """What resource_leak_audit was asked (its parameters, check mode and diff)."""

    cluster: Optional[str]
    clusters: list[str]
    port_grace_period: int
    cleanup: list[str]
    max_deletions: int
    fail_on_findings: bool
    timeout: int
    check_mode: bool = False
    diff: bool = False


class ResourceLeakAuditRunner(ModuleRunner):
    """``module`` the OpenStack module base (connection, start time, warnings, exit and fail); ``options`` what was
    asked."""

    module: OpenStackModule
    options: ResourceLeakAuditOptions

    def __init__(self, module: OpenStackModule, options: ResourceLeakAuditOptions) -> None:
        super().__init__(module, options)
        self.reader: Any = None  # the Reader, once connected

    def plan_options(self) -> leak_plan.Options:
        options = self.options
        problems = [cluster_reference_problem("cluster", options.cluster)] if options.cluster is not None else []
        problems += [cluster_reference_problem(f"clusters[{index}]", entry)
                     for index, entry in enumerate(options.clusters or [])]
        if any(problems):
            raise ModuleFailure("; ".join(p for p in problems if p) + "; nothing was read or deleted (leave cluster "
                                "out to audit the whole project)")
        scope = leak_plan.cluster_resource(options.cluster) if options.cluster is not None else None
        known = [leak_plan.cluster_resource(c) for c in options.clusters or []]
        now = leak_plan.datetime.datetime.fromtimestamp(self.clock.time(), leak_plan.UTC)
        return leak_plan.Options(scope=scope, clusters=known, now=now, port_grace_period=options.port_grace_period)

    def run(self) -> None:
        options = self.options
        deadline = self.deadline
        plan_options = self.plan_options()
        self.reader = Reader(self.module.connect(), deadline, plan_options.scope)
        result = leak_plan.audit(self.reader.read(), plan_options)
        data: dict[str, Any] = dict(
            scope=self.reader.scope or "project", findings=result.findings, counts=leak_plan.counts(result),
            unknown=result.unknown, clusters_present=sorted(result.present), deleted=[], not_deleted=[], refused=None)
        if options.cleanup:
            self.clean(result, data, deadline)
        self.conclude(data)

    def conclude(self, data: dict[str, Any]) -> None:
        gone = set((d["kind"], d["id"]) for d in data["deleted"] if d["status"] in ("done", "planned", "gone"))
        data["remaining"] = [f for f in data["findings"] if (f["kind"], f["id"]) not in gone]
        data["healthy"] = not data["remaining"] and not data["unknown"]
        data["changed"] = any(d["status"] in ("done", "planned") for d in data["deleted"])
        if self.options.diff:
            def listing(entries: list[dict[str, Any]]) -> dict[str, list[str]]:
                out: dict[str, list[str]] = dict((k, []) for k in leak_plan.KINDS)
                for f in entries:
                    out[f["kind"]].append(f'{f["name"]} ({f["id"]})' if f["name"] else f["id"])
                return out
            data["diff"] = dict(before=listing(data["findings"]), after=listing(data["remaining"]))
        if self.options.fail_on_findings and (data["remaining"] or data["unknown"]):
            counts = ", ".join(f'{n} {k.replace("_", " ")}' for k, n in sorted(data["counts"].items()) if n) or "none"
            unknown = "; ".join(f"{kind} ({why})" for kind, why in sorted(data["unknown"].items()))
            raise ModuleFailure(f"leaks remain: {counts}{f'; unknown: {unknown}' if data['unknown'] else ''}", **data)
        self.module.exit(**data)

    def clean(self, result: leak_plan.Audit, data: dict[str, Any], deadline: Deadline) -> None:
        options = self.options
        candidates, skipped, refusal = leak_plan.candidates_of(result, options.cleanup)
        data["not_deleted"], data["refused"] = skipped, refusal
        if refusal:
            self.module.warn(refusal)
        cap = options.max_deletions
        for index, entry in enumerate(candidates):
            if len(data["deleted"]) >= cap:
                data["not_deleted"] += leak_plan.over_cap(candidates[index:], cap)
                break
            record = dict(kind=entry["kind"], id=entry["id"], name=entry["name"], age=entry["age"], why=entry["why"],
                          status="planned")
            if not options.check_mode:
                record["status"], why = self.delete_fresh(entry, data, deadline)
                if why is not None:
                    data["not_deleted"].append(leak_plan.brief(entry, "not deleted: " + why))
                    continue
            data["deleted"].append(record)

    def delete_fresh(self, entry: dict[str, Any], data: dict[str, Any], deadline: Deadline) -> tuple[str | None, str | None]:
        """Judge ``entry`` again on a fresh read and delete it: (``done`` or ``gone``, None), or (None, why it is
        kept: the fresh read, a busy load balancer, a policy that forbids it)."""
        try:
            why = leak_plan.recheck(entry, leak_plan.audit(self.reader.read(), self.plan_options()),
                                    self.options.cleanup)
            if why is not None:
                return None, why
            status = self.delete(entry, deadline)
        except Exception as exc:  # pylint: disable=broad-except
            if http_status(exc) == 403:
                hint = "; Neutron lets only an admin or the compute service delete a port of a compute device" \
                    if entry["kind"] == leak_plan.PORTS else ""
                return None, f"the service's policy forbids this user to delete it ({service_message(exc)}){hint}"
            self.fail_deleting(exc, entry, data)
        if status == BUSY:
            return None, "the load balancer is busy (409, PENDING_*); a later run deletes it"
        return status, None

    def delete(self, entry: dict[str, Any], deadline: Deadline) -> str:
        if entry["kind"] == leak_plan.MEMBERS:
            done = self.reader.octavia.delete_member(entry["pool_id"], entry["id"], deadline)
        else:
            done = self.reader.network.delete_object(entry["kind"], entry["id"], deadline)
        if done == BUSY:
            return BUSY
        return "done" if done else "gone"

    def fail_deleting(self, exc: Exception, entry: dict[str, Any], data: dict[str, Any]) -> None:
        known = describe_fault(exc) is not None or is_sdk_error(exc)
        message = str(exc) if isinstance(exc, DeadlineExceeded) else (
            service_message(exc) if known else self.module.describe_error(exc))
        if message is None:
            raise exc
        data["changed"] = any(d["status"] == "done" for d in data["deleted"])
        raise ModuleFailure(f"deleting {entry['kind'].replace('_', ' ')} {entry['name'] or entry['id']} "
                            f"({entry['id']}: {entry['why']}) failed: {message}; deleted before it: "
                            f"{', '.join(d['name'] or d['id'] for d in data['deleted']) or 'none'}", **data)
