# -*- coding: utf-8 -*-

import copy

import pytest

from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi_events import events as ev

T0 = ev.parse_time("2026-01-01T00:00:00Z")
CP = "cluster.x-k8s.io/control-plane"


def cluster(name="alpha", ns="default", paused=False, version="v1beta2", uid=None):
    return {"apiVersion": "cluster.x-k8s.io/%s" % version, "kind": "Cluster",
            "metadata": {"name": name, "namespace": ns, "uid": uid or "uid-%s" % name, "generation": 1},
            "spec": {"paused": paused, "controlPlaneRef": {"name": name + "-cp", "kind": "KubeadmControlPlane"}}}


def kcp(name="alpha", ns="default", k8s="v1.31.0", generation=1, after=None, status=None, conditions=None,
        version="v1beta2"):
    obj = {"apiVersion": "controlplane.cluster.x-k8s.io/%s" % version, "kind": "KubeadmControlPlane",
           "metadata": {"name": name + "-cp", "namespace": ns, "uid": "kcp-" + name, "generation": generation,
                        "labels": {"cluster.x-k8s.io/cluster-name": name}},
           "spec": {"replicas": 3, "version": k8s,
                    "machineTemplate": {"infrastructureRef": {"name": "tmpl-1"}}},
           "status": status or {"replicas": 3, "upToDateReplicas": 3}}
    if after:
        obj["spec"]["rolloutAfter" if version == "v1beta1" else "rollout"] = \
            after if version == "v1beta1" else {"after": after}
    if conditions:
        obj["status"]["conditions"] = conditions
    return obj


def machine(name, cluster_name="alpha", ns="default", k8s="v1.31.0", created="2025-12-31T00:00:00Z",
            deleting=None, hooks=(), control_plane=True, version="v1beta2", annotations=None):
    notes = dict(("pre-drain.delete.hook.machine.cluster.x-k8s.io/%s" % h, "") for h in hooks)
    notes.update(annotations or {})
    labels = {"cluster.x-k8s.io/cluster-name": cluster_name}
    if control_plane:
        labels[CP] = ""
    obj = {"apiVersion": "cluster.x-k8s.io/%s" % version, "kind": "Machine",
           "metadata": {"name": name, "namespace": ns, "uid": "m-" + name, "creationTimestamp": created,
                        "labels": labels, "annotations": notes},
           "spec": {"clusterName": cluster_name, "version": k8s}, "status": {"nodeRef": {"name": name}}}
    if deleting:
        obj["metadata"]["deletionTimestamp"] = deleting
    return obj


def seeded(state=None, now=T0, **kcp_args):
    state = state or ev.EventState()
    out = state.relisted("Cluster", "default", [cluster()], now)
    out += state.relisted("KubeadmControlPlane", "default", [kcp(**kcp_args)], now)
    out += state.relisted("Machine", "default", [machine("cp-%d" % i) for i in range(3)], now)
    return state, out


def types(events):
    return [e["type"] for e in events]


def test_a_healthy_fleet_makes_no_event():
    _state, out = seeded()
    assert out == []


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
def test_rollout_after_starts_a_rollout_once_whatever_the_watch_does(version):
    state = seeded()[0]
    patched = kcp(generation=2, after="2026-01-01T00:00:01Z", version=version)
    out = state.observe(patched, T0 + 2)
    assert types(out) == ["rollout_started"]
    event = out[0]
    assert event["reason"] == "rolloutAfter" and event["cluster"] == {"namespace": "default", "name": "alpha"}
    assert event["meta"]["hosts"] == "default/alpha" and event["host"] == "default/alpha"
    assert event["old_machines"] == ["cp-0", "cp-1", "cp-2"]
    assert event["rollout_id"] == "kcp-alpha/2"
    # the same rollout again: a MODIFIED with a new status, a reconnect's relist, a new Machine
    assert state.observe(dict(patched, status={"replicas": 4, "upToDateReplicas": 1}), T0 + 3) == []
    assert state.relisted("KubeadmControlPlane", "default", [copy.deepcopy(patched)], T0 + 4) == []
    assert state.observe(machine("cp-3", created="2026-01-01T00:00:05Z"), T0 + 5) == []


def test_a_rollout_time_ahead_starts_the_rollout_when_it_comes():
    state = seeded()[0]
    assert state.observe(kcp(generation=2, after="2026-01-01T00:01:00Z"), T0) == []
    assert state.tick(T0 + 30) == []
    assert types(state.tick(T0 + 61)) == ["rollout_started"]
    assert state.tick(T0 + 62) == []


def test_a_version_change_is_named():
    state = seeded()[0]
    out = state.observe(kcp(generation=3, k8s="v1.32.0"), T0)
    assert [(e["type"], e["reason"], e["control_plane"]["version"]) for e in out] == [
        ("rollout_started", "version", "v1.32.0")]


