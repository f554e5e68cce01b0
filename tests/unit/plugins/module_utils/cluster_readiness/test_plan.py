# -*- coding: utf-8 -*-
"""cluster_readiness' decisions: each finding with its severity and numbers, unknown views, what blocks."""

import pytest

from ansible_collections.flightcontrol.openstack.plugins.module_utils.cluster_readiness import plan
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.health_monitor import window_check


def provider(name, kind, version, namespace):
    return {"metadata": {"name": name, "namespace": namespace}, "providerName": name, "type": kind, "version": version}


def deployment(namespace, name, image, label=None):
    return {"namespace": namespace, "name": name, "images": [image],
            "labels": {plan.PROVIDER_LABEL: label} if label else {}}


CORE = provider("cluster-api", "CoreProvider", "v1.12.2", "capi-system")
CAPO = provider("openstack", "InfrastructureProvider", "v0.13.1", "capo-system")
CORE_DEPLOY = deployment("capi-system", "capi-controller-manager",
                         "registry.k8s.io/cluster-api/cluster-api-controller:v1.12.2", "cluster-api")
CAPO_DEPLOY = deployment("capo-system", "capo-controller-manager",
                         "registry.k8s.io/capi-openstack/capi-openstack-controller:v0.13.1", "infrastructure-openstack")
ORC_DEPLOY = deployment("orc-system", "orc-controller-manager",
                        "quay.io/orc/openstack-resource-controller:v2.2.0")


def codes(found):
    return [f["code"] for f in found]


def test_supported_versions_with_matching_images_have_no_finding():
    rows, found, status = plan.judge_versions([CORE, CAPO], [CORE_DEPLOY, CAPO_DEPLOY])
    assert status == plan.OK and found == []
    assert [(r["name"], r["version"], r["images"]) for r in rows] == [
        ("cluster-api", "v1.12.2", [CORE_DEPLOY["images"][0]]), ("openstack", "v0.13.1", [CAPO_DEPLOY["images"][0]])]


@pytest.mark.parametrize("version", ["v1.11.3", "v1.10.0", "v1.9.5"])
def test_capi_v1_11_and_older_is_out_of_support_with_the_table_named(version):
    core = provider("cluster-api", "CoreProvider", version, "capi-system")
    _data, found, status = plan.judge_versions([core], [])
    assert status == plan.FINDINGS and codes(found) == ["capi_out_of_support"]
    assert found[0]["severity"] == plan.WARNING
    assert found[0]["numbers"] == {"version": version, "oldest_supported": "v1.12"}
    assert plan.SUPPORT["checked"] in found[0]["message"]


def test_an_image_that_disagrees_with_the_inventory_is_named():
    image = deployment("capi-system", "capi-controller-manager",
                       "registry.k8s.io/cluster-api/cluster-api-controller:v1.12.3", "cluster-api")
    _data, found, _status = plan.judge_versions([CORE], [image])
    assert codes(found) == ["provider_image_mismatch"]
    assert found[0]["numbers"] == {"provider": "cluster-api", "inventory_version": "v1.12.2",
                                   "image_tags": ["v1.12.3"]}


def test_no_inventory_is_unknown_not_fine():
    _data, found, status = plan.judge_versions(plan.Unknown("providers.clusterctl.cluster.x-k8s.io: HTTP 404"), [])
    assert status == plan.UNKNOWN and codes(found) == ["versions_unknown"]
    assert "HTTP 404" in found[0]["message"] and found[0]["severity"] == plan.WARNING


def test_images_that_cannot_be_listed_are_said_so():
    rows, found, status = plan.judge_versions([CORE], plan.Unknown("HTTP 403"))
    assert codes(found) == ["controller_images_unknown"] and found[0]["severity"] == plan.INFO
    assert rows[0]["images"] is None and status == plan.FINDINGS


def test_no_core_provider_is_an_unknown_version():
    _data, found, _status = plan.judge_versions([CAPO], [])
    assert codes(found) == ["capi_version_unknown"]


def orc(providers, deployments, served=None):
    rows, _found, status = plan.judge_versions(providers, deployments)
    return plan.judge_orc(rows, deployments, served or {}, status)


def test_capo_0_12_or_later_without_orc_is_critical():
    data, found, status = orc([CORE, CAPO], [CORE_DEPLOY, CAPO_DEPLOY])
    assert status == plan.FINDINGS and codes(found) == ["orc_missing"] and found[0]["severity"] == plan.CRITICAL
    assert data["present"] is False and found[0]["numbers"] == {"capo_version": "v0.13.1"}


