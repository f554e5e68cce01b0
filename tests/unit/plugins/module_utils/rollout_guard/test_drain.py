# -*- coding: utf-8 -*-
"""Drain before release: weight 0 on the old member, wait until the load balancer applied it and the listeners
are idle or drain_timeout passed, then release; weights go back when the pool cannot carry its floor without the
drained members, and when the run stops before releasing them."""

import copy

import pytest

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.members import parse_selector
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard import drain, plan
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.direct_runner import DirectRollout
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.report import RolloutLog
from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils.fakes import FakeClock, fake_module
from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils.rollout_guard.rollout_options import (
    rollout_options,
)


def record(**changes):
    values = dict(member_id="m1", member="old-1", weight_before=1, drained_at=0.0)
    values.update(changes)
    return drain.DrainRecord(**values)


def test_first_drain_then_wait_for_the_load_balancer_then_for_the_timeout_or_idle_listeners():
    assert drain.drain_next(None, "ACTIVE", None, 0.0, 30).kind == drain.DRAIN
    pending = record()
    step = drain.drain_next(pending, "PENDING_UPDATE", 5, 1.0, 30)
    assert step.kind == drain.WAIT and "apply weight 0" in step.reason and pending.applied_at is None
    assert drain.drain_next(pending, "ACTIVE", 5, 2.0, 30).kind == drain.WAIT and pending.applied_at == 2.0
    assert drain.drain_next(pending, "ACTIVE", 5, 31.0, 30).kind == drain.WAIT
    assert drain.drain_next(pending, "ACTIVE", 5, 32.0, 30).kind == drain.RELEASE
    assert drain.drain_next(record(applied_at=2.0), "ACTIVE", 0, 3.0, 30).kind == drain.RELEASE
    assert drain.drain_next(record(applied_at=2.0), "ACTIVE", None, 3.0, 30).kind == drain.WAIT


def test_weights_go_back_when_the_others_do_not_carry_the_floor_or_the_run_stops():
    drained, released = record(), record(member_id="m2", released_at=5.0)
    assert drain.to_restore([drained, released], ["m1", "n1", "n2"], 2) == []
    assert drain.to_restore([drained, released], ["m1", "n1"], 2) == [drained]
    assert drain.to_restore([drained, released], None, 0) == [drained]
    assert drain.to_restore([record(restored=True)], None, 0) == []


def member(name, address, operating="ONLINE"):
    return {"id": "id-" + name, "name": name, "address": address, "protocol_port": 6443,
            "provisioning_status": "ACTIVE", "operating_status": operating}


class DrainOctavia:
    def __init__(self, members):
        self.members, self.deleted, self.weights, self.connections = members, [], [], 3
        self.lb_status = "ACTIVE"

    polled_with = {"method": "status tree", "fallback_reason": None}

    def list_members(self, pool_id, deadline):
        return copy.deepcopy(self.members)

    def pool_state(self, pool_id, lb_id, deadline):
        return self.list_members(pool_id, deadline), {"id": lb_id, "provisioning_status": self.lb_status}

    def get_member(self, pool_id, member_id, deadline):
        return dict(next(m for m in self.members if m["id"] == member_id), weight=2)

    def set_member_weight(self, pool_id, member_id, weight, deadline):
        self.weights.append((member_id, weight))
        return True

    def set_member_admin_state(self, pool_id, member_id, admin_state_up, deadline):
        self.weights.append((member_id, admin_state_up))
        return True

    def listener_connections(self, listener_ids, deadline):
        return self.connections

    def delete_members(self, pool_id, members, deadline, on_deleted=None):
        for item in members:
            self.deleted.append(item["name"])
            on_deleted(item)
        return True


