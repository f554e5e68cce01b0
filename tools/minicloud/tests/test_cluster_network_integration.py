"""Clusters seeded with OpenStack resources in a real minicloud: the OpenStackCluster's status names real Neutron
objects (router, subnet, both managed security groups), the pod network is healthy (pod CIDR rules, groups and
address pairs on every server's port, one route per Node), each drift kind leaves exactly what it says, a fleet
is seeded round-robin, and deleting leaves nothing behind."""

from __future__ import annotations

import importlib.util

import pytest

REQUIRED = ("keystone", "neutron", "nova", "octavia", "octavia_lib", "openstack")
if any(importlib.util.find_spec(name) is None for name in REQUIRED):
    pytest.skip("the OpenStack packages are not installed", allow_module_level=True)

from kubernetes import client  # noqa: E402

from minicloud.seeding import drift  # noqa: E402

pytestmark = pytest.mark.integration

NAMESPACE = "capo-net"
POD_NETWORK = "10.244.0.0/16"
INFRA = ("infrastructure.cluster.x-k8s.io", "v1beta1")


def openstack_cluster(cloud, name: str, namespace: str = NAMESPACE) -> dict:
    api = client.CustomObjectsApi(cloud.kube_client())
    return api.get_namespaced_custom_object(*INFRA, namespace, "openstackclusters", name)


def pod_rules(conn, group_id: str) -> set[str]:
    """Protocols of the group's ingress rules from the pod network."""
    return {r.protocol for r in conn.network.security_group_rules(security_group_id=group_id)
            if r.direction == "ingress" and r.remote_ip_prefix == POD_NETWORK}


def owned_by(conn, prefix: str, namespace: str) -> dict:
    """Names of what is left of clusters ``prefix*`` in ``namespace``, by kind."""
    resource = f"{namespace}-{prefix}"
    return {
        "networks": [n.name for n in conn.network.networks() if resource in n.name],
        "routers": [r.name for r in conn.network.routers() if resource in r.name],
        "security_groups": [g.name for g in conn.network.security_groups() if resource in g.name],
        "servers": [s.name for s in conn.compute.servers() if s.name.startswith(prefix)],
        "load_balancers": [lb.name for lb in conn.load_balancer.load_balancers() if resource in lb.name],
    }


def remove(cloud, name: str) -> None:
    """Clean-up after a failed test (the last test deletes both clusters itself and checks what is left)."""
    if any(c["name"] == name for c in cloud.list_capi_clusters(NAMESPACE)):
        cloud.delete_capi_cluster(name, namespace=NAMESPACE)
    cloud.delete_capi_openstack(name, namespace=NAMESPACE)


@pytest.fixture(scope="module")
def healthy(cloud):
    """``net-a``: one control-plane Machine and two workers, with its API load balancer."""
    yield cloud.create_capi_cluster("net-a", control_plane=1, workers=2, namespace=NAMESPACE, openstack=True)
    remove(cloud, "net-a")


@pytest.fixture(scope="module")
def drifted(cloud):
    """``net-d``: every drift kind, no load balancer."""
    yield cloud.create_capi_cluster("net-d", control_plane=1, workers=1, namespace=NAMESPACE, openstack=True,
                                    load_balancer=False, drift=list(drift.KINDS))
    remove(cloud, "net-d")


def test_status_names_the_real_router_subnet_and_groups(cloud, healthy):
    conn = cloud.connect()
    status = openstack_cluster(cloud, "net-a")["status"]
    resource = f"{NAMESPACE}-net-a"

    router = conn.network.get_router(status["router"]["id"])
    assert router.name == status["router"]["name"] == f"k8s-clusterapi-cluster-{resource}"
    assert status["router"]["ips"] == []  # no external network on this cloud: no gateway
    [subnet] = status["network"]["subnets"]
    assert conn.network.get_subnet(subnet["id"]).cidr == subnet["cidr"]
    assert conn.network.get_subnet(subnet["id"]).network_id == status["network"]["id"]
    interfaces = list(conn.network.ports(device_id=router.id, device_owner="network:router_interface"))
    assert [ip["subnet_id"] for port in interfaces for ip in port.fixed_ips] == [subnet["id"]]
    for field, role in (("controlPlaneSecurityGroup", "controlplane"), ("workerSecurityGroup", "worker")):
        group = conn.network.get_security_group(status[field]["id"])
        assert group.name == status[field]["name"] == f"k8s-cluster-{resource}-secgroup-{role}"
    # the pod CIDR rules are in the worker group, the one group on every node
    assert pod_rules(conn, status["workerSecurityGroup"]["id"]) == {"tcp", "udp", "icmp"}
    assert pod_rules(conn, status["controlPlaneSecurityGroup"]["id"]) == set()
    lb = status["apiServerLoadBalancer"]
    assert conn.load_balancer.get_load_balancer(lb["id"]).provisioning_status == "ACTIVE"


