# -*- coding: utf-8 -*-
"""rollout_guard mode=direct, one poll against fakes: looking writes nothing; the act step deletes the old
member once its replacement serves, and never while the load balancer is busy or in check mode."""

import copy

from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.members import parse_selector
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard import plan
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.direct_runner import DirectRollout
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.report import RolloutLog
from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils.fakes import FakeClock, fake_module
from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils.rollout_guard.rollout_options import (
    rollout_options,
)


def member(name, address, status="ACTIVE", operating="NO_MONITOR"):
    return {"id": "id-" + name, "name": name, "address": address, "protocol_port": 6443,
            "provisioning_status": status, "operating_status": operating}


class FakeOctavia:
    def __init__(self, members, lb_status="ACTIVE", busy_after=None):
        self.members, self.lb_status, self.deleted = members, lb_status, []
        self.busy_after = busy_after  # deletions accepted before the load balancer answers 409

    def list_members(self, pool_id, deadline):
        return copy.deepcopy(self.members)

    polled_with = {"method": "status tree", "fallback_reason": None}

    def pool_state(self, pool_id, lb_id, deadline):
        return self.list_members(pool_id, deadline), {"id": lb_id, "provisioning_status": self.lb_status}

    def delete_members(self, pool_id, members, deadline, on_deleted=None):
        for member in members:
            if self.busy_after is not None and len(self.deleted) >= self.busy_after:
                return False
            self.deleted.append(member["name"])
            on_deleted(member)
        return True


def direct(octavia, check_mode=False):
    clock = FakeClock()
    module = fake_module(clock)
    runner = DirectRollout(module, rollout_options(check_mode=check_mode), RolloutLog(clock, module.started),
                           [(parse_selector("old-1"), parse_selector("new-1"))])
    runner.octavia, runner.pool, runner.lb_id = octavia, {"id": "pool-1", "healthmonitor_id": None}, "lb-1"
    return runner


def test_looking_deletes_nothing_the_act_step_deletes_the_replaced_member():
    octavia = FakeOctavia([member("old-1", "10.0.0.1"), member("old-2", "10.0.0.2"), member("new-1", "10.0.0.3")])
    runner = direct(octavia)
    seen = runner.look(deadline=2000)
    assert octavia.deleted == []
    action = runner.act(seen, deadline=2000)
    assert octavia.deleted == ["old-1"]
    assert action.kind == plan.WAIT and action.reason == "old member old-1 to be gone"
    assert runner.log.released == ["old-1"] and [a["action"] for a in runner.log.actions] == ["delete_member"]


def test_no_deletion_while_the_load_balancer_is_busy_or_in_check_mode():
    members = [member("old-1", "10.0.0.1"), member("old-2", "10.0.0.2"), member("new-1", "10.0.0.3")]
    busy = FakeOctavia(members, lb_status="PENDING_UPDATE")
    runner = direct(busy)
    action = runner.act(runner.look(2000), deadline=2000)
    assert busy.deleted == [] and action.kind == plan.WAIT and "to be ACTIVE" in action.reason
    checking = FakeOctavia(copy.deepcopy(members))
    runner = direct(checking, check_mode=True)
    assert runner.act(runner.look(2000), deadline=2000).kind == plan.RELEASE
    assert checking.deleted == []


def test_a_deletion_refused_after_another_was_made_keeps_the_record_of_the_one_made():
    # the old selector matches two members; the load balancer takes the first deletion, then answers 409
    members = [member("old-1", "10.0.0.1"), member("old-1", "10.0.0.9"), member("old-2", "10.0.0.2"),
               member("new-1", "10.0.0.3"), member("other", "10.0.0.4")]
    octavia = FakeOctavia(members, busy_after=1)
    runner = direct(octavia)
    runner.progress.min_healthy = 2
    action = runner.act(runner.look(2000), deadline=2000)
    assert octavia.deleted == ["old-1"]
    assert action.kind == plan.WAIT and "(409)" in action.reason
    assert runner.log.released == ["old-1"] and [a["action"] for a in runner.log.actions] == ["delete_member"]
    assert runner.result()["changed"] is True


def test_the_deletion_is_judged_again_on_the_read_just_before_it():
    """The poll saw the replacement serve and three serving members; before the deletion another member stopped
    serving: the read just before the deletion refuses it (min_healthy_members), nothing is deleted."""
    octavia = FakeOctavia([member("old-1", "10.0.0.1"), member("old-2", "10.0.0.2"), member("new-1", "10.0.0.3")])
    runner = direct(octavia)
    seen = runner.look(deadline=2000)
    octavia.members[1]["operating_status"] = "ERROR"
    action = runner.act(seen, deadline=2000)
    assert octavia.deleted == [] and runner.log.released == []
    assert action.kind == plan.WAIT and "seen on the read just before deleting old-1" in action.reason, action.reason
    assert "keep 2 serving member(s) without old-1" in action.reason