def direct(octavia, check_mode=False, provider="amphora"):
    clock = FakeClock()
    module = fake_module(clock)
    options = rollout_options(check_mode=check_mode, mode="direct", min_healthy_members=2, drain=True)
    runner = DirectRollout(module, options, RolloutLog(clock, module.started), [(parse_selector("old-1"),
                                                                                 parse_selector("new-1"))])
    runner.octavia, runner.lb_id = octavia, "lb-1"
    runner.pool = {"id": "pool-1", "healthmonitor_id": "hm", "listeners": [{"id": "l1"}]}
    runner.provider = provider
    return runner, clock


def test_direct_mode_drains_waits_then_deletes_and_reports():
    octavia = DrainOctavia([member("old-1", "10.0.0.1"), member("old-2", "10.0.0.2"), member("new-1", "10.0.0.3")])
    runner, clock = direct(octavia)
    action = runner.act(runner.look(2000), deadline=2000)
    assert octavia.weights == [("id-old-1", 0)] and octavia.deleted == []
    assert action.kind == plan.WAIT and "weight 0" in action.reason
    clock.now += 5
    assert runner.act(runner.look(2000), deadline=2000).kind == plan.WAIT and octavia.deleted == []
    clock.now += 30
    runner.act(runner.look(2000), deadline=2000)
    assert octavia.deleted == ["old-1"]
    [report] = runner.result()["drained"]
    assert report["weight_before"] == 2 and report["drained_at"] == 0.0 and report["released_at"] == 35.0
    assert report["connections_at_release"] == 3 and report["restored"] is False


def test_direct_mode_puts_the_weight_back_when_the_pool_falls_short_and_check_mode_only_says_so():
    members = [member("old-1", "10.0.0.1"), member("old-2", "10.0.0.2"), member("new-1", "10.0.0.3")]
    octavia = DrainOctavia(copy.deepcopy(members))
    runner, clock = direct(octavia)
    runner.act(runner.look(2000), deadline=2000)
    octavia.members[1]["operating_status"] = "ERROR"  # old-2 fails: new-1 alone does not carry 2
    action = runner.act(runner.look(2000), deadline=2000)
    assert octavia.weights == [("id-old-1", 0), ("id-old-1", 2)] and action.kind == plan.WAIT
    assert runner.result()["drained"][0]["restored"] is True and octavia.deleted == []
    checking = DrainOctavia(copy.deepcopy(members))
    runner, _clock = direct(checking, check_mode=True)
    assert runner.act(runner.look(2000), deadline=2000).kind == plan.RELEASE
    assert checking.weights == [] and runner.log.actions[0]["action"] == "drain (check mode: not done)"


def test_on_ovn_the_drain_is_admin_state_up_false_and_the_restore_puts_it_back():
    members = [member("old-1", "10.0.0.1"), member("old-2", "10.0.0.2"), member("new-1", "10.0.0.3")]
    octavia = DrainOctavia(copy.deepcopy(members))
    runner, _clock = direct(octavia, provider="ovn")
    action = runner.act(runner.look(2000), deadline=2000)
    assert octavia.weights == [("id-old-1", False)], "ovn ignores weight: the drain is admin_state_up false"
    assert "admin_state_up false" in action.reason
    octavia.members[1]["operating_status"] = "ERROR"
    runner.act(runner.look(2000), deadline=2000)
    assert octavia.weights == [("id-old-1", False), ("id-old-1", True)]
    [report] = runner.result()["drained"]
    assert report["method"] == "admin_state" and report["value_before"] is True and report["restored"] is True
    assert [a["action"] for a in runner.log.actions] == ["drain (admin_state_up false)", "restore admin state"]


def test_a_drain_on_a_provider_that_honours_nothing_known_is_refused_before_any_write():
    octavia = DrainOctavia([member("old-1", "10.0.0.1"), member("old-2", "10.0.0.2"), member("new-1", "10.0.0.3")])
    runner, _clock = direct(octavia, provider="acme-hw")
    with pytest.raises(ModuleFailure) as caught:
        runner.refuse_unknown_provider()
    assert "'acme-hw'" in str(caught.value) and octavia.weights == []
