"""The network side of a cluster as CAPO leaves it (``managedSecurityGroups``, a network of its own), and drift.

CAPO's names (``<namespace>-<cluster>`` is CAPO's cluster resource name): network and subnet
``k8s-clusterapi-cluster-<namespace>-<cluster>``, router ``k8s-clusterapi-cluster-<namespace>-<cluster>`` with
an interface on the subnet (and its external gateway on the network ``public`` when one exists), security groups
``k8s-cluster-<namespace>-<cluster>-secgroup-controlplane`` and ``-secgroup-worker``.

A healthy pod network on top, the state a flight check leaves: the pod CIDR rules (tcp, udp, icmp ingress from
the cluster's pod network, as ``secgroup_ensure``'s ``pod_cidr`` makes them) in both groups; the worker group on
every server's port (the control-plane ports carry both groups), so it is the one group of all nodes; the pod
network in each port's allowed address pairs; one static route per Node (pod CIDR -> the Node's address) on the
router, as a route controller keeps them.

Every call here is one Neutron request or one bulk request; nothing waits (Neutron answers when done).
"""

from __future__ import annotations

import ipaddress

from openstack import exceptions as sdk_exceptions

from minicloud.seeding.openstack import SeedError

NETWORK_PREFIX = "k8s-clusterapi"
SECGROUP_PREFIX = "k8s"
EXTERNAL_NETWORK = "public"
CONTROL_PLANE = "controlplane"
WORKER = "worker"
POD_PROTOCOLS = ("tcp", "udp", "icmp")
POD_RULE_DESCRIPTION = "pod network"


def network_name(resource: str) -> str:
    """Network, subnet and router of CAPO's cluster resource name ``<namespace>-<cluster>``."""
    return f"{NETWORK_PREFIX}-cluster-{resource}"


def secgroup_name(resource: str, role: str) -> str:
    return f"{SECGROUP_PREFIX}-cluster-{resource}-secgroup-{role}"


def _body(response, what: str) -> dict:
    if response.status_code >= 400:
        raise SeedError(f"{what} failed: {response.status_code} {response.text}")
    return response.json() if response.status_code != 204 else {}


def create_network(conn, resource: str, cidr: str) -> tuple[dict, dict]:
    """CAPO's network and subnet (one request each)."""
    name = network_name(resource)
    if conn.network.find_network(name, ignore_missing=True):
        raise SeedError(f"a network named {name!r} exists already")
    net = _body(conn.network.post("/networks", json={"network": {"name": name}}), "creating the network")["network"]
    version = ipaddress.ip_network(cidr).version
    subnet = _body(conn.network.post("/subnets", json={"subnet": {
        "network_id": net["id"], "name": name, "cidr": cidr, "ip_version": version}}), "creating the subnet")["subnet"]
    return net, subnet


def external_network(conn) -> dict | None:
    """The external network ``public`` (router:external), or None."""
    found = _body(conn.network.get("/networks", params={"name": EXTERNAL_NETWORK, "router:external": "True"}),
                  "looking for the external network")["networks"]
    return {"id": found[0]["id"], "name": found[0]["name"]} if found else None


def create_router(conn, resource: str, subnet_id: str, external: dict | None) -> dict:
    """The router with its gateway on ``external`` (if any) and an interface on the subnet."""
    body = {"name": network_name(resource)}
    if external:
        body["external_gateway_info"] = {"network_id": external["id"]}
    router = _body(conn.network.post("/routers", json={"router": body}), "creating the router")["router"]
    _body(conn.network.put(f"/routers/{router['id']}/add_router_interface", json={"subnet_id": subnet_id}),
          "adding the router's interface")
    gateway = router.get("external_gateway_info") or {}
    ips = [ip["ip_address"] for ip in gateway.get("external_fixed_ips") or []]
    return {"id": router["id"], "name": router["name"], "ips": ips}


def pod_rules(group_id: str, pod_network: str) -> list[dict]:
    """The rules ``secgroup_ensure`` ensures for ``pod_cidr: [pod_network]``."""
    ethertype = f"IPv{ipaddress.ip_network(pod_network).version}"
    return [{"security_group_id": group_id, "direction": "ingress", "ethertype": ethertype, "protocol": proto,
             "remote_ip_prefix": pod_network, "description": POD_RULE_DESCRIPTION} for proto in POD_PROTOCOLS]


