"""CAPO's OpenStack side: the resources behind a cluster, named as CAPO names them.

Load balancer ``k8s-clusterapi-cluster-<namespace>-<cluster>-kubeapi``; listener, pool and
health monitor ``<lb>-6443``; one pool member per control-plane machine
``<lb>-6443-<machine>``; network ``k8s-clusterapi-cluster-<namespace>-<cluster>``; one server
(with a real port) per control-plane machine, named after the machine.

:class:`OpenStack` is what the controllers use (openstacksdk, minicloud's internal user
agent: never counted, never faulted); :func:`seed_openstack` creates a cluster's resources.
"""

from __future__ import annotations

from openstack import exceptions as sdk_exceptions

from minicloud.kube.controllers.rollout import MemberView
from minicloud.runtime import clouds, processes
from minicloud.runtime.paths import StateDir
from minicloud.seeding import openstack as seed

API_PORT = 6443
CLUSTER_CIDR = "10.6.0.0/24"


def cluster_resource_name(namespace: str, cluster: str) -> str:
    return f"{namespace}-{cluster}"


def lb_name(namespace: str, cluster: str) -> str:
    return f"k8s-clusterapi-cluster-{cluster_resource_name(namespace, cluster)}-kubeapi"


def network_name(namespace: str, cluster: str) -> str:
    return f"k8s-clusterapi-cluster-{cluster_resource_name(namespace, cluster)}"


def port_objects_name(lb: str) -> str:
    return f"{lb}-{API_PORT}"


def member_name(lb: str, machine: str) -> str:
    return f"{port_objects_name(lb)}-{machine}"


class OpenStack:
    """The calls the CAPO-like controller and the history sampler make (demo user, internal)."""

    def __init__(self, state: StateDir):
        self.state = state
        self.conn = clouds.connect(state, clouds.CLOUD, internal=True)
        self._admin = None

    @property
    def admin(self):
        if self._admin is None:
            self._admin = clouds.connect(self.state, clouds.ADMIN_CLOUD, internal=True)
        return self._admin

    def write_instances(self, payload: dict) -> dict:
        return processes.run_seed(self.state, "nova", payload)

    def create_server(self, name: str, network: str) -> dict:
        """A "booted" server with one port; returns ``{"id", "address"}``."""
        [server] = seed.create_servers(self.conn, [name], network, write_instances=self.write_instances)
        return {"id": server["id"], "address": server["ports"][0]["ip_address"]}

    def server_exists(self, server_id: str) -> bool:
        return self.conn.compute.find_server(server_id, ignore_missing=True) is not None

    def delete_server(self, server_id: str) -> None:
        seed.delete_server(self.conn, self.admin, server_id, write_instances=self.write_instances)

    def lb_status(self, lb_id: str) -> str | None:
        try:
            return self.conn.load_balancer.get_load_balancer(lb_id).provisioning_status
        except sdk_exceptions.NotFoundException:
            return None

    def members(self, pool_id: str) -> list[MemberView]:
        return [MemberView(m.id, m.name, m.provisioning_status, m.operating_status)
                for m in self.conn.load_balancer.members(pool_id)]

    def member(self, pool_id: str, name: str) -> MemberView | None:
        return next((m for m in self.members(pool_id) if m.name == name), None)

    def create_member(self, pool_id: str, name: str, address: str, subnet_id: str) -> bool:
        """False when Octavia refuses for now (409: the load balancer is busy)."""
        try:
            self.conn.load_balancer.create_member(pool_id, name=name, address=address, protocol_port=API_PORT,
                                                  subnet_id=subnet_id)
        except sdk_exceptions.ConflictException:
            return False
        return True

    def delete_member(self, pool_id: str, member_id: str) -> bool:
        """False when Octavia refuses for now (409: the load balancer or the member is pending)."""
        try:
            self.conn.load_balancer.delete_member(member_id, pool_id, ignore_missing=True)
        except sdk_exceptions.ConflictException:
            return False
        return True


