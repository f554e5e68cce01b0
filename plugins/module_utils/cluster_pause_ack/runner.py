# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The runner of cluster_pause_ack: set (or clear) ``spec.paused`` on a Cluster, then wait until every
object in scope acknowledges it (``cluster_pause_ack.plan`` decides what counts). The module file gives the argument spec.

The wait follows the objects by watch where the API serves it (one list and one watch per feed, the
quiet period measured from the events), else by polling lists; ``observed_with`` in the result says
which, and why polling when it was not the user's choice."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.names import check_cluster
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.options import ModuleOptions, ModuleRunner
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.objects import dig
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.service import CapiService, choose_version
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import ResolveError
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.waiter import FAILED, Verdict, WaitResult, wait_for
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.module_base import KubernetesModule
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.watch import (
    ObjectWatch,
    given_up,
    start_following,
    WakingClock,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.cluster_pause_ack.plan import (
    Tracker,
    assess,
    MESSAGE_BLOCKERS,
    blocker_identities,
    judge,
    moving,
)


@dataclass
class PauseTarget:
    """The Cluster and the objects whose acknowledgement counts, as read before the wait."""

    contract: str
    kinds: list[str]
    paused: bool  # the wanted spec.paused
    changed: bool  # whether this task changes spec.paused
    since: float  # when the change was written (monotonic), or when the task found it already made


# With watch, the objects are judged from the watch's cache (no request) at least this often, and at
# once when an event arrives: a quiet period is seen to end within this much of its end.
WATCH_EVALUATION_SECONDS = 0.25


@dataclass(frozen=True)
class PauseAckOptions(ModuleOptions):
    """What cluster_pause_ack was asked (with check mode): the runner reads nothing else."""

    name: str
    namespace: str
    state: str
    wait: bool
    quiet_period: float
    scope: str
    api_version: Optional[str]
    timeout: int
    poll_interval: float
    use_watch: bool
    force: bool
    check_mode: bool = False


class PauseAckRunner(ModuleRunner):
    """cluster_pause_ack's work. ``module`` is the module base it runs in (an ``KubernetesModule``: the connections, the clock and
    start time, warnings, exit and fail); ``options`` what was asked."""

    module: KubernetesModule
    options: PauseAckOptions

    def __init__(self, module: KubernetesModule, options: PauseAckOptions) -> None:
        super().__init__(module, options)
        # set by run()
        self.capi: Any = None
        self.target: Any = None
        self.summary: Any = None
        self.cluster_read: Any = None
        self.tracker = Tracker()
        self.watch: ObjectWatch | None = None
        self.observed_with: dict[str, Any] = dict(method="poll", fallback_reason="not waited")

    def validate(self) -> None:
        options = self.options
        check_cluster(options.name, options.namespace)
        if options.wait and options.state == "paused" and options.quiet_period > options.timeout:
            raise ModuleFailure(f"quiet_period ({options.quiet_period} s) is longer than timeout ({options.timeout} s): the pause could never be "
                                "acknowledged in time; nothing was changed (raise timeout or shorten quiet_period)")

    def set_paused(self, deadline: Deadline) -> PauseTarget:
        """Read the Cluster and set spec.paused (not in check mode); the PauseTarget of the wait."""
        options = self.options
        paused = options.state == "paused"
        contract = choose_version(self.capi.served, options.api_version)
        cluster = self.cluster_read = self.capi.get_cluster(options.name, options.namespace, contract, deadline)
        kinds = self.capi.cluster_kinds(contract, deadline) if options.scope == "move" else []
        before = bool(dig(cluster, "spec", "paused"))
        changed = before != paused
        self.summary = dict(name=options.name, namespace=options.namespace, api_version=cluster.get("apiVersion"),
                            paused_before=before, paused=before)
        self.capi.check_refs(cluster, contract)  # what the wait must read is served: else refuse before the write
        if changed and not paused and not options.force:
            self.refuse_unpause_in_move(cluster, contract, kinds, deadline)
        since = self.clock.monotonic()
        if changed and not self.options.check_mode:
            self.capi.set_paused(cluster, paused, deadline)
            since = self.clock.monotonic()
        if not changed or not self.options.check_mode:
            self.summary["paused"] = paused
        if changed and not self.options.check_mode:
            # a failure from here on (a read of the wait, say) still reports the Cluster as this task left it
            self.module.written = dict(cluster=self.summary, diff=dict(before={"spec": {"paused": before}},
                                                                       after={"spec": {"paused": paused}}))
        return PauseTarget(contract=contract, kinds=kinds, paused=paused, changed=changed, since=since)

    def refuse_unpause_in_move(self, cluster: dict[str, Any], contract: str, kinds: list[str], deadline: Deadline) -> None:
        """Refuse an unpause while an object in scope carries the block-move annotation (its provider is still
        pausing: a ``clusterctl move`` may be waiting for it) or delete-for-move (the move is under way)."""
        options = self.options
        found = moving(self.capi.scope_objects(cluster, options.scope, contract, kinds, deadline))
        if found:
            more = f" and {len(found) - MESSAGE_BLOCKERS} more" if len(found) > MESSAGE_BLOCKERS else ""
            raise ModuleFailure(
                f"Cluster {options.namespace}/{options.name} is not unpaused: {len(found)} object(s) say a pause is "
                f"still being worked on or a clusterctl move is under way: {', '.join(found[:MESSAGE_BLOCKERS])}{more}; "
                "nothing was changed (let the move finish, or set force: true to unpause anyway)",
                cluster=self.summary, moving=found)

    def start_watch(self, cluster: dict[str, Any], deadline: Deadline) -> ObjectWatch | None:
        """Follow the objects in scope by watch (None where it cannot: ``observed_with`` says why)."""
        options, target = self.options, self.target
        feeds = self.capi.scope_feeds(cluster, options.scope, target.contract, target.kinds, deadline)
        watch, self.observed_with = start_following(self.capi.kube, feeds, self.clock,
                                                    lambda obj, now: self.tracker.observe([obj], now),
                                                    options.use_watch, deadline)
        return watch

    def look(self, deadline: Deadline) -> dict[str, Any]:
        """The Cluster and every object in scope, each assessed (reads only: from the watch's cache while it
        runs, else by listing)."""
        options, target = self.options, self.target
        stopped = given_up(self.watch)
        if stopped is not None:
            self.observed_with, self.watch = stopped, None
        if self.watch is not None:
            with self.watch.lock:
                clusters = self.watch.feed_objects(0)
                if not clusters:
                    raise ResolveError(f"Cluster {options.namespace}/{options.name} was deleted during the wait", cluster=None)
                current, objects, now = clusters[0], self.watch.objects(), self.clock.monotonic()
                items = self.assess_all(objects, now)
            return dict(cluster=current, items=items)
        current = self.capi.get_cluster(options.name, options.namespace, target.contract, deadline)
        objects = self.capi.scope_objects(current, options.scope, target.contract, target.kinds, deadline)
        now = self.clock.monotonic()
        self.tracker.observe(objects, now)
        return dict(cluster=current, items=self.assess_all(objects, now))

    def assess_all(self, objects: list[dict[str, Any]], now: float) -> list[dict[str, Any]]:
        options, target = self.options, self.target
        return [assess(obj, target.paused, self.tracker.get(obj), now, options.quiet_period, target.since)
                for obj in objects]

    def judge(self, observation: dict[str, Any], _elapsed: float) -> Verdict:
        options, target = self.options, self.target
        current = bool(dig(observation["cluster"], "spec", "paused"))
        if current != target.paused and not (self.options.check_mode and target.changed):
            return Verdict(FAILED, f"spec.paused of Cluster {options.namespace}/{options.name} was changed back to "
                                   f"{str(current).lower()} by someone else during the wait")
        return judge(observation["items"])

    def run(self) -> None:
        options = self.options
        self.validate()
        deadline = self.deadline
        self.capi = CapiService(self.module.connect())
        self.capi.discover(deadline)
        self.target = target = self.set_paused(deadline)
        result = dict(changed=target.changed, diff=dict(before={"spec": {"paused": self.summary["paused_before"]}},
                                                        after={"spec": {"paused": target.paused}}))
        if self.options.check_mode and target.changed or not options.wait:
            return self.module.exit(**self.report(result, self.look(deadline)["items"], 1, False))
        poll = options.poll_interval
        if target.paused and options.quiet_period > 0:
            poll = min(poll, options.quiet_period / 2.0)
        self.watch = self.start_watch(self.cluster_read, deadline)
        try:
            clock = self.clock
            if self.watch is not None:
                poll, clock = min(poll, WATCH_EVALUATION_SECONDS), WakingClock(self.clock, self.watch)
            outcome = wait_for(self.look, self.judge, deadline, poll_interval=poll, clock=clock)
        finally:
            if self.watch is not None:
                self.observed_with.update(self.watch.summary())
                self.watch.stop()
        self.report(result, outcome.observation["items"], outcome.polls, outcome.timed_out)
        if outcome.succeeded:
            return self.module.exit(**result)
        return self.module.fail(self.failure_text(outcome), **result)

    def failure_text(self, outcome: WaitResult) -> str:
        options, paused = self.options, self.target.paused
        what = f"set spec.paused={str(paused).lower()}" if self.target.changed else \
            f"found spec.paused={str(paused).lower()} already"
        if outcome.timed_out:
            return (f"Cluster {options.namespace}/{options.name}: this task {what} (left as it is), but after {outcome.elapsed:.0f} s not every controller has "
                    f'acknowledged the {"pause" if paused else "unpause"}: {outcome.verdict.message}'
                    + outcome.interrupted_text)
        return f"Cluster {options.namespace}/{options.name}: this task {what}, then: {outcome.verdict.message}"

    def report(self, result: dict[str, Any], items: list[dict[str, Any]], polls: int, timed_out: bool) -> dict[str, Any]:
        result.update(
            cluster=self.summary,
            acknowledged=all(item["acknowledged"] for item in items),
            objects=items,
            blockers=blocker_identities(items),
            polls=polls,
            timed_out=timed_out,
            observed_with=self.observed_with,
        )
        return result