def test_orc_seen_by_its_deployment_or_its_api_group():
    data, found, status = orc([CORE, CAPO], [CORE_DEPLOY, CAPO_DEPLOY, ORC_DEPLOY])
    assert (status, found, data["present"]) == (plan.OK, [], True)
    assert data["seen"] == ["Deployment orc-system/orc-controller-manager"]
    data, found, status = orc([CORE, CAPO], [CORE_DEPLOY], {plan.ORC_GROUP: ["v1alpha1"]})
    assert (status, found, data["present"]) == (plan.OK, [], True)


def test_older_capo_needs_no_orc_and_no_capo_skips():
    old = provider("openstack", "InfrastructureProvider", "v0.11.4", "capo-system")
    assert orc([CORE, old], [])[1:] == ([], plan.OK)
    assert orc([CORE], [])[1:] == ([], plan.SKIPPED)


def test_orc_is_unknown_when_its_absence_cannot_be_seen():
    _data, found, status = orc([CORE, CAPO], plan.Unknown("HTTP 403"))
    assert status == plan.UNKNOWN and codes(found) == ["orc_unknown"]
    _data, found, status = orc(plan.Unknown("not served"), [])
    assert status == plan.UNKNOWN and codes(found) == ["orc_unknown"]


def kcp(replicas, surge=None, v1beta2=True):
    spec = {"replicas": replicas}
    if surge is not None:
        strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": surge}}
        if v1beta2:
            spec["rollout"] = {"strategy": strategy}
        else:
            spec["rolloutStrategy"] = strategy
    return {"kind": "KubeadmControlPlane", "metadata": {"name": "c1-cp"}, "spec": spec}


@pytest.mark.parametrize("v1beta2", [True, False])
def test_a_single_replica_without_surge_is_critical_in_both_contracts(v1beta2):
    rollout, found, status = plan.judge_control_plane(kcp(1, 0, v1beta2))
    assert status == plan.FINDINGS and codes(found) == ["kcp_single_replica_no_surge"]
    assert found[0]["severity"] == plan.CRITICAL
    assert found[0]["numbers"] == {"replicas": 1, "max_surge": 0, "strategy": "RollingUpdate"}
    assert rollout["max_surge_set"] is True


def test_surge_defaults_to_one_and_other_shapes():
    rollout, found, _status = plan.judge_control_plane(kcp(1))
    assert rollout["max_surge"] == 1 and not rollout["max_surge_set"]
    assert codes(found) == ["kcp_single_replica"] and found[0]["severity"] == plan.INFO
    assert codes(plan.judge_control_plane(kcp(3, "0"))[1]) == ["kcp_no_surge"]
    assert plan.judge_control_plane(kcp(3, 1))[1:] == ([], plan.OK)


def test_a_control_plane_that_cannot_be_read_or_judged_is_unknown():
    for value in (plan.Unknown("HTTP 403"), None, {"kind": "TalosControlPlane", "spec": {}}):
        _data, found, status = plan.judge_control_plane(value)
        assert status == plan.UNKNOWN and codes(found) == ["control_plane_unknown"]


def machine(name, control_plane=True, **annotations):
    labels = {"cluster.x-k8s.io/cluster-name": "c1"}
    if control_plane:
        labels["cluster.x-k8s.io/control-plane"] = ""
    return {"metadata": {"name": name, "labels": labels, "annotations": annotations}}


def mhc(name, selector, cluster="c1"):
    return {"metadata": {"name": name}, "spec": {"clusterName": cluster, "selector": selector}}


def test_a_health_check_covering_control_plane_machines_is_a_warning_with_the_machines():
    machines = [machine("cp-1"), machine("cp-2"), machine("w-1", control_plane=False),
                machine("cp-3", **{plan.SKIP_REMEDIATION: ""})]
    checks = [mhc("cp", {"matchExpressions": [{"key": "cluster.x-k8s.io/control-plane", "operator": "Exists"}]}),
              mhc("workers", {"matchExpressions": [{"key": "cluster.x-k8s.io/control-plane",
                                                    "operator": "DoesNotExist"}]}),
              mhc("other", {}, cluster="c2")]
    rows, found, status = plan.judge_health_checks(checks, machines, "c1")
    assert status == plan.FINDINGS and codes(found) == ["mhc_covers_control_plane"]
    assert found[0]["numbers"] == {"machine_health_check": "cp", "machines": ["cp-1", "cp-2"]}
    assert [r["control_plane_machines"] for r in rows] == [["cp-1", "cp-2"], [], []]


