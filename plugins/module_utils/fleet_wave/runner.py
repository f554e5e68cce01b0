# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The runner of fleet_wave: a fleet run's waves, shared by every executor (AWX job slice) of the run through its
records on the management cluster (``fleet_wave.records``); ``fleet_wave.plan`` decides. The module file gives
the argument spec.

- ``plan``: the waves from the whole fleet, recorded once (the first executor's plan; the others adopt it and
  are refused when theirs differs); this executor's clusters in the fleet's order.
- ``await``: before a cluster: wait until every earlier wave of the whole fleet passed its gate; fail at once
  when the fleet is halted.
- ``record``: after a cluster: its outcome and gate verdict; halt the fleet when its wave failed above budget.
- ``status``: the summary. ``lift``: remove the halt (and forget the failed clusters of the halted run)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.options import ModuleOptions, ModuleRunner
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.fleet_halt import halt_message
from ansible_collections.flightcontrol.openstack.plugins.module_utils.fleet_wave.plan import (
    build_plan,
    counts_against,
    DONE,
    FAILED,
    gate_verdict,
    HALTED,
    halt_reason,
    may_start,
    my_clusters,
    PlanError,
    same_plan,
    summary,
    wave_line,
    wave_of,
    wave_verdict,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.fleet_wave.fleet import (
    discover_fleet,
    PatternError,
    source_of,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.fleet_wave.records import (
    FleetRecords,
    iso,
    run_problem,
)


@dataclass(frozen=True)
class FleetWaveOptions(ModuleOptions):
    """What fleet_wave was asked (with check mode): the runner reads nothing else."""

    action: str
    run: str
    records_namespace: str
    clusters: Optional[list]
    discover: Optional[dict]
    mine: Optional[list]
    waves: Optional[list]
    budgets: Optional[list]
    soak: int
    canary_label: str
    cluster: Optional[str]
    outcome: Optional[str]
    reason: Optional[str]
    gate: Optional[dict]
    started_at: Optional[str]
    by: Optional[str]
    retry_failed: bool
    timeout: int
    poll_interval: float
    check_mode: bool = False


class FleetWaveRunner(ModuleRunner):
    """fleet_wave's work. ``module`` is the module base it runs in (a ``KubernetesModule``); ``options`` what was
    asked."""

    module: Any
    options: FleetWaveOptions

    def __init__(self, module: Any, options: FleetWaveOptions) -> None:
        super().__init__(module, options)
        self.records: Any = None  # FleetRecords, once run() connected

    def deadline_of_run(self) -> Any:
        handed = getattr(self, "deadline", None)
        return handed if handed is not None else self.started + self.options.timeout

    def seconds_left(self, deadline: Any) -> float:
        if hasattr(deadline, "remaining"):
            return deadline.remaining()
        return deadline - self.clock.monotonic()

    def planned(self, fleet: list[dict[str, Any]], source: Optional[dict[str, Any]] = None) -> dict[str, Any]:
        options = self.options
        try:
            plan = build_plan(fleet, options.waves, options.budgets, options.soak, options.canary_label)
        except PlanError as exc:
            raise ModuleFailure(f"{exc}; nothing was changed")
        plan["budgets"] = list(options.budgets or [])
        plan["source"] = source or dict(inventory=True)
        return plan

    def fleet(self, deadline: Any) -> tuple[list[dict[str, Any]], Optional[dict[str, Any]]]:
        """The whole fleet: read from the management cluster with ``discover`` (every executor the same, whatever
        its slice), else ``clusters`` as given. With ``discover``, a host of ``clusters`` (what this executor's
        inventory sees) that the management cluster's fleet lacks is refused: the filters differ."""
        options = self.options
        if options.discover is None:
            return options.clusters or [], None
        source = source_of(options.discover)
        try:
            fleet = discover_fleet(self.records.maps.kube, options.discover, deadline)
        except PatternError as exc:
            raise ModuleFailure(f"discover: {exc}; nothing was changed")
        names = set(c["host"] for c in fleet)
        unseen = sorted(set(c.get("host") for c in options.clusters or []) - names)
        if unseen:
            raise ModuleFailure(
                f"the inventory has {', '.join(unseen)}, which the fleet read from the management cluster (namespaces "
                f"{source['namespaces'] or 'all'}, label_selector {source['label_selector']}, hosts {source['hosts']}) "
                "has not: give fleet_namespaces, fleet_label_selector and fleet_hostname_format as the inventory "
                "source has them; nothing was changed")
        return fleet, source

    def validate(self) -> None:
        options = self.options
        problem = run_problem(options.run)
        if problem:
            raise ModuleFailure(problem + "; nothing was changed")
        needs = dict(plan=("waves",), record=("cluster", "outcome"), **{"await": ("cluster",)})
        missing = [name for name in needs.get(options.action, ()) if getattr(options, name) in (None, [], "")]
        if missing:
            raise ModuleFailure(f"action={options.action} needs {' and '.join(missing)}; nothing was changed")
        if options.action == "plan" and options.discover is None and not options.clusters:
            raise ModuleFailure("action=plan needs clusters or discover; nothing was changed")
        if options.action == "plan" and options.discover is None:
            self.planned(options.clusters or [])  # a bad spec is refused before connecting

    def run(self) -> Any:
        options = self.options
        self.validate()
        deadline = self.deadline_of_run()
        self.records = FleetRecords(self.module.connect(), options.records_namespace, options.run)
        act = dict(plan=lambda: self.plan(self.planned(*self.fleet(deadline)), deadline), record=lambda: self.record(deadline),
                   status=lambda: self.status(deadline), lift=lambda: self.lift(deadline),
                   **{"await": lambda: self.wait(deadline)})[options.action]
        return self.module.exit(**act())

    def base(self, **result: Any) -> dict[str, Any]:
        options = self.options
        return dict(dict(changed=False, run=options.run, record=dict(namespace=options.records_namespace,
                                                                     name=self.records.name)), **result)

    # -- plan ---------------------------------------------------------------------------------------------------

    def plan(self, planned: dict[str, Any], deadline: Any) -> dict[str, Any]:
        options = self.options
        record = self.records.read(deadline)
        finished = record is not None and summary(record["plan"], record["outcomes"])["counts"]["not_started"] == 0
        changed = False
        if record is None or (finished and not self.records.halt(deadline)):
            changed = True
            if not options.check_mode:
                record = self.records.start(planned, deadline, replace=record if finished else None)
            else:
                record = dict(plan=planned, outcomes={})
        differs = same_plan(record["plan"], planned)
        if differs:
            raise ModuleFailure(f"fleet run {options.run} is in progress with another plan ({differs}): finish it, "
                                "give another run, or remove its record (kubectl delete configmap -n "
                                f"{options.records_namespace} {self.records.name}); nothing was changed",
                                **self.base(plan=record["plan"]))
        try:
            mine = my_clusters(record["plan"], options.mine if options.mine is not None else [])
        except PlanError as exc:
            raise ModuleFailure(f"{exc}; nothing was changed", **self.base(plan=record["plan"]))
        for entry in mine:
            entry["outcome"] = (record["outcomes"].get(entry["host"]) or {}).get("outcome")
        halt = self.records.halt(deadline)
        if halt:
            self.module.warn(halt_message(halt))
        return self.base(changed=changed, plan=record["plan"], mine=mine, halt=halt,
                         adopted=not changed, lines=self.lines(record))

    # -- await --------------------------------------------------------------------------------------------------

    def wait(self, deadline: Any) -> dict[str, Any]:
        options = self.options
        polls, started = 0, self.clock.monotonic()
        while True:
            record, halt = self.records.read(deadline), self.records.halt(deadline)
            polls += 1
            if record is None and options.check_mode:
                return self.base(wave=None, state="go", why="check mode: no record (the plan was not written)",
                                 waited=0.0, polls=polls, halt=halt, skip=False, now=self.clock.time())
            if record is None:
                raise ModuleFailure(f"fleet run {options.run} has no record (ConfigMap "
                                    f"{options.records_namespace}/{self.records.name}): run "
                                    "action=plan first", **self.base())
            wave = wave_of(record["plan"], options.cluster)
            if wave is None:
                raise ModuleFailure(f"{options.cluster} is not in fleet run {options.run}", **self.base())
            previous = (record["outcomes"].get(options.cluster) or {}).get("outcome")
            state, message = may_start(record["plan"], record["outcomes"], wave, halt is not None)
            waited = round(self.clock.monotonic() - started, 1)
            result = self.base(wave=wave, state=state, why=message, waited=waited, polls=polls, halt=halt,
                               skip=previous == DONE, now=self.clock.time())
            if state == HALTED:
                raise ModuleFailure(f"{options.cluster} not started: {halt_message(halt) if halt else message}",
                                    **result)
            if state == "go" or options.check_mode:
                return result
            left = self.seconds_left(deadline)
            if left <= 0:
                raise ModuleFailure(f"{options.cluster} not started after {waited:.0f} s: {message}", **result)
            self.clock.sleep(min(options.poll_interval, left))

    # -- record -------------------------------------------------------------------------------------------------

    def record(self, deadline: Any) -> dict[str, Any]:
        options = self.options
        gate = gate_verdict(options.gate) if options.outcome == DONE and options.gate is not None else None
        outcome = FAILED if options.outcome == FAILED or (gate is not None and not gate["passed"]) else DONE
        reasons = ([options.reason] if options.reason else []) + (gate["reasons"] if gate else [])
        now = self.clock.time()
        entry = dict(outcome=outcome, reasons=reasons, gate=gate, by=options.by, finished_at=now,
                     started_at=float(options.started_at) if options.started_at else now)

        def change(outcomes: dict[str, Any]) -> None:
            outcomes[str(options.cluster)] = entry
        record = self.records.read(deadline) if options.check_mode else self.records.update(change, deadline)
        if record is None:
            raise ModuleFailure(f"fleet run {options.run} has no record: run action=plan first", **self.base())
        if options.check_mode:
            change(record["outcomes"])
        wave = wave_of(record["plan"], options.cluster)
        if wave is None:
            raise ModuleFailure(f"{options.cluster} is not in fleet run {options.run}", **self.base())
        verdict = wave_verdict(record["plan"], record["outcomes"], wave)
        halt = self.records.halt(deadline)
        if verdict["state"] == HALTED and halt is None and not options.check_mode:
            halt = self.records.write_halt(wave, halt_reason(verdict), verdict["failed"], now, options.by, deadline)
        return self.base(changed=not options.check_mode, cluster=options.cluster, outcome=outcome, reasons=reasons,
                         gate=gate, wave=verdict, halt=halt, halted=verdict["state"] == HALTED or halt is not None)

    # -- status, lift -------------------------------------------------------------------------------------------

    def lines(self, record: dict[str, Any]) -> list[str]:
        result = []
        for verdict in summary(record["plan"], record["outcomes"])["waves"]:
            took = (verdict["finished_at"] - verdict["started_at"]) if verdict["finished_at"] and verdict[
                "started_at"] else None
            result.append(wave_line(verdict, took))
        return result

    def status(self, deadline: Any) -> dict[str, Any]:
        record, halt = self.records.read(deadline), self.records.halt(deadline)
        if record is None:
            return self.base(summary=None, lines=[], halt=halt, outcomes={})
        fleet = summary(record["plan"], record["outcomes"])
        for verdict in fleet["waves"]:
            for key in ("started_at", "finished_at"):
                verdict[key] = iso(verdict[key]) if verdict[key] else None
        return self.base(summary=dict(fleet, halted=halt is not None), lines=self.lines(record), halt=halt,
                         outcomes=record["outcomes"])

    def lift(self, deadline: Any) -> dict[str, Any]:
        """Remove the halt; the run's failed clusters forgotten (``retry_failed``: the run retries them) or kept as
        failed but no longer counted against their wave (``lifted``), since the run's own record would otherwise
        keep it halted. A run halted by its record alone (the halt record deleted by hand) is lifted likewise."""
        options = self.options
        halt = self.records.halt(deadline)
        record = self.records.read(deadline) if halt is None or halt.get("run") == options.run else None
        failed = sorted(h for h, o in ((record or {}).get("outcomes") or {}).items() if counts_against(o))
        if halt is None and not failed:
            return self.base(halt=None, lifted=False, forgotten=[])
        if failed and not options.check_mode:
            self.records.update(lambda outcomes: self.lift_each(outcomes, failed), deadline)
        if halt is not None and not options.check_mode:
            self.records.lift(deadline)
        return self.base(changed=True, halt=halt, lifted=not options.check_mode,
                         forgotten=failed if options.retry_failed else [], kept=[] if options.retry_failed else failed)

    def lift_each(self, outcomes: dict[str, Any], hosts: list[str]) -> None:
        for host in hosts:
            if self.options.retry_failed:
                outcomes.pop(host, None)
            elif host in outcomes:
                outcomes[host]["lifted"] = True
