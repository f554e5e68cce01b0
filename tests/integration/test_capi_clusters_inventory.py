# -*- coding: utf-8 -*-
"""The capi_clusters inventory plugin through a real ``ansible-inventory`` against minicloud's Kubernetes API:
three clusters (written as v1beta1 and v1beta2) in two namespaces, their hosts, variables and groups, one list
request per kind, caching, and clear errors."""

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import kubernetes
import pytest
import yaml

ANSIBLE_INVENTORY = str(Path(sys.executable).parent / "ansible-inventory")
PLUGIN = "flightcontrol.openstack.capi_clusters"
KINDS = ("clusters", "kubeadmcontrolplanes", "openstackclusters")


@pytest.fixture(scope="module")
def fleet(minicloud):
    """Three seeded clusters: two in one namespace (one written as v1beta1, with three control-plane nodes), one
    in another, the first labelled env=prod; as ``{host name: (namespace, name)}``. Seeded once for the module
    (the tests only read them; a module-scoped fixture is set up before each test's ``cloud`` notes the clusters
    to keep) and removed at its end."""
    cloud = minicloud
    suffix = uuid.uuid4().hex[:6]
    first, second = "fleet-a-%s" % suffix, "fleet-b-%s" % suffix
    seeded = {}
    for name, namespace, version, control_plane in (("alpha", first, "v1beta1", 3), ("beta", first, "v1beta2", 1),
                                                    ("gamma", second, "v1beta2", 1)):
        cloud.json("capi", "cluster", "create", name, "--namespace", namespace, "--api-version", version,
                   "--control-plane", control_plane)
        seeded["%s/%s" % (namespace, name)] = (namespace, name)
    api = kubernetes.client.CustomObjectsApi(
        kubernetes.config.new_client_from_config(str(cloud.state_dir / "kubeconfig")))
    api.patch_namespaced_custom_object("cluster.x-k8s.io", "v1beta2", first, "clusters", "alpha",
                                       {"metadata": {"labels": {"env": "prod"}}})
    yield seeded
    for namespace, name in seeded.values():
        cloud.api.delete_capi_cluster(name, namespace)


def inventory(cloud, collections_path, tmp_path, name="fleet", **options):
    """``ansible-inventory -i <tmp>/<name>.capi_clusters.yml --list``: (its exit status, the inventory, stderr)."""
    config = dict(plugin=PLUGIN, kubeconfig=str(cloud.state_dir / "kubeconfig"))
    config.update(options)
    source = tmp_path / ("%s.capi_clusters.yml" % name)
    source.write_text(yaml.safe_dump(config))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(collections_path), ANSIBLE_INVENTORY_UNPARSED_FAILED="true",
               ANSIBLE_NOCOLOR="1")
    proc = subprocess.run([ANSIBLE_INVENTORY, "-i", str(source), "--list"], capture_output=True, text=True, env=env,
                          timeout=120, check=False)
    return proc.returncode, (json.loads(proc.stdout) if proc.returncode == 0 else None), proc.stderr


def plain(value):
    """The value as the playbook sees it (``ansible-inventory`` marks strings from a plugin as unsafe)."""
    if isinstance(value, dict):
        if set(value) == {"__ansible_unsafe"}:
            return value["__ansible_unsafe"]
        return dict((k, plain(v)) for k, v in value.items())
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def members(data, group):
    return sorted((data.get(group) or {}).get("hosts") or [])


def list_requests(cloud):
    """Kubernetes GET requests by path since the last reset."""
    return cloud.requests(service="kubernetes").get("requests", {}).get("kubernetes", {}).get("GET", {})


def test_one_host_per_cluster_with_its_variables_and_groups_from_one_list_per_kind(
        cloud, fleet, collections_path, tmp_path):
    cloud.requests(reset=True)
    rc, data, stderr = inventory(cloud, collections_path, tmp_path)
    assert rc == 0, stderr
    gets = list_requests(cloud)
    hostvars = plain(data["_meta"]["hostvars"])
    assert set(fleet) <= set(hostvars)
    for kind in KINDS:  # one cluster-wide list per kind, and no read of a single object
        assert [n for p, n in gets.items() if p.endswith("/" + kind)] == [1], gets
    assert not [p for p in gets if "/namespaces/" in p], gets
    api = kubernetes.client.CustomObjectsApi(
        kubernetes.config.new_client_from_config(str(cloud.state_dir / "kubeconfig")))
    for host, (namespace, name) in fleet.items():
        variables = hostvars[host]
        infra = api.get_namespaced_custom_object("infrastructure.cluster.x-k8s.io", "v1beta1", namespace,
                                                 "openstackclusters", name)["status"]
        lb = infra["apiServerLoadBalancer"]
        assert (variables["capi_cluster_name"], variables["capi_cluster_namespace"]) == (name, namespace)
        assert variables["capi_contract_version"] == "v1beta2"
        assert variables["capi_provisioned"] is True and variables["capi_ready"] is True
        assert variables["capi_paused"] is False and variables["capi_phase"] == "Provisioned"
        assert variables["capi_api_load_balancer"]["id"] == lb["id"] and variables["capi_api_load_balancer"]["ip"]
        assert variables["capi_api_pool"] == lb["name"] + "-6443"
        assert variables["capi_network"] == {"id": infra["network"]["id"], "name": infra["network"]["name"]}
        assert variables["capi_pod_cidrs"] == ["10.244.0.0/16"]
        assert variables["capi_kubeconfig_secret"] == {"namespace": namespace, "name": name + "-kubeconfig",
                                                       "key": "value"}
        assert variables["capi_control_plane_replicas"] == (3 if name == "alpha" else 1)
        assert variables["ansible_connection"] == "local"
        assert "data" not in json.dumps(variables["capi_kubeconfig_secret"])  # where it is, never what it holds
        assert host in members(data, "capi_namespace_" + namespace.replace("-", "_"))
        assert host in members(data, "capi_phase_provisioned")
    first = next(iter(fleet.values()))[0]
    assert members(data, "capi_label_env_prod") == ["%s/alpha" % first]