def test_every_node_has_a_server_its_route_and_a_port_in_the_groups(cloud, healthy):
    conn = cloud.connect()
    status = openstack_cluster(cloud, "net-a")["status"]
    nodes = healthy["nodes"]
    assert len(nodes) == 3
    worker, control_plane = status["workerSecurityGroup"]["id"], status["controlPlaneSecurityGroup"]["id"]
    for node in nodes:
        server = conn.compute.get_server(node["providerID"].removeprefix("openstack:///"))
        assert server.name == node["name"] and server.status == "ACTIVE"
        [port] = conn.network.ports(device_id=server.id)
        assert port.fixed_ips[0]["ip_address"] == node["internalIP"]
        expected = {worker, control_plane} if "control-plane" in node["name"] else {worker}
        assert set(port.security_group_ids) == expected
        assert [pair["ip_address"] for pair in port.allowed_address_pairs] == [POD_NETWORK]
    routes = conn.network.get_router(status["router"]["id"]).routes
    assert sorted((r["destination"], r["nexthop"]) for r in routes) == sorted(
        (n["podCIDR"], n["internalIP"]) for n in nodes)


def test_each_drift_kind_leaves_what_it_says(cloud, drifted):
    conn = cloud.connect()
    found = drifted["openstack"]["drift"]
    assert sorted(found) == sorted(drift.KINDS)
    status = openstack_cluster(cloud, "net-d")["status"]
    worker = status["workerSecurityGroup"]["id"]
    nodes = {n["name"]: n for n in drifted["nodes"]}

    routes = conn.network.get_router(status["router"]["id"]).routes
    missing = found["missing-route"]
    assert sorted((r["destination"], r["nexthop"]) for r in routes) == sorted(
        (n["podCIDR"], n["internalIP"]) for name, n in nodes.items() if name != missing["node"])
    assert (missing["destination"], missing["nexthop"]) == (nodes[missing["node"]]["podCIDR"],
                                                            nodes[missing["node"]]["internalIP"])

    assert found["missing-rule"]["security_group"] == worker
    assert pod_rules(conn, worker) == {"tcp", "icmp"}
    with pytest.raises(Exception):
        conn.network.get_security_group_rule(found["missing-rule"]["rule"])

    lost = found["lost-group"]
    assert "-md-0-" in lost["machine"]  # a worker's port, the servers a check of the worker group looks at
    assert conn.network.get_port(lost["port"]).security_group_ids == lost["security_groups_left"] == []
    others = [p for n in nodes.values() for p in conn.network.ports(
        device_id=n["providerID"].removeprefix("openstack:///")) if p.id != lost["port"]]
    assert others and all(worker in p.security_group_ids for p in others)

    extra = found["unregistered-server"]
    server = conn.compute.get_server(extra["server"])
    assert server.name == extra["name"] and server.name.startswith("net-d-control-plane-")
    assert server.name not in nodes and f"openstack:///{server.id}" not in {n["providerID"] for n in nodes.values()}
    assert worker in conn.network.get_port(extra["port"]).security_group_ids

    # without a load balancer: no load balancer in the status, the endpoint is the first control-plane server
    assert "apiServerLoadBalancer" not in status
    cp_node = next(n for name, n in nodes.items() if "control-plane" in name)
    cluster = client.CustomObjectsApi(cloud.kube_client()).get_namespaced_custom_object(
        "cluster.x-k8s.io", "v1beta2", NAMESPACE, "clusters", "net-d")
    assert cluster["spec"]["controlPlaneEndpoint"]["host"] == cp_node["internalIP"]


def test_a_cluster_without_a_load_balancer_is_not_rolled_and_the_refusal_says_why(cloud, drifted):
    with pytest.raises(ValueError, match="'net-d' has no API load balancer: minicloud rolls only control planes"):
        cloud.capi_rollout("net-d", namespace=NAMESPACE)


