# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a rollout run did and saw, in the shape of rollout_guard's results (both modes)."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.clock import Clock
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.waiter import DONE, FAILED, WAITING, Verdict
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.status_tree import MEMBER_FIELDS
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard import plan

POOL_FIELDS = ("id", "name", "healthmonitor_id")


class RolloutLog:
    """The actions of one run (``at``: seconds since the module started), the Machines (or members)
    released and the members seen gone."""

    def __init__(self, clock: Clock, started: float) -> None:
        self.clock = clock
        self.started = started
        self.actions: list[dict[str, Any]] = []
        self.released: list[str] = []
        self.members_gone: list[str] = []

    def record(self, action: str, machines: Iterable[Optional[str]] = (), member: Optional[str] = None) -> None:
        self.actions.append({"action": action, "machines": list(machines), "member": member,
                             "at": round(self.clock.monotonic() - self.started, 3)})

    def data(self, changed: bool) -> dict[str, Any]:
        return {"actions": self.actions, "released": self.released, "members_gone": self.members_gone,
                "changed": changed}


def judge_action(action: plan.Action, check_mode: bool) -> Verdict:
    """The verdict on a poll's last action: check mode looks once; FINISHED succeeds; STUCK fails."""
    if check_mode or action.kind == plan.FINISHED:
        return Verdict(DONE, action.reason)
    if action.kind == plan.STUCK:
        return Verdict(FAILED, action.reason)
    return Verdict(WAITING, action.reason)


def pool_view(pool: dict[str, Any]) -> dict[str, Any]:
    return dict((k, pool.get(k)) for k in POOL_FIELDS)


def member_rows(members: list[dict[str, Any]],
                serving: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
    """The members as results show them, each with ``serving`` (``serving(member)``)."""
    return [dict(dict((k, m.get(k)) for k in MEMBER_FIELDS), serving=serving(m)) for m in members]


def stuck_view(action: plan.Action, machines: Iterable[str]) -> dict[str, Any]:
    return {"member": action.member, "state": action.state, "machines": list(machines), "since": action.since,
            "reason": action.reason}


def refuse_pairs(problems: list[str]) -> None:
    if problems:
        raise ModuleFailure(f"replace cannot be run: {'; '.join(problems)}; nothing was changed")
