# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The decisions of fleet_wave, pure: the waves of a fleet run from their spec, the fleet's order, a cluster's
gate verdict from the signals measured after its soak, a wave's verdict and budget, and the summary.

Wave spec: a list whose entries are either a number of clusters (``3``: this wave takes the next 3) or a share of
the fleet (``"25%"``: this wave takes the fleet up to a quarter done, rounded up). ``[1, 3, "25%", "100%"]`` on 30
clusters gives waves of 1, 3, 4 and 22. A wave that would be empty is dropped (small fleets); the waves must
cover the fleet. Budget: how many clusters of a wave may fail (its rollout or its gate) before the fleet halts,
a number or a share of the wave (``"10%"``, rounded down), one per wave; 0 where none is given."""

from __future__ import annotations

import math
from typing import Any, Optional

DONE = "done"
FAILED = "failed"
OUTCOMES = (DONE, FAILED)

PENDING = "pending"    # a wave with a cluster not finished
PASSED = "passed"      # every cluster finished, failures within budget
HALTED = "halted"      # failures above budget

DEFAULT_CANARY_LABEL = "flightcontrol.openstack/canary"


class PlanError(ValueError):
    """A spec that cannot be planned: refused before any change."""


def _share(entry: Any, what: str) -> Optional[float]:
    """``"25%"`` -> 25.0; None when ``entry`` is no share."""
    if not isinstance(entry, str) or not entry.strip().endswith("%"):
        return None
    try:
        value = float(entry.strip()[:-1])
    except ValueError:
        raise PlanError(f"{what} {entry!r} is not a number of clusters or a percentage")
    if not 0 < value <= 100 or math.isnan(value):
        raise PlanError(f"{what} {entry!r}: a percentage must be above 0 and at most 100")
    return value


def _count(entry: Any, what: str) -> int:
    if isinstance(entry, bool):
        raise PlanError(f"{what} {entry!r} is not a number of clusters or a percentage")
    try:
        value = int(entry)
    except (TypeError, ValueError):
        raise PlanError(f"{what} {entry!r} is not a number of clusters or a percentage")
    if str(entry).strip() != str(value) and not isinstance(entry, int):
        raise PlanError(f"{what} {entry!r} is not a whole number")
    return value


def wave_sizes(spec: Any, fleet_size: int) -> list[int]:
    """The size of each wave of ``spec`` over ``fleet_size`` clusters (empty waves dropped)."""
    if not isinstance(spec, (list, tuple)) or not spec:
        raise PlanError("waves must be a non-empty list, e.g. [1, 3, \"25%\", \"100%\"]")
    sizes, done, last_share = [], 0, 0.0
    for index, entry in enumerate(spec, 1):
        what = f"waves[{index}]"
        share = _share(entry, what)
        if share is not None:
            if share < last_share:
                raise PlanError(f"{what} {entry!r} is below an earlier wave's {last_share:g}%: shares say how far "
                                "the fleet is done, they only grow")
            last_share = share
            size = max(0, int(math.ceil(fleet_size * share / 100.0 - 1e-9)) - done)
        else:
            count = _count(entry, what)
            if count < 1:
                raise PlanError(f"{what} is {count}: a wave takes at least one cluster")
            size = min(count, fleet_size - done)
        done += size
        sizes.append(size)
    if done < fleet_size:
        raise PlanError(f"waves {list(spec)} cover {done} of the {fleet_size} clusters of the fleet: end with \"100%\" "
                        "(or add a wave)")
    return sizes


def wave_budgets(budgets: Any, sizes: list[int]) -> list[int]:
    """The budget of each wave (kept in step with ``sizes``, empty waves included)."""
    given = list(budgets) if isinstance(budgets, (list, tuple)) else ([budgets] if budgets is not None else [])
    if len(given) > len(sizes):
        raise PlanError(f"budgets has {len(given)} entries for {len(sizes)} waves")
    result = []
    for index, size in enumerate(sizes):
        entry = given[index] if index < len(given) else 0
        what = f"budgets[{index + 1}]"
        share = _share(entry, what) if isinstance(entry, str) and entry.strip().endswith("%") else None
        budget = int(math.floor(size * share / 100.0 + 1e-9)) if share is not None else _count(entry, what)
        if budget < 0:
            raise PlanError(f"{what} is {budget}: a budget is a number of clusters that may fail, 0 or more")
        if budget > size:
            raise PlanError(f"{what} is {budget}, above the {size} cluster(s) of wave {index + 1}")
        result.append(budget)
    return result


def is_canary(labels: Optional[dict[str, Any]], canary_label: Optional[str]) -> bool:
    """``key`` (any value) or ``key=value``."""
    key, sep, value = (canary_label or "").partition("=")
    if not key or key not in (labels or {}):
        return False
    return not sep or str((labels or {})[key]) == value


def fleet_order(clusters: list[dict[str, Any]], canary_label: str = DEFAULT_CANARY_LABEL) -> list[str]:
    """Host names in rollout order: canaries first, then the rest, each in the inventory's order (host names
    sorted, as the capi_clusters inventory lists them). ``clusters``: ``[{host, labels}]``."""
    names: list[str] = [c.get("host") or "" for c in clusters]
    if any(not name for name in names):
        raise PlanError("every cluster of the fleet needs a host name")
    if len(set(names)) != len(names):
        raise PlanError(f"the fleet names a cluster twice: {sorted(n for n in set(names) if names.count(n) > 1)}")
    ordered = sorted(clusters, key=lambda c: c["host"])
    canaries = [c["host"] for c in ordered if is_canary(c.get("labels"), canary_label)]
    return canaries + [c["host"] for c in ordered if c["host"] not in canaries]


def build_plan(clusters: list[dict[str, Any]], spec: Any, budgets: Any = None, soak: Optional[int] = 0,
               canary_label: str = DEFAULT_CANARY_LABEL) -> dict[str, Any]:
    """The plan of a fleet run: ``{waves: [{wave, clusters, budget}], soak, spec, canary_label, fleet}``."""
    if not clusters:
        raise PlanError("the fleet has no cluster")
    if soak is None or soak < 0:
        raise PlanError(f"soak is {soak}: the seconds a wave soaks before its gate must be 0 or more")
    order = fleet_order(clusters, canary_label)
    sizes = wave_sizes(spec, len(order))
    limits = wave_budgets(budgets, sizes)
    waves: list[dict[str, Any]] = []
    start = 0
    for size, budget in zip(sizes, limits):
        if size:
            waves.append(dict(wave=len(waves) + 1, clusters=order[start:start + size], budget=budget))
        start += size
    return dict(waves=waves, soak=soak, spec=list(spec), canary_label=canary_label, fleet=len(order))


def same_plan(recorded: dict[str, Any], planned: dict[str, Any]) -> Optional[str]:
    """Why a recorded plan was made from other settings than those given now (None when the same). The fleet
    itself is not compared: a run's plan is fixed when its first executor records it, and every executor adopts
    it (a cluster created since is no part of the run; ``my_clusters`` refuses it)."""
    for key in ("spec", "soak", "canary_label"):
        if recorded.get(key) != planned.get(key):
            return f"its {key} differ"
    if recorded.get("budgets", planned.get("budgets")) != planned.get("budgets"):
        return "its budgets differ"
    return None


def wave_of(plan: dict[str, Any], host: Optional[str]) -> Optional[int]:
    for wave in plan["waves"]:
        if host in wave["clusters"]:
            return wave["wave"]
    return None


def my_clusters(plan: dict[str, Any], mine: list[str]) -> list[dict[str, Any]]:
    """This executor's clusters (``mine``, its slice of the inventory) in the fleet's order, each with its wave;
    a host the plan does not have is refused."""
    missing = sorted(set(mine) - set(c for w in plan["waves"] for c in w["clusters"]))
    if missing:
        raise PlanError(f"{', '.join(missing)} not in the fleet run's plan (another fleet, or the fleet changed since "
                        "the run began)")
    return [dict(host=c, wave=w["wave"]) for w in plan["waves"] for c in w["clusters"] if c in mine]


def gate_verdict(signals: dict[str, Any]) -> dict[str, Any]:
    """A cluster's gate from what was measured after its soak. ``signals``: ``kcp`` {replicas, ready_replicas},
    ``machines`` [{name, ready}], ``members`` {serving, message}, ``readyz`` {status, message}, ``critical_before``
    and ``critical_after`` (codes of critical cluster_readiness findings). Returns ``{passed, reasons}``."""
    reasons = []
    kcp = signals.get("kcp") or {}
    if kcp.get("replicas") is None or kcp.get("ready_replicas") != kcp.get("replicas"):
        reasons.append(f"KubeadmControlPlane ready {kcp.get('ready_replicas')}/{kcp.get('replicas')}")
    not_ready = [m.get("name") for m in signals.get("machines") or [] if m.get("ready") is not True]
    if not_ready:
        reasons.append(f"Nodes not Ready: {', '.join(str(n) for n in not_ready)}")
    members = signals.get("members") or {}
    if members.get("serving") is not True:
        reasons.append(f"API members not all serving: {members.get('message') or 'not measured'}")
    readyz = signals.get("readyz") or {}
    if readyz.get("status") != 200:
        answer = readyz.get("status") if readyz.get("status") not in (None, -1) else readyz.get("message") or "nothing"
        reasons.append(f"/readyz through the load balancer answered {answer}")
    new = sorted(set(signals.get("critical_after") or []) - set(signals.get("critical_before") or []))
    if new:
        reasons.append(f"new critical cluster_readiness finding(s): {', '.join(new)}")
    return dict(passed=not reasons, reasons=reasons)


def counts_against(outcome: Optional[dict[str, Any]]) -> bool:
    """A failure that counts against its wave's budget: one whose halt was not lifted with the failure kept
    (``lifted``, fleet_resume without retry_failed)."""
    return (outcome or {}).get("outcome") == FAILED and not (outcome or {}).get("lifted")


def wave_verdict(plan: dict[str, Any], outcomes: dict[str, Any], wave: int) -> dict[str, Any]:
    """``{wave, state, clusters, finished, failed, budget, started_at, finished_at}`` of wave number ``wave``."""
    [entry] = [w for w in plan["waves"] if w["wave"] == wave]
    mine = [outcomes[c] for c in entry["clusters"] if c in outcomes]
    failed = sorted(c for c in entry["clusters"] if counts_against(outcomes.get(c)))
    finished = [c for c in entry["clusters"] if (outcomes.get(c) or {}).get("outcome") in OUTCOMES]
    state = HALTED if len(failed) > entry["budget"] else (PASSED if len(finished) == len(entry["clusters"])
                                                          else PENDING)
    starts = [o["started_at"] for o in mine if o.get("started_at")]
    ends = [o["finished_at"] for o in mine if o.get("finished_at")]
    return dict(wave=wave, state=state, clusters=list(entry["clusters"]), finished=len(finished), failed=failed,
                budget=entry["budget"], started_at=min(starts) if starts else None,
                finished_at=max(ends) if len(ends) == len(entry["clusters"]) and ends else None)


def may_start(plan: dict[str, Any], outcomes: dict[str, Any], wave: int, halted: bool) -> tuple[str, str]:
    """Whether a cluster of wave ``wave`` may start: ``(state, message)``, state ``go``, ``wait`` or ``halted``.
    Halted with the halt record, and without it too when the run's record holds a wave failed above its budget
    (this wave or any other: a halt record deleted by hand mid-wave starts nothing new)."""
    if halted:
        return HALTED, "the fleet is halted"
    for entry in plan["waves"]:
        verdict = wave_verdict(plan, outcomes, entry["wave"])
        if verdict["state"] == HALTED:
            return HALTED, (f"wave {verdict['wave']} failed above its budget ({halt_reason(verdict)}; the run's record "
                            "holds it, with or without the halt record): lift it with playbooks/fleet_resume.yml")
    for earlier in range(1, wave):
        verdict = wave_verdict(plan, outcomes, earlier)
        if verdict["state"] == PENDING:
            left = [c for c in verdict["clusters"] if (outcomes.get(c) or {}).get("outcome") not in OUTCOMES]
            return "wait", (f"waiting for wave {earlier}: {verdict['finished']} of {len(verdict['clusters'])} finished "
                            f"(left: {', '.join(left)})")
    return "go", f"waves before {wave} passed"


def halt_reason(verdict: dict[str, Any]) -> str:
    return (f"wave {verdict['wave']}: {len(verdict['failed'])} cluster(s) failed, budget {verdict['budget']} "
            f"({', '.join(verdict['failed'])})")


def summary(plan: dict[str, Any], outcomes: dict[str, Any]) -> dict[str, Any]:
    """One entry per wave and the fleet's counts."""
    waves = [wave_verdict(plan, outcomes, w["wave"]) for w in plan["waves"]]
    counts = dict(done=sum(1 for o in outcomes.values() if o.get("outcome") == DONE),
                  failed=sum(1 for o in outcomes.values() if o.get("outcome") == FAILED))
    counts["not_started"] = plan["fleet"] - counts["done"] - counts["failed"]
    return dict(waves=waves, counts=counts, fleet=plan["fleet"])


def wave_line(verdict: dict[str, Any], seconds: Optional[float] = None) -> str:
    """``wave 2: 3 cluster(s), gate passed, 41 s``."""
    gate = dict(passed="gate passed", halted=f"halted ({len(verdict['failed'])} failed, budget {verdict['budget']})",
                pending=f"{verdict['finished']} of {len(verdict['clusters'])} finished")[verdict["state"]]
    took = f", {seconds:.0f} s" if seconds is not None else ""
    return (f"wave {verdict['wave']}: {len(verdict['clusters'])} cluster(s) ({', '.join(verdict['clusters'])}), "
            f"{gate}{took}")
