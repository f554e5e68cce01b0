# -*- coding: utf-8 -*-
"""cluster_readiness against minicloud: providers seeded as clusterctl leaves them, a CAPI cluster, a pool with
a health monitor; each view's finding, views minicloud does not serve reported unknown, blocking as asked."""

import uuid

import pytest

MODULE = "flightcontrol.openstack.cluster_readiness"


@pytest.fixture
def providers(cloud):
    """Seed clusterctl's inventory and the controllers (``seed(capi=..., capo=..., orc=...)``); removed after."""
    yield cloud.api.seed_capi_providers
    cloud.api.seed_capi_providers(remove=True)


def seed_cluster(cloud, control_plane=1, max_surge=None):
    name = "rd-%s" % uuid.uuid4().hex[:6]
    cloud.json("capi", "cluster", "create", name, "--control-plane", control_plane, "--workers", 0,
               "--api-version", "v1beta2")
    if max_surge is not None:
        from kubernetes import client
        custom = client.CustomObjectsApi(cloud.api.kube_client())
        custom.patch_namespaced_custom_object(
            "controlplane.cluster.x-k8s.io", "v1beta2", "default", "kubeadmcontrolplanes", name + "-control-plane",
            {"spec": {"rollout": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": max_surge}}}}})
    return name


def readiness(minicloud, run_module, playbook=False, **args):
    args.setdefault("kubernetes", {"kubeconfig": str(minicloud.state_dir / "kubeconfig")})
    return run_module(MODULE, args, playbook=playbook)


def by_code(result):
    return dict((f["code"], f) for f in result["findings"])


def test_an_old_capi_capo_without_orc_and_a_single_replica_without_surge(cloud, run_module, providers):
    providers(capi="v1.11.3", capo="v0.13.1", orc=None)
    name = seed_cluster(cloud, control_plane=1, max_surge=0)
    run = readiness(cloud, run_module, name=name)
    assert run.rc == 0, run.output  # nothing blocks by default
    result = run.result
    found = by_code(result)
    assert found["capi_out_of_support"]["numbers"] == {"version": "v1.11.3", "oldest_supported": "v1.12"}
    assert found["orc_missing"]["severity"] == "critical" and result["orc"]["present"] is False
    assert found["kcp_single_replica_no_surge"]["severity"] == "critical"
    assert found["kcp_single_replica_no_surge"]["numbers"] == {"replicas": 1, "max_surge": 0,
                                                               "strategy": "RollingUpdate"}
    core = [p for p in result["providers"] if p["type"] == "CoreProvider"][0]
    assert core["version"] == "v1.11.3" and core["images"] == [
        "registry.k8s.io/cluster-api/cluster-api-controller:v1.11.3"]
    # What minicloud's API does not show is unknown, never fine: MachineHealthChecks are not served, objects carry
    # no managedFields, and no OpenStack connection was given.
    assert result["views"]["health_checks"]["status"] == "unknown" and "health_checks_unknown" in found
    assert result["views"]["v1beta1_writers"]["status"] == "unknown"
    assert result["views"]["monitor"]["status"] == "unknown" and found["monitor_unknown"]["severity"] == "info"
    assert result["views"]["load_balancer"]["status"] == "unknown"
    assert found["load_balancer_unknown"]["severity"] == "info"
    assert result["ready"] is True and result["blocking"] == [] and result["changed"] is False
    assert result["summary"][0].startswith("Readiness of Cluster default/%s: " % name)

    run = readiness(cloud, run_module, name=name, fail_on_severity="critical")
    assert run.rc != 0 and run.result["failed"]
    assert sorted(run.result["blocking"]) == ["kcp_single_replica_no_surge", "orc_missing"]
    assert "is not ready: blocking finding(s)" in run.result["msg"] and run.result["ready"] is False


def test_what_cannot_be_seen_is_unknown_and_blocks_when_unknown_is_blocking(cloud, run_module, providers):
    providers(remove=True)  # clusterctl's inventory is served, but empty: no version to judge
    name = seed_cluster(cloud, control_plane=3)
    run = readiness(cloud, run_module, name=name, fail_on=["unknown"])
    assert run.rc != 0
    result = run.result
    assert sorted(result["blocking"]) == ["capi_version_unknown", "health_checks_unknown", "load_balancer_unknown",
                                          "monitor_unknown", "v1beta1_writers_unknown"]
    assert "MachineHealthCheck" in result["views"]["health_checks"]["reason"]
    assert result["views"]["control_plane"]["status"] == "ok" and result["control_plane"]["replicas"] == 3
    assert result["views"]["orc"]["status"] == "skipped" and result["providers"] == []
    run = readiness(cloud, run_module, name=name, fail_on=["orc_mising"])
    assert run.rc != 0 and "fail_on names no finding code: orc_mising" in run.result["msg"]


def test_the_monitor_window_through_ansible_blocks_when_named(cloud, run_module, providers):
    providers(capi="v1.12.2", capo="v0.13.1", orc="v2.2.0")
    name = seed_cluster(cloud, control_plane=3)
    lb = "rd-lb-%s" % uuid.uuid4().hex[:6]
    created = cloud.json("lb", "create", lb, "--members", 0, "--monitor")
    try:
        run = readiness(cloud, run_module, True, name=name, cloud="minicloud",
                        pool=created["pool"]["name"], monitor_max_window=10, fail_on=["monitor_window_long"])
    finally:
        cloud.cli("lb", "delete", lb, check=False)
    assert run.rc != 0, run.output
    result = run.result
    assert result["blocking"] == ["monitor_window_long"]
    assert by_code(result)["monitor_window_long"]["numbers"] == {"window": 15, "limit": 10, "delay": 5,
                                                                 "max_retries_down": 3, "timeout": 3}
    assert result["monitor"]["window"] == 15 and result["monitor"]["pool"] == created["pool"]["name"]
    assert "lets a dead member take traffic for up to 15 s" in result["monitor"]["finding"]
    assert result["views"]["versions"]["status"] == "ok" and result["views"]["control_plane"]["status"] == "ok"
    assert result["api_calls"] > 0
    provider = by_code(result)["lb_provider"]
    assert provider["severity"] == "info" and provider["numbers"]["drain_method"] == "weight"
    assert provider["numbers"]["failover"] is True and result["load_balancer"]["provider"] == "amphora"


def test_an_ovn_api_load_balancer_is_drained_by_admin_state_and_has_no_failover(cloud, run_module, providers):
    """A cluster whose API load balancer CAPO made with provider ovn (and CAPO's TCP monitor, delay 10 x
    max_retries_down 3): the provider finding says how the guard drains there and that there is no failover; the
    monitor's window reads as OVN's own checks."""
    providers(capi="v1.12.2", capo="v0.13.1", orc="v2.2.0")
    name = "rd-ovn-%s" % uuid.uuid4().hex[:6]
    cloud.api.create_capi_cluster(name, control_plane=1, openstack=True, monitor=True, lb_provider="ovn")
    run = readiness(cloud, run_module, name=name, cloud="minicloud", monitor_max_window=20)
    assert run.rc == 0, run.output
    result = run.result
    found = by_code(result)
    assert found["lb_provider"]["numbers"] == {"provider": "ovn", "load_balancer": result["load_balancer"]["name"],
                                               "drain_method": "admin_state", "drain": "admin_state_up false",
                                               "failover": False}
    assert "refuses a failover" in found["lb_provider"]["message"] and result["views"]["load_balancer"] == {
        "status": "findings", "reason": None}
    assert result["load_balancer"]["pool"] == result["monitor"]["pool"] == "k8s-clusterapi-cluster-default-%s-" \
        "kubeapi-6443" % name
    assert found["monitor_window_long"]["numbers"]["window"] == 30
    assert "OVN's own service monitor" in found["monitor_window_long"]["message"]


def test_the_rollout_role_stops_at_a_critical_finding_before_any_change(cloud, playbooks, providers):
    """control_plane_rollout's preflight runs the report, prints it, and by default stops on a critical finding
    (here CAPO 0.13 without ORC) before it changes anything."""
    from rollouts import hooks_left, machines, run_role
    from rollouts import seed_cluster as seed_on_servers

    providers(capi="v1.12.2", capo="v0.13.1", orc=None)
    name = seed_on_servers(cloud, control_plane=1, monitor=True)
    before = sorted(m["metadata"]["name"] for m in machines(cloud, name))
    rc, output, _result = run_role(playbooks, cloud, {"control_plane_rollout_cluster": name}, timeout=300)
    assert rc != 0, output
    assert "Readiness of Cluster default/%s: " % name in output and "blocking: orc_missing" in output
    assert "Preflight | nothing the readiness report marks as blocking" in output
    assert "CAPO v0.13.1 needs ORC" in output
    assert sorted(m["metadata"]["name"] for m in machines(cloud, name)) == before and hooks_left(cloud, name) == {}


def test_without_a_cluster_only_the_pool_monitor_is_judged(cloud, run_module):
    lb = "rd-lb-%s" % uuid.uuid4().hex[:6]
    created = cloud.json("lb", "create", lb, "--members", 0)
    try:
        run = run_module(MODULE, {"cloud": "minicloud", "pool": created["pool"]["name"],
                                  "fail_on": ["monitor_missing"]})
    finally:
        cloud.cli("lb", "delete", lb, check=False)
    assert run.rc != 0 and run.result["blocking"] == ["monitor_missing"]
    assert "has no health monitor" in run.result["msg"] and run.result["monitor"]["health_monitor"] is None
    views = run.result["views"]
    assert views.pop("monitor")["status"] == "findings" and views.pop("load_balancer")["status"] == "findings"
    assert set(view["status"] for view in views.values()) == {"skipped"} and len(views) == 5
    assert by_code(run.result)["lb_provider"]["numbers"]["provider"] == "amphora"
