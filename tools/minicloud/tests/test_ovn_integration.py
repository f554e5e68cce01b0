"""Octavia's two providers on a running cloud, through openstacksdk: ``amphora`` by name, and ``ovn`` with its
refusals, its immediate statuses, its health checks and its data plane (no weight, admin-down out of rotation);
and the CAPO emulation's API pool monitor."""

from __future__ import annotations

import importlib.util
import shutil

import pytest

if importlib.util.find_spec("octavia") is None or shutil.which("haproxy") is None and not shutil.os.path.exists(
        "/usr/sbin/haproxy"):
    pytest.skip("needs the OpenStack packages and haproxy", allow_module_level=True)

from openstack import exceptions as sdk_exceptions  # noqa: E402

from minicloud.core import clouds  # noqa: E402
from minicloud.core.paths import StateDir  # noqa: E402
from minicloud.dataplane import health, plane  # noqa: E402
from minicloud.seeding.openstack import ensure_subnet, wait_until  # noqa: E402

pytestmark = [pytest.mark.integration]
CIDR = "10.71.0.0/24"


def wait_for(what, check, timeout=60.0):
    return wait_until(what, check, timeout, 0.1)


def active(conn, lb_id, timeout=60.0):
    def done():
        lb = conn.load_balancer.get_load_balancer(lb_id)
        assert lb.provisioning_status != "ERROR"
        return lb if lb.provisioning_status == "ACTIVE" else None
    return wait_for(f"load balancer {lb_id} ACTIVE", done, timeout)


def refused(call) -> str:
    with pytest.raises(sdk_exceptions.HttpException) as caught:
        call()
    assert caught.value.status_code == 501, caught.value
    return str(caught.value)


@pytest.fixture(scope="module")
def conn(cloud):
    return cloud.connect()


@pytest.fixture(scope="module")
def ovn_lb(cloud, conn):
    subnet = ensure_subnet(conn, CIDR)
    lb = conn.load_balancer.create_load_balancer(name="ovn-lb", vip_subnet_id=subnet.id, provider="ovn")
    active(conn, lb.id)
    listener = conn.load_balancer.create_listener(name="ovn-l", load_balancer_id=lb.id, protocol="TCP",
                                                  protocol_port=6443)
    active(conn, lb.id)
    yield {"lb": lb, "listener": listener, "subnet": subnet}
    conn.load_balancer.delete_load_balancer(lb.id, cascade=True)


def test_both_providers_are_enabled_and_amphora_is_the_default(conn):
    assert {"amphora", "ovn"} <= {p.name for p in conn.load_balancer.providers()}
    subnet = ensure_subnet(conn, CIDR)
    named = conn.load_balancer.create_load_balancer(name="named-amphora", vip_subnet_id=subnet.id,
                                                    provider="amphora")
    unnamed = conn.load_balancer.create_load_balancer(name="default-provider", vip_subnet_id=subnet.id)
    try:
        assert active(conn, named.id).provider == "amphora"
        assert active(conn, unnamed.id).provider == "amphora"
    finally:
        for lb in (named, unnamed):
            conn.load_balancer.delete_load_balancer(lb.id, cascade=True)


def test_ovn_refuses_what_ovn_octavia_provider_refuses(cloud, conn, ovn_lb):
    lb, listener = ovn_lb["lb"], ovn_lb["listener"]
    assert "OVN provider does not support HTTP protocol" in refused(lambda: conn.load_balancer.create_listener(
        load_balancer_id=lb.id, protocol="HTTP", protocol_port=80))
    assert "OVN provider does not support ROUND_ROBIN algorithm" in refused(lambda: conn.load_balancer.create_pool(
        listener_id=listener.id, protocol="TCP", lb_algorithm="ROUND_ROBIN"))
    admin = cloud.connect(clouds.ADMIN_CLOUD)  # failing over is an admin's call
    assert "OVN provider does not support loadbalancer failover" in refused(
        lambda: admin.load_balancer.failover_load_balancer(lb.id))
    assert "does not support creating l7policies" in refused(lambda: conn.load_balancer.create_l7_policy(
        listener_id=listener.id, action="REJECT"))
    pool = conn.load_balancer.create_pool(name="ovn-pool", listener_id=listener.id, protocol="TCP",
                                          lb_algorithm="SOURCE_IP_PORT")
    active(conn, lb.id)
    assert "does not support different member monitor address or port" in refused(
        lambda: conn.load_balancer.create_member(pool.id, address="10.71.0.20", protocol_port=6443,
                                                 monitor_port=9000))
    assert "Subnet is required, or Loadbalancer associated with Pool must have a subnet, for Member creation" in \
        refused(lambda: conn.load_balancer.create_member(pool.id, address="10.99.0.20", protocol_port=6443))
    assert "OVN provider does not support HTTP health monitor type" in refused(
        lambda: conn.load_balancer.create_health_monitor(pool_id=pool.id, type="HTTP", delay=5, timeout=3,
                                                         max_retries=3))
    conn.load_balancer.delete_pool(pool.id)
    active(conn, lb.id)


