# -*- coding: utf-8 -*-
"""The pre-terminate hold of rollout_guard: the pure decisions (which Kubernetes versions let a hook keep the etcd
member, when Cluster API waits for pre-terminate hooks, when the old server may be stopped, what a timeout does),
the plan's holds and releases of both hooks, and the server id CAPO reports."""

import pytest

from ansible_collections.flightcontrol.openstack.plugins.module_utils.capo import machine as capo_machine
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard import plan
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard import terminate as t
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.machines import (
    etcd_healthy,
    machine_data,
)
from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils import capi_samples as s

PRE_DRAIN = plan.hook_key(plan.DEFAULT_HOOK_NAME)
PRE_TERMINATE = plan.terminate_hook_key(plan.DEFAULT_HOOK_NAME)
PREFIX = "lb-6443-"


@pytest.mark.parametrize("version, waits", [("v1.31.0", True), ("1.31.0-rc.1", True), ("v1.32.3", True),
                                            ("v1.30.9", False), ("v1.9.0", False), ("", False), ("latest", False)])
def test_only_kubernetes_1_31_on_keeps_the_etcd_member_behind_other_hooks(version, waits):
    answer, why = t.kcp_waits_for_other_hooks(version)
    assert answer is waits
    if not waits:
        assert "no pre-terminate hook is held" in why or "cannot be read" in why


def test_cluster_api_reports_the_pre_terminate_phase_in_both_contracts():
    v1beta2 = s.machine(version="v1beta2", deleting=True)
    v1beta2["status"]["conditions"] = [{"type": "Deleting", "status": "True", "reason": "WaitingForPreTerminateHook"}]
    assert t.pre_terminate_phase(v1beta2)[0] is True
    v1beta2["status"]["conditions"] = [{"type": "Deleting", "status": "True", "reason": "DrainingNode"}]
    assert t.pre_terminate_phase(v1beta2)[0] is False
    v1beta1 = s.machine(version="v1beta1", deleting=True)
    v1beta1["status"]["v1beta2"] = {"conditions": []}
    v1beta1["status"]["conditions"] = [{"type": "PreTerminateDeleteHookSucceeded", "status": "False",
                                        "reason": "WaitingExternalHook"}]
    assert t.pre_terminate_phase(v1beta1)[0] is True
    v1beta1["status"]["conditions"] = [{"type": "PreTerminateDeleteHookSucceeded", "status": "True"}]
    assert t.pre_terminate_phase(v1beta1)[0] is False
    v1beta1["status"]["conditions"] = []
    assert t.pre_terminate_phase(v1beta1)[0] is None


def test_machine_data_carries_the_server_and_readiness():
    data = machine_data(s.machine(name="c1-cp-a"), {}, set(), None)
    assert data["server_id"] == "c1-cp-a" and data["ready"] is True and data["pre_drain_hooks"] == []


def test_capo_instance_id_and_provider_id():
    assert capo_machine.server_of_provider_id("openstack:///4f1c") == "4f1c"
    assert capo_machine.server_of_provider_id("openstack://RegionOne/4f1c") == "4f1c"
    assert capo_machine.server_of_provider_id("aws:///i-1") is None
    assert capo_machine.server_of_provider_id(None) is None
    assert capo_machine.instance_id({"status": {"instanceID": "abc"}}) == "abc"
    assert capo_machine.instance_id({"spec": {"providerID": "openstack:///xyz"}}) == "xyz"
    assert capo_machine.instance_id({}) is None


def test_etcd_health_from_the_control_plane():
    assert etcd_healthy({"status": {"conditions": [{"type": "EtcdClusterHealthy", "status": "False"}]}}) is False
    assert etcd_healthy({"status": {"conditions": [{"type": "EtcdClusterHealthy", "status": "True"}]}}) is True
    assert etcd_healthy({"status": {}}) is None


# -- terminate_next ------------------------------------------------------------------------------------------


def view(**given):
    base = dict(machine="a", deleting=True, phase=True, member_out=True, serving_without=3, min_healthy=3,
                server_status="ACTIVE", now=100.0, stop_timeout=180)
    base.update(given)
    return t.TerminateView(**base)


def test_waits_until_the_machine_controller_waits_for_pre_terminate_hooks():
    step = t.terminate_next(view(phase=False, phase_words="Deleting condition: DrainingNode"), None)
    assert step.kind == t.WAIT and "DrainingNode" in step.reason
    # not reported (an emulated or older Cluster API): past every pre-drain hook counts
    assert t.terminate_next(view(phase=None, pre_drain_hooks=("pre-drain...x/other",)), None).kind == t.WAIT
    assert t.terminate_next(view(phase=None), None).kind == t.STOP


def test_stops_only_when_safe_and_says_why_not():
    assert t.terminate_next(view(), None).kind == t.STOP
    for given, words in ((dict(member_out=False), "still in rotation"),
                         (dict(serving_without=2), "would have 2 serving member(s)"),
                         (dict(not_ready=["c"]), "c not ready"),
                         (dict(etcd_healthy=False), "EtcdClusterHealthy")):
        step = t.terminate_next(view(**given), None)
        assert step.kind == t.WAIT and words in step.reason, given
    assert t.terminate_next(view(etcd_healthy=None), None).kind == t.STOP, "not reported: not a blocker"


def test_nothing_to_stop():
    assert t.terminate_next(view(server_status="SHUTOFF"), None).outcome == "already_shutoff"
    assert t.terminate_next(view(server_status=None), None).outcome == "server_gone"
    assert t.terminate_next(view(server_status="unknown"), None).outcome == "no_server"
    for step in (t.terminate_next(view(server_status=x), None) for x in ("SHUTOFF", None, "unknown")):
        assert step.kind == t.RELEASE