def test_health_checks_that_cannot_be_listed_are_unknown():
    _data, found, status = plan.judge_health_checks(plan.Unknown("kind MachineHealthCheck not served"), [], "c1")
    assert status == plan.UNKNOWN and codes(found) == ["health_checks_unknown"]


def written(kind, name, *entries):
    return {"kind": kind, "metadata": {"namespace": "ns", "name": name, "managedFields": [
        {"manager": m, "operation": "Update", "apiVersion": v, "time": t} for m, v, t in entries]}}


def test_objects_last_written_in_v1beta1_name_their_managers():
    objects = [written("Cluster", "c1", ("capi", "cluster.x-k8s.io/v1beta2", "2026-11-01T00:00:00Z"),
                       ("argocd", "cluster.x-k8s.io/v1beta1", "2026-11-02T00:00:00Z")),
               written("Machine", "m1", ("argocd", "cluster.x-k8s.io/v1beta1", "2026-11-01T00:00:00Z"),
                       ("capi", "cluster.x-k8s.io/v1beta2", "2026-11-03T00:00:00Z")),
               written("OpenStackCluster", "c1",
                       ("capo", "infrastructure.cluster.x-k8s.io/v1beta1", "2026-11-03T00:00:00Z"))]
    rows, found, status = plan.judge_writers(objects)
    assert [r["object"] for r in rows] == ["Cluster ns/c1"] and status == plan.FINDINGS
    assert codes(found) == ["v1beta1_writers"] and found[0]["numbers"] == {"objects": 1, "managers": ["argocd"]}
    assert "v1.16" in found[0]["message"]


def test_without_managed_fields_the_writers_are_unknown():
    _data, found, status = plan.judge_writers([{"kind": "Cluster", "metadata": {"name": "c1"}}])
    assert status == plan.UNKNOWN and codes(found) == ["v1beta1_writers_unknown"]
    assert found[0]["severity"] == plan.INFO


MONITOR = {"id": "hm", "name": "hm-1", "delay": 10, "max_retries_down": 6, "timeout": 5}


def test_the_monitor_window_over_the_limit_and_no_monitor():
    _data, found, status = plan.judge_monitor(window_check("pool-1", MONITOR, 30))
    assert status == plan.FINDINGS and codes(found) == ["monitor_window_long"]
    assert found[0]["numbers"] == {"window": 60, "limit": 30, "delay": 10, "max_retries_down": 6, "timeout": 5}
    assert "up to 60 s (delay 10 s x max_retries_down 6, each check up to timeout 5 s), more than 30 s" in found[0][
        "message"]
    _data, found, _status = plan.judge_monitor(window_check("pool-1", None, 30))
    assert codes(found) == ["monitor_missing"] and "pool pool-1 has no health monitor" in found[0]["message"]
    check, found, status = plan.judge_monitor(window_check("pool-1", MONITOR, 60))
    assert (found, status, check["window"]) == ([], plan.OK, 60)


def test_a_monitor_not_asked_for_is_an_info_unknown_and_a_failed_read_a_warning():
    _data, found, status = plan.judge_monitor(plan.Unknown("no OpenStack connection"), asked=False)
    assert status == plan.UNKNOWN and found[0]["severity"] == plan.INFO
    _data, found, _status = plan.judge_monitor(plan.Unknown("HTTP 403"))
    assert found[0]["severity"] == plan.WARNING and found[0]["code"] == "monitor_unknown"


def sample_findings():
    return [plan.finding("kcp_single_replica", plan.INFO, "control_plane", "m", "a"),
            plan.finding("mhc_covers_control_plane", plan.WARNING, "health_checks", "m", "a"),
            plan.finding("orc_missing", plan.CRITICAL, "orc", "m", "a"),
            plan.unknown_finding("monitor", "no connection", plan.INFO)]


def test_nothing_blocks_by_default():
    found = sample_findings()
    assert plan.mark_blocking(found, [], None) == [] and not any(f["blocking"] for f in found)


@pytest.mark.parametrize("fail_on, severity, blocking", [
    (["mhc_covers_control_plane"], None, ["mhc_covers_control_plane"]),
    ([], "critical", ["orc_missing"]),
    ([], "warning", ["mhc_covers_control_plane", "orc_missing"]),
    ([], "info", ["kcp_single_replica", "mhc_covers_control_plane", "orc_missing", "monitor_unknown"]),
    (["unknown"], None, ["monitor_unknown"]),
    (["kcp_single_replica"], "critical", ["kcp_single_replica", "orc_missing"]),
])
def test_blocking_by_code_by_severity_and_unknown(fail_on, severity, blocking):
    assert plan.mark_blocking(sample_findings(), fail_on, severity) == blocking