def create_security_groups(conn, resource: str, pod_network: str) -> dict:
    """Both groups (one bulk request) and their pod CIDR rules (one bulk request each); ``{role: {id, name}}``."""
    roles = (CONTROL_PLANE, WORKER)
    groups = _body(conn.network.post("/security-groups", json={"security_groups": [
        {"name": secgroup_name(resource, role), "description": f"Cluster API managed group {role}"}
        for role in roles]}), "creating the security groups")["security_groups"]
    by_role = {role: {"id": g["id"], "name": g["name"]} for role, g in zip(roles, groups, strict=True)}
    for group in groups:  # Neutron takes the rules of one group per bulk request
        _body(conn.network.post("/security-group-rules", json={"security_group_rules": pod_rules(group["id"],
                                                                                                 pod_network)}),
              "creating the pod CIDR rules")
    return by_role


def add_routes(conn, router_id: str, routes: list[dict]) -> None:
    if routes:
        _body(conn.network.put(f"/routers/{router_id}/add_extraroutes", json={"router": {"routes": routes}}),
              "adding the pod routes")


def node_routes(nodes: list[dict]) -> list[dict]:
    """One route per Node: its pod CIDR -> its InternalIP (``nodes``: ``{name, podCIDR, internalIP}``)."""
    return [{"destination": n["podCIDR"], "nexthop": n["internalIP"]} for n in nodes if n.get("podCIDR")]


# -- drift ---------------------------------------------------------------------------------

def remove_route(conn, router_id: str, route: dict) -> None:
    _body(conn.network.put(f"/routers/{router_id}/remove_extraroutes", json={"router": {"routes": [route]}}),
          "removing a route")


def pod_rule(conn, group_id: str, pod_network: str, protocol: str) -> dict:
    """The pod CIDR rule of ``protocol`` in the group."""
    rules = _body(conn.network.get("/security-group-rules", params={"security_group_id": group_id,
                                                                    "protocol": protocol,
                                                                    "direction": "ingress"}),
                  "listing rules")["security_group_rules"]
    found = [r for r in rules if r.get("remote_ip_prefix") == pod_network]
    if not found:
        raise SeedError(f"security group {group_id} has no {protocol} rule from {pod_network}")
    return found[0]


def delete_rule(conn, rule_id: str) -> None:
    _body(conn.network.delete(f"/security-group-rules/{rule_id}"), "deleting a rule")


def drop_group(conn, port_id: str, group_id: str) -> list[str]:
    """Take the group off the port; returns the groups left on it."""
    port = _body(conn.network.get(f"/ports/{port_id}"), "reading a port")["port"]
    left = [g for g in port["security_groups"] if g != group_id]
    _body(conn.network.put(f"/ports/{port_id}", json={"port": {"security_groups": left}}), "updating a port")
    return left


# -- removal -------------------------------------------------------------------------------

def delete_router(conn, resource: str) -> str | None:
    """Routes cleared, interfaces detached, router deleted; its id (None if there was none)."""
    router = conn.network.find_router(network_name(resource), ignore_missing=True)
    if router is None:
        return None
    conn.network.put(f"/routers/{router.id}", json={"router": {"routes": []}})
    for port in conn.network.ports(device_id=router.id, device_owner="network:router_interface"):
        for ip in port.fixed_ips:
            _body(conn.network.put(f"/routers/{router.id}/remove_router_interface",
                                   json={"subnet_id": ip["subnet_id"]}), "removing the router's interface")
    conn.network.delete_router(router.id)
    return router.id


def delete_security_groups(conn, resource: str) -> list[str]:
    """Both groups (every group of those names); their ids."""
    removed = []
    for role in (CONTROL_PLANE, WORKER):
        for group in conn.network.security_groups(name=secgroup_name(resource, role)):
            try:
                conn.network.delete_security_group(group.id)
            except sdk_exceptions.NotFoundException:
                continue
            removed.append(group.id)
    return removed