def test_a_cluster_seeded_with_openstack_gives_its_router_subnets_and_security_groups(
        cloud, collections_path, tmp_path):
    """What CAPO reports on the OpenStackCluster (here real Neutron objects) becomes the host's variables; a
    cluster without an API load balancer has none."""
    namespace = "fleet-os-%s" % uuid.uuid4().hex[:6]
    created = cloud.json("capi", "cluster", "create", "delta", "--namespace", namespace, "--openstack",
                         "--no-load-balancer")["openstack"]
    try:
        rc, data, stderr = inventory(cloud, collections_path, tmp_path, namespaces=[namespace])
        assert rc == 0, stderr
        variables = plain(data["_meta"]["hostvars"])["%s/delta" % namespace]
        conn = cloud.sdk()
        router = conn.network.get_router(variables["capi_router"]["id"])
        assert variables["capi_router"] == {"id": router.id, "name": router.name, "ips": []}
        assert router.name == "k8s-clusterapi-cluster-%s-delta" % namespace
        [subnet] = variables["capi_subnets"]
        assert conn.network.get_subnet(subnet["id"]).cidr == subnet["cidr"] == "10.6.0.0/24"
        assert subnet["id"] == created["network"]["subnets"][0]["id"]
        groups = variables["capi_security_groups"]
        assert groups["bastion"] is None
        for role, suffix in (("control_plane", "controlplane"), ("worker", "worker")):
            assert conn.network.get_security_group(groups[role]["id"]).name == groups[role]["name"] == (
                "k8s-cluster-%s-delta-secgroup-%s" % (namespace, suffix))
        assert variables["capi_api_load_balancer"] is None and variables["capi_api_pool"] is None
    finally:
        cloud.cli("capi", "cluster", "delete", "delta", "--namespace", namespace, "--openstack")


def test_namespaces_and_a_label_selector(cloud, fleet, collections_path, tmp_path):
    namespaces = sorted(set(namespace for namespace, _name in fleet.values()))
    cloud.requests(reset=True)
    rc, data, stderr = inventory(cloud, collections_path, tmp_path, namespaces=namespaces, api_version="v1beta1")
    assert rc == 0, stderr
    gets = list_requests(cloud)
    for kind in KINDS:  # one list per namespace and kind
        lists = dict((p, n) for p, n in gets.items() if p.endswith("/" + kind))
        assert sorted(p.split("/namespaces/")[1].split("/")[0] for p in lists) == namespaces, gets
        assert set(lists.values()) == {1}, gets
    hostvars = plain(data["_meta"]["hostvars"])
    assert sorted(hostvars) == sorted(fleet)
    assert set(v["capi_contract_version"] for v in hostvars.values()) == {"v1beta1"}
    assert all(v["capi_provisioned"] is True and v["capi_ready"] is True for v in hostvars.values())

    rc, data, stderr = inventory(cloud, collections_path, tmp_path, name="prod", namespaces=namespaces,
                                 label_selector="env=prod", hostname_format="{name}",
                                 groups={"prod_ready": "capi_ready and capi_labels.env == 'prod'"})
    assert rc == 0, stderr
    assert sorted(data["_meta"]["hostvars"]) == ["alpha"]
    assert members(data, "prod_ready") == ["alpha"]


def test_a_namespace_that_does_not_exist_is_named_in_a_warning(cloud, fleet, collections_path, tmp_path):
    namespaces = sorted(set(namespace for namespace, _name in fleet.values()))
    missing = "fleet-nowhere-%s" % uuid.uuid4().hex[:6]
    rc, data, stderr = inventory(cloud, collections_path, tmp_path, namespaces=[namespaces[0], missing])
    assert rc == 0, stderr
    assert sorted(data["_meta"]["hostvars"]) == sorted(h for h, (ns, _n) in fleet.items() if ns == namespaces[0])
    assert "namespace %s does not exist" % missing in " ".join(stderr.split()), stderr
    # a namespace that exists but holds no Cluster of the selection is no warning
    rc, data, stderr = inventory(cloud, collections_path, tmp_path, name="quiet", namespaces=namespaces,
                                 label_selector="env=prod")
    assert rc == 0 and "does not exist" not in stderr, stderr


def test_a_cached_inventory_asks_the_api_nothing(cloud, fleet, collections_path, tmp_path):
    options = dict(cache=True, cache_plugin="ansible.builtin.jsonfile", cache_connection=str(tmp_path / "cache"))
    rc, first, stderr = inventory(cloud, collections_path, tmp_path, **options)
    assert rc == 0, stderr
    cloud.requests(reset=True)
    rc, second, stderr = inventory(cloud, collections_path, tmp_path, **options)
    assert rc == 0, stderr
    assert list_requests(cloud) == {}
    assert plain(second["_meta"]["hostvars"]) == plain(first["_meta"]["hostvars"])


def test_refused_credentials_are_a_clear_error(cloud, collections_path, tmp_path):
    kubeconfig = yaml.safe_load((cloud.state_dir / "kubeconfig").read_text())
    for user in kubeconfig["users"]:
        user["user"] = {"token": "not-the-token"}
    bad = tmp_path / "kubeconfig"
    bad.write_text(yaml.safe_dump(kubeconfig))
    rc, _data, stderr = inventory(cloud, collections_path, tmp_path, kubeconfig=str(bad))
    assert rc != 0
    assert "%s: Kubernetes API error: HTTP 401" % PLUGIN in stderr
    assert "the credentials were refused" in stderr