def test_a_code_no_finding_has_is_caught():
    assert plan.unknown_codes(["orc_mising", "unknown", "monitor_unknown"]) == ["orc_mising"]


def test_the_summary_counts_and_names_unknown_views_and_blocking():
    found = sample_findings()
    plan.mark_blocking(found, ["orc_missing"], None)
    views = {"orc": {"status": plan.FINDINGS}, "monitor": {"status": plan.UNKNOWN}}
    lines = plan.summary("Readiness of Cluster ns/c1", found, views)
    assert lines[0] == ("Readiness of Cluster ns/c1: 4 finding(s): 1 critical, 1 warning, 2 info; unknown: monitor; "
                        "blocking: orc_missing")
    assert lines[1].startswith("CRITICAL (blocking): ")
    assert plan.summary("X", [], {"orc": {"status": plan.OK}}) == ["X: ready; blocking: none"]


def test_image_tags_and_versions_are_parsed():
    assert plan.image_tag("reg:5000/capi/controller:v1.12.0") == "v1.12.0"
    assert plan.image_tag("reg:5000/capi/controller@sha256:abc") is None
    assert plan.image_tag("controller") is None
    assert plan.parse_version("v1.11.3") == (1, 11, 3) and plan.parse_version("latest") is None


def _openstack_cluster(version, endpoint_port=None):
    """CAPO's OpenStackCluster: v1beta1 (status.apiServerLoadBalancer) or v1beta2 (apiServerManagedLoadBalancer)."""
    field = "apiServerManagedLoadBalancer" if version == "v1beta2" else "apiServerLoadBalancer"
    infra = {"apiVersion": "infrastructure.cluster.x-k8s.io/" + version, "kind": "OpenStackCluster",
             "metadata": {"name": "c1", "namespace": "default"}, "spec": {},
             "status": {field: {"id": "lb-1", "name": "k8s-clusterapi-cluster-default-c1-kubeapi"}}}
    if endpoint_port:
        infra["spec"]["controlPlaneEndpoint"] = {"host": "203.0.113.10", "port": endpoint_port}
    return infra


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
def test_the_api_pool_is_capos_in_either_version(version):
    assert plan.api_pool(None, _openstack_cluster(version)) == ("k8s-clusterapi-cluster-default-c1-kubeapi-6443", None)
    assert plan.api_pool(None, _openstack_cluster(version, 443))[0] == "k8s-clusterapi-cluster-default-c1-kubeapi-443"
    assert plan.api_pool("mine", _openstack_cluster(version)) == ("mine", None)


def test_no_api_pool_says_why():
    none = _openstack_cluster("v1beta2")
    del none["status"]["apiServerManagedLoadBalancer"]
    assert "OpenStackCluster default/c1 reports no API load balancer" in plan.api_pool(None, none)[1]
    both = _openstack_cluster("v1beta2")
    both["status"]["apiServerLoadBalancer"] = {"id": "lb-2", "name": "other"}
    assert plan.api_pool(None, both)[0] is None and "carries both" in plan.api_pool(None, both)[1]
    assert plan.api_pool(None, plan.Unknown("reading it: 403"))[1] == "no pool: reading it: 403; set pool"
    assert "no infrastructure cluster" in plan.api_pool(None, None)[1]


# -- the API load balancer's provider: how the guard would drain, failover, the monitor on ovn ----------------------

def lb(provider):
    return {"id": "lb-1", "name": "k8s-api", "provider": provider}


@pytest.mark.parametrize("name", ["amphora", "octavia", "amphorav2", "minicloud", "Amphora"])
def test_an_amphora_load_balancer_drains_by_weight_and_can_fail_over(name):
    row, found, status = plan.judge_load_balancer(lb(name))
    assert status == plan.FINDINGS and codes(found) == ["lb_provider"] and found[0]["severity"] == plan.INFO
    assert found[0]["numbers"] == {"provider": name, "load_balancer": "k8s-api", "drain_method": "weight",
                                   "drain": "weight 0", "failover": True}
    assert "sets an old member's weight to 0" in found[0]["message"]
    assert row == {"id": "lb-1", "name": "k8s-api", "provider": name, "drain_method": "weight", "failover": True}