def test_a_template_change_is_read_from_the_up_to_date_condition():
    state = seeded()[0]
    outdated = machine("cp-0")
    outdated["status"]["conditions"] = [{"type": "UpToDate", "status": "False", "reason": "NotUpToDate",
                                         "message": "InfrastructureMachine is not up-to-date"}]
    state.objects[ev.key_of(outdated)] = outdated
    out = state.observe(kcp(generation=2), T0)
    assert [(e["type"], e["reason"]) for e in out] == [("rollout_started", "template")]


def test_a_remediation_is_its_own_rollout():
    state = seeded()[0]
    first = state.observe(machine("cp-1", annotations={ev.REMEDIATE_ANNOTATION: ""}), T0)
    assert [(e["type"], e["reason"], e["rollout_id"]) for e in first] == [
        ("rollout_started", "remediation", "kcp-alpha/remediation/cp-1")]
    assert state.observe(machine("cp-1", annotations={ev.REMEDIATE_ANNOTATION: ""}), T0 + 1) == []


def test_status_behind_without_anything_else_is_reported_as_other():
    state = seeded()[0]
    out = state.observe(kcp(generation=1, status={"replicas": 3, "updatedReplicas": 2}), T0)
    assert [(e["type"], e["reason"]) for e in out] == [("rollout_started", "other")]


def test_deleting_then_stuck_in_one_phase_naming_the_hook():
    state = seeded(state=ev.EventState(stuck_seconds=60))[0]
    held = machine("cp-0", deleting="2026-01-01T00:00:00Z", hooks=["flightcontrol-rollout"])
    out = state.observe(held, T0 + 1)
    assert [(e["type"], e["phase"], e["hooks"]) for e in out] == [
        ("machine_deleting", "pre-drain hook", ["flightcontrol-rollout"])]
    assert out[0]["machine"]["name"] == "cp-0"
    assert state.tick(T0 + 30) == []
    stuck = state.tick(T0 + 61)
    assert [(e["type"], e["phase"], e["hooks"], e["held_seconds"]) for e in stuck] == [
        ("machine_deletion_stuck", "pre-drain hook", ["flightcontrol-rollout"], 61.0)]
    assert state.tick(T0 + 200) == []
    # the hook goes: a new phase, measured from then
    terminating = machine("cp-0", deleting="2026-01-01T00:00:00Z",
                          annotations={"pre-terminate.delete.hook.machine.cluster.x-k8s.io/keep": ""})
    assert state.observe(terminating, T0 + 201) == []
    assert [(e["phase"], e["hooks"]) for e in state.tick(T0 + 262)] == [("pre-terminate hook", ["keep"])]


def test_a_deletion_seen_late_counts_from_its_deletion_timestamp():
    state = seeded(state=ev.EventState(stuck_seconds=60))[0]
    out = state.observe(machine("cp-2", deleting="2026-01-01T00:00:00Z"), T0 + 3600)
    assert types(out) == ["machine_deleting", "machine_deletion_stuck"]
    assert out[1]["phase"] == "infrastructure"


def test_pause_and_unpause_are_reported_on_change_only():
    state = seeded()[0]
    assert types(state.observe(cluster(paused=True), T0)) == ["cluster_paused"]
    assert state.relisted("Cluster", "default", [cluster(paused=True)], T0) == []
    assert types(state.observe(cluster(paused=False), T0)) == ["cluster_unpaused"]
    fresh = ev.EventState()
    assert types(fresh.relisted("Cluster", None, [cluster(name="beta", paused=True)], T0)) == ["cluster_paused"]


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
def test_degraded_once_until_healthy_again(version):
    state = seeded()[0]
    bad = [{"type": "EtcdClusterHealthy", "status": "False", "message": "etcd member cp-1 is unhealthy"}]
    sick = kcp(conditions=bad, version=version)
    if version == "v1beta1":
        sick["status"]["v1beta2"] = {"conditions": []}
    out = state.observe(sick, T0)
    assert [(e["type"], e["conditions"]) for e in out] == [
        ("control_plane_degraded", ["EtcdClusterHealthy: etcd member cp-1 is unhealthy"])]
    assert state.observe(sick, T0 + 1) == []
    assert state.observe(kcp(version=version), T0 + 2) == []
    assert types(state.observe(sick, T0 + 3)) == ["control_plane_degraded"]


def test_objects_of_clusters_not_followed_make_no_event():
    state = ev.EventState()
    state.relisted("Cluster", "default", [], T0)
    assert state.observe(kcp(k8s="v1.32.0"), T0) == []
    assert state.observe(machine("cp-0", deleting="2026-01-01T00:00:00Z"), T0) == []


