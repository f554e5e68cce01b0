# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rollout_guard in mode=direct: replace members managed outside Cluster API, pair by pair, deleting an
old member only when its new one serves and the pool keeps enough serving members.

Each poll: ``look`` reads the pool's members and the load balancer (no write); ``act`` asks
``plan.direct_next`` and deletes the old member it releases; ``judge`` turns the action into a verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Optional, TypeVar, cast

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import (
    DeadlineExceeded,
    FlightcontrolError,
    ModuleFailure,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.options import ModuleRunner
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.waiter import Verdict, wait_for
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.openstack_module_base import (
    OpenStackKubernetesModule,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia import provider as providers
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.members import bind, label
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia import serving_reads
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.serving import ServingHistory
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.service import OctaviaService
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard import plan
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.drainer import Drainer
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.report import (
    RolloutLog,
    judge_action,
    member_rows,
    pool_view,
    refuse_pairs,
    stuck_view,
)

if TYPE_CHECKING:  # runner.py imports this file
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.runner import RolloutOptions

T = TypeVar("T")


@dataclass
class DirectProgress:
    """What the run remembers between polls."""

    min_healthy: Optional[int] = None
    not_serving_since: dict[str, float] = field(default_factory=dict)
    deleted: set[int] = field(default_factory=set)  # indexes of the pairs whose old member this run deleted
    gone: set[int] = field(default_factory=set)  # ... and whose old member left the pool since
    members: list[dict[str, Any]] = field(default_factory=list)
    last: Optional[plan.Action] = None  # the last plan.Action


class DirectRollout(ModuleRunner):
    module: OpenStackKubernetesModule
    options: RolloutOptions

    def __init__(self, module: OpenStackKubernetesModule, options: RolloutOptions, log: RolloutLog,
                 pairs: list[plan.Pair]) -> None:
        super().__init__(module, options)
        self.check_mode = options.check_mode
        self.log = log
        self.pairs = pairs
        self.progress = DirectProgress(min_healthy=self.options.min_healthy_members)
        # set by run(), once the pool is resolved
        self.octavia: Any = None
        self.pool: Any = None
        self.lb_id: Any = None
        self._drainer: Optional[Drainer] = None
        self.provider: Optional[str] = None  # the load balancer's provider, read at the start when draining
        # what serving means on the pool's provider
        self.history: Optional[ServingHistory] = None
        self.replaced_before: list[int] = []

    def is_serving(self, member: Optional[dict[str, Any]]) -> bool:
        """Serving by the pool's provider's rule (on ovn with a monitor: ONLINE for a full monitor window since the
        member's creation), once the rule is read; before that, ACTIVE and healthy."""
        if self.history is None:
            return plan.serving(member, self.has_monitor)
        return self.history.serving(member)

    @property
    def has_monitor(self) -> bool:
        return bool(self.pool.get("healthmonitor_id"))

    @property
    def drainer(self) -> Drainer:
        """Drain before release (``drainer.py``), made on first use."""
        if self._drainer is None:
            self._drainer = Drainer(self.options, self.clock, self.log, self.octavia, self.pool, self.provider)
        return self._drainer

    # -- one poll: look (reads only), act (writes), judge ------------------------------

    def look(self, deadline: Deadline) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """(members, load balancer): one status-tree request (reads only)."""
        return self.named(f"reading pool {label(self.pool)} (status tree of load balancer {self.lb_id})",
                          lambda: self.octavia.pool_state(self.pool["id"], self.lb_id, deadline))

    def act(self, seen: tuple[list[dict[str, Any]], dict[str, Any]], deadline: Deadline) -> plan.Action:
        """Note what left, ask the plan, and delete the old member it releases; returns the action to judge."""
        members, lb_now = seen
        progress, pairs = self.progress, self.pairs
        self.observe(members, deadline)
        if progress.min_healthy is None:
            progress.min_healthy = sum(1 for m in members if self.is_serving(m)
                                       and not any(new.matches(m) for _old, new in pairs))
        self.note_gone(members)
        action, progress.not_serving_since = plan.direct_next(
            pairs, members, self.has_monitor, progress.min_healthy, progress.deleted, progress.not_serving_since,
            self.clock.monotonic(), self.options.member_timeout, judge=self.is_serving)
        lb_status = lb_now.get("provisioning_status")
        if lb_status == "ERROR":
            action = plan.Action(plan.STUCK, state="ERROR",
                                 reason=f"load balancer {self.lb_id} is in provisioning_status ERROR")
        self.drainer.keep_floor(members, self.is_serving, progress.min_healthy, deadline)
        if action.kind == plan.RELEASE and self.check_mode:
            self.drainer.ready_all(action.targets, lb_status, deadline)
        if action.kind == plan.RELEASE and not self.check_mode:
            action = self.release(action, lb_status, deadline)
        progress.last, progress.members = action, members
        return action

    def judge(self, action: plan.Action, _elapsed: float) -> Verdict:
        return judge_action(action, self.check_mode)

    def note_gone(self, members: list[dict[str, Any]]) -> None:
        progress = self.progress
        for index in progress.deleted - progress.gone:
            old = self.pairs[index][0]
            if not any(old.matches(m) for m in members):
                progress.gone.add(index)
                self.log.members_gone.append(old.text)
                self.log.record("member_gone", member=old.text)

    # -- the writes --------------------------------------------------------------------

    def release(self, action: plan.Action, lb_status: Optional[str], deadline: Deadline) -> plan.Action:
        """Delete the old member of the released pair once the load balancer accepts it and the guard still holds
        on the read just before the deletion; the action to judge."""
        if lb_status != "ACTIVE":
            return plan.Action(plan.WAIT, reason=f"load balancer to be ACTIVE before deleting {action.member} (is "
                                                 f"{lb_status})")
        old = self.pairs[action.pair][0].text
        action = self.recheck(action, old, deadline)
        if action.kind != plan.RELEASE:
            return action
        drained, reason = self.drainer.ready_all(action.targets, lb_status, deadline)
        if not drained:
            return plan.Action(plan.WAIT, member=action.member, reason=cast(str, reason))  # not drained: says why

        # recorded as each deletion is done: a later failure loses no record
        def deleted(member: dict[str, Any]) -> None:
            self.drainer.released(member)
            if old not in self.log.released:
                self.log.released.append(old)
            self.log.record("delete_member", member=old)

        ids = ", ".join(str(m.get("id")) for m in action.targets)
        if not self.named(f"deleting old member {old} of pool {label(self.pool)} (DELETE member {ids})",
                          lambda: self.octavia.delete_members(self.pool["id"], action.targets, deadline,
                                                              on_deleted=deleted)):
            return plan.Action(plan.WAIT, reason=f"the load balancer to accept the deletion of {action.member} (409)")
        self.progress.deleted.add(action.pair)
        return plan.Action(plan.WAIT, member=action.member, reason=f"old member {old} to be gone")

    def recheck(self, action: plan.Action, old: str, deadline: Deadline) -> plan.Action:
        """The plan again on a fresh read of the members (one list request), just before deleting ``old``: the
        release when it still holds for the same pair, else what that read calls for (never a deletion judged on an
        older read). A load balancer that went busy since the poll refuses the deletion itself (409: wait)."""
        progress = self.progress
        members = self.named(f"reading pool {label(self.pool)} before deleting old member {old} (list members)",
                             lambda: self.octavia.list_members(self.pool["id"], deadline))
        self.observe(members, deadline)
        fresh, _since = plan.direct_next(  # the floor: act() set it before any release
            self.pairs, members, self.has_monitor, cast(int, progress.min_healthy), progress.deleted,
            dict(progress.not_serving_since), self.clock.monotonic(), self.options.member_timeout,
            judge=self.is_serving)
        progress.members = members
        if fresh.kind == plan.RELEASE and fresh.pair == action.pair:
            return fresh
        if fresh.kind in (plan.WAIT, plan.RELEASE):
            return plan.Action(plan.WAIT, member=fresh.member, state=fresh.state, reason=f"{fresh.reason} (seen on "
                               f"the read just before deleting {old}; nothing deleted)")
        return fresh

    def named(self, what: str, call: Callable[[], T]) -> T:
        """``call()``, its API error worded with ``what`` (the call and the member) when it fails."""
        try:
            return call()
        except FlightcontrolError:
            raise
        except Exception as exc:  # pylint: disable=broad-except
            message = self.module.describe_error(exc)
            if message is None:
                raise
            raise ModuleFailure(f"{what} failed: {message}", **self.result())

    # -- the run -----------------------------------------------------------------------

    def run(self, deadline: Deadline) -> None:
        options = self.options
        self.octavia = OctaviaService(self.module.connect())
        self.pool, self.lb_id = self.octavia.resolve_pool(options.pool, options.loadbalancer, deadline)
        provider = self.octavia.get_loadbalancer(self.lb_id, deadline).get("provider")
        if options.drain:
            self.provider = provider
            self.refuse_unknown_provider()
        self.history = ServingHistory(serving_reads.read_rule(self.octavia, self.pool, self.lb_id, deadline,
                                                              provider or ""))
        self.check_pairs(self.octavia.list_members(self.pool["id"], deadline))
        try:
            outcome = wait_for(self.look, self.judge, deadline, options.poll_interval, act=self.act)
            if not outcome.succeeded:
                self.drainer.restore_after_stop(self.deadline)
        except DeadlineExceeded as exc:
            self.drainer.restore_after_stop(self.deadline)
            raise ModuleFailure(str(exc), **self.result())
        except Exception as exc:  # pylint: disable=broad-except
            self.drainer.restore_after_stop(self.deadline)
            message = self.module.describe_error(exc) or (str(exc) if isinstance(exc, FlightcontrolError) else None)
            if message is None or not self.log.released:
                raise
            # the deletions already made are part of the failure's result (changed: true)
            raise ModuleFailure(f"{message}; already deleted before it: {', '.join(self.log.released)}",
                                **self.result())
        data = self.result()
        action = cast(plan.Action, self.progress.last)  # wait_for polls at least once
        if self.check_mode:
            data["changed"] = action.kind == plan.RELEASE
            self.module.exit(msg=f"check mode: next step would be {action.kind}", **data)
        if outcome.succeeded:
            self.module.exit(msg=self.success_message(outcome.verdict.message), **data)
        if outcome.timed_out:
            self.module.fail(f"Timed out after {outcome.elapsed:.0f} s (timeout {options.timeout} s) replacing members "
                             f"of pool {label(self.pool)}; still waiting for {action.reason}.{outcome.interrupted_text}", **data)
        data["stuck"] = stuck_view(action, [])
        self.module.fail(f"Replacement stopped on pool {label(self.pool)}: {action.reason} (member {action.member}, "
                         f"provisioning/operating status {action.state}). Old members not yet replaced are kept. "
                         "Check: the Octavia worker and amphora of the load balancer; run again once the member "
                         "serves.",
                         **data)

    def refuse_unknown_provider(self) -> None:
        """A drain on a provider not known to honour weight or admin state: refused before any write."""
        refusal = providers.drain_refusal(self.provider) if self.options.drain else None
        if refusal:
            raise ModuleFailure(f"load balancer {self.lb_id}: {refusal}; nothing was changed", changed=False)

    def check_pairs(self, members: list[dict[str, Any]]) -> None:
        """Bind the pairs to the pool as it is at the start (``octavia.members.bind``) and refuse, before any write,
        pairs that name one member twice or whose old member never was in this pool (``plan.absent_olds``)."""
        self.pairs = [(bind(old, members), bind(new, members)) for old, new in self.pairs]
        refuse_pairs(plan.pair_problems(self.pairs, members))
        problems, self.replaced_before = plan.absent_olds(self.pairs, members, self.has_monitor)
        refuse_pairs(problems)
        for index in self.replaced_before:
            old, new = self.pairs[index]
            self.module.warn(f"replace[{index}]: old member {old.text} is not in pool {label(self.pool)} at the start; "
                             f"taken as replaced by an earlier run (its new member {new.text} serves). If {old.text} "
                             "is a typo, the member you meant is still there")

    def success_message(self, message: str) -> str:
        before = self.replaced_before
        if not before:
            return message
        named = ", ".join(f"replace[{i}] ({self.pairs[i][0].text})" for i in before)
        if len(before) == len(self.pairs):
            return f"nothing replaced by this run: the old member of {named} was not in the pool at the start (taken " \
                "as replaced by an earlier run)"
        return f"{message}; {named} was not in the pool at the start (taken as replaced by an earlier run)"

    def result(self) -> dict[str, Any]:
        progress = self.progress
        data = self.log.data(changed=bool(self.log.released))
        data.update(
            pool=pool_view(self.pool),
            members=member_rows(progress.members, self.is_serving),
            serving_members=sum(1 for m in progress.members if self.is_serving(m)),
            min_healthy_members=progress.min_healthy,
            plan=progress.last.to_dict() if progress.last else None,
            drained=self.drainer.report(),
            provider=self.provider,
            polled_with=self.octavia.polled_with if self.octavia else None,
            replaced_before=[dict(old=self.pairs[i][0].text, new=self.pairs[i][1].text) for i in self.replaced_before])
        if self.history is not None:
            data["members"] = [dict(row, **self.history.judged(member))
                               for row, member in zip(data["members"], progress.members)]
            data["serving_rule"] = self.history.rule.view()
        return data

    def observe(self, members: list[dict[str, Any]], deadline: Deadline) -> None:
        """One sample of the pool's members into the serving history (with their creation times: one member list
        when the sample lacks them)."""
        if self.history is not None:
            serving_reads.observe(self.octavia, self.history, self.pool["id"], members, self.clock.time(), deadline)
