# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The runner of lb_member_wait: resolve the pool, then wait with one request per poll (Octavia's status tree;
the member list and the load balancer's GET where the tree cannot serve) until ``octavia.members.judge`` says done
or failed. The module file gives the argument spec."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.options import ModuleOptions, ModuleRunner
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import (
    DeadlineExceeded,
    ModuleFailure,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.waiter import WaitResult, wait_for
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia import members as lb_members
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia import serving_reads
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.serving import ServingHistory
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.service import OctaviaService
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.status_tree import LOADBALANCER_FIELDS
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.http import is_not_found
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.module_base import OpenStackModule

# A failure message names at most this many entries of ``members`` that matched nothing ("and N more" after them);
# the result's ``missing`` lists at most RESULT_NAMES of them (``missing_total`` counts them all).
MESSAGE_NAMES = 10
RESULT_NAMES = 1000
# Past this length a failure message is cut (the result's ``members`` and ``missing`` have the details).
MESSAGE_CHARS = 8000

MONITOR_FIELDS = ("id", "name", "type", "delay", "timeout", "max_retries", "max_retries_down", "admin_state_up")
POOL_FIELDS = ("id", "name", "provisioning_status", "operating_status", "healthmonitor_id", "protocol", "lb_algorithm")


def _pick(obj: dict[str, Any] | None, fields: Iterable[str]) -> dict[str, Any]:
    return dict((k, (obj or {}).get(k)) for k in fields)


def cut(text: str) -> str:
    """``text``, cut at MESSAGE_CHARS characters with a note saying so."""
    if len(text) <= MESSAGE_CHARS:
        return text
    return text[:MESSAGE_CHARS].rsplit(" ", 1)[0] + f" ... (cut at {MESSAGE_CHARS} characters; the result's members " \
        "and missing have everything)"


@dataclass(eq=False)
class Polls:
    """The first and the last completed observation, and how many polls completed."""

    first: Any = None
    last: Any = None
    count: int = 0

    def record(self, observation: dict[str, Any]) -> None:
        if self.first is None:
            self.first = observation
        self.last = observation
        self.count += 1


@dataclass(frozen=True)
class MemberWaitOptions(ModuleOptions):
    """What lb_member_wait was asked: the runner reads nothing else."""

    pool: str
    loadbalancer: Optional[str]
    members: Optional[list]
    state: str
    operating_status: Optional[list]
    wait_for_loadbalancer: bool
    report_health_monitor: bool
    timeout: int
    poll_interval: float


class MemberWaitRunner(ModuleRunner):
    """lb_member_wait's work. ``module`` is the module base it runs in (an ``OpenStackModule``: the connections, the clock and
    start time, warnings, exit and fail); ``options`` what was asked."""

    module: OpenStackModule
    options: MemberWaitOptions

    def __init__(self, module: OpenStackModule, options: MemberWaitOptions) -> None:
        super().__init__(module, options)
        # set by run(), once the pool is resolved
        self.octavia: Any = None
        self.pool: Any = None
        self.lb_id: Any = None
        self.wait_spec: Any = None
        self.seen = Polls()

    def validate(self) -> list[lb_members.Selector]:
        """Reject bad input before any API request."""
        options = self.options
        if options.state == "absent" and options.operating_status:
            raise ModuleFailure("operating_status applies to state=present only; a member waited on with "
                                "state=absent has no operating status to reach")
        if options.members is not None and not options.members:
            raise ModuleFailure("members is an empty list; omit it to wait for all members of the pool")
        try:
            return lb_members.parse_selectors(options.members)
        except ValueError as exc:
            raise ModuleFailure(str(exc))

    def look(self, deadline: Deadline) -> dict[str, Any]:
        """The pool's members and its load balancer (reads only)."""
        try:
            members, loadbalancer = self.octavia.pool_state(self.pool["id"], self.lb_id, deadline)
        except Exception as exc:  # pylint: disable=broad-except
            if not is_not_found(exc):
                raise
            raise ModuleFailure(
                f"pool {lb_members.label(self.pool)} or its load balancer {self.lb_id} disappeared during the wait (HTTP 404: {exc})", **self.result_data())
        if self.wait_spec.history is not None:
            serving_reads.observe(self.octavia, self.wait_spec.history, self.pool["id"], members, self.clock.time(),
                                  deadline)
        observation = {"pool": self.pool, "members": members, "loadbalancer": loadbalancer}
        if self.seen.first is None:
            self.bind_selectors(members)
        self.seen.record(observation)
        return observation

    def bind_selectors(self, members: list[dict[str, Any]] | None) -> None:
        """Read ``members`` against the pool as the first poll sees it (``octavia.members.bind``): an entry that is
        exactly a member's name means that member, also when it looks like an address or an id. Once: a name that
        leaves the pool later must not turn into an address that names another member."""
        self.wait_spec.selectors = [lb_members.bind(s, members or []) for s in self.wait_spec.selectors]

    def complete_members(self, deadline: Deadline) -> None:
        """The status tree carries each member's statuses, address and port; once the wait is done, one member
        list adds the rest the result shows (weight, backup, admin_state_up, monitor address and port, subnet).
        That list keeps to the module's deadline: when it does not answer in time, the wait's success stands and
        the members are shown with the status tree's fields (a warning says so)."""
        if self.octavia.tree_fallback is not None or not self.seen.last["members"]:
            return
        try:
            listed = dict((m["id"], m) for m in self.octavia.list_members(self.pool["id"], deadline))
        except DeadlineExceeded as exc:
            self.module.warn("the wait succeeded, but the member list that adds weight, backup, admin_state_up, "
                             "monitor address and port and subnet to the result did not answer before the timeout "
                             f"({exc}); those fields are null")
            return
        for member in self.seen.last["members"]:
            member.update((k, v) for k, v in listed.get(member["id"], {}).items() if k not in member)

    def run(self) -> None:
        selectors = self.validate()
        options = self.options
        deadline = self.deadline
        self.octavia = OctaviaService(self.module.connect())
        self.pool, self.lb_id = self.octavia.resolve_pool(options.pool, options.loadbalancer, deadline)
        try:
            accepted = lb_members.resolve_accepted(
                options.operating_status, bool(self.pool.get("healthmonitor_id")), lb_members.label(self.pool))
        except ValueError as exc:
            raise ModuleFailure(str(exc), pool=_pick(self.pool, POOL_FIELDS))
        self.wait_spec = lb_members.WaitSpec(options.state, selectors, accepted, options.wait_for_loadbalancer,
                                             self.serving_history(accepted, deadline))
        try:
            outcome = wait_for(self.look, lambda obs, _elapsed: lb_members.judge(obs, self.wait_spec),
                               deadline, options.poll_interval)
        except DeadlineExceeded as exc:
            raise ModuleFailure(self.deadline_text(exc), **self.result_data())
        self.report(outcome)

    def serving_history(self, accepted: frozenset[str] | None, deadline: Deadline) -> ServingHistory | None:
        """Where members must be healthy: what serving means on the pool's provider (``octavia.serving``: on ovn,
        ONLINE for a full monitor window since creation), with a warning where nothing checks them."""
        if not accepted or not accepted & {"ONLINE", "NO_MONITOR"}:
            return None
        rule = serving_reads.read_rule(self.octavia, self.pool, self.lb_id, deadline)
        if rule.finding:
            self.module.warn(rule.finding)
        return ServingHistory(rule)

    def deadline_text(self, exc: DeadlineExceeded) -> str:
        if not self.seen.count:
            return f"{exc}. No poll of pool {lb_members.label(self.pool)} completed, so the members' states are unknown."
        spec, more = self.short_spec(self.seen.last)
        return cut(f"{exc}. At the last completed poll: {lb_members.judge(self.seen.last, spec).message}.{more}")

    def report(self, outcome: WaitResult) -> None:
        data = self.result_data()
        if self.wait_spec.state == "absent" and data["not_seen_at_start"]:
            self.module.warn(f"members {', '.join(data['not_seen_at_start'])} matched no member of pool "
                             f"{lb_members.label(self.pool)} at the first poll: if that is a typo, this wait proved "
                             "nothing")
        if outcome.succeeded:
            self.complete_members(self.deadline)
            self.module.exit(msg=outcome.verdict.message, **dict(self.result_data(), **self.monitor_data()))
        self.module.fail(self.failure_text(outcome), timed_out=outcome.timed_out, **data)

    def failure_text(self, outcome: WaitResult) -> str:
        """The failure message, short whatever the number of members (``short_spec``), at most MESSAGE_CHARS."""
        spec, more = self.short_spec(outcome.observation)
        verdict = lb_members.judge(outcome.observation, spec) if spec is not self.wait_spec else outcome.verdict
        return cut(lb_members.failure_message(verdict, outcome.observation, spec, outcome.elapsed, outcome.timed_out,
                                              self.options.timeout) + more + outcome.interrupted_text)

    def short_spec(self, observation: dict[str, Any]) -> tuple[lb_members.WaitSpec, str]:
        """The wait's spec with only the first MESSAGE_NAMES entries of ``members`` that matched nothing, for
        messages, and the words counting the others ("" when none was left out)."""
        spec = self.wait_spec
        if spec.state != "present":
            return spec, ""
        unmatched = lb_members.select(observation["members"] or [], spec.selectors)[1]
        if len(unmatched) <= MESSAGE_NAMES:
            return spec, ""
        left_out = set(id(s) for s in unmatched[MESSAGE_NAMES:])
        short = lb_members.WaitSpec(spec.state, [s for s in spec.selectors if id(s) not in left_out], spec.accepted,
                                    spec.wait_for_loadbalancer, spec.history)
        return short, f" {len(left_out)} more entries of members matched no member either (the result's missing lists them)."

    def monitor_data(self) -> dict[str, Any]:
        """``health_monitor`` (with ``report_health_monitor``): the pool's monitor, one GET; None without one."""
        if not self.options.report_health_monitor:
            return {}
        monitor_id = self.pool.get("healthmonitor_id")
        if not monitor_id:
            return {"health_monitor": None}
        try:
            monitor = self.octavia.get_health_monitor(monitor_id, self.deadline)
        except DeadlineExceeded as exc:
            self.module.warn("the wait succeeded, but the pool's health monitor did not answer before the timeout "
                             f"({exc}); health_monitor is null")
            return {"health_monitor": None}
        return {"health_monitor": _pick(monitor, MONITOR_FIELDS) if monitor else None}

    def result_data(self) -> dict[str, Any]:
        """The result fields; members, missing and loadbalancer are null when no poll completed."""
        seen, spec = self.seen, self.wait_spec
        data = dict(
            members=None, missing=None, missing_total=None, loadbalancer=None, pool=_pick(self.pool, POOL_FIELDS),
            polls=seen.count,
            not_seen_at_start=None, polled_with=self.octavia.polled_with if self.octavia else None,
            accepted_operating_status=sorted(spec.accepted) if spec.accepted is not None else None,
            serving_rule=spec.history.rule.view() if spec.history is not None else None,
        )
        if seen.count:
            chosen, unmatched = lb_members.select(seen.last["members"], spec.selectors)
            data.update(
                members=[lb_members.member_view(m, spec) for m in chosen],
                missing=[s.text for s in unmatched[:RESULT_NAMES]] if spec.state == "present" else [],
                missing_total=len(unmatched) if spec.state == "present" else 0,
                loadbalancer=_pick(seen.last["loadbalancer"], LOADBALANCER_FIELDS),
                not_seen_at_start=[s.text for s in lb_members.select(seen.first["members"], spec.selectors)[1]],
            )
        return data
