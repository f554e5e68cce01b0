# -*- coding: utf-8 -*-
"""rollout_guard mode=capi, one poll against fakes: looking writes nothing; the act step makes the hold
the plan calls for (not in check mode) and looks again before the action is judged."""

import copy
from types import SimpleNamespace

from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.objects import PRE_DRAIN_HOOK_PREFIX
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.waiter import DONE, WAITING
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard import plan
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.capi_runner import (
    HOOK_VALUE,
    CapiRollout,
    CapiTargets,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.report import RolloutLog
from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils import capi_samples as s
from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils.fakes import FakeClock, fake_module
from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils.rollout_guard.rollout_options import (
    rollout_options,
)

HOOK = PRE_DRAIN_HOOK_PREFIX + "flightcontrol-rollout"
KCP = {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlane",
       "metadata": {"name": "c1-cp", "namespace": "default"}, "spec": {"replicas": 1, "version": "v1.32.0"},
       "status": {}}


class World:
    """One old control-plane Machine with a serving member; every write is recorded."""

    def __init__(self):
        self.machines = [s.machine(name="c1-cp-a", address="10.0.0.11")]
        self.members = [{"id": "m-a", "name": "lb-6443-c1-cp-a", "address": "10.0.0.11", "protocol_port": 6443,
                         "provisioning_status": "ACTIVE", "operating_status": "NO_MONITOR"}]
        self.writes = []
        self.reads = 0

    # the Kubernetes client (custom objects API) and the CAPI service
    def get_namespaced_custom_object(self, group, version, namespace, plural, name):
        self.reads += 1
        return copy.deepcopy(KCP)

    def patch_namespaced_custom_object(self, group, version, namespace, plural, name, body):
        self.writes.append((plural, name, body))
        for machine in self.machines:
            if plural == "machines" and machine["metadata"]["name"] == name:
                for key, value in body["metadata"]["annotations"].items():
                    if value is None:
                        machine["metadata"]["annotations"].pop(key, None)
                    else:
                        machine["metadata"]["annotations"][key] = value

    def get_object(self, group, version, namespace, plural, name, what, deadline):
        return self.get_namespaced_custom_object(group, version, namespace, plural, name)

    def patch_object(self, group, version, namespace, plural, name, body, what, deadline):
        return self.patch_namespaced_custom_object(group, version, namespace, plural, name, body)

    def call(self, func, what, deadline, kind=None):
        return func()

    def list_kind(self, group, version, kind, namespace, selector, deadline):
        self.reads += 1
        return copy.deepcopy(self.machines)

    # Octavia
    polled_with = {"method": "status tree", "fallback_reason": None}

    def pool_state(self, pool_id, lb_id, deadline):
        self.reads += 1
        return copy.deepcopy(self.members), {"id": lb_id, "provisioning_status": "ACTIVE"}


def rollout(check_mode=False):
    clock = FakeClock()
    module = fake_module(clock)
    runner = CapiRollout(module, rollout_options(check_mode=check_mode), RolloutLog(clock, module.started))
    world = World()
    runner.kube = SimpleNamespace(call=world.call, custom=world)
    runner.capi = runner.octavia = world
    runner.targets = CapiTargets(namespace="default", cluster="c1", contract="v1beta1", kcp=copy.deepcopy(KCP),
                                 kcp_plural="kubeadmcontrolplanes", machine_plural="machines",
                                 pool={"id": "pool-1", "name": "lb-6443", "healthmonitor_id": None}, lb_id="lb-1")
    return runner, world


def test_looking_reads_and_writes_nothing():
    runner, world = rollout()
    snapshot, _kcp = runner.look(deadline=2000)
    assert world.writes == [] and world.reads == 3
    assert plan.next_action(snapshot).kind == plan.HOLD, "there is something to write, the look left it alone"
    assert runner.progress.min_healthy == 1 and runner.progress.baseline == {"c1-cp-a"}


def test_the_act_step_holds_then_looks_again():
    runner, world = rollout()
    action = runner.act(runner.look(deadline=2000), deadline=2000)
    assert world.writes == [("machines", "c1-cp-a", {"metadata": {"annotations": {HOOK: HOOK_VALUE}}})]
    assert [a["action"] for a in runner.log.actions] == ["hold"]
    assert action.kind == plan.WAIT, "judged on a second look, after the hold"
    assert runner.judge(action, 0).state == WAITING
    assert runner.progress.snapshot.held(runner.progress.snapshot.machines[0])


def test_check_mode_acts_on_nothing_and_looks_once():
    runner, world = rollout(check_mode=True)
    action = runner.act(runner.look(deadline=2000), deadline=2000)
    assert world.writes == [] and runner.log.actions == []
    assert action.kind == plan.HOLD
    assert runner.judge(action, 0).state == DONE
