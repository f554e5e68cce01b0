# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The runner of cluster_lease: take, renew or release the Lease that says which actor changes a cluster
(``cluster_lease.plan`` decides; ``kubernetes.leases`` sends the requests). The module file gives the argument spec.

Every write goes on what was just read: a create (409 AlreadyExists when another actor created it first) or a
replace on the resourceVersion read (409 Conflict when another actor wrote in between). A lost race is read again
and decided again, so of two actors exactly one holds the Lease."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, cast

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import (
    DeadlineExceeded,
    FlightcontrolError,
    ModuleFailure,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.names import check_cluster, name_problem
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.options import ModuleOptions, ModuleRunner
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.retry import MaybeCommitted
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.waiter import (
    DONE,
    Verdict,
    WAITING,
    wait_for,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.configmaps import ConfigMapService
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.fleet_halt import (
    halt_message,
    HALT_NAME,
    read_halt,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.leases import (
    LeaseConflict,
    LeaseService,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.module_base import KubernetesModule
from ansible_collections.flightcontrol.openstack.plugins.module_utils.cluster_lease.plan import (
    acquire_step,
    CREATE,
    EXPIRED,
    HELD,
    held_body,
    held_message,
    Holder,
    holder_summary,
    lease_name,
    LeaseView,
    lost_message,
    OURS,
    read_lease,
    released_body,
    RENEW,
    standing,
    unreachable_message,
    WAIT,
)

#: Reads and writes after a lost race before the attempt is judged as it stands (another actor kept writing).
RACE_ATTEMPTS = 3


@dataclass(frozen=True)
class ClusterLeaseOptions(ModuleOptions):
    """What cluster_lease was asked (with check mode): the runner reads nothing else."""

    name: str
    namespace: str
    state: str
    holder: dict[str, Any]
    lease_duration: int
    wait: bool
    timeout: int
    poll_interval: float
    honour_halt: bool = True
    halt_namespace: str = "default"
    renew_only: bool = False
    check_mode: bool = False


@dataclass
class Attempt:
    """One try at the Lease: what it found first, what it stands at now, and what this task did."""

    view: LeaseView
    first: Optional[str] = None   # standing at the first read
    done: Optional[str] = None    # CREATE, TAKE or RENEW once written
    taken_over_from: Optional[dict[str, Any]] = None
    writing: bool = False         # a create or update of the Lease was sent and not answered yet


class ClusterLeaseRunner(ModuleRunner):
    """cluster_lease's work. ``module`` is the module base it runs in (a ``KubernetesModule``); ``options`` what was
    asked."""

    module: KubernetesModule
    options: ClusterLeaseOptions

    def __init__(self, module: KubernetesModule, options: ClusterLeaseOptions) -> None:
        super().__init__(module, options)
        self.leases: LeaseService = None  # type: ignore[assignment]  # run() connects it first
        self.last_seen: Optional[LeaseView] = None  # the Lease as last read in this task
        details: dict[str, Any] = dict((key, None if value in (None, "") else str(value))
                                       for key, value in (options.holder or {}).items())
        self.me = Holder(**details)

    def validate(self) -> None:
        options = self.options
        check_cluster(options.name, options.namespace)
        problem = name_problem("the Lease name", lease_name(options.name))
        if problem:
            raise ModuleFailure(problem + " (the cluster's name is too long for it); nothing was changed")
        if not self.me.id:
            raise ModuleFailure("holder.id must not be empty: it is the spec.holderIdentity of the Lease, the same "
                                "in every task of one run; nothing was changed")

    def read(self, deadline: Deadline) -> LeaseView:
        options = self.options
        self.last_seen = read_lease(self.leases.get(lease_name(options.name), options.namespace, deadline))
        return self.last_seen

    def run(self) -> None:
        self.validate()
        self.leases = LeaseService(self.module.connect())
        try:
            result = self.act(self.deadline)
        except ModuleFailure:
            raise
        except Exception as exc:  # pylint: disable=broad-except
            failure = self.unreachable(exc)
            if failure is None:
                raise
            raise failure from exc
        self.module.exit(**result)

    def act(self, deadline: Deadline) -> dict[str, Any]:
        options = self.options
        if options.state == "released":
            return self.release(deadline)
        self.refuse_when_halted(deadline)
        if options.check_mode:
            return self.check(deadline)
        return self.hold(deadline)

    def unreachable(self, exc: Exception) -> Optional[ModuleFailure]:
        """The failure of a task whose request to the API failed (``exc``), naming the Lease and the cluster and
        what the actor must do now; None for an exception that is no API failure."""
        options = self.options
        cause = str(exc) if isinstance(exc, FlightcontrolError) else self.module.describe_error(exc)
        if cause is None:
            return None
        message = unreachable_message(options.name, options.namespace, options.state, options.renew_only, cause,
                                      self.last_seen, self.me.id, self.clock.time())
        # no ``lease`` in the result: the roles read a result with one as a Lease held (cluster_move's target)
        return ModuleFailure(message, **(exc.data if isinstance(exc, FlightcontrolError) else {}))

    def refuse_when_halted(self, deadline: Deadline) -> None:
        """The fleet's halt (kubernetes.fleet_halt): no Lease is taken while it stands. Our own Lease is still
        renewed (this actor started before the halt, and stops at its next cluster); a renewal (``renew_only``)
        never takes one, so it does not read the halt."""
        options = self.options
        if not options.honour_halt or options.renew_only or standing(self.read(deadline), self.me.id, self.clock.time()) == OURS:
            return
        halt = read_halt(ConfigMapService(self.leases.kube).get(HALT_NAME, options.halt_namespace, deadline))
        if halt is not None:
            raise ModuleFailure(f"Cluster {options.namespace}/{options.name} not started: {halt_message(halt)}; "
                                "nothing was changed", halt=halt, changed=False,
                                lease=dict(name=lease_name(options.name), namespace=options.namespace))

    # -- held ---------------------------------------------------------------------------------------------------

    def try_once(self, deadline: Deadline, attempt: Optional[Attempt] = None) -> Attempt:
        """Read the Lease and take or renew it when it is free, ours or expired; after a lost race, again (at most
        RACE_ATTEMPTS times). The Attempt, ``done`` None while another actor holds it."""
        options = self.options
        for dummy in range(RACE_ATTEMPTS):
            view = self.read(deadline)
            now = self.clock.time()
            if attempt is None:
                attempt = Attempt(view=view, first=standing(view, self.me.id, now))
            attempt.view = view
            if options.renew_only and standing(view, self.me.id, now) != OURS:
                raise ModuleFailure(lost_message(options.name, options.namespace, view, self.me.id, now),
                                    **self.report(attempt, 0.0, 1))
            step = acquire_step(view, self.me.id, now)
            if step == WAIT:
                return attempt
            body = held_body(options.name, options.namespace, self.me, view, now, options.lease_duration)
            attempt.writing = True
            try:
                written = (self.leases.create(body, deadline) if step == CREATE
                           else self.leases.replace(body, deadline))
            except (LeaseConflict, MaybeCommitted):
                attempt.writing = False
                continue  # read again: another actor won, or our own write went through unanswered
            attempt.writing = False
            if standing(view, self.me.id, now) == EXPIRED:
                attempt.taken_over_from = holder_summary(view, now)
            attempt.view, attempt.done = read_lease(written), step
            return attempt
        return cast(Attempt, attempt)  # set by the loop's first read

    def hold(self, deadline: Deadline) -> dict[str, Any]:
        options = self.options
        if not options.wait:
            attempt, waited, polls = self.try_once(deadline), 0.0, 1
        else:
            state: dict[str, Attempt] = {}

            def probe(probe_deadline: Deadline) -> Attempt:
                try:
                    state["attempt"] = self.try_once(probe_deadline, state.get("attempt"))
                except DeadlineExceeded as exc:
                    last = state.get("attempt")
                    if last is None or last.writing or standing(last.view, self.me.id, self.clock.time()) != HELD:
                        # no look yet, our own write may have gone through, or the Lease was not another's: not
                        # a plain timeout of the wait (which wait_for would report on the last look)
                        raise ModuleFailure(str(exc)) from exc
                    # the timeout came during a read (a slow API): the last look, another actor's live Lease, stands
                return state["attempt"]
            outcome = wait_for(probe, self.judge, deadline, poll_interval=options.poll_interval)
            attempt, waited, polls = outcome.observation, outcome.elapsed, outcome.polls
        result = self.report(attempt, waited, polls)
        if attempt.done is None:
            message = held_message(options.name, options.namespace, attempt.view, self.clock.time())
            if options.wait:
                message += f"; waited {waited:.0f} s (timeout {options.timeout} s)"
            raise ModuleFailure(message + "; nothing was changed", **result)
        if attempt.taken_over_from:
            self.module.warn(f"Lease {options.namespace}/{lease_name(options.name)} was taken over from "
                             f"{attempt.taken_over_from['description']}, whose lease had expired")
        return result

    def judge(self, attempt: Attempt, _elapsed: float) -> Verdict:
        if attempt.done is not None:
            return Verdict(DONE)
        options = self.options
        return Verdict(WAITING, held_message(options.name, options.namespace, attempt.view, self.clock.time()))

    def report(self, attempt: Attempt, waited: float, polls: int) -> dict[str, Any]:
        options, now = self.options, self.clock.time()
        renewed = attempt.done == RENEW and attempt.first == OURS
        return dict(changed=attempt.done is not None,
                    lease=dict(name=lease_name(options.name), namespace=options.namespace),
                    holder=holder_summary(attempt.view, now),
                    acquired=attempt.done is not None and not renewed,
                    renewed=renewed, released=False,
                    taken_over_from=attempt.taken_over_from,
                    waited=round(waited, 1), polls=polls)

    def check(self, deadline: Deadline) -> dict[str, Any]:
        """Check mode: read the Lease and say what taking it would do; nothing is written, no Lease is taken."""
        options = self.options
        view, now = self.read(deadline), self.clock.time()
        found = standing(view, self.me.id, now)
        if found == HELD:
            self.module.warn(held_message(options.name, options.namespace, view, now) + " (check mode: not waited)")
        return dict(changed=found != HELD, lease=dict(name=lease_name(options.name), namespace=options.namespace),
                    holder=holder_summary(view, now), acquired=False, renewed=False, released=False,
                    taken_over_from=holder_summary(view, now) if found == EXPIRED else None,
                    waited=0.0, polls=1, would=dict(free="acquire", ours="renew", expired="take over",
                                                    held="wait" if options.wait else "fail")[found])

    # -- released -----------------------------------------------------------------------------------------------

    def release(self, deadline: Deadline) -> dict[str, Any]:
        """Release our Lease (holderIdentity cleared, on its resourceVersion); a Lease another actor holds is left
        as it is, with a warning: it took it over after ours expired."""
        options = self.options
        result: dict[str, Any] = dict(changed=False, lease=dict(name=lease_name(options.name), namespace=options.namespace),
                                      acquired=False, renewed=False, released=False, taken_over_from=None,
                                      waited=0.0, polls=1)
        for dummy in range(RACE_ATTEMPTS):
            view, now = self.read(deadline), self.clock.time()
            result["holder"] = holder_summary(view, now)
            if standing(view, self.me.id, now) != OURS:
                if view.holder is not None:
                    self.module.warn(f"Lease {options.namespace}/{lease_name(options.name)} is held by "
                                     f"{view.holder.describe()}, not by this run ({self.me.id}): left as it is; "
                                     "this run's lease had expired and was taken over")
                return result
            if options.check_mode:
                return dict(result, changed=True)
            try:
                self.leases.replace(released_body(options.name, options.namespace, view, now), deadline)
            except LeaseConflict:
                continue
            return dict(result, changed=True, released=True, holder=None)
        raise ModuleFailure(f"Lease {options.namespace}/{lease_name(options.name)} kept changing while it was being "
                            f"released ({RACE_ATTEMPTS} attempts)", **result)