def test_the_router_gets_its_gateway_on_the_external_network_public(cloud):
    from minicloud.core import clouds

    admin = clouds.connect(cloud.state, clouds.ADMIN_CLOUD)
    public = admin.network.create_network(name="public", is_router_external=True, provider_network_type="flat",
                                          provider_physical_network="public")
    try:
        admin.network.create_subnet(network_id=public.id, name="public", cidr="172.24.4.0/24", ip_version=4,
                                    is_dhcp_enabled=False)
        created = cloud.create_capi_cluster("net-g", namespace=NAMESPACE, openstack=True, load_balancer=False)
        status = openstack_cluster(cloud, "net-g")["status"]
        assert status["externalNetwork"] == {"id": public.id, "name": "public", "tags": []}
        router = cloud.connect().network.get_router(created["openstack"]["router"]["id"])
        gateway = [ip["ip_address"] for ip in router.external_gateway_info["external_fixed_ips"]]
        assert status["router"]["ips"] == gateway and gateway[0].startswith("172.24.4.")
    finally:
        remove(cloud, "net-g")
        admin.network.delete_network(public.id)


def test_drift_is_refused_without_openstack_and_for_unknown_kinds(cloud):
    with pytest.raises(ValueError, match="unknown drift kind"):
        cloud.create_capi_cluster("net-x", namespace=NAMESPACE, openstack=True, drift=["lost-route"])
    with pytest.raises(Exception, match="drift needs openstack"):
        cloud.create_capi_cluster("net-x", namespace=NAMESPACE, drift=["missing-route"])
    assert not any(c["name"] == "net-x" for c in cloud.list_capi_clusters(NAMESPACE))


def test_fleet_round_robin_drift_every_second_and_delete_leaves_nothing(cloud):
    namespaces = ["capo-fleet-a", "capo-fleet-b"]
    made = cloud.create_capi_fleet(2, prefix="nf", namespaces=namespaces, api_versions=["v1beta1", "v1beta2"],
                                   load_balancer=False, drift_every=2, drift=["missing-route"])
    clusters = made["clusters"]
    assert [(c["name"], c["namespace"], c["apiVersion"]) for c in clusters] == [
        ("nf-1", "capo-fleet-a", "cluster.x-k8s.io/v1beta1"), ("nf-2", "capo-fleet-b", "cluster.x-k8s.io/v1beta2")]
    assert [sorted(c["drift"]) for c in clusters] == [[], ["missing-route"]]
    assert made["seconds"] > 0 and made["requests"]["network"] > 0
    conn = cloud.connect()
    assert [len(owned_by(conn, "nf-", namespace)["routers"]) for namespace in namespaces] == [1, 1]

    assert sorted(cloud.delete_capi_fleet("nf")) == ["capo-fleet-a/nf-1", "capo-fleet-b/nf-2"]
    for namespace in namespaces:
        assert owned_by(conn, "nf-", namespace) == {kind: [] for kind in ("networks", "routers", "security_groups",
                                                                          "servers", "load_balancers")}
    assert not [c for c in cloud.list_capi_clusters() if c["name"].startswith("nf-")]


def test_delete_leaves_nothing(cloud, healthy, drifted):
    """The last test: both module clusters (one with a load balancer, one with an unregistered server) go."""
    conn = cloud.connect()
    removed_a = []
    for name, servers in (("net-a", 3), ("net-d", 3)):
        cloud.delete_capi_cluster(name, namespace=NAMESPACE)
        removed = cloud.delete_capi_openstack(name, namespace=NAMESPACE)
        removed_a = removed_a or removed
        assert sum(r.startswith("server/") for r in removed) == servers, removed
        assert sum(r.startswith("security_group/") for r in removed) == 2, removed
        assert {r.split("/")[0] for r in removed} >= {"network", "router", "security_group", "server"}
    assert any(r.startswith("loadbalancer/") for r in removed_a)
    assert cloud.delete_capi_openstack("net-a", namespace=NAMESPACE) == []  # nothing left to remove
    assert owned_by(conn, "net-", NAMESPACE) == {kind: [] for kind in ("networks", "routers", "security_groups",
                                                                       "servers", "load_balancers")}
    assert not [p for p in conn.network.ports() if p.name and p.name.startswith("net-")]