def member_statuses(conn, pool_id):
    return {m.name: (m.provisioning_status, m.operating_status) for m in conn.load_balancer.members(pool_id)}


def servers(cloud, lb_id):
    stats = health.parse_stat(plane.instance(StateDir(cloud.state_dir), lb_id).command("show stat"))
    return {s.server: s for s in stats}


def test_ovn_is_active_at_once_checks_members_and_forwards_without_weight(cloud, conn, ovn_lb):
    lb, listener = ovn_lb["lb"], ovn_lb["listener"]
    cloud.set_octavia_mode("slow", delay=30)  # the amphora emulator would take 30 s a step; ovn has no such window
    try:
        pool = conn.load_balancer.create_pool(name="ovn-served", listener_id=listener.id, protocol="TCP",
                                              lb_algorithm="SOURCE_IP_PORT")
        active(conn, lb.id, timeout=20)
        kept = conn.load_balancer.create_member(pool.id, name="kept", address="10.71.0.21", protocol_port=6443,
                                                weight=5)  # no subnet_id: the VIP's, as ovn takes it
        active(conn, lb.id, timeout=20)
        assert member_statuses(conn, pool.id) == {"kept": ("ACTIVE", "NO_MONITOR")}
        spare = conn.load_balancer.create_member(pool.id, name="spare", address="10.71.0.22", protocol_port=6443,
                                                 subnet_id=ovn_lb["subnet"].id)
        active(conn, lb.id, timeout=20)
        conn.load_balancer.create_health_monitor(pool_id=pool.id, type="TCP", delay=10, timeout=5, max_retries=5,
                                                 max_retries_down=3)
        active(conn, lb.id, timeout=20)
        assert member_statuses(conn, pool.id) == {"kept": ("ACTIVE", "ONLINE"), "spare": ("ACTIVE", "ONLINE")}
        conn.load_balancer.update_member(kept, pool.id, weight=0)
        active(conn, lb.id, timeout=20)
        conn.load_balancer.update_member(spare, pool.id, admin_state_up=False)
        active(conn, lb.id, timeout=20)
    finally:
        cloud.set_octavia_mode("normal")
    assert member_statuses(conn, pool.id) == {"kept": ("ACTIVE", "ONLINE"), "spare": ("ACTIVE", "OFFLINE")}

    def forwarded():
        found = servers(cloud, lb.id)
        return found if found[kept.id].weight == 1 and found[spare.id].status.startswith("MAINT") else None
    found = wait_for("the data plane to take the updates", forwarded, 30)
    assert found[kept.id].weight == 1  # weight 0 changes nothing on OVN: the member stays in rotation


def test_the_capo_emulation_makes_the_api_pool_monitor_and_names_the_provider(cloud, conn):
    created = cloud.create_capi_cluster("ovn-cp", control_plane=1, openstack=True, monitor=True, lb_provider="ovn")
    try:
        pool = conn.load_balancer.get_pool(created["openstack"]["pool_id"])
        monitor = conn.load_balancer.get_health_monitor(pool.health_monitor_id)
        assert (monitor.name, monitor.type, monitor.delay, monitor.timeout, monitor.max_retries,
                monitor.max_retries_down) == ("k8s-clusterapi-cluster-default-ovn-cp-kubeapi-6443", "TCP", 10, 5, 5, 3)
        lb = conn.load_balancer.get_load_balancer(created["openstack"]["loadbalancer"]["id"])
        assert (lb.provider, pool.lb_algorithm) == ("ovn", "SOURCE_IP_PORT")
        wait_for("the member ONLINE by the health checks", lambda: all(
            m.operating_status == "ONLINE" for m in conn.load_balancer.members(pool.id)), 30)
        from kubernetes import client as k8s_client, config as k8s_config

        with k8s_config.new_client_from_config(config_file=str(cloud.state_dir / "kubeconfig")) as api:
            infra = k8s_client.CustomObjectsApi(api).get_namespaced_custom_object(
                "infrastructure.cluster.x-k8s.io", "v1beta1", "default", "openstackclusters", "ovn-cp")
        assert infra["spec"]["apiServerLoadBalancer"] == {"enabled": True, "provider": "ovn"}
    finally:
        cloud.delete_capi_cluster("ovn-cp")
        cloud.delete_capi_openstack("ovn-cp")
