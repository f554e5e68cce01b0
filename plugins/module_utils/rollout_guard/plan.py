# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure decisions of a guarded control-plane rollout: no API access, plain data in and out.

A ``Snapshot`` is one observation: the control-plane Machines (name, created, deleting, deletion hooks,
addresses, up to date or not), the pool's members (Octavia's fields), whether the pool has a health
monitor, and what this run remembers (the Machines it released, when each new member was first seen
not serving).  ``next_action`` returns the next ``Action``:

- ``hold``: put the deletion hook on these old Machines (all at once: holding is always safe);
- ``release``: remove the hook from this one old Machine (KCP already chose it for deletion), because
  a replacement of its own serves and the pool keeps ``min_healthy`` serving members without it;
- ``terminate``: this Machine, being deleted and past our pre-drain hook, still carries our pre-terminate hook
  (``terminate.py`` decides when it goes: after its server is stopped);
- ``wait``: nothing to do yet (``reason`` says what for);
- ``done`` (``FINISHED``): no old Machine left, nothing being deleted, every new member serving, no hook of ours left;
- ``stuck``: a member is in ERROR, or did not get where it should within ``member_timeout``.

Serving means provisioning_status ACTIVE and operating_status ONLINE with a health monitor, NO_MONITOR
without one (what lb_member_wait calls HEALTHY); a Snapshot given ``judge`` (``octavia.serving.ServingHistory``'s
``serving``: on ``ovn``, ONLINE only counts after a full monitor window since the member's creation) asks it
instead, for every count of serving members (replacements, the pool's floor).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Literal, Optional, Sequence, Tuple, Union

from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.objects import (
    PRE_DRAIN_HOOK_PREFIX,
    PRE_TERMINATE_HOOK_PREFIX,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.identifiers import normalize_address
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.members import Selector

DEFAULT_HOOK_NAME = "flightcontrol-rollout"

HOLD = "hold"
RELEASE = "release"
TERMINATE = "terminate"
WAIT = "wait"
FINISHED = "done"
STUCK = "stuck"

# ``judge(member)``: whether a member (None: no member) serves, by the pool's provider's rule
Judge = Callable[[Optional[dict]], Any]
# ``replace``'s (old, new) selectors
Pair = Tuple[Selector, Selector]


def hook_key(hook_name: str) -> str:
    return PRE_DRAIN_HOOK_PREFIX + hook_name


def terminate_hook_key(hook_name: str) -> str:
    """The guard's pre-terminate hook (same name as its pre-drain hook)."""
    return PRE_TERMINATE_HOOK_PREFIX + hook_name


def serving(member: Optional[dict[str, Any]], has_monitor: bool) -> bool:
    """ACTIVE and healthy for this pool."""
    if member is None or member.get("provisioning_status") != "ACTIVE":
        return False
    return member.get("operating_status") == ("ONLINE" if has_monitor else "NO_MONITOR")


def member_state(member: Optional[dict[str, Any]]) -> str:
    if member is None:
        return "absent"
    return f"{member.get('provisioning_status')}/{member.get('operating_status')}"


class Action:
    # set on a release of direct mode (``_release_or_keep``): the pair's index and its old members to delete
    pair: int
    targets: list[dict[str, Any]]

    def __init__(self, kind: str, machines: Iterable[str] = (), member: Optional[str] = None,
                 state: Optional[str] = None, since: Optional[float] = None, reason: str = "") -> None:
        self.kind = kind
        self.machines = tuple(machines)
        self.member = member
        self.state = state
        self.since = since
        self.reason = reason

    @property
    def machine(self) -> Optional[str]:
        return self.machines[0] if self.machines else None

    def to_dict(self) -> dict[str, Any]:
        return {"action": self.kind, "machines": list(self.machines), "member": self.member, "state": self.state,
                "since": self.since, "reason": self.reason}

    def __repr__(self) -> str:
        return f"Action({self.kind}, {self.machines!r}, {self.reason!r})"


class Snapshot:
    """One observation plus what the run remembers.

    ``machines``: dicts with name, created (sortable), deleting, hooks (annotation keys), addresses,
    up_to_date.  ``hold_terminate``: whether old Machines get our pre-terminate hook too (the stop of the old
    server before KCP removes the etcd member).  ``members``: Octavia member dicts.  ``member_prefix``: CAPO names a member
    ``<pool name>-<machine>`` (pool ``<lb>-<port>``), so ``"<pool name>-"``; members are also matched by
    address.  ``released``: Machines this run released.  ``not_serving_since``: member key -> time
    first seen not serving (see ``track``).  ``replicas``: the control plane's desired size.
    """

    def __init__(self, machines: Iterable[dict[str, Any]], members: Iterable[dict[str, Any]], has_monitor: bool,
                 min_healthy: int, hook_name: str = DEFAULT_HOOK_NAME, member_prefix: Optional[str] = None,
                 released: Iterable[str] = (), not_serving_since: Optional[dict[str, float]] = None, now: float = 0.0,
                 member_timeout: float = 600.0, replicas: Optional[int] = None, lb_status: Optional[str] = "ACTIVE",
                 hold_terminate: bool = False, judge: Optional[Judge] = None) -> None:
        self.machines = sorted(machines, key=lambda m: (m.get("created") or "", m["name"]))
        self.members = list(members)
        self.has_monitor = has_monitor
        self.min_healthy = min_healthy
        self.hook = hook_key(hook_name)
        self.terminate_hook = terminate_hook_key(hook_name)
        self.hold_terminate = hold_terminate
        self.member_prefix = member_prefix
        self.released = set(released)
        self.not_serving_since = dict(not_serving_since or {})
        self.now = now
        self.member_timeout = member_timeout
        self.replicas = replicas
        self.lb_status = lb_status
        self.judge = judge

    def member_of(self, machine: dict[str, Any]) -> Optional[dict[str, Any]]:
        """The pool member of a Machine: by CAPO's name, else by address."""
        if self.member_prefix:
            wanted = self.member_prefix + machine["name"]
            for member in self.members:
                if member.get("name") == wanted:
                    return member
        addresses = set(normalize_address(a) for a in machine.get("addresses") or [])
        for member in self.members:
            if normalize_address(member.get("address")) in addresses:
                return member
        return None

    def held(self, machine: dict[str, Any]) -> bool:
        return self.hook in (machine.get("hooks") or ())

    def held_terminate(self, machine: dict[str, Any]) -> bool:
        return self.terminate_hook in (machine.get("hooks") or ())

    def held_any(self, machine: dict[str, Any]) -> bool:
        return self.held(machine) or self.held_terminate(machine)

    def to_hold(self, machine: dict[str, Any]) -> bool:
        """Whether an old Machine still needs a hook of ours: the pre-drain hook until this run released it (not
        on one deleted without a member), and with ``hold_terminate`` the pre-terminate hook while the Machine is
        not past its pre-drain phase (not deleting, or held by our pre-drain hook)."""
        if machine["name"] in self.released:
            return False
        if machine.get("deleting") and self.held_terminate(machine) and not self.held(machine):
            return False  # past our pre-drain hook (an earlier run released it): its pre-terminate step is next
        if not self.held(machine) and not (machine.get("deleting") and self.member_of(machine) is None):
            return True
        before_drain = not machine.get("deleting") or self.held(machine)
        return self.hold_terminate and before_drain and not self.held_terminate(machine)

    def old(self) -> list[dict[str, Any]]:
        return [m for m in self.machines if not m.get("up_to_date")]

    def new(self) -> list[dict[str, Any]]:
        return [m for m in self.machines if m.get("up_to_date")]

    def serving(self, member: Optional[dict[str, Any]]) -> bool:
        if self.judge is not None:
            return member is not None and bool(self.judge(member))
        return serving(member, self.has_monitor)


def member_key(member: dict[str, Any]) -> str:
    return member.get("id") or member.get("name") or f"{member.get('address')}:{member.get('protocol_port')}"


def _name(member: Optional[dict[str, Any]]) -> Optional[str]:
    return member.get("name") if member else None


def track(snapshot: Snapshot) -> dict[str, float]:
    """``not_serving_since`` updated for this observation: members of new Machines that do not serve
    (and members of released Machines still there) keep their first-seen time; new Machines without a
    member are tracked under ``machine:<name>``; the rest are dropped."""
    since: dict[str, float] = {}
    for machine in snapshot.machines:
        member = snapshot.member_of(machine)
        if machine.get("up_to_date") and not machine.get("deleting"):
            if member is None:
                key = "machine:" + machine["name"]
            elif not snapshot.serving(member):
                key = member_key(member)
            else:
                continue
        elif machine["name"] in snapshot.released and member is not None:
            key = member_key(member)
        else:
            continue
        since[key] = snapshot.not_serving_since.get(key, snapshot.now)
    return since


def _stuck(snapshot: Snapshot, machine: dict[str, Any], member: Optional[dict[str, Any]], why: str,
           since: float) -> Action:
    return Action(STUCK, [machine["name"]], member=member.get("name") if member else None,
                  state=member_state(member), since=since, reason=why)


def _problems(snapshot: Snapshot) -> Optional[Action]:
    """A stuck action for the first member in ERROR or past member_timeout, else None."""
    if snapshot.lb_status == "ERROR":
        return Action(STUCK, reason="the load balancer is in provisioning_status ERROR", state="ERROR")
    for machine in snapshot.machines:
        member = snapshot.member_of(machine)
        watched = machine.get("up_to_date") and not machine.get("deleting")
        released = machine["name"] in snapshot.released
        if not watched and not released:
            continue
        if member is not None and member.get("provisioning_status") == "ERROR":
            return _stuck(snapshot, machine, member, "member is in provisioning_status ERROR", snapshot.now)
        key = ("machine:" + machine["name"]) if member is None else member_key(member)
        if key not in snapshot.not_serving_since or (watched and member is not None and snapshot.serving(member)):
            continue
        since = snapshot.not_serving_since[key]
        if snapshot.now - since >= snapshot.member_timeout:
            if released:
                why = f"member of the released Machine is still in the pool after {snapshot.now - since:.0f} s"
            elif member is None:
                why = f"the new Machine has no pool member after {snapshot.now - since:.0f} s"
            else:
                why = f"new member not ACTIVE and healthy after {snapshot.now - since:.0f} s"
            return _stuck(snapshot, machine, member, why, since)
    return None


def next_action(snapshot: Snapshot) -> Action:
    """The next action for one observation (see the module docstring)."""
    problem = _problems(snapshot)
    if problem is not None:
        return problem
    old = snapshot.old()
    new = snapshot.new()
    # 1. Hold every old Machine that can still be held (its member is still in the pool).
    to_hold = [m["name"] for m in old if snapshot.to_hold(m)]
    if to_hold:
        return Action(HOLD, to_hold, reason="old control-plane Machines not held yet")
    # Our pre-terminate hook on a Machine past our pre-drain hook (released, or by an earlier run): its server
    # is stopped, then the hook goes (terminate.py); one Machine at a time, the oldest first. Without the
    # pre-terminate hold (no stop asked, Kubernetes < 1.31) a hook of ours left by an earlier run goes too.
    for machine in snapshot.machines:
        past_drain = machine.get("deleting") and not snapshot.held(machine)
        unwanted = not snapshot.hold_terminate and not machine.get("up_to_date")
        if snapshot.held_terminate(machine) and (past_drain or unwanted):
            return Action(TERMINATE, [machine["name"]], member=_name(snapshot.member_of(machine)),
                          reason=f"Machine {machine['name']} holds our pre-terminate hook")
    # 2. One release at a time: a released Machine must be gone (member and Machine) first.
    for machine in snapshot.machines:
        if machine["name"] in snapshot.released:
            member = snapshot.member_of(machine)
            if member is not None:
                why = f"member {member.get('name')} of released Machine {machine['name']} to be gone"
                return Action(WAIT, [machine["name"]], member=member.get("name"), state=member_state(member),
                              reason=why)
            return Action(WAIT, [machine["name"]], reason=f"released Machine {machine['name']} to be gone")
    # Machines being deleted that we do not hold (deleted before we could, or not ours): wait for them.
    for machine in snapshot.machines:
        if machine.get("deleting") and not snapshot.held(machine):
            return Action(WAIT, [machine["name"]],
                          reason=f"Machine {machine['name']}, deleted without our hook, to be gone")
    victims = [m for m in old if m.get("deleting")]
    if not victims:
        waiting_new = [m["name"] for m in new if not snapshot.serving(snapshot.member_of(m))]
        if old:
            why = f"the control plane to create a replacement and pick the next old Machine ({len(old)} old left)"
            if waiting_new:
                why = f"the member of new Machine {', '.join(waiting_new)} to serve"
            return Action(WAIT, [m["name"] for m in old], reason=why)
        if waiting_new:
            return Action(WAIT, waiting_new, reason=f"the member of new Machine {', '.join(waiting_new)} to serve")
        ours = [m["name"] for m in snapshot.machines if snapshot.held_any(m)]
        if ours:  # new Machines carrying our hooks (a previous run held them): take them off
            return Action(RELEASE, ours, reason="hook left on up-to-date Machines")
        if snapshot.replicas is not None and len(snapshot.machines) < snapshot.replicas:
            return Action(WAIT, reason=f"the control plane to reach {snapshot.replicas} Machines (has "
                                       f"{len(snapshot.machines)})")
        short = below_floor(snapshot.members, snapshot.has_monitor, snapshot.min_healthy, snapshot.serving)
        if short is not None:
            return Action(WAIT, reason=short)
        return Action(FINISHED, reason=f"{len(new)} up-to-date Machine(s), every member serving")
    victim = victims[0]
    replacement = can_release(snapshot, victim)
    if replacement is not True:
        return Action(WAIT, [victim["name"]], reason=replacement)
    return Action(RELEASE, [victim["name"]],
                  reason=f"its replacement serves and the pool keeps {snapshot.min_healthy} serving member(s)")


def can_release(snapshot: Snapshot, victim: dict[str, Any]) -> Union[Literal[True], str]:
    """True when ``victim`` (an old Machine being deleted) may go, else why not."""
    old = snapshot.old()
    new_serving = [m for m in snapshot.new() if not m.get("deleting") and snapshot.serving(snapshot.member_of(m))]
    replicas = snapshot.replicas if snapshot.replicas is not None else len(snapshot.machines) - 1
    # Old Machines already replaced and gone each took one serving new Machine; this one needs its own.
    needed = max(1, replicas - len(old) + 1)
    if len(new_serving) < needed:
        return (f"a serving replacement for {victim['name']} ({len(new_serving)} new Machine(s) serving, {needed} "
                "needed)")
    leaving: set[str] = set()
    for machine in snapshot.machines:
        if machine.get("deleting"):
            member = snapshot.member_of(machine)
            if member is not None:
                leaving.add(member_key(member))
    remaining = [m for m in snapshot.members if snapshot.serving(m) and member_key(m) not in leaving]
    if len(remaining) < snapshot.min_healthy:
        return (f"the pool to keep {snapshot.min_healthy} serving member(s) without {victim['name']} (would have "
                f"{len(remaining)})")
    return True


# -- direct mode: members managed outside Cluster API ------------------------------------------


def direct_next(pairs: Sequence[Pair], members: list[dict[str, Any]], has_monitor: bool, min_healthy: int,
                deleted: Iterable[int] = (), not_serving_since: Optional[dict[str, float]] = None, now: float = 0.0,
                member_timeout: float = 600.0, judge: Optional[Judge] = None) -> tuple[Action, dict[str, float]]:
    """The next step of ``replace: [{old, new}]``.  ``pairs``: (old selector, new selector) objects with
    ``matches(member)``; ``deleted``: indexes of pairs whose old member this run deleted.
    Returns (Action, not_serving_since).

    A pair is done only when its new member serves: an old member gone (deleted by this run, by someone else, or
    before the run) never makes its new member serve. The run is done only when every pair is and the pool has
    ``min_healthy`` serving members. ``judge(member)`` says serving where given (the provider's rule,
    ``octavia.serving``), else ACTIVE and healthy."""
    is_serving: Judge = judge if judge is not None else (lambda m: serving(m, has_monitor))
    since_in = dict(not_serving_since or {})
    since: dict[str, float] = {}
    deleted = set(deleted)
    for index, (old_sel, new_sel) in enumerate(pairs):
        olds = [m for m in members if old_sel.matches(m)]
        key = f"pair:{index}"
        if index in deleted and olds:
            return _old_not_gone(old_sel, olds, since, since_in.get(key, now), key, now, member_timeout), since
        news = [m for m in members if new_sel.matches(m)]
        new = news[0] if news else None
        if new is not None and new.get("provisioning_status") == "ERROR":
            return Action(STUCK, member=new.get("name"), state=member_state(new), since=now,
                          reason=f"new member {new_sel.text} is in provisioning_status ERROR"), since
        if not is_serving(new):
            since[key] = since_in.get(key, now)
            how = "" if olds or index in deleted else f"; old member {old_sel.text} was removed by someone else (not " \
                "by this run)"
            return _new_not_serving(new, new_sel, since[key], now, member_timeout, how), since
        if not olds:
            continue  # done: its new member serves and the old one is gone
        return _release_or_keep(index, olds, old_sel, new_sel, members, is_serving, min_healthy), since
    return _finished_above_floor(members, is_serving, min_healthy, since, since_in, now, member_timeout)


def _old_not_gone(old_sel: Selector, olds: list[dict[str, Any]], since: dict[str, float], first_seen: float, key: str,
                  now: float, member_timeout: float) -> Action:
    """This run deleted the old member of a pair and it is still (or again) in the pool."""
    if any(m.get("provisioning_status") == "ERROR" for m in olds):
        return Action(STUCK, member=olds[0].get("name"), state=member_state(olds[0]), since=now,
                      reason=f"old member {old_sel.text} is in ERROR after its deletion")
    since[key] = first_seen
    if now - first_seen >= member_timeout:
        return Action(STUCK, member=olds[0].get("name"), state=member_state(olds[0]), since=first_seen,
                      reason=f"old member {old_sel.text} is still in the pool after {now - first_seen:.0f} s")
    return Action(WAIT, member=olds[0].get("name"), state=member_state(olds[0]),
                  reason=f"old member {old_sel.text} to be gone")


def _new_not_serving(new: Optional[dict[str, Any]], new_sel: Selector, first_seen: float, now: float,
                     member_timeout: float, how: str) -> Action:
    name = new.get("name") if new else new_sel.text
    if now - first_seen >= member_timeout:
        return Action(STUCK, member=name, state=member_state(new), since=first_seen,
                      reason=f"new member {new_sel.text} not ACTIVE and healthy after {now - first_seen:.0f} s{how}")
    return Action(WAIT, member=name, state=member_state(new),
                  reason=f"new member {new_sel.text} to be ACTIVE and healthy{how}")


def _release_or_keep(index: int, olds: list[dict[str, Any]], old_sel: Selector, new_sel: Selector,
                     members: list[dict[str, Any]], is_serving: Judge, min_healthy: int) -> Action:
    old_keys = set(member_key(m) for m in olds)
    remaining = [m for m in members if is_serving(m) and member_key(m) not in old_keys]
    if len(remaining) < min_healthy:
        return Action(WAIT, member=olds[0].get("name"), state=member_state(olds[0]),
                      reason=f"the pool to keep {min_healthy} serving member(s) without {old_sel.text} (would have "
                             f"{len(remaining)})")
    action = Action(RELEASE, member=olds[0].get("name"), state=member_state(olds[0]),
                    reason=f"delete old member {old_sel.text}: {new_sel.text} serves")
    action.pair = index
    action.targets = olds
    return action


def below_floor(members: Iterable[dict[str, Any]], has_monitor: bool, min_healthy: Optional[int],
                judge: Optional[Judge] = None) -> Optional[str]:
    """Why a run whose every step is done may not end as a success yet: the pool has fewer than ``min_healthy``
    serving members (None when it has enough; ``judge(member)`` says serving where given). Every success path of
    both modes asks this."""
    count = sum(1 for m in members if (judge(m) if judge is not None else serving(m, has_monitor)))
    if count >= (min_healthy or 0):
        return None
    return f"the pool to have {min_healthy} serving member(s) (min_healthy_members; has {count})"


def _finished_above_floor(members: list[dict[str, Any]], is_serving: Judge, min_healthy: int,
                          since: dict[str, float], since_in: dict[str, float], now: float,
                          member_timeout: float) -> tuple[Action, dict[str, float]]:
    short = below_floor(members, False, min_healthy, judge=is_serving)
    if short is None:
        return Action(FINISHED, reason="every old member replaced"), since
    since["floor"] = first_seen = since_in.get("floor", now)
    if now - first_seen >= member_timeout:
        return Action(STUCK, since=first_seen,
                      reason=f"every pair is done, but still waiting after {now - first_seen:.0f} s for {short}"), since
    return Action(WAIT, reason=short), since


def absent_olds(pairs: Sequence[Pair], members: list[dict[str, Any]],
                has_monitor: bool) -> tuple[list[str], list[int]]:
    """(problems, replaced before) for the pairs whose old member is not in the pool at the start of a run.

    A pair whose new member serves was replaced before this run (an earlier run deleted its old member): it is
    reported, not an error, so re-running the same task finishes a rollout. A pair with neither member in the pool,
    or whose new member does not serve, never had an old member here: a typo or the wrong pool, refused before any
    write (a run that replaced nothing must not say every old member was replaced)."""
    problems: list[str] = []
    replaced: list[int] = []
    for index, (old, new) in enumerate(pairs):
        if any(old.matches(m) for m in members):
            continue
        news = [m for m in members if new.matches(m)]
        if news and all(serving(m, has_monitor) for m in news):
            replaced.append(index)
        elif news:
            problems.append(f"replace[{index}]: old member {old.text} is not in the pool, and its new member "
                            f"{new.text} does not serve ({member_state(news[0])}): nothing was replaced by an earlier "
                            "run; check the name")
        else:
            problems.append(f"replace[{index}]: neither old member {old.text} nor new member {new.text} is in the pool "
                            "(a typo, or another pool)")
    return problems, replaced


def _same_member(first: Selector, second: Selector) -> bool:
    """Whether two selectors can name the same member before any member is seen (same id, same name, or the
    same address where a missing port matches every port)."""
    if first.kind != second.kind or first.value != second.value:
        return False
    return first.kind != "address" or first.port is None or second.port is None or first.port == second.port


def pair_problems(pairs: Sequence[Pair], members: Optional[list[dict[str, Any]]] = None) -> list[str]:
    """Why the ``replace`` pairs cannot be run, as a list of sentences (empty when fine).

    A member replaced by itself, named old twice, or both a replacement and replaced (a new member that is
    another pair's old one) would be deleted while it is the one that serves. Without ``members`` the
    selectors are compared; with the pool's members, the members they match are (a name and an address
    naming one member are caught then)."""
    def matched(selector: Selector) -> set[str]:  # with members only
        return set(member_key(m) for m in members or () if selector.matches(m))

    def same(first: Selector, second: Selector) -> bool:
        if members is None:
            return _same_member(first, second)
        return bool(matched(first) & matched(second))

    problems: list[str] = []
    for index, (old, new) in enumerate(pairs):
        if same(old, new):
            problems.append(f"replace[{index}]: old {old.text} and new {new.text} are the same member; it would be "
                            "deleted as its own replacement")
        for other in range(index + 1, len(pairs)):
            other_old, other_new = pairs[other]
            if same(old, other_old):
                problems.append(f"replace[{index}] and replace[{other}] both replace {old.text}")
            if same(new, other_new):
                problems.append(f"replace[{index}] and replace[{other}] both wait for {new.text} as their replacement")
        for other, (other_old, _other_new) in enumerate(pairs):
            if other != index and same(new, other_old):
                problems.append(f"replace[{index}]: new {new.text} is the old member of replace[{other}]; a "
                                "replacement that is itself replaced leaves the pool short")
    return problems
