# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The runner of secgroup_ensure: read everything (the group, remote groups, servers, their ports), plan
with ``secgroup_ensure.plan``, then write (the group, rules, ports with If-Match), recording each write so that
a failure halfway says what was made and what was not. The module file gives the argument spec."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.options import ModuleOptions, ModuleRunner
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import (
    DeadlineExceeded,
    KeptChanging,
    ModuleFailure,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.identifiers import is_uuid, normalize_uuid
from ansible_collections.flightcontrol.openstack.plugins.module_utils.neutron.network_service import NetworkService
from ansible_collections.flightcontrol.openstack.plugins.module_utils.neutron.revisions import update_with_reread
from ansible_collections.flightcontrol.openstack.plugins.module_utils.nova.server_service import ServerService
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.module_base import OpenStackModule
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.http import (
    error_message,
    http_status,
    service_message,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.secgroup_ensure import plan as sr


@dataclass
class Work:
    """Everything read and planned before the first write."""

    group: Optional[dict[str, Any]]  # the group as read (None: not there)
    name: str
    wanted: list[sr.Rule]  # the pod_cidr rules
    group_ids: dict[str, str]  # remote group name -> id (sr.NEW_GROUP for the group itself before it exists)
    plan: Any = None  # sr.RulePlan, once planned
    existing: list[sr.Rule] = field(default_factory=list)  # the group's rules as sr.Rule
    chosen: list[dict[str, Any]] = field(default_factory=list)  # the servers chosen
    changes: list[sr.PortChange] = field(default_factory=list)  # sr.PortChange
    skipped: list[dict[str, Any]] = field(default_factory=list)
    portless: list[dict[str, Any]] = field(default_factory=list)

    @property
    def group_id(self) -> Optional[str]:
        return self.group["id"] if self.group else None


@dataclass
class Progress:
    """The writes made so far, in order."""

    group_id: Any = None  # the group's id once it exists
    group_created: bool = False
    created: list[sr.Rule] = field(default_factory=list)
    unchanged: list[sr.Rule] = field(default_factory=list)
    deleted: list[sr.Rule] = field(default_factory=list)
    updated: list[dict[str, Any]] = field(default_factory=list)
    deletes_made: list[sr.Rule] = field(default_factory=list)
    ports_made: list[sr.PortChange] = field(default_factory=list)


@dataclass(frozen=True)
class SecgroupOptions(ModuleOptions):
    """What secgroup_ensure was asked (with check mode and diff): the runner reads nothing else."""

    security_group: str
    description: Optional[str]
    create: bool
    pod_cidr: Optional[list[str]]
    rules: Optional[list[dict[str, Any]]]
    exclusive: bool
    max_removal_share: float
    servers: Optional[list[str]]
    skip_ports_without_port_security: bool
    state: str
    timeout: int
    check_mode: bool = False
    diff: bool = False


class SecgroupRunner(ModuleRunner):
    """secgroup_ensure's work. ``module`` is the module base it runs in (an ``OpenStackModule``: the connections, the clock and
    start time, warnings, exit and fail); ``options`` what was asked."""

    module: OpenStackModule
    options: SecgroupOptions

    # -- input -------------------------------------------------------------------------

    def validate(self) -> tuple[list[sr.Rule], set[str], set[str]]:
        """Check all input before any request; returns the wanted rules (remote group names unresolved)."""
        options = self.options
        if options.exclusive and options.state == "absent":
            raise ModuleFailure("exclusive applies to state=present only")
        if options.exclusive and not options.pod_cidr and not options.rules:
            raise ModuleFailure("exclusive with neither pod_cidr nor rules would remove every rule of the group; "
                                "nothing was changed (give the rules the group keeps)")
        self.check_texts()
        if options.servers is not None and not options.servers:
            raise ModuleFailure("servers is an empty list; omit it to leave memberships alone")
        try:
            wanted = sr.pod_cidr_rules(options.pod_cidr or [])
        except sr.RuleError as exc:
            raise ModuleFailure(str(exc))
        names: set[str] = set()
        ids: set[str] = set()
        for index, spec in enumerate(options.rules or []):
            group = spec.get("remote_group")
            if group:
                (ids if is_uuid(group) else names).add(group)
            try:  # with every name resolvable, to check everything else now
                sr.normalize_rule(spec, dict((n, "00000000-0000-0000-0000-000000000000") for n in names))
            except sr.RuleError as exc:
                raise ModuleFailure(f"rules[{index}]: {exc}")
        return wanted, names, ids

    def check_texts(self) -> None:
        options = self.options
        problems = [sr.text_problem("security_group", options.security_group, required=True),
                    sr.text_problem("description", options.description)]
        problems += [sr.text_problem(f"rules[{i}].description", r.get("description"))
                     for i, r in enumerate(options.rules or [])]
        problems += [sr.text_problem(f"rules[{i}].remote_group", r.get("remote_group"), required=True)
                     for i, r in enumerate(options.rules or []) if r.get("remote_group") is not None]
        found = [p for p in problems if p]
        if found:
            raise ModuleFailure("; ".join(found))

    def resolve_rules(self, wanted: list[sr.Rule], group_ids: dict[str, str]) -> list[sr.Rule]:
        rules = list(wanted)
        for index, spec in enumerate(self.options.rules or []):
            try:
                rules.append(sr.normalize_rule(spec, group_ids))
            except sr.RuleError as exc:
                raise ModuleFailure(f"rules[{index}]: {exc}")
        return sr.dedupe(rules)

    # -- reading and planning (no write) -----------------------------------------------

    def find_group(self, api: NetworkService, deadline: Deadline) -> dict[str, Any] | None:
        options, ref = self.options, self.options.security_group
        group = api.find_group(ref, deadline, is_id=is_uuid(ref))
        if group is None and options.state == "present" and (not options.create or is_uuid(ref)):
            why = " (an id cannot be created; give a name)" if is_uuid(ref) and options.create else " and create is false"
            raise ModuleFailure(f"security group {ref} not found{why}")
        return group

    def remote_group_ids(self, api: NetworkService, group: dict[str, Any] | None, remote_names: set[str],
                         remote_ids: set[str], deadline: Deadline) -> dict[str, str]:
        """name -> id of every remote group the rules name; fails for a name or id that is no group."""
        name, group_id = (group["name"], group["id"]) if group else (self.options.security_group, None)
        group_ids: dict[str, str] = {}
        if remote_names:
            group_ids = api.group_ids_by_name(sorted(n for n in remote_names if n != name), deadline)
        if name in remote_names:
            group_ids[name] = group_id or sr.NEW_GROUP
        unknown = sorted(remote_names - set(group_ids))
        if unknown:
            raise ModuleFailure(f'remote_group {", ".join(unknown)}: no security group with that name; nothing was changed')
        other_ids = sorted(set(normalize_uuid(i) for i in remote_ids) - set([normalize_uuid(group_id or "")]))
        missing_ids = sorted(set(other_ids) - api.existing_group_ids(other_ids, deadline))
        if missing_ids:
            raise ModuleFailure(f'remote_group {", ".join(missing_ids)}: no security group with that id; nothing was changed')
        return group_ids

    def plan_ports(self, api: NetworkService, work: Work, deadline: Deadline) -> None:
        """The chosen servers and the port changes they need (servers and ports are read here)."""
        options, state = self.options, self.options.state
        servers = ServerService(api.client).list_server_names(deadline)
        work.chosen, missing = sr.select_servers(servers, options.servers)
        if missing:
            raise ModuleFailure(f'server(s) {", ".join(missing)} not found (looked up by id and by name among {len(servers)} servers of '
                                "this project); nothing was changed")
        if work.chosen and not (work.group_id is None and state == "absent"):  # no group: nothing to take off
            ports = api.list_ports([s["id"] for s in work.chosen], deadline)
            work.changes, work.skipped, work.portless = sr.plan_ports(
                work.chosen, ports, work.group_id or sr.NEW_GROUP, state)
        if work.skipped and not options.skip_ports_without_port_security and state == "present":
            skipped = ", ".join(f'{s["port"]} (server {s["server"]})' for s in work.skipped)
            raise ModuleFailure(
                f"{len(work.skipped)} port(s) cannot carry security group {work.name} because port security is "
                f"disabled on them: {skipped}; nothing was changed (set skip_ports_without_port_security to leave them "
                "alone)", ports_skipped=work.skipped)

    def plan_rules(self, work: Work) -> None:
        options = self.options
        rules = self.resolve_rules(work.wanted, work.group_ids)
        work.existing = [sr.rule_from_neutron(r) for r in (work.group or {}).get("security_group_rules") or []]
        work.plan = sr.plan_rules(rules, work.existing, options.state, options.exclusive) \
            if work.group or options.state == "present" else sr.RulePlan([], [], [])
        if options.exclusive and work.group is not None:
            refusal = sr.exclusive_refusal(work.plan, work.existing, options.max_removal_share)
            if refusal:
                raise ModuleFailure(f"security group {work.name}: {refusal}")

    # -- the run -----------------------------------------------------------------------

    def run(self) -> None:
        wanted, remote_names, remote_ids = self.validate()
        deadline = self.deadline
        api = NetworkService(self.module.connect())
        group = self.find_group(api, deadline)
        work = Work(group=group, name=group["name"] if group else self.options.security_group, wanted=wanted,
                    group_ids=self.remote_group_ids(api, group, remote_names, remote_ids, deadline))
        # Servers and ports: everything is read before the first write.
        if self.options.servers:
            self.plan_ports(api, work, deadline)
        self.plan_rules(work)
        before = self.snapshot(work.existing, work.changes, "before")
        result = dict(conflicts=[], servers=[dict(id=s["id"], name=s.get("name")) for s in work.chosen],
                      servers_without_ports=[s.get("name") or s["id"] for s in work.portless],
                      ports_skipped=work.skipped)
        created_group = group is None and self.options.state == "present"
        if self.options.check_mode:
            plan = work.plan
            after_rules = [r for r in work.existing if r.key not in set(d.key for d in plan.delete)] + plan.create
            self.report(result, work.group_id, work.name, created_group, plan.create, plan.delete, plan.present,
                        [c.view() for c in work.changes], before, self.snapshot(after_rules, work.changes, "after"))
            return
        progress = Progress(group_id=work.group_id, unchanged=list(work.plan.present))
        try:
            before = self.write(api, work, progress, before, result, deadline)
        except Exception as exc:  # pylint: disable=broad-except
            self.fail_halfway(exc, progress, work, result)
        after_rules = [r for r in work.existing if r.key not in set(d.key for d in progress.deleted)] + \
            progress.created
        after = self.snapshot(after_rules, [], "after")
        after["ports"] = dict(before["ports"])
        for view in progress.updated:
            after["ports"][view["port"]] = view["after"]
        self.report(result, progress.group_id, work.name, progress.group_created, progress.created, progress.deleted,
                    progress.unchanged, progress.updated, before, after)

    # -- writes ------------------------------------------------------------------------

    def create_group(self, api: NetworkService, work: Work, progress: Progress, deadline: Deadline,
                     conflicts: list[dict[str, Any]]) -> dict[str, Any]:
        """Create the group (or adopt the one a concurrent run created: ``settle_twins``), then plan its rules
        again against the rules Neutron gave it; the diff's before."""
        options = self.options
        group = api.create_group(options.security_group, options.description, deadline)
        progress.group_id, progress.group_created = group["id"], True
        group = self.settle_twins(api, group, progress, deadline, conflicts)
        work.existing[:] = [sr.rule_from_neutron(r) for r in group.get("security_group_rules") or []]
        group_ids = dict((k, group["id"] if v == sr.NEW_GROUP else v) for k, v in work.group_ids.items())
        fresh = sr.plan_rules(self.resolve_rules(work.wanted, group_ids), work.existing, options.state,
                              options.exclusive)
        work.plan.create, work.plan.delete, work.plan.present = fresh.create, fresh.delete, fresh.present
        progress.unchanged = list(work.plan.present)
        for change in work.changes:
            change.after = [group["id"] if g == sr.NEW_GROUP else g for g in change.after]
        return self.snapshot(work.existing, work.changes, "before")

    def settle_twins(self, api: NetworkService, ours: dict[str, Any], progress: Progress, deadline: Deadline,
                     conflicts: list[dict[str, Any]]) -> dict[str, Any]:
        """Look again by name after the create: when another run created a group of the name at the same time,
        every run keeps the oldest (``sr.settle_twins``); ours is deleted when it is the newer one and still as
        Neutron made it (no port has it yet: this run has not written one), and the kept group is adopted. The
        group this run goes on with."""
        name = ours["name"]
        twins = api.groups_named(name, deadline)
        if len(twins) < 2:
            return ours
        kept, remove_ours = sr.settle_twins(twins, ours["id"])
        others = ", ".join(g["id"] for g in twins if g["id"] != ours["id"])
        if not remove_ours:
            conflicts.append(dict(kind="group_created_concurrently", group=ours["id"], detail=(
                f"another run created a group named {name} at the same time ({others}); this run's group is the oldest and is "
                "kept, the other run removes its own")))
            return ours
        now = api.find_group(ours["id"], deadline, is_id=True)
        if not sr.untouched_since_created(ours, now):
            raise ModuleFailure(f"security group {name}: another run created a group of this name at the same time "
                                f"({others}), and this run's group {ours['id']} was changed meanwhile, so it is not "
                                "removed; remove one of them by hand")
        api.delete_group(ours["id"], deadline)
        progress.group_id, progress.group_created = kept["id"], False
        conflicts.append(dict(kind="group_created_concurrently", group=kept["id"], detail=(
            f"another run created a group named {name} at the same time: this run's group {ours['id']} was deleted and "
            f"the older one, {kept['id']}, adopted")))
        return kept

    def write(self, api: NetworkService, work: Work, progress: Progress, before: dict[str, Any], result: dict[str, Any],
              deadline: Deadline) -> dict[str, Any]:
        """Make the planned writes, recording each in ``progress`` as it is done; returns the diff's before."""
        if progress.group_id is None and self.options.state == "present":
            before = self.create_group(api, work, progress, deadline, result["conflicts"])
        for rule in work.plan.create:
            made, is_new = api.create_rule(rule.to_api(progress.group_id), deadline,
                                           matches=lambda found, key=rule.key: sr.rule_from_neutron(found).key == key)  # type: ignore[misc]
            if is_new:
                progress.created.append(sr.rule_from_neutron(made) if made else rule)
            else:
                progress.unchanged.append(rule)
                result["conflicts"].append(dict(kind="rule_exists", rule=rule.view(),
                                                detail="created by someone else meanwhile (HTTP 409)"))
        for rule in self.deletes_now(api, work, progress, deadline):
            if api.delete_rule(rule.id, deadline):
                progress.deleted.append(rule)
            progress.deletes_made.append(rule)
        for change in work.changes:
            view = self.update_port(api, change, progress.group_id, deadline, result["conflicts"])
            if view is not None:
                progress.updated.append(view)
            progress.ports_made.append(change)
        return before

    def deletes_now(self, api: NetworkService, work: Work, progress: Progress, deadline: Deadline) -> list[sr.Rule]:
        """The planned deletes, judged again on the group as it is just before them (one read, only when there is
        something to delete): a rule already gone is skipped (recorded as made), and ``exclusive``'s removal guard
        is checked again on the fresh rules of a group that existed before the run, so the deletes never go beyond
        what the guard allows of the group they change. A rule added after the plan's read is never deleted: only
        planned rules are."""
        planned = work.plan.delete
        if not planned:
            return []
        group = api.find_group(progress.group_id, deadline, is_id=True)
        fresh = [sr.rule_from_neutron(r) for r in (group or {}).get("security_group_rules") or []]
        delete, gone, refusal = sr.recheck_deletes(planned, fresh, self.options.max_removal_share)
        progress.deletes_made.extend(gone)
        if refusal and self.options.exclusive and work.group is not None:  # a group made by this run: no guard
            raise ModuleFailure(f"on the group as it is now (read again before the deletes): {refusal}")
        return delete

    def update_port(self, api: NetworkService, change: sr.PortChange, group_id: str, deadline: Deadline,
                    conflicts: list[dict[str, Any]]) -> dict[str, Any] | None:
        """Send the change with If-Match; on 412 read the port again and recompute. None if nothing was left
        to do (someone else made the same change)."""
        state, server = self.options.state, change.server.get("name")

        def compute(port: dict[str, Any]) -> list[str] | None:
            current = list(port.get("security_groups") or [])
            after = sr.wanted_groups(current, group_id, state)
            return None if after == current else after

        def send(port: dict[str, Any], after: list[str]) -> Any:
            try:
                return api.update_port_groups(port["id"], after, port.get("revision_number"), deadline)
            except Exception as exc:  # pylint: disable=broad-except
                if http_status(exc) is None:
                    raise
                raise ModuleFailure(f"updating the security groups of port {port['id']} (server {server}) failed: HTTP "
                                    f"{http_status(exc)}: {error_message(exc)}")

        def on_conflict(port: dict[str, Any]) -> None:
            conflicts.append(dict(kind="port_changed", port=port["id"], server=server,
                                  detail="HTTP 412: the port changed meanwhile (now revision "
                                         f"{port.get('revision_number')}, groups {port.get('security_groups')}); read "
                                         "again"))

        port = dict(change.port, security_groups=list(change.before))
        try:
            updated, sent, attempts = update_with_reread(
                port, compute, send, lambda p: api.get_port(p["id"], deadline), on_conflict)
        except KeptChanging as exc:
            raise ModuleFailure(f"port {exc.current['id']} (server {server}) kept changing: {exc.attempts} updates "
                                "were refused with HTTP 412")
        if not sent:
            return None
        view = change.view()
        view.update(before=list(change.before), after=list(updated.get("security_groups") or change.after),
                    attempts=attempts)
        return view

    def fail_halfway(self, exc: Exception, progress: Progress, work: Work, result: dict[str, Any]) -> None:
        """A write failed: fail saying what was done (``changed`` true if anything was), what was not, and the
        service's own words; a re-run finishes the job."""
        if isinstance(exc, ModuleFailure):
            reason = str(exc)
        elif isinstance(exc, DeadlineExceeded) or self.module.describe_error(exc) is not None:
            reason = service_message(exc)
        else:
            raise exc
        made_keys = set(r.key for r in progress.created + progress.unchanged)
        deletes_made = set(id(r) for r in progress.deletes_made)
        ports_made = set(id(c) for c in progress.ports_made)
        not_done = [dict(what="create_rule", item=r.view()) for r in work.plan.create if r.key not in made_keys]
        not_done += [dict(what="delete_rule", item=r.view()) for r in work.plan.delete if id(r) not in deletes_made]
        not_done += [dict(what="update_port", item=c.view()) for c in work.changes if id(c) not in ports_made]
        made = (["the group created"] if progress.group_created else []) + [
            f"{len(done)} {what}" for done, what in (
                (progress.created, "rule(s) created"), (progress.deleted, "rule(s) deleted"),
                (progress.updated, "port(s) updated")) if done]
        result.update(
            security_group=dict(id=progress.group_id, name=work.name, created=progress.group_created),
            rules_created=[r.view() for r in progress.created],
            rules_deleted=[r.view() for r in progress.deleted],
            rules_unchanged=[r.view() for r in progress.unchanged],
            ports_updated=progress.updated, not_done=not_done, changed=bool(made))
        raise ModuleFailure(f"security group {work.name}: a write failed halfway: {reason.rstrip('.')}. "
                            f"{'Made before it: ' + ', '.join(made) if made else 'Nothing was written before it'}; "
                            f"{len(not_done)} change(s) not made (see not_done); a re-run finishes the job", **result)

    # -- the result --------------------------------------------------------------------

    @staticmethod
    def snapshot(rules: list[sr.Rule], changes: list[sr.PortChange], side: str) -> dict[str, Any]:
        return dict(rules=sorted(r.label() for r in rules),
                    ports=dict((c.port["id"], list(getattr(c, side))) for c in changes))

    def report(self, result: dict[str, Any], group_id: str | None, name: str, created_group: bool, created: list[sr.Rule],
               deleted: list[sr.Rule], unchanged: list[sr.Rule], updated: list[dict[str, Any]], before: dict[str, Any],
               after: dict[str, Any]) -> None:
        result.update(
            security_group=dict(id=group_id, name=name, created=created_group),
            rules_created=[r.view() for r in created],
            rules_deleted=[r.view() for r in deleted],
            rules_unchanged=[r.view() for r in unchanged],
            ports_updated=updated,
        )
        result["changed"] = bool(created_group or created or deleted or updated)
        if self.options.diff:
            result["diff"] = dict(before=before, after=after)
        self.module.exit(**result)