def test_host_names_follow_the_inventory_format():
    state = seeded(state=ev.EventState(hostname_format="{name}"))[0]
    out = state.observe(cluster(paused=True), T0)
    assert out[0]["meta"]["hosts"] == "alpha"


STANDING = "pre-drain.delete.hook.machine.cluster.x-k8s.io/flightcontrol-standing"
GUARD = "pre-drain.delete.hook.machine.cluster.x-k8s.io/flightcontrol-rollout"


def test_without_a_standing_hook_the_source_writes_nothing():
    state = seeded()[0]
    assert state.hook_actions() == []


def test_the_standing_hook_holds_every_control_plane_machine_once_per_version():
    state = seeded(state=ev.EventState(standing_hook="flightcontrol-standing"))[0]
    state.observe(machine("w-0", control_plane=False), T0)
    actions = state.hook_actions()
    assert [(a["action"], a["name"], a["annotation"], a["value"]) for a in actions] == [
        ("hold", "cp-%d" % i, STANDING, "") for i in range(3)]
    assert state.hook_actions() == []  # asked once for this version of each


def test_a_deleted_machine_hands_the_standing_hook_to_the_guard_only():
    state = seeded(state=ev.EventState(standing_hook="flightcontrol-standing"))[0]
    held = machine("cp-0", annotations={STANDING: ""}, deleting="2026-01-01T00:00:05Z")
    state.observe(held, T0 + 5)
    assert [a["name"] for a in state.hook_actions()] == ["cp-1", "cp-2"]  # cp-0 stays held: no guard yet
    guarded = machine("cp-0", annotations={STANDING: "", GUARD: ""}, deleting="2026-01-01T00:00:05Z")
    guarded["metadata"]["resourceVersion"] = "12"
    state.observe(guarded, T0 + 9)
    assert [(a["action"], a["name"], a["value"]) for a in state.hook_actions()] == [("hand_over", "cp-0", None)]


