# -*- coding: utf-8 -*-
"""The capi_clusters inventory: Cluster API objects -> hosts, variables and groups (no cloud)."""

import copy

import pytest

from ansible.errors import AnsibleParserError
from ansible.inventory.data import InventoryData
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

from ansible_collections.flightcontrol.openstack.plugins.inventory import capi_clusters
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.hostnames import HostnameError
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi_clusters.hosts import (
    default_groups,
    fleet_hosts,
    index_objects,
    related_kinds,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi_clusters.variables import host_variables
from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils import capi_samples as s

SAME_IN_BOTH = ("capi_cluster_name", "capi_cluster_namespace", "capi_phase", "capi_provisioned", "capi_ready",
                "capi_paused", "capi_deleting", "capi_control_plane_endpoint", "capi_pod_cidrs",
                "capi_control_plane_replicas", "capi_control_plane_ready_replicas", "capi_kubernetes_version",
                "capi_api_load_balancer", "capi_api_pool", "capi_kubeconfig_secret", "capi_control_plane",
                "capi_infrastructure")


def cluster(version, name="c1", namespace="default", labels=None, **kwargs):
    obj = s.cluster(version, name=name, namespace=namespace, **kwargs)
    obj["spec"]["clusterNetwork"] = {"pods": {"cidrBlocks": ["192.168.0.0/16"]},
                                     "services": {"cidrBlocks": ["10.96.0.0/12"]}}
    obj["metadata"]["labels"].update(labels or {})
    return obj


def kcp(version, name="c1", namespace="default", replicas=3, ready=3):
    status = {"replicas": replicas, "readyReplicas": ready}
    if version == "v1beta2":
        status["initialization"] = {"controlPlaneInitialized": True}
    else:
        status.update(initialized=True, updatedReplicas=replicas)
    return {"apiVersion": "controlplane.cluster.x-k8s.io/%s" % version, "kind": "KubeadmControlPlane",
            "metadata": {"name": name + "-cp", "namespace": namespace},
            "spec": {"replicas": replicas, "version": "v1.31.2"}, "status": status}


def capo_cluster(name="c1", namespace="default"):
    """An OpenStackCluster as CAPO v0.12 writes it once the cluster is up."""
    obj = s.openstack_cluster(name)
    obj["metadata"]["namespace"] = namespace
    obj["status"].update({
        "network": {"id": "net-1", "name": "k8s-clusterapi-cluster-%s-%s" % (namespace, name), "tags": ["a"],
                    "subnets": [{"id": "sub-1", "name": "k8s-clusterapi-cluster-%s-%s" % (namespace, name),
                                 "cidr": "10.6.0.0/24", "tags": []}]},
        "externalNetwork": {"id": "ext-1", "name": "public"},
        "router": {"id": "rtr-1", "name": "k8s-clusterapi-cluster-%s-%s" % (namespace, name),
                   "ips": ["172.24.4.7"]},
        "controlPlaneSecurityGroup": {"id": "sg-cp", "name": "k8s-cluster-%s-%s-secgroup-controlplane" % (
            namespace, name)},
        "workerSecurityGroup": {"id": "sg-w", "name": "k8s-cluster-%s-%s-secgroup-worker" % (namespace, name)},
        "bastion": {"id": "srv-b", "name": "bastion", "state": "ACTIVE"},
    })
    return obj


def related(*objects):
    return index_objects([(o["kind"], [o]) for o in objects])


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
def test_the_variables_of_a_capo_cluster(version):
    variables = host_variables(cluster(version), kcp(version), capo_cluster())
    assert variables["capi_contract_version"] == version
    assert variables["capi_provisioned"] is True and variables["capi_ready"] is True
    assert variables["capi_paused"] is False and variables["capi_phase"] == "Provisioned"
    assert variables["capi_control_plane_replicas"] == 3 and variables["capi_control_plane_ready_replicas"] == 3
    assert variables["capi_api_load_balancer"] == {
        "id": "lb-1", "name": "k8s-clusterapi-cluster-default-c1", "ip": "203.0.113.10", "internal_ip": "10.0.0.5",
        "allowed_cidrs": ["10.0.0.0/24"]}
    assert variables["capi_api_pool"] == "k8s-clusterapi-cluster-default-c1-6443"
    assert variables["capi_network"] == {"id": "net-1", "name": "k8s-clusterapi-cluster-default-c1"}
    assert variables["capi_subnets"] == [{"id": "sub-1", "name": "k8s-clusterapi-cluster-default-c1",
                                          "cidr": "10.6.0.0/24"}]
    assert variables["capi_router"] == {"id": "rtr-1", "name": "k8s-clusterapi-cluster-default-c1",
                                        "ips": ["172.24.4.7"]}
    assert variables["capi_external_network"] == {"id": "ext-1", "name": "public"}
    assert variables["capi_security_groups"] == {
        "control_plane": {"id": "sg-cp", "name": "k8s-cluster-default-c1-secgroup-controlplane"},
        "worker": {"id": "sg-w", "name": "k8s-cluster-default-c1-secgroup-worker"},
        "bastion": None}
    assert variables["capi_pod_cidrs"] == ["192.168.0.0/16"]
    assert variables["capi_kubeconfig_secret"] == {"namespace": "default", "name": "c1-kubeconfig", "key": "value"}
    assert variables["capi_control_plane"] == {"kind": "KubeadmControlPlane", "name": "c1-cp", "found": True}
    assert variables["capi_infrastructure_provisioned"] is True


def test_both_contracts_give_the_same_variables():
    old = host_variables(cluster("v1beta1"), kcp("v1beta1"), capo_cluster())
    new = host_variables(cluster("v1beta2"), kcp("v1beta2"), capo_cluster())
    assert dict((k, old[k]) for k in SAME_IN_BOTH) == dict((k, new[k]) for k in SAME_IN_BOTH)
    assert sorted(old) == sorted(new)


def test_a_cluster_not_yet_provisioned_and_paused():
    obj = cluster("v1beta2", provisioned=False, ready=False, paused=True)
    variables = host_variables(obj, kcp("v1beta2", ready=1), None)
    assert variables["capi_provisioned"] is False and variables["capi_ready"] is False
    assert variables["capi_paused"] is True and variables["capi_phase"] == "Provisioning"
    assert variables["capi_control_plane_ready_replicas"] == 1
    assert variables["capi_infrastructure"] == {"kind": "OpenStackCluster", "name": "c1", "found": False}
    for name in ("capi_api_load_balancer", "capi_api_pool", "capi_network", "capi_router",
                 "capi_infrastructure_provisioned"):
        assert variables[name] is None, name
    assert variables["capi_subnets"] == [] and variables["capi_security_groups"]["worker"] is None


def test_capo_v1beta2_names_the_load_balancer_apiServerManagedLoadBalancer():
    infra = capo_cluster()
    infra["apiVersion"] = "infrastructure.cluster.x-k8s.io/v1beta2"
    status = infra["status"]
    status["apiServerManagedLoadBalancer"] = status.pop("apiServerLoadBalancer")
    del status["ready"]
    status["initialization"] = {"provisioned": True}
    variables = host_variables(cluster("v1beta2"), kcp("v1beta2"), infra)
    assert variables["capi_api_load_balancer"]["id"] == "lb-1"
    assert variables["capi_api_pool"] == "k8s-clusterapi-cluster-default-c1-6443"
    assert variables["capi_infrastructure_provisioned"] is True


def test_the_pool_is_named_after_capos_api_server_port_in_either_version():
    old = capo_cluster()
    old["spec"] = {"controlPlaneEndpoint": {"host": "203.0.113.10", "port": 443}}
    new = capo_cluster()
    new["apiVersion"] = "infrastructure.cluster.x-k8s.io/v1beta2"
    new["spec"] = {"apiServer": {"port": 8443, "managedLoadBalancer": {"enabled": True}}}
    new["status"]["apiServerManagedLoadBalancer"] = new["status"].pop("apiServerLoadBalancer")
    assert host_variables(cluster("v1beta2"), None, old)["capi_api_pool"] == "k8s-clusterapi-cluster-default-c1-443"
    assert host_variables(cluster("v1beta2"), None, new)["capi_api_pool"] == "k8s-clusterapi-cluster-default-c1-8443"


def test_an_openstack_cluster_naming_two_load_balancers_gives_none_and_says_why():
    infra = capo_cluster()
    infra["status"]["apiServerManagedLoadBalancer"] = {"id": "lb-2", "name": "other-kubeapi"}
    variables = host_variables(cluster("v1beta2"), None, infra)
    assert variables["capi_api_load_balancer"] is None and variables["capi_api_pool"] is None
    assert "carries both" in variables["capi_api_load_balancer_error"]
    assert host_variables(cluster("v1beta2"), None, capo_cluster())["capi_api_load_balancer_error"] is None


def test_groups_by_namespace_phase_and_labels_but_not_capis_own():
    variables = host_variables(cluster("v1beta2", namespace="team-b", labels={"env": "prod", "app.kubernetes.io/tier":
                                                                              "Gold-1"}), None, None)
    assert default_groups(variables) == ["capi_namespace_team_b", "capi_phase_provisioned",
                                         "capi_label_app_kubernetes_io_tier_gold_1", "capi_label_env_prod"]


def test_hosts_are_named_by_namespace_and_name_and_join_their_own_objects():
    clusters = [cluster("v1beta2", name="c1", namespace="b"), cluster("v1beta1", name="c1", namespace="a")]
    objects = related(kcp("v1beta2", namespace="b", replicas=5, ready=5), capo_cluster(namespace="b"),
                      kcp("v1beta1", namespace="a"), capo_cluster(namespace="a"))
    hosts = fleet_hosts(clusters, objects)
    assert [h["name"] for h in hosts] == ["a/c1", "b/c1"]
    assert [h["vars"]["capi_control_plane_replicas"] for h in hosts] == [3, 5]
    assert hosts[1]["vars"]["capi_network"]["name"] == "k8s-clusterapi-cluster-b-c1"
    assert related_kinds(clusters) == [("controlplane.cluster.x-k8s.io", "KubeadmControlPlane"),
                                       ("infrastructure.cluster.x-k8s.io", "OpenStackCluster")]


def test_a_hostname_format_that_gives_two_clusters_one_name_is_refused():
    clusters = [cluster("v1beta2", name="c1", namespace="a"), cluster("v1beta2", name="c1", namespace="b")]
    with pytest.raises(HostnameError, match="two clusters the host name 'c1' .*a/c1 and b/c1"):
        fleet_hosts(clusters, {}, "{name}")
    assert [h["name"] for h in fleet_hosts(clusters, {}, "{name}.{namespace}")] == ["c1.a", "c1.b"]
    for bad in ("{cluster}", "fleet", "{name"):
        with pytest.raises(HostnameError, match="hostname_format"):
            fleet_hosts(clusters, {}, bad)


# -- the plugin: its inventory, constructed features, one list per kind -------------------------------------


class FakeCustom:
    def __init__(self, objects):
        self.objects = objects  # plural -> items
        self.calls = []

    def list_cluster_custom_object(self, group, version, plural, label_selector=None):
        self.calls.append((plural, None, label_selector))
        return {"items": copy.deepcopy(self.objects.get(plural, []))}

    def list_namespaced_custom_object(self, group, version, namespace, plural, label_selector=None):
        self.calls.append((plural, namespace, label_selector))
        return {"items": [copy.deepcopy(o) for o in self.objects.get(plural, [])
                          if o["metadata"]["namespace"] == namespace]}

    def get_api_resources(self, group, version):
        kinds = {"controlplane.cluster.x-k8s.io": [("KubeadmControlPlane", "kubeadmcontrolplanes")],
                 "infrastructure.cluster.x-k8s.io": [("OpenStackCluster", "openstackclusters")]}.get(group, [])
        return {"resources": [{"name": plural, "kind": kind, "namespaced": True, "verbs": ["get", "list"]}
                              for kind, plural in kinds]}


class FakeApis:
    def __init__(self, served):
        self.served = served

    def get_api_versions(self):
        return {"groups": [{"name": group, "versions": [{"version": v} for v in versions],
                            "preferredVersion": {"version": versions[0]}} for group, versions in self.served.items()]}


class FakeApiClient:
    @staticmethod
    def sanitize_for_serialization(value):
        return value


class FakeKube:
    served = {"cluster.x-k8s.io": ["v1beta2", "v1beta1"], "controlplane.cluster.x-k8s.io": ["v1beta2", "v1beta1"],
              "infrastructure.cluster.x-k8s.io": ["v1beta1"]}
    objects = {}
    made = []

    def __init__(self, settings, clock=None, request_timeout=None):
        self.settings = settings
        self.custom = FakeCustom(self.objects)
        self.apis = FakeApis(self.served)
        self.api_client = FakeApiClient()
        self.api_calls = 0
        FakeKube.made.append(self)

    def call(self, func, what, deadline, kind=None):
        self.api_calls += 1
        return func()


def fleet_objects():
    return {
        "clusters": [cluster("v1beta2", name="c1", namespace="a", labels={"env": "prod"}),
                     cluster("v1beta2", name="c2", namespace="b", provisioned=False, ready=False)],
        "kubeadmcontrolplanes": [kcp("v1beta2", name="c1", namespace="a"), kcp("v1beta2", name="c2", namespace="b")],
        "openstackclusters": [capo_cluster(name="c1", namespace="a"), capo_cluster(name="c2", namespace="b")],
    }


@pytest.fixture
def plugin(monkeypatch):
    monkeypatch.setattr(capi_clusters, "KubernetesClient", FakeKube)
    monkeypatch.setattr(FakeKube, "objects", fleet_objects())
    monkeypatch.setattr(FakeKube, "made", [])
    inventory_plugin = capi_clusters.InventoryModule()
    inventory_plugin.inventory = InventoryData()
    options = dict(namespaces=[], label_selector=None, api_version=None, hostname_format="{namespace}/{name}",
                   local_connection=True, timeout=60, strict=False, compose={}, groups={}, keyed_groups=[],
                   use_extra_vars=False, leading_separator=True, cache=False)
    inventory_plugin.options = options
    inventory_plugin.get_option = lambda name, hostvars=None: options.get(name)
    return inventory_plugin


def test_the_plugin_makes_hosts_and_groups_from_one_list_per_kind(plugin):
    plugin.populate(plugin.read_hosts())
    inventory = plugin.inventory
    assert sorted(inventory.hosts) == ["a/c1", "b/c2"]
    assert [c[0:2] for c in FakeKube.made[0].custom.calls] == [
        ("clusters", None), ("kubeadmcontrolplanes", None), ("openstackclusters", None)]
    assert sorted(h.name for h in inventory.groups["capi_namespace_a"].get_hosts()) == ["a/c1"]
    assert sorted(h.name for h in inventory.groups["capi_phase_provisioned"].get_hosts()) == ["a/c1"]
    assert sorted(h.name for h in inventory.groups["capi_phase_provisioning"].get_hosts()) == ["b/c2"]
    assert sorted(h.name for h in inventory.groups["capi_label_env_prod"].get_hosts()) == ["a/c1"]
    host_vars = inventory.get_host("b/c2").vars
    assert host_vars["capi_ready"] is False and host_vars["capi_api_pool"] == "k8s-clusterapi-cluster-default-c2-6443"
    assert host_vars["ansible_connection"] == "local"
    assert host_vars["ansible_python_interpreter"] == "{{ ansible_playbook_python }}"


def test_namespaces_mean_one_list_per_namespace_and_kind_and_the_selector_applies_to_clusters(plugin):
    plugin.options.update(namespaces=["a", "b"], label_selector="env=prod")
    plugin.read_hosts()
    calls = FakeKube.made[0].custom.calls
    assert calls == [("clusters", "a", "env=prod"), ("clusters", "b", "env=prod"),
                     ("kubeadmcontrolplanes", "a", None), ("kubeadmcontrolplanes", "b", None),
                     ("openstackclusters", "a", None), ("openstackclusters", "b", None)]


def test_a_namespace_that_can_name_nothing_is_refused_before_any_request(plugin):
    plugin.options.update(namespaces=["Team_A"])
    with pytest.raises(AnsibleParserError, match="namespaces 'Team_A' is no valid Kubernetes name"):
        plugin.read_hosts()
    assert FakeKube.made == []


def test_an_api_without_cluster_api_is_a_clear_error(plugin, monkeypatch):
    monkeypatch.setattr(FakeKube, "served", {"apps": ["v1"]})
    with pytest.raises(AnsibleParserError, match="does not serve cluster.x-k8s.io: Cluster API is not installed"):
        plugin.read_hosts()


def test_constructed_groups_compose_and_keyed_groups(plugin):
    trust = capi_clusters.trust_as_template  # what the inventory file says is trusted, as Ansible reads it
    plugin.options.update(
        groups={"not_ready": trust("not capi_ready")},
        compose={"lb_address": trust("capi_api_load_balancer.ip"), "ansible_connection": trust("'ssh'")},
        keyed_groups=[{"key": trust("capi_kubernetes_version"), "prefix": "k8s"}], strict=True)
    plugin.templar = Templar(loader=DataLoader())
    plugin.populate(plugin.read_hosts())
    inventory = plugin.inventory
    assert [h.name for h in inventory.groups["not_ready"].get_hosts()] == ["b/c2"]
    assert sorted(h.name for h in inventory.groups["k8s_v1_31_2"].get_hosts()) == ["a/c1", "b/c2"]
    assert inventory.get_host("a/c1").vars["lb_address"] == "203.0.113.10"
    assert inventory.get_host("a/c1").vars["ansible_connection"] == "ssh"


def test_a_template_in_a_clusters_labels_stays_text(plugin):
    FakeKube.objects["clusters"][0]["metadata"]["labels"]["note"] = "{{ 6 * 7 }}"
    plugin.options.update(compose={"note": capi_clusters.trust_as_template("capi_labels.note")})
    plugin.templar = Templar(loader=DataLoader())
    plugin.populate(plugin.read_hosts())
    assert plugin.inventory.get_host("a/c1").vars["note"] == "{{ 6 * 7 }}"
