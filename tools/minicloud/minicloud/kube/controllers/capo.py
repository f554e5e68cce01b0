"""CAPO's OpenStack side: the resources behind a cluster, named as CAPO names them.

Load balancer ``k8s-clusterapi-cluster-<namespace>-<cluster>-kubeapi``; listener, pool and
health monitor ``<lb>-6443``; one pool member per control-plane machine
``<lb>-6443-<machine>``; network ``k8s-clusterapi-cluster-<namespace>-<cluster>``; one server
(with a real port) per machine, named after the machine; the router, the security groups and a
healthy pod network (see :mod:`minicloud.seeding.cluster_network`).

:class:`OpenStack` is what the controllers use (openstacksdk, minicloud's internal user
agent: never counted, never faulted); :func:`seed_networks` and :func:`load_balancer_steps` create clusters'
resources (``Minicloud._seed_capi_clusters`` drives them).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from openstack import exceptions as sdk_exceptions

from minicloud.core import clouds
from minicloud.core.paths import StateDir
from minicloud.kube.controllers.rollout import MemberView
from minicloud.seeding import cluster_network as network
from minicloud.seeding import openstack as seed

API_PORT = 6443
CLUSTER_CIDR = "10.6.0.0/24"
POD_NETWORK = "10.244.0.0/16"  # the seeded Cluster's spec.clusterNetwork.pods (kube.seed.POD_NETWORK)


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
    """The calls the CAPO-like controller and the history sampler make (demo user, internal).

    ``write_instances(payload)`` writes Nova's instances (what booting a server is here; the process that
    runs the controllers hands it in, see :func:`minicloud.runtime.processes.run_seed`)."""

    def __init__(self, state: StateDir, write_instances: Callable[[dict], dict]):
        self.state = state
        self.write_instances = write_instances
        self.conn = clouds.connect(state, clouds.CLOUD, internal=True)
        self._admin = None

    @property
    def admin(self):
        if self._admin is None:
            self._admin = clouds.connect(self.state, clouds.ADMIN_CLOUD, internal=True)
        return self._admin

    def create_server(self, name: str, network: str) -> dict:
        """A "booted" control-plane server with one port; returns ``{"id", "address"}``. On a cluster's network
        (``k8s-clusterapi-cluster-<resource>``) whose managed security groups exist, the port gets them and
        the pod network in its address pairs, as the seeded control-plane servers have them."""
        options = control_plane_port(self.conn, network)
        [server] = seed.create_servers(self.conn, [name], network, write_instances=self.write_instances,
                                       port_options={name: options})
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


def control_plane_port(conn, network_name_: str, pod_network: str = POD_NETWORK) -> dict:
    """The port fields of a new control-plane server on a seeded cluster's network: both managed groups
    (found by CAPO's names, one list request) and the pod network in its address pairs; {} when the
    network is not a cluster's or its groups are gone."""
    prefix = f"{network.NETWORK_PREFIX}-cluster-"
    if not network_name_.startswith(prefix):
        return {}
    resource = network_name_.removeprefix(prefix)
    names = [network.secgroup_name(resource, role) for role in (network.CONTROL_PLANE, network.WORKER)]
    found = {g.name: g.id for g in conn.network.security_groups(name=names)}
    if set(found) != set(names):
        return {}
    return {"security_groups": [found[n] for n in names], "allowed_address_pairs": [{"ip_address": pod_network}]}


def cluster_ports(machines: list[str], workers: list[str], groups: dict, pod_network: str) -> dict:
    """Port fields per server, as a healthy cluster has them: the control-plane ports in both groups, the
    workers' in the worker group, the pod network in every port's allowed address pairs."""
    pairs = [{"ip_address": pod_network}]
    both = [groups[network.CONTROL_PLANE]["id"], groups[network.WORKER]["id"]]
    options = {m: {"security_groups": both, "allowed_address_pairs": pairs} for m in machines}
    options.update({w: {"security_groups": [groups[network.WORKER]["id"]], "allowed_address_pairs": pairs}
                    for w in workers})
    return options


def seed_networks(conn, clusters: list[dict], write_instances=None, external: dict | None = None,
                  pod_network: str = POD_NETWORK) -> list[dict]:
    """For each cluster (``{"namespace", "cluster", "machines", "workers"}``: control-plane and worker machine
    names): network and subnet, both security groups with the pod CIDR rules, one server per machine with its
    port in the groups, the router (gateway on ``external``, interface on the subnet). Bulk requests for all
    clusters where Neutron has them; nothing here waits. Returns each cluster's resources, what
    ``seed.cluster_objects`` takes as ``openstack``: ``network``, ``router``, ``externalNetwork``,
    ``securityGroups``, ``podNetwork``, ``servers`` (machine -> id, address, port, role: ``control-plane`` or
    ``worker``), and ``loadbalancer`` and ``pool_id`` None (:func:`load_balancer_steps` gives them)."""
    resources = [cluster_resource_name(c["namespace"], c["cluster"]) for c in clusters]
    seed.check_server_names(conn, [m for c in clusters for m in [*c["machines"], *c["workers"]]])
    networks = network.create_networks(conn, resources, CLUSTER_CIDR)
    groups = network.create_security_groups(conn, resources, pod_network)
    specs = []
    for c, (net, subnet), found in zip(clusters, networks, groups, strict=True):
        options = cluster_ports(c["machines"], c["workers"], found, pod_network)
        specs += [{"name": m, "network": {"id": net["id"], "name": net["name"]}, "cidr": subnet["cidr"],
                   "port": options[m]} for m in [*c["machines"], *c["workers"]]]
    servers = {s["name"]: s for s in seed.boot_servers(conn, specs, write_instances)}
    routers = network.create_routers(conn, resources, [subnet["id"] for _net, subnet in networks], external)
    return [{
        "network": {"id": net["id"], "name": net["name"],
                    "subnets": [{"id": subnet["id"], "name": subnet["name"], "cidr": subnet["cidr"]}]},
        "router": router,
        "externalNetwork": external,
        "securityGroups": {"controlPlane": found[network.CONTROL_PLANE], "worker": found[network.WORKER]},
        "podNetwork": pod_network,
        "loadbalancer": None,
        "pool_id": None,
        "servers": {m: {"id": servers[m]["id"], "address": servers[m]["ports"][0]["ip_address"],
                        "port": servers[m]["ports"][0]["id"], "role": role}
                    for role, names in (("control-plane", c["machines"]), ("worker", c["workers"])) for m in names},
    } for c, (net, subnet), found, router in zip(clusters, networks, groups, routers, strict=True)]


# CAPO's API pool monitor (pkg/cloud/services/loadbalancer/loadbalancer.go, ensureMonitor: named like the
# listener and pool, TCP, the defaults of APIServerLoadBalancerMonitor).
MONITOR = {"type": "TCP", "delay": 10, "timeout": 5, "max_retries": 5, "max_retries_down": 3}
PROVIDERS = ("amphora", "ovn")


def check_provider(provider: str | None) -> None:
    if provider is not None and provider not in PROVIDERS:
        raise seed.SeedError(f"unknown load balancer provider {provider!r}; choose from {', '.join(PROVIDERS)}")


def pool_algorithm(provider: str | None) -> str:
    """CAPO's ``getOrCreatePool``: SOURCE_IP_PORT on ``ovn``, ROUND_ROBIN otherwise."""
    return "SOURCE_IP_PORT" if provider == "ovn" else "ROUND_ROBIN"


def load_balancer_body(namespace: str, cluster: str, resources: dict, machines: list[str], monitor: bool = False,
                       provider: str | None = None) -> dict:
    """The fully populated load balancer CAPO's objects make: ``provider`` as
    ``spec.apiServerLoadBalancer.provider`` gives it (omitted: Octavia's default), the pool's algorithm as CAPO
    picks it for that provider, CAPO's monitor if ``monitor``. On ``ovn`` the members name no subnet, as CAPO
    leaves it out on the cluster's own network (ovn then takes the VIP's)."""
    check_provider(provider)
    name = lb_name(namespace, cluster)
    subnet_id = resources["network"]["subnets"][0]["id"]
    objects = port_objects_name(name)
    members = [{"name": member_name(name, m), "address": resources["servers"][m]["address"], "protocol_port": API_PORT}
               for m in machines]
    if provider != "ovn":
        members = [dict(m, subnet_id=subnet_id) for m in members]
    pool = {"name": objects, "protocol": "TCP", "lb_algorithm": pool_algorithm(provider), "members": members}
    if monitor:
        pool["healthmonitor"] = dict(MONITOR, name=objects)
    resource = cluster_resource_name(namespace, cluster)
    body = {"name": name, "vip_subnet_id": subnet_id,
            "description": f"Created by cluster-api-provider-openstack cluster {resource}",
            "listeners": [{"name": objects, "protocol": "TCP", "protocol_port": API_PORT, "default_pool": pool}]}
    if provider is not None:
        body["provider"] = provider
    return body


def load_balancer_steps(conn, namespace: str, cluster: str, resources: dict, machines: list[str],
                        monitor: bool = False, provider: str | None = None):
    """CAPO's API load balancer with its listener, pool, monitor (if ``monitor``) and one member per
    control-plane machine, created in one request (Octavia's fully populated load balancer; CAPO makes
    the same objects one by one; :func:`load_balancer_body`): a generator that yields the load balancer's id
    after each mutation (the caller resumes it once the load balancer is ACTIVE again) and returns the
    ``loadbalancer``, ``pool_id`` and ``loadBalancerProvider`` entries of the resources."""
    name = lb_name(namespace, cluster)
    body = load_balancer_body(namespace, cluster, resources, machines, monitor, provider)
    response = conn.load_balancer.post("/lbaas/loadbalancers", json={"loadbalancer": body})
    if response.status_code >= 400:
        raise seed.SeedError(f"creating load balancer {name} failed: {response.status_code} {response.text}")
    lb = response.json()["loadbalancer"]
    yield lb["id"]
    lb = conn.load_balancer.get_load_balancer(lb["id"])
    return {"loadbalancer": {"id": lb.id, "name": lb.name, "ip": lb.vip_address, "internalIP": lb.vip_address},
            "pool_id": lb.pools[0]["id"], "loadBalancerProvider": provider}


def run_load_balancer_steps(conn, steps: dict, timeout: float = 120.0, interval: float = 0.1) -> dict:
    """Drive many :func:`load_balancer_steps` generators at once (``key -> generator``): each is resumed
    when its load balancer is ACTIVE again; one list request per poll for all of them. Returns ``key ->
    result``; a load balancer in ERROR or the timeout raises SeedError."""
    results, waiting = {}, {}
    for key, gen in steps.items():
        waiting[key] = (gen, next(gen))
    deadline = time.monotonic() + timeout
    while waiting:
        time.sleep(interval)
        states = {lb["id"]: lb["provisioning_status"] for lb in conn.load_balancer.get(
            "/lbaas/loadbalancers", params={"fields": ["id", "provisioning_status"]}).json()["loadbalancers"]}
        for key, (gen, lb_id) in list(waiting.items()):
            state = states.get(lb_id)
            if state == "ERROR":
                raise seed.SeedError(f"load balancer {lb_id} of {key} went to ERROR")
            if state != "ACTIVE":
                continue
            try:
                waiting[key] = (gen, gen.send(None))
            except StopIteration as done:
                results[key] = done.value
                del waiting[key]
        if waiting and time.monotonic() > deadline:
            raise seed.SeedError(f"timed out after {timeout:.0f} s waiting for the load balancers of "
                                 f"{', '.join(map(str, sorted(waiting)))} to be ACTIVE")
    return results


def seed_routes(conn, resources: dict, nodes: list[dict]) -> list[dict]:
    """One route per Node (``{name, podCIDR, internalIP}``) on the cluster's router; the routes."""
    routes = network.node_routes(nodes)
    network.add_routes(conn, resources["router"]["id"], routes)
    return routes


def delete_openstack(conn, admin, namespace: str, cluster: str, write_instances, timeout: float = 60.0) -> list[str]:
    """Remove the cluster's load balancer, servers, router, network and security groups (what exists of
    them); ``kind/id`` of each."""
    return delete_openstack_many(conn, admin, [(namespace, cluster)], write_instances, timeout)[(namespace, cluster)]


def delete_openstack_many(conn, admin, clusters: list[tuple[str, str]], write_instances,
                          timeout: float = 60.0) -> dict:
    """:func:`delete_openstack` for many ``(namespace, cluster)``: every load balancer's cascade delete is
    started first and waited for once (one list request per poll), then the rest, cluster by cluster.
    Returns ``(namespace, cluster) -> removed``."""
    removed = {key: [] for key in clusters}
    deleting = {}
    for key in clusters:
        lb = conn.load_balancer.find_load_balancer(lb_name(*key), ignore_missing=True)
        if lb is not None:
            conn.load_balancer.delete_load_balancer(lb.id, cascade=True)
            deleting[lb.id] = key
            removed[key].append(f"loadbalancer/{lb.id}")

    def all_gone():
        listed = conn.load_balancer.get("/lbaas/loadbalancers", params={"fields": ["id", "provisioning_status"]})
        left = {lb["id"] for lb in listed.json()["loadbalancers"] if lb["provisioning_status"] != "DELETED"}
        return not (left & set(deleting))

    if deleting:
        seed.wait_until(f"{len(deleting)} load balancer(s) to be deleted", all_gone, timeout, interval=0.1)
    for key in clusters:
        removed[key] += _delete_network_side(conn, admin, *key, write_instances)
    return removed


def _delete_network_side(conn, admin, namespace: str, cluster: str, write_instances) -> list[str]:
    removed = []
    resource = cluster_resource_name(namespace, cluster)
    router_id = network.delete_router(conn, resource)
    if router_id:
        removed.append(f"router/{router_id}")
    net = conn.network.find_network(network_name(namespace, cluster), ignore_missing=True)
    if net is not None:
        ports = list(conn.network.ports(network_id=net.id))
        server_ports = [p for p in ports if p.device_owner == seed.DEVICE_OWNER]
        # the servers behind the ports (ports are named <server>-port-<i>), by one filtered Nova list
        names = sorted({p.name.rsplit("-port-", 1)[0] for p in server_ports if p.name})
        pattern = "^(" + "|".join(re.escape(n) for n in names) + ")$"
        servers = sorted({p.device_id for p in server_ports} & {s.id for s in conn.compute.servers(name=pattern)}) \
            if names else []
        for port in ports:  # Neutron lets only admins (and Nova) delete a port a server owns
            admin.network.delete_port(port.id)
        if servers:
            write_instances({"delete": servers})
        removed += [f"server/{server_id}" for server_id in servers]
        admin.network.delete_network(net.id)
        removed.append(f"network/{net.id}")
    removed += [f"security_group/{g}" for g in network.delete_security_groups(conn, resource)]
    return removed