def test_a_cluster_being_deleted_lets_its_machines_go():
    state = seeded(state=ev.EventState(standing_hook="flightcontrol-standing"))[0]
    going = cluster()
    going["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:05Z"
    state.observe(going, T0)
    state.observe(machine("cp-1", annotations={STANDING: ""}, deleting="2026-01-01T00:00:06Z"), T0)
    assert [(a["action"], a["name"]) for a in state.hook_actions()] == [("let_go", "cp-1")]


# -- ClusterClass clusters: a change of the Cluster's spec.topology.version, or a spec.topology.controlPlane.rollout.after
# that has come, is a rollout_started event at once (before the topology controller writes it onto the
# KubeadmControlPlane), once per rollout: the control plane's rollout that follows is the same one, and a control
# plane that showed it first is not reported again from the Cluster.

AFTER = "2026-01-01T00:00:10Z"


def class_cluster(version="v1.34.0", after=None, generation=1, contract="v1beta2"):
    topology = {"version": version, "controlPlane": {"replicas": 3}}
    if contract == "v1beta2":
        topology["classRef"] = {"name": "in-memory"}
    else:
        topology["class"] = "in-memory"
    if after:
        topology["controlPlane"]["rollout"] = {"after": after}
    return {"apiVersion": "cluster.x-k8s.io/%s" % contract, "kind": "Cluster",
            "metadata": {"name": "alpha", "namespace": "default", "uid": "uid-alpha", "generation": generation},
            "spec": {"topology": topology,
                     "controlPlaneRef": {"name": "alpha-cp", "kind": "KubeadmControlPlane"}}}


def class_seeded(now=T0, on=True, **cluster_args):
    state = ev.EventState(topology_rollouts=on)
    out = state.relisted("Cluster", "default", [class_cluster(**cluster_args)], now)
    out += state.relisted("KubeadmControlPlane", "default", [kcp(k8s="v1.34.0")], now)
    out += state.relisted("Machine", "default", [machine("cp-%d" % i, k8s="v1.34.0") for i in range(3)], now)
    return state, out


@pytest.mark.parametrize("contract", ["v1beta1", "v1beta2"])
def test_a_topology_version_change_is_a_rollout_at_once_and_the_control_planes_is_the_same_one(contract):
    state, out = class_seeded(contract=contract)
    assert out == [], "the first sight of a Cluster is no change"
    out = state.observe(class_cluster(version="v1.34.1", generation=2, contract=contract), T0 + 1)
    assert types(out) == ["rollout_started"]
    event = out[0]
    assert event["reason"] == "version" and event["reasons"] == ["version"]
    assert event["rollout_id"] == "uid-alpha/topology/2"
    assert event["old_machines"] == ["cp-0", "cp-1", "cp-2"] and event["machines"] == ["cp-0", "cp-1", "cp-2"]
    assert event["control_plane"]["name"] == "alpha-cp" and event["control_plane"]["version"] == "v1.34.1"
    assert event["topology"] == {"class": "in-memory", "class_namespace": "default", "version": "v1.34.1",
                                 "rollout_after": None, "generation": 2}
    assert event["cluster"] == {"namespace": "default", "name": "alpha"} and event["meta"]["hosts"] == "default/alpha"
    # the topology controller writes the version onto the control plane, KCP marks the Machines: same rollout
    assert state.observe(kcp(k8s="v1.34.1", generation=2, status={"replicas": 3, "upToDateReplicas": 0}),
                         T0 + 2) == []
    assert state.relisted("Cluster", "default", [class_cluster(version="v1.34.1", generation=2,
                                                               contract=contract)], T0 + 3) == []


def test_a_control_plane_that_showed_the_version_first_is_not_reported_again_from_the_cluster():
    state = class_seeded()[0]
    first = state.observe(kcp(k8s="v1.34.1", generation=2), T0 + 1)
    assert types(first) == ["rollout_started"] and first[0]["rollout_id"] == "kcp-alpha/2"
    assert state.observe(class_cluster(version="v1.34.1", generation=2), T0 + 2) == []


def test_a_later_control_plane_change_is_a_rollout_of_its_own():
    state = class_seeded()[0]
    assert types(state.observe(class_cluster(version="v1.34.1", generation=2), T0 + 1)) == ["rollout_started"]
    assert state.observe(kcp(k8s="v1.34.1", generation=2), T0 + 2) == []
    changed = kcp(k8s="v1.34.1", generation=3)
    changed["spec"]["machineTemplate"]["infrastructureRef"]["name"] = "tmpl-2"
    changed["status"] = {"replicas": 3, "upToDateReplicas": 2}
    out = state.observe(changed, T0 + 3)
    assert types(out) == ["rollout_started"] and out[0]["rollout_id"] == "kcp-alpha/3"


def test_an_upgrade_in_steps_is_one_rollout_until_the_control_plane_asks_the_clusters_version():
    """The topology controller may write an intermediate version onto the control plane first (an upgrade in
    steps): each step is the rollout the Cluster's change reported, not a rollout of its own (whose guard would only
    fail on the first one's Lease)."""
    state = class_seeded()[0]
    assert types(state.observe(class_cluster(version="v1.36.0", generation=2), T0 + 1)) == ["rollout_started"]
    assert state.observe(kcp(k8s="v1.35.0", generation=2, status={"replicas": 3, "upToDateReplicas": 0}),
                         T0 + 2) == [], "the intermediate step"
    assert state.observe(kcp(k8s="v1.36.0", generation=3, status={"replicas": 3, "upToDateReplicas": 0}),
                         T0 + 3) == [], "the last step, the version the Cluster asked"
    changed = kcp(k8s="v1.36.0", generation=4)
    changed["spec"]["machineTemplate"]["infrastructureRef"]["name"] = "tmpl-2"
    changed["status"] = {"replicas": 3, "upToDateReplicas": 2}
    assert types(state.observe(changed, T0 + 4)) == ["rollout_started"], "the note was dropped at the last step"


def test_a_topology_rollout_time_counts_once_it_has_come():
    state = class_seeded()[0]
    asked = class_cluster(after=AFTER, generation=2)
    assert state.observe(asked, T0 + 1) == [], "the time has not come"
    assert state.tick(T0 + 5) == []
    out = state.tick(T0 + 11)
    assert types(out) == ["rollout_started"] and out[0]["reason"] == "rolloutAfter"
    assert out[0]["old_machines"] == ["cp-0", "cp-1", "cp-2"], "created before the rollout time"
    assert out[0]["topology"]["rollout_after"] == AFTER
    assert state.tick(T0 + 12) == [] and state.observe(copy.deepcopy(asked), T0 + 13) == []
    # the topology controller copies the time onto the control plane: the same rollout
    assert state.observe(kcp(k8s="v1.34.0", generation=2, after=AFTER), T0 + 14) == []


def test_a_rollout_time_already_come_when_first_seen_and_other_changes_are_no_rollout():
    state = class_seeded(after=AFTER, now=T0 + 20)[0]
    assert state.tick(T0 + 21) == []
    replicas = class_cluster(after=AFTER, generation=2)
    replicas["spec"]["topology"]["controlPlane"]["replicas"] = 5
    assert state.observe(replicas, T0 + 22) == []
    plain = class_cluster()
    del plain["spec"]["topology"]
    assert ev.topology_wanted(plain, T0) is None


def test_without_topology_rollouts_the_cluster_change_waits_for_the_control_plane():
    state = class_seeded(on=False)[0]
    assert state.observe(class_cluster(version="v1.34.1", generation=2), T0 + 1) == []
    out = state.observe(kcp(k8s="v1.34.1", generation=2), T0 + 2)
    assert types(out) == ["rollout_started"] and out[0]["reason"] == "version" and "topology" not in out[0]