def test_after_the_stop_waits_for_shutoff_then_releases():
    record = t.StopRecord("a", server_id="srv", requested_at=90.0)
    step = t.terminate_next(view(server_status="ACTIVE", now=100.0), record)
    assert step.kind == t.WAIT and "to shut down" in step.reason
    step = t.terminate_next(view(server_status="SHUTOFF", now=130.0), record)
    assert step.kind == t.RELEASE and step.outcome == "stopped"
    assert t.terminate_next(view(server_status=None, now=130.0), record).kind == t.RELEASE
    # the safety checks are not asked again once the stop was asked
    assert t.terminate_next(view(server_status="ACTIVE", member_out=False, now=100.0), record).kind == t.WAIT


def test_a_stop_that_times_out_releases_by_default_or_fails_holding():
    record = t.StopRecord("a", server_id="srv", requested_at=0.0)
    step = t.terminate_next(view(server_status="ACTIVE", now=180.0), record)
    assert step.kind == t.RELEASE and step.outcome == "timed_out" and "still running" in step.reason
    step = t.terminate_next(view(server_status="ACTIVE", now=180.0, on_timeout=t.ON_TIMEOUT_FAIL), record)
    assert step.kind == t.FAIL and "srv" in step.reason and "stays held" in step.reason


def test_a_left_over_hook_on_a_machine_not_being_deleted_goes_and_a_disabled_stop_releases_at_once():
    step = t.terminate_next(view(deleting=False), None)
    assert step.kind == t.RELEASE and step.outcome == "left_over" and "not being deleted" in step.reason
    step = t.terminate_next(view(stop_enabled=False, disabled_why="Kubernetes v1.30.2 is below 1.31.0"), None)
    assert step.kind == t.RELEASE and "1.31" in step.reason


# -- the plan holds and releases both hooks ------------------------------------------------------------------


def machine(name, up_to_date=False, deleting=False, hooks=(), created=None):
    return {"name": name, "created": created or name, "deleting": deleting, "hooks": list(hooks), "addresses": [],
            "up_to_date": up_to_date}


def member(name):
    return {"id": "id-" + name, "name": PREFIX + name, "address": "10.0.0.%d" % len(name), "protocol_port": 6443,
            "provisioning_status": "ACTIVE", "operating_status": "NO_MONITOR"}


def snap(machines, members, hold_terminate=True, released=()):
    return plan.Snapshot(machines, members, False, 3, member_prefix=PREFIX, replicas=3, released=released,
                         hold_terminate=hold_terminate)


def test_old_machines_get_both_hooks_when_the_stop_is_held():
    old = [machine("a", hooks=[PRE_DRAIN]), machine("b"), machine("c", hooks=[PRE_DRAIN, PRE_TERMINATE])]
    action = plan.next_action(snap(old, [member(n) for n in "abc"]))
    assert action.kind == plan.HOLD and action.machines == ("a", "b")
    action = plan.next_action(snap(old, [member(n) for n in "abc"], hold_terminate=False))
    assert action.kind == plan.HOLD and action.machines == ("b",)


def test_a_machine_past_our_pre_drain_hook_gets_no_new_pre_terminate_hook():
    others = [machine("b", hooks=[PRE_DRAIN, PRE_TERMINATE]), machine("c", hooks=[PRE_DRAIN, PRE_TERMINATE]),
              machine("n1", up_to_date=True)]
    members = [member(n) for n in ("a", "b", "c", "n1")]
    released = [machine("a", deleting=True)] + others  # this run released it, its pre-terminate hook went
    action = plan.next_action(snap(released, members, released=["a"]))
    assert action.kind == plan.WAIT and "released Machine a" in action.reason
    # a Machine deleted before we held it, still in the pool: both hooks, as the pre-drain hook before
    action = plan.next_action(snap([machine("a", deleting=True)] + others, members))
    assert action.kind == plan.HOLD and action.machines == ("a",)


def test_a_released_machine_holding_our_pre_terminate_hook_is_terminated_before_anything_else():
    machines = [machine("a", deleting=True, hooks=[PRE_TERMINATE]), machine("b", hooks=[PRE_DRAIN, PRE_TERMINATE]),
                machine("c", hooks=[PRE_DRAIN, PRE_TERMINATE]), machine("n1", up_to_date=True)]
    action = plan.next_action(snap(machines, [member(n) for n in ("a", "b", "c", "n1")], released=["a"]))
    assert action.kind == plan.TERMINATE and action.machines == ("a",) and action.member == PREFIX + "a"
    # found by a run that did not release it (an interrupted run did)
    action = plan.next_action(snap(machines, [member(n) for n in ("a", "b", "c", "n1")]))
    assert action.kind == plan.TERMINATE and action.machines == ("a",)


def test_left_over_pre_terminate_hooks_go_when_not_held_and_on_new_machines():
    machines = [machine("b", hooks=[PRE_DRAIN, PRE_TERMINATE])]
    action = plan.next_action(snap(machines, [member("b")], hold_terminate=False))
    assert action.kind == plan.TERMINATE and action.machines == ("b",)
    new = [machine(n, up_to_date=True, hooks=[PRE_TERMINATE] if n == "n1" else []) for n in ("n1", "n2", "n3")]
    action = plan.next_action(snap(new, [member(n) for n in ("n1", "n2", "n3")]))
    assert action.kind == plan.RELEASE and action.machines == ("n1",)
