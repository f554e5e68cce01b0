"""Control-plane rollouts on the real Octavia: KCP, Machine deletion hooks, CAPO waiting for the
member (no drop in serving members) or only for the load balancer (the old bug: a lost member
and the cluster's endpoint is left with no serving member)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time

import pytest

REQUIRED = ("keystone", "neutron", "nova", "octavia", "octavia_lib", "openstack")
if any(importlib.util.find_spec(name) is None for name in REQUIRED):
    pytest.skip("the OpenStack packages are not installed", allow_module_level=True)

from kubernetes import client  # noqa: E402

from minicloud.kube.controllers import capo  # noqa: E402

pytestmark = pytest.mark.integration

DRAIN_HOOK = "pre-drain.delete.hook.machine.cluster.x-k8s.io/rehearsal"
GROUP, VERSION = "cluster.x-k8s.io", "v1beta2"


@pytest.fixture(scope="module", autouse=True)
def quick_octavia(cloud):
    cloud.set_octavia_mode("normal", delay=0.2)


def run(cloud, *args):
    done = subprocess.run([sys.executable, "-m", "minicloud", "--state-dir", str(cloud.state_dir), *args],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def wait_for(check, timeout, what):
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.25)


def machines(api, cluster):
    return api.list_namespaced_custom_object(GROUP, VERSION, "default", "machines",
                                             label_selector=f"cluster.x-k8s.io/cluster-name={cluster}")["items"]


def test_rollouts_with_hooks_member_wait_and_the_lb_wait_bug(cloud):
    api = client.CustomObjectsApi(cloud.kube_client())
    safe = cloud.create_capi_cluster("safe", control_plane=3, openstack=True)
    lb = safe["openstack"]["loadbalancer"]
    osc = api.get_namespaced_custom_object("infrastructure.cluster.x-k8s.io", "v1beta1", "default",
                                           "openstackclusters", "safe")
    assert {k: osc["status"]["apiServerLoadBalancer"][k] for k in ("id", "name", "ip")} == \
        {"id": lb["id"], "name": "k8s-clusterapi-cluster-default-safe-kubeapi", "ip": lb["ip"]}
    conn = cloud.connect()
    members = {m.name: m.address for m in conn.load_balancer.members(safe["openstack"]["pool_id"])}
    old = sorted(m["metadata"]["name"] for m in machines(api, "safe"))
    assert members == {capo.member_name(lb["name"], name): safe["openstack"]["servers"][name]["address"]
                       for name in old}
    nodes = {n["name"]: n for n in cloud.list_nodes(cluster="safe")}  # in the cluster's own API
    assert {nodes[name]["internalIP"] for name in old} == set(members.values())
    assert {n["internalIP"] for n in safe["nodes"]} == set(members.values())
    assert not set(old) & {n["name"] for n in cloud.list_nodes()}  # not in the management API
    assert nodes[old[0]]["providerID"] == f"openstack:///{safe['openstack']['servers'][old[0]]['id']}"

    # The old bug, on a one-node control plane: the new member is lost, CAPO waits for the LB only.
    fragile = run(cloud, "capi", "cluster", "create", "fragile", "--control-plane", "1", "--openstack", "--no-monitor")
    cloud.set_octavia_mode("lost-member", members="k8s-clusterapi-cluster-default-fragile-kubeapi-6443-*",
                           delay=0.2)
    # Every old machine of "safe" is held by a pre-drain hook, as a careful operator would.
    for name in old:
        api.patch_namespaced_custom_object(GROUP, VERSION, "default", "machines", name,
                                           {"metadata": {"annotations": {DRAIN_HOOK: ""}}})
    assert run(cloud, "capi", "rollout", "safe", "--capo-wait", "member")["rollout"] == 1
    assert run(cloud, "capi", "rollout", "fragile", "--capo-wait", "lb")["capoWait"] == "lb"

    def held():
        status = cloud.capi_rollout_status("safe")
        return status if status["machines"]["deleting"] and any(
            "pre-drain hook" in w for w in status["waitingFor"]) else None

    status = wait_for(held, 120, "an old machine of safe held by its hook")
    [victim] = status["machines"]["deleting"]
    assert len(status["machines"]["new"]) == 1 and status["phase"] == "RollingOut"
    time.sleep(1.0)  # held: nothing moves
    assert cloud.capi_rollout_status("safe")["machines"] == status["machines"]
    assert len(list(conn.load_balancer.members(safe["openstack"]["pool_id"]))) == 4
    for name in old:  # release them all
        api.patch_namespaced_custom_object(GROUP, VERSION, "default", "machines", name,
                                           {"metadata": {"annotations": {DRAIN_HOOK: None}}})

    for cluster in ("safe", "fragile"):
        wait_for(lambda c=cluster: cloud.capi_rollout_status(c)["phase"] == "Completed", 240, f"{cluster} rolled")
    # the history's last record comes with the controllers' next pass (later on a loaded machine)
    wait_for(lambda: (cloud.capi_history("safe") or [{}])[-1].get("old") == [], 60, "safe's history at its end")

    # safe: never fewer serving members than the control plane has machines, hook or not.
    records = cloud.capi_history("safe")
    summary = run(cloud, "capi", "history", "safe", "--summary")
    assert summary["minServing"] >= 3 - 1 and summary["final"] == {"members": 3, "active": 3, "serving": 3}
    assert min(r["serving"] for r in records) == summary["minServing"]
    assert any(r["released"] == [victim] and r["serving"] >= 3 for r in records)
    new = sorted(m["metadata"]["name"] for m in machines(api, "safe"))
    assert not set(new) & set(old) and len(new) == 3
    assert records[-1]["new"] == new and records[-1]["old"] == []
    members = {m.name for m in conn.load_balancer.members(safe["openstack"]["pool_id"])}
    assert members == {capo.member_name(lb["name"], name) for name in new}
    nodes = {n["name"] for n in cloud.list_nodes(cluster="safe")}
    assert set(new) <= nodes and not set(old) & nodes
    assert not (set(new) | set(old)) & {n["name"] for n in cloud.list_nodes()}
    servers = {s["name"] for s in cloud.list_servers()}
    assert set(new) <= servers and not set(old) & servers
    kcp = api.get_namespaced_custom_object("controlplane.cluster.x-k8s.io", "v1beta1", "default",
                                           "kubeadmcontrolplanes", "safe-control-plane")
    assert {k: kcp["status"][k] for k in ("replicas", "updatedReplicas", "readyReplicas")} == \
        {"replicas": 3, "updatedReplicas": 3, "readyReplicas": 3}

    # fragile: the old machine went while its replacement's member was not serving.
    records = cloud.capi_history("fragile")
    [fragile_old] = records[0]["old"]
    released = [r for r in records if fragile_old in r["released"]]
    assert released and all(r["serving"] <= 1 for r in released)
    assert any(r["serving"] == 0 for r in released)
    assert records[-1]["serving"] == 0
    # its end: the old member leaves the pool after its Machine (CAPO's delete may come after the history's
    # last sample on a loaded machine), the lost new one stays, never serving
    fragile_pool = fragile["openstack"]["pool_id"]
    wait_for(lambda: len(list(conn.load_balancer.members(fragile_pool))) == 1, 60, "fragile's old member gone")
    [member] = conn.load_balancer.members(fragile_pool)
    assert (member.provisioning_status, member.operating_status) == ("PENDING_CREATE", "NO_MONITOR")
    cloud.set_octavia_mode("normal")
