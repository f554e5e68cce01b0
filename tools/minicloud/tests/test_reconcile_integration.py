"""A control-plane Machine deleted by hand on a cluster with real OpenStack resources: the Machine controller drains
it, CAPO removes its member and server, KCP replaces it and CAPO provisions the replacement end to end (server,
port, member ACTIVE in Octavia, Node, nodeRef), leaving Events on the way."""

from __future__ import annotations

import importlib.util
import time

import pytest

REQUIRED = ("keystone", "neutron", "nova", "octavia", "octavia_lib", "openstack")
if any(importlib.util.find_spec(name) is None for name in REQUIRED):
    pytest.skip("the OpenStack packages are not installed", allow_module_level=True)

from kubernetes import client  # noqa: E402

from minicloud.kube.controllers import capo  # noqa: E402

pytestmark = pytest.mark.integration

GROUP, VERSION = "cluster.x-k8s.io", "v1beta2"


@pytest.fixture(scope="module", autouse=True)
def quick_octavia(cloud):
    cloud.set_octavia_mode("normal", delay=0.2)


def wait_for(check, timeout, what):
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def machine_names(api, cluster):
    return sorted(m["metadata"]["name"] for m in api.list_namespaced_custom_object(
        GROUP, VERSION, "default", "machines", label_selector=f"cluster.x-k8s.io/cluster-name={cluster}")["items"])


def reasons_about(core, kind, name):
    found = core.list_namespaced_event("default", field_selector=f"involvedObject.kind={kind},"
                                                                 f"involvedObject.name={name}").items
    return {e.reason for e in found}


def test_a_control_plane_machine_deleted_by_hand_is_replaced_end_to_end(cloud):
    api, core = client.CustomObjectsApi(cloud.kube_client()), client.CoreV1Api(cloud.kube_client())
    heal = cloud.create_capi_cluster("heal", control_plane=3, openstack=True)
    lb, pool = heal["openstack"]["loadbalancer"], heal["openstack"]["pool_id"]
    conn = cloud.connect()
    old = machine_names(api, "heal")
    victim = old[0]
    victim_server = heal["openstack"]["servers"][victim]["id"]

    started = time.monotonic()
    api.delete_namespaced_custom_object(GROUP, VERSION, "default", "machines", victim)
    deleting = api.get_namespaced_custom_object(GROUP, VERSION, "default", "machines", victim)
    assert deleting["metadata"]["deletionTimestamp"] and deleting["metadata"]["finalizers"]  # not instant
    wait_for(lambda: victim not in machine_names(api, "heal"), 60, "the deleted Machine gone")
    gone_after = time.monotonic() - started

    def replaced():
        names = machine_names(api, "heal")
        new = [n for n in names if n not in old]
        kcp = api.get_namespaced_custom_object("controlplane.cluster.x-k8s.io", "v1beta1", "default",
                                               "kubeadmcontrolplanes", "heal-control-plane")
        ready = kcp.get("status", {}).get("readyReplicas") == 3 and len(names) == 3
        return new[0] if ready and len(new) == 1 else None

    new = wait_for(replaced, 90, "KCP back at 3 ready replicas")
    ready_after = time.monotonic() - started
    members = {m.name: m for m in conn.load_balancer.members(pool)}
    assert set(members) == {capo.member_name(lb["name"], n) for n in old[1:] + [new]}
    member = members[capo.member_name(lb["name"], new)]
    assert member.provisioning_status == "ACTIVE"
    machine = api.get_namespaced_custom_object(GROUP, VERSION, "default", "machines", new)
    assert machine["status"]["phase"] == "Running" and machine["status"]["nodeRef"]["name"] == new
    assert machine["metadata"]["finalizers"] == ["machine.cluster.x-k8s.io"]
    server_id = machine["spec"]["providerID"].removeprefix("openstack:///")
    servers = {s["name"]: s for s in cloud.list_servers()}
    assert servers[new]["id"] == server_id and victim not in servers
    assert conn.compute.find_server(victim_server, ignore_missing=True) is None
    [port] = conn.network.ports(device_id=server_id)
    assert [ip["ip_address"] for ip in port.fixed_ips] == [member.address]
    nodes = {n["name"]: n for n in cloud.list_nodes(cluster="heal")}  # in the cluster's own API
    assert victim not in nodes and nodes[new]["internalIP"] == member.address
    assert new not in {n["name"] for n in cloud.list_nodes()}

    assert "SuccessfulDrainNode" in reasons_about(core, "Machine", victim)
    assert {"LoadBalancerMemberDeleted", "SuccessfulDeleteServer"} <= reasons_about(core, "OpenStackMachine", victim)
    assert "SuccessfulCreate" in reasons_about(core, "KubeadmControlPlane", "heal-control-plane")
    assert {"SuccessfulCreateServer", "LoadBalancerMemberCreated", "LoadBalancerMemberActive"} <= \
        reasons_about(core, "OpenStackMachine", new)
    print(f"\nhand-deleted Machine gone after {gone_after:.1f} s; replacement ready, member ACTIVE after "
          f"{ready_after:.1f} s")
    cloud.delete_capi_cluster("heal")
    cloud.delete_capi_openstack("heal")