def seed_openstack(conn, namespace: str, cluster: str, machines: list[str], monitor: bool = False,
                   write_instances=None, timeout: float = 120.0) -> dict:
    """The network, one server per control-plane machine, and the API load balancer with one
    ACTIVE member per machine, as CAPO leaves them. Returns what ``seed.cluster_objects`` takes
    as ``openstack``."""
    lbapi = conn.load_balancer
    name = lb_name(namespace, cluster)
    if lbapi.find_load_balancer(name, ignore_missing=True):
        raise seed.SeedError(f"a load balancer named {name!r} exists already")
    net_name = network_name(namespace, cluster)
    net, subnet = seed.ensure_network(conn, net_name, CLUSTER_CIDR)
    servers = seed.create_servers(conn, machines, net_name, write_instances=write_instances) if machines else []

    lb = lbapi.create_load_balancer(name=name, vip_subnet_id=subnet.id,
                                    description=f"Created by cluster-api-provider-openstack cluster "
                                                f"{cluster_resource_name(namespace, cluster)}")

    def settle(what: str):
        return seed.wait_until(f"{what} of {name} (load balancer ACTIVE)", lambda: seed._lb_active(lbapi, lb.id),
                               timeout, interval=0.1)

    lb = settle("load balancer")
    objects = port_objects_name(name)
    listener = lbapi.create_listener(name=objects, load_balancer_id=lb.id, protocol="TCP", protocol_port=API_PORT)
    settle("listener")
    pool = lbapi.create_pool(name=objects, listener_id=listener.id, protocol="TCP", lb_algorithm="ROUND_ROBIN")
    settle("pool")
    if monitor:
        lbapi.create_health_monitor(name=objects, pool_id=pool.id, type="TCP", delay=10, timeout=5,
                                    max_retries=5, max_retries_down=3)
        settle("health monitor")
    by_machine = {}
    for machine, server in zip(machines, servers, strict=True):
        address = server["ports"][0]["ip_address"]
        lbapi.create_member(pool.id, name=member_name(name, machine), address=address, protocol_port=API_PORT,
                            subnet_id=subnet.id)
        settle(f"member of {machine}")
        by_machine[machine] = {"id": server["id"], "address": address}

    def all_active():
        found = list(lbapi.members(pool.id))
        return len(found) == len(machines) and all(m.provisioning_status == "ACTIVE" for m in found)

    seed.wait_until(f"members of {name} to be ACTIVE", all_active, timeout, interval=0.1)
    return {
        "network": {"id": net.id, "name": net.name,
                    "subnets": [{"id": subnet.id, "name": subnet.name, "cidr": subnet.cidr}]},
        "loadbalancer": {"id": lb.id, "name": lb.name, "ip": lb.vip_address, "internalIP": lb.vip_address},
        "pool_id": pool.id,
        "servers": by_machine,
    }


def delete_openstack(conn, admin, namespace: str, cluster: str, write_instances, timeout: float = 60.0) -> list[str]:
    """Remove the cluster's load balancer, servers and network (what exists of them)."""
    removed = []
    name = lb_name(namespace, cluster)
    if conn.load_balancer.find_load_balancer(name, ignore_missing=True):
        removed.append(f"loadbalancer/{seed.delete_lb(conn, name, timeout=timeout)}")
    net = conn.network.find_network(network_name(namespace, cluster), ignore_missing=True)
    if net is not None:
        device_ids = {p.device_id for p in conn.network.ports(network_id=net.id)
                      if p.device_owner == seed.DEVICE_OWNER}
        for server_id in sorted(device_ids):
            if conn.compute.find_server(server_id, ignore_missing=True):
                seed.delete_server(conn, admin, server_id, write_instances)
                removed.append(f"server/{server_id}")
        for port in conn.network.ports(network_id=net.id):
            admin.network.delete_port(port.id)
        admin.network.delete_network(net.id)
        removed.append(f"network/{net.id}")
    return removed
