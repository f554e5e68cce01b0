# -*- coding: utf-8 -*-
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a rollout run did and saw, in the shape of rollout_guard's results (both modes)."""

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.waiter import DONE, FAILED, WAITING, Verdict
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.status_tree import MEMBER_FIELDS
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard import plan
POOL_FIELDS = ("id", "name", "healthmonitor_id")


class RolloutLog:
    """The actions of one run (``at``: seconds since the module started), the Machines (or members)
    released and the members seen gone."""

    def __init__(self, clock, started):
        self.clock = clock
        self.started = started
        self.actions = []
        self.released = []
        self.members_gone = []

    def record(self, action, machines=(), member=None):
        self.actions.append({"action": action, "machines": list(machines), "member": member,
                             "at": round(self.clock.monotonic() - self.started, 3)})

    def data(self, changed):
        return {"actions": self.actions, "released": self.released, "members_gone": self.members_gone,
                "changed": changed}


def judge_action(action, check_mode):
    """The verdict on a poll's last action: check mode looks once; FINISHED succeeds; STUCK fails."""
    if check_mode or action.kind == plan.FINISHED:
        return Verdict(DONE, action.reason)
    if action.kind == plan.STUCK:
        return Verdict(FAILED, action.reason)
    return Verdict(WAITING, action.reason)


def pool_view(pool):
    return dict((k, pool.get(k)) for k in POOL_FIELDS)


def member_rows(members, serving):
    """The members as results show them, each with ``serving`` (``serving(member)``)."""
    return [dict(dict((k, m.get(k)) for k in MEMBER_FIELDS), serving=serving(m)) for m in members]


def stuck_view(action, machines):
    return {"member": action.member, "state": action.state, "machines": list(machines), "since": action.since,
            "reason": action.reason}


def refuse_pairs(problems):
    if problems:
        raise ModuleFailure("replace cannot be run: %s; nothing was changed" % "; ".join(problems))