def test_an_ovn_load_balancer_drains_by_admin_state_and_has_no_failover():
    row, found, status = plan.judge_load_balancer(lb("ovn"))
    assert status == plan.FINDINGS and codes(found) == ["lb_provider"] and found[0]["severity"] == plan.INFO
    assert found[0]["numbers"] == {"provider": "ovn", "load_balancer": "k8s-api", "drain_method": "admin_state",
                                   "drain": "admin_state_up false", "failover": False}
    message = found[0]["message"]
    assert "admin_state_up false" in message and "ignores a member's weight" in message
    assert "refuses a failover" in message and "ONLINE as soon as it is created" in message
    assert "failover" in found[0]["action"]
    assert (row["drain_method"], row["failover"]) == ("admin_state", False)


@pytest.mark.parametrize("name", ["f5", "vmwareedge", "", None])
def test_a_provider_the_guard_cannot_drain_is_a_warning_naming_it(name):
    row, found, status = plan.judge_load_balancer(lb(name))
    assert status == plan.FINDINGS and codes(found) == ["lb_provider_drain_refused"]
    assert found[0]["severity"] == plan.WARNING
    assert found[0]["numbers"] == {"provider": name, "load_balancer": "k8s-api", "drain_method": None,
                                   "drain": None, "failover": None}
    assert "refuses drain: true before any write" in found[0]["message"] and repr(name) in found[0]["message"]
    assert "without drain" in found[0]["action"]
    assert (row["drain_method"], row["failover"]) == (None, None)


def test_a_load_balancer_not_read_is_unknown_never_fine():
    row, found, status = plan.judge_load_balancer(plan.Unknown("HTTP 403: forbidden"))
    assert (row, status, codes(found)) == (None, plan.UNKNOWN, ["load_balancer_unknown"])
    assert found[0]["severity"] == plan.WARNING and "HTTP 403" in found[0]["message"]
    _row, found, _status = plan.judge_load_balancer(plan.Unknown("no OpenStack connection"), asked=False)
    assert found[0]["severity"] == plan.INFO


def test_the_monitor_on_ovn_reads_as_ovns_service_monitor_and_asks_for_a_tcp_one():
    _data, found, _status = plan.judge_monitor(window_check("pool-1", MONITOR, 30), provider="ovn")
    assert codes(found) == ["monitor_window_long"] and found[0]["numbers"]["window"] == 60
    assert "OVN's own service monitor" in found[0]["message"] and "failure_count 6" in found[0]["message"]
    _data, found, _status = plan.judge_monitor(window_check("pool-1", None, 30), provider="ovn")
    assert codes(found) == ["monitor_missing"] and "TCP" in found[0]["action"] and "HTTPS" not in found[0]["action"]
    _data, found, _status = plan.judge_monitor(window_check("pool-1", None, 30), provider="amphora")
    assert "HTTPS GET /readyz" in found[0]["action"] and "OVN" not in found[0]["message"]


def test_the_provider_codes_may_block():
    assert plan.unknown_codes(["lb_provider", "lb_provider_drain_refused", "load_balancer_unknown"]) == []
    assert "load_balancer" in plan.VIEWS


def test_a_clusterclass_cluster_is_a_finding_naming_its_class_and_an_upgrade_under_way_a_warning():
    cluster = {"metadata": {"name": "c1", "namespace": "team-a"},
               "spec": {"topology": {"classRef": {"name": "in-memory"}, "version": "v1.34.1",
                                     "controlPlane": {"replicas": 3}}}}
    control_plane = {"kind": "KubeadmControlPlane", "spec": {"version": "v1.34.0", "replicas": 3}}
    data, found = plan.judge_topology(cluster, control_plane)
    assert data["managed"] and data["class"] == "in-memory" and data["upgrading"]
    assert [(f["code"], f["severity"]) for f in found] == [("topology_managed", plan.INFO),
                                                           ("topology_upgrading", plan.WARNING)]
    assert "ClusterClass team-a/in-memory" in found[0]["message"]
    assert "spec.topology.controlPlane.rollout.after" in found[0]["action"]
    settled = dict(control_plane, spec={"version": "v1.34.1"})
    assert [f["code"] for f in plan.judge_topology(cluster, settled)[1]] == ["topology_managed"]
    assert plan.judge_topology(cluster, plan.Unknown("refused"))[0]["upgrading"] is False
    plain = {"metadata": {"name": "c1", "namespace": "a"}, "spec": {}}
    assert plan.judge_topology(plain, control_plane) == (plan.judge_topology(plain, None)[0], [])
    assert not plan.unknown_codes(["topology_managed", "topology_upgrading"])
