# -*- coding: utf-8 -*-
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rollout_guard in mode=direct: replace members managed outside Cluster API, pair by pair, deleting an
old member only when its new one serves and the pool keeps enough serving members.

Each poll: ``look`` reads the pool's members and the load balancer (no write); ``act`` asks
``plan.direct_next`` and deletes the old member it releases; ``judge`` turns the action into a verdict.
"""

from dataclasses import dataclass, field

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import (
    DeadlineExceeded,
    FlightcontrolError,
    ModuleFailure,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.options import ModuleRunner
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.waiter import wait_for
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia import provider as providers
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.members import bind, label
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia import serving_reads
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.serving import ServingHistory
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.service import OctaviaService
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard import plan
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.drainer import Drainer
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.report import (
    judge_action,
    member_rows,
    pool_view,
    refuse_pairs,
    stuck_view,
)


@dataclass
class DirectProgress:
    """What the run remembers between polls."""

    min_healthy: object = None
    not_serving_since: dict = field(default_factory=dict)
    deleted: set = field(default_factory=set)  # indexes of the pairs whose old member this run deleted
    gone: set = field(default_factory=set)  # ... and whose old member left the pool since
    members: list = field(default_factory=list)
    last: object = None  # the last plan.Action


class DirectRollout(ModuleRunner):
    def __init__(self, module, options, log, pairs):
        super().__init__(module, options)
        self.check_mode = options.check_mode
        self.log = log
        self.pairs = pairs
        self.progress = DirectProgress(min_healthy=self.options.min_healthy_members)
        self.octavia = self.pool = self.lb_id = self._drainer = None
        self.provider = None  # the load balancer's provider, read at the start when draining
        self.history = None  # octavia.serving.ServingHistory: what serving means on the pool's provider
        self.replaced_before = []

    def is_serving(self, member):
        """Serving by the pool's provider's rule (on ovn with a monitor: ONLINE for a full monitor window since the
        member's creation), once the rule is read; before that, ACTIVE and healthy."""
        if self.history is None:
            return plan.serving(member, self.has_monitor)
        return self.history.serving(member)

    @property
    def has_monitor(self):
        return bool(self.pool.get("healthmonitor_id"))

    @property
    def drainer(self):
        """Drain before release (``drainer.py``), made on first use."""
        if self._drainer is None:
            self._drainer = Drainer(self.options, self.clock, self.log, self.octavia, self.pool, self.provider)
        return self._drainer

    # -- one poll: look (reads only), act (writes), judge ------------------------------

    def look(self, deadline):
        """(members, load balancer): one status-tree request (reads only)."""
        return self.named("reading pool %s (status tree of load balancer %s)" % (label(self.pool), self.lb_id),
                          lambda: self.octavia.pool_state(self.pool["id"], self.lb_id, deadline))

    def act(self, seen, deadline):
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
            action = plan.Action(plan.STUCK, state="ERROR", reason="load balancer %s is in provisioning_status "
                                 "ERROR" % self.lb_id)
        self.drainer.keep_floor(members, self.is_serving, progress.min_healthy, deadline)
        if action.kind == plan.RELEASE and self.check_mode:
            self.drainer.ready_all(action.targets, lb_status, deadline)
        if action.kind == plan.RELEASE and not self.check_mode:
            action = self.release(action, lb_status, deadline)
        progress.last, progress.members = action, members
        return action

    def judge(self, action, _elapsed):
        return judge_action(action, self.check_mode)

    def note_gone(self, members):
        progress = self.progress
        for index in progress.deleted - progress.gone:
            old = self.pairs[index][0]
            if not any(old.matches(m) for m in members):
                progress.gone.add(index)
                self.log.members_gone.append(old.text)
                self.log.record("member_gone", member=old.text)

    # -- the writes --------------------------------------------------------------------

    def release(self, action, lb_status, deadline):
        """Delete the old member of the released pair once the load balancer accepts it and the guard still holds
        on the read just before the deletion; the action to judge."""
        if lb_status != "ACTIVE":
            return plan.Action(plan.WAIT, reason="load balancer to be ACTIVE before deleting %s (is %s)" % (
                action.member, lb_status))
        old = self.pairs[action.pair][0].text
        action = self.recheck(action, old, deadline)
        if action.kind != plan.RELEASE:
            return action
        drained, reason = self.drainer.ready_all(action.targets, lb_status, deadline)
        if not drained:
            return plan.Action(plan.WAIT, member=action.member, reason=reason)

        def deleted(member):  # recorded as each deletion is done: a later failure loses no record
            self.drainer.released(member)
            if old not in self.log.released:
                self.log.released.append(old)
            self.log.record("delete_member", member=old)

        if not self.named("deleting old member %s of pool %s (DELETE member %s)" % (
                old, label(self.pool), ", ".join(str(m.get("id")) for m in action.targets)),
                lambda: self.octavia.delete_members(self.pool["id"], action.targets, deadline, on_deleted=deleted)):
            return plan.Action(plan.WAIT, reason="the load balancer to accept the deletion of %s (409)" %
                               action.member)
        self.progress.deleted.add(action.pair)
        return plan.Action(plan.WAIT, member=action.member, reason="old member %s to be gone" % old)

    def recheck(self, action, old, deadline):
        """The plan again on a fresh read of the members (one list request), just before deleting ``old``: the
        release when it still holds for the same pair, else what that read calls for (never a deletion judged on an
        older read). A load balancer that went busy since the poll refuses the deletion itself (409: wait)."""
        progress = self.progress
        members = self.named("reading pool %s before deleting old member %s (list members)" % (label(self.pool), old),
                             lambda: self.octavia.list_members(self.pool["id"], deadline))
        self.observe(members, deadline)
        fresh, _since = plan.direct_next(
            self.pairs, members, self.has_monitor, progress.min_healthy, progress.deleted,
            dict(progress.not_serving_since), self.clock.monotonic(), self.options.member_timeout,
            judge=self.is_serving)
        progress.members = members
        if fresh.kind == plan.RELEASE and fresh.pair == action.pair:
            return fresh
        if fresh.kind in (plan.WAIT, plan.RELEASE):
            return plan.Action(plan.WAIT, member=fresh.member, state=fresh.state, reason="%s (seen on the read just "
                               "before deleting %s; nothing deleted)" % (fresh.reason, old))
        return fresh

    def named(self, what, call):
        """``call()``, its API error worded with ``what`` (the call and the member) when it fails."""
        try:
            return call()
        except FlightcontrolError:
            raise
        except Exception as exc:  # pylint: disable=broad-except
            message = self.module.describe_error(exc)
            if message is None:
                raise
            raise ModuleFailure("%s failed: %s" % (what, message), **self.result())

    # -- the run -----------------------------------------------------------------------

    def run(self, deadline):
        options = self.options
        self.module.connect()
        self.octavia = OctaviaService(self.module.client)
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
            raise ModuleFailure("%s; already deleted before it: %s" % (message, ", ".join(self.log.released)),
                                **self.result())
        data = self.result()
        if self.check_mode:
            data["changed"] = self.progress.last.kind == plan.RELEASE
            self.module.exit(msg="check mode: next step would be %s" % self.progress.last.kind, **data)
        if outcome.succeeded:
            self.module.exit(msg=self.success_message(outcome.verdict.message), **data)
        action = self.progress.last
        if outcome.timed_out:
            self.module.fail("Timed out after %.0f s (timeout %s s) replacing members of pool %s; still waiting "
                             "for %s" % (outcome.elapsed, options.timeout, label(self.pool), action.reason), **data)
        data["stuck"] = stuck_view(action, [])
        self.module.fail("Replacement stopped on pool %s: %s (member %s, provisioning/operating status %s). Old "
                         "members not yet replaced are kept. Check: the Octavia worker and amphora of the load "
                         "balancer; run again once the member serves." % (
                             label(self.pool), action.reason, action.member, action.state), **data)

    def refuse_unknown_provider(self):
        """A drain on a provider not known to honour weight or admin state: refused before any write."""
        refusal = providers.drain_refusal(self.provider) if self.options.drain else None
        if refusal:
            raise ModuleFailure("load balancer %s: %s; nothing was changed" % (self.lb_id, refusal), changed=False)

    def check_pairs(self, members):
        """Bind the pairs to the pool as it is at the start (``octavia.members.bind``) and refuse, before any write,
        pairs that name one member twice or whose old member never was in this pool (``plan.absent_olds``)."""
        self.pairs = [(bind(old, members), bind(new, members)) for old, new in self.pairs]
        refuse_pairs(plan.pair_problems(self.pairs, members))
        problems, self.replaced_before = plan.absent_olds(self.pairs, members, self.has_monitor)
        refuse_pairs(problems)
        for index in self.replaced_before:
            old, new = self.pairs[index]
            self.module.warn("replace[%d]: old member %s is not in pool %s at the start; taken as replaced "
                             "by an earlier run (its new member %s serves). If %s is a typo, the member you "
                             "meant is still there" % (index, old.text, label(self.pool), new.text, old.text))

    def success_message(self, message):
        before = self.replaced_before
        if not before:
            return message
        named = ", ".join("replace[%d] (%s)" % (i, self.pairs[i][0].text) for i in before)
        if len(before) == len(self.pairs):
            return "nothing replaced by this run: the old member of %s was not in the pool at the start (taken as " \
                "replaced by an earlier run)" % named
        return "%s; %s was not in the pool at the start (taken as replaced by an earlier run)" % (message, named)

    def result(self):
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

    def observe(self, members, deadline):
        """One sample of the pool's members into the serving history (with their creation times: one member list
        when the sample lacks them)."""
        if self.history is not None:
            serving_reads.observe(self.octavia, self.history, self.pool["id"], members, self.clock.time(), deadline)
