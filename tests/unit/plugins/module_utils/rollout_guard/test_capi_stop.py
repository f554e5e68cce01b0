# -*- coding: utf-8 -*-
"""rollout_guard mode=capi with drain: the pre-terminate hold of an old Machine against fakes and a fake clock.
The old Machine waits for its pre-terminate hooks; the guard takes its member out of rotation, stops its server
through Nova only then, waits for SHUTOFF, and only then takes its pre-terminate hook off."""

import copy

from ansible_collections.flightcontrol.openstack.plugins.module_utils.nova.server_service import (
    STOP_ASKED,
    STOP_CONFLICT,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard import plan
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.capi_runner import (
    CapiRollout,
    CapiTargets,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.report import RolloutLog
from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils import capi_samples as s
from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils.fakes import FakeClock, fake_module
from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils.rollout_guard.rollout_options import (
    rollout_options,
)

PRE_TERMINATE = plan.terminate_hook_key(plan.DEFAULT_HOOK_NAME)
KCP = {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlane",
       "metadata": {"name": "c1-cp", "namespace": "default"}, "spec": {"replicas": 1, "version": "v1.32.0"},
       "status": {}}


def machine(name, up_to_date, address, **given):
    obj = s.machine(name=name, address=address, **given)
    obj["status"]["v1beta2"]["conditions"].append({"type": "UpToDate", "status": str(up_to_date)})
    return obj


class World:
    """An old Machine being deleted, past our pre-drain hook, waiting for its pre-terminate hooks (ours among
    them); a new Machine serving. Kubernetes, Octavia and Nova in one fake; every write recorded in order."""

    def __init__(self):
        old = machine("c1-cp-a", False, "10.0.0.11", deleting=True,
                      hooks=[PRE_TERMINATE, "pre-terminate.delete.hook.machine.cluster.x-k8s.io/kcp-cleanup"])
        old["status"]["conditions"] = [{"type": "PreTerminateDeleteHookSucceeded", "status": "False",
                                        "reason": "WaitingExternalHook"}]
        self.machines = [old, machine("c1-cp-n", True, "10.0.0.12", node="node-n")]
        self.members = [{"id": "m-%s" % n, "name": "lb-6443-c1-cp-%s" % n, "address": a, "protocol_port": 6443,
                         "provisioning_status": "ACTIVE", "operating_status": "NO_MONITOR"}
                        for n, a in (("a", "10.0.0.11"), ("n", "10.0.0.12"))]
        self.servers = {"c1-cp-a": "ACTIVE"}
        self.kcp = copy.deepcopy(KCP)
        self.writes = []
        self.connections = 4

    def get_object(self, group, version, namespace, plural, name, what, deadline):
        return copy.deepcopy(self.kcp)

    def patch_object(self, group, version, namespace, plural, name, body, what, deadline):
        self.writes.append(("patch", name, body["metadata"]["annotations"]))
        for obj in self.machines:
            if obj["metadata"]["name"] == name:
                for key, value in body["metadata"]["annotations"].items():
                    if value is None:
                        obj["metadata"]["annotations"].pop(key, None)
                    else:
                        obj["metadata"]["annotations"][key] = value
        return None

    def list_kind(self, group, version, kind, namespace, selector, deadline):
        return copy.deepcopy(self.machines)

    polled_with = {"method": "status tree", "fallback_reason": None}

    def pool_state(self, pool_id, lb_id, deadline):
        return copy.deepcopy(self.members), {"id": lb_id, "provisioning_status": "ACTIVE"}

    def get_member(self, pool_id, member_id, deadline):
        return {"id": member_id, "weight": 1}

    def set_member_weight(self, pool_id, member_id, weight, deadline):
        self.writes.append(("weight", member_id, weight))
        return True

    def listener_connections(self, listener_ids, deadline):
        return self.connections

    def get_server(self, server_id, deadline):
        status = self.servers.get(server_id)
        return None if status is None else {"id": server_id, "status": status}

    def stop_server(self, server_id, deadline):
        self.writes.append(("stop", server_id))
        return STOP_CONFLICT if self.servers.get(server_id) == "SHUTOFF" else STOP_ASKED


def rollout(check_mode=False, version="v1.32.0", **options):
    clock = FakeClock()
    warnings = []
    module = fake_module(clock, client=None, warn=warnings.append)
    options = dict(dict(drain=True, drain_timeout=0), **options)
    runner = CapiRollout(module, rollout_options(check_mode=check_mode, **options), RolloutLog(clock, module.started))
    world = World()
    world.kcp["spec"]["version"] = version
    for made in world.machines:  # KCP makes its Machines at its own version
        made["spec"]["version"] = version
    runner.capi = runner.octavia = world
    runner.provider = "amphora"
    kcp = dict(copy.deepcopy(KCP), spec={"replicas": 1, "version": version})
    runner.targets = CapiTargets(namespace="default", cluster="c1", contract="v1beta1", kcp=kcp,
                                 kcp_plural="kubeadmcontrolplanes", machine_plural="machines",
                                 pool={"id": "pool-1", "name": "lb-6443", "healthmonitor_id": None,
                                       "listeners": [{"id": "l-1"}]}, lb_id="lb-1")
    runner.plan_server_stop(kcp)
    runner.stopper.servers = world
    return runner, world, clock, warnings


def poll(runner, clock, seconds=5):
    clock.now += seconds
    return runner.act(runner.look(deadline=clock.now + 100), deadline=clock.now + 100)


def test_the_server_is_stopped_after_the_drain_and_the_hook_goes_only_at_shutoff():
    runner, world, clock, _warnings = rollout()
    action = poll(runner, clock)
    assert action.kind == plan.WAIT and world.writes == [("weight", "m-a", 0)], "out of rotation first"
    action = poll(runner, clock)
    assert world.writes[-1] == ("stop", "c1-cp-a"), "stopped once drained, the new member serving"
    assert action.kind == plan.WAIT and "asked to stop" in action.reason
    for dummy in range(3):
        action = poll(runner, clock)
        assert action.kind == plan.WAIT and "to shut down" in action.reason
    assert PRE_TERMINATE in world.machines[0]["metadata"]["annotations"], "held while the server runs"
    world.servers["c1-cp-a"] = "SHUTOFF"
    world.connections = 1
    action = poll(runner, clock)
    assert world.writes[-1] == ("patch", "c1-cp-a", {PRE_TERMINATE: None})
    assert [w[0] for w in world.writes] == ["weight", "stop", "patch"], "no write after the release but that"
    assert action.kind == plan.WAIT and "released Machine c1-cp-a" in action.reason
    result = runner.result()
    stop = result["server_stop"]["servers"][0]
    assert stop["server_stopped"] and stop["stop_seconds"] == 20 and stop["outcome"] == "stopped"
    assert stop["connections_at_stop"] == 4 and stop["connections_at_release"] == 1
    row = result["drained"][0]
    assert row["machine"] == "c1-cp-a" and row["server_stopped"] and row["stop_seconds"] == 20
    assert row["out_of_rotation_seconds"] == 20 and row["connections_at_hook_release"] == 1
    assert result["changed"] and result["server_stop"]["holds_pre_terminate"]


def test_no_stop_while_the_new_machine_is_not_ready():
    runner, world, clock, _warnings = rollout()
    world.machines[1] = machine("c1-cp-n", True, "10.0.0.12", ready=False)
    poll(runner, clock)
    action = poll(runner, clock)
    assert "c1-cp-n not ready" in action.reason and ("stop", "c1-cp-a") not in world.writes


def test_a_stop_that_times_out_fails_holding_the_machine_when_asked():
    runner, world, clock, _warnings = rollout(drain_stop_timeout=30, drain_stop_timeout_action="fail")
    poll(runner, clock)
    poll(runner, clock)
    action = poll(runner, clock, seconds=31)
    assert action.kind == plan.STUCK and "c1-cp-a" in action.reason and "stays held" in action.reason
    assert PRE_TERMINATE in world.machines[0]["metadata"]["annotations"]


def test_a_run_that_stops_after_the_stop_releases_the_machine():
    runner, world, clock, _warnings = rollout()
    poll(runner, clock)
    poll(runner, clock)
    runner.release_after_stop()
    assert world.writes[-1] == ("patch", "c1-cp-a", {PRE_TERMINATE: None})
    assert runner.result()["server_stop"]["servers"][0]["outcome"] == "released_on_stop"


def test_below_kubernetes_1_31_no_pre_terminate_hold_and_a_left_over_hook_goes_at_once():
    runner, world, clock, warnings = rollout(version="v1.30.4")
    assert not runner.server_stop["holds_pre_terminate"] and "below 1.31.0" in warnings[0]
    poll(runner, clock)
    assert world.writes[0] == ("patch", "c1-cp-a", {PRE_TERMINATE: None}), "released, no stop"
    assert ("stop", "c1-cp-a") not in world.writes


def test_check_mode_says_it_would_stop_and_writes_nothing():
    runner, world, clock, _warnings = rollout(check_mode=True)
    action = poll(runner, clock)
    assert world.writes == []
    assert action.kind == plan.TERMINATE and runner.judge(action, 0).state == "done"
    assert [a["action"] for a in runner.log.actions] == ["drain (check mode: not done)",
                                                         "stop server (check mode: not done)"]
