"""The network side of a cluster as CAPO leaves it (``managedSecurityGroups``, a network of its own), and drift.

CAPO's names (``<namespace>-<cluster>`` is CAPO's cluster resource name): network and subnet
``k8s-clusterapi-cluster-<namespace>-<cluster>``, router ``k8s-clusterapi-cluster-<namespace>-<cluster>`` with
an interface on the subnet (and its external gateway on the network ``public`` when one exists), security groups
``k8s-cluster-<namespace>-<cluster>-secgroup-controlplane`` and ``-secgroup-worker``.

A healthy pod network on top, the state a flight check leaves: the worker group on every server's port (the
control-plane ports carry both groups), so it is the one group of all nodes, with the pod CIDR rules (tcp, udp,
icmp ingress from the cluster's pod network, as ``secgroup_ensure``'s ``pod_cidr`` makes them); the pod
network in each port's allowed address pairs; one static route per Node (pod CIDR -> the Node's address) on the
router, as a route controller keeps them.

Every call here is one Neutron request or one bulk request for many clusters; nothing waits (Neutron answers
when done).
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


def create_networks(conn, resources: list[str], cidr: str) -> list[tuple[dict, dict]]:
    """CAPO's network and subnet of each cluster resource name (one bulk request each for all)."""
    names = [network_name(r) for r in resources]
    taken = _body(conn.network.get("/networks", params={"name": names}), "listing networks")["networks"]
    if taken:
        raise SeedError(f"network(s) named {', '.join(sorted(repr(n['name']) for n in taken))} exist already")
    if not names:
        return []
    nets = _body(conn.network.post("/networks", json={"networks": [{"name": n} for n in names]}),
                 "creating the networks")["networks"]
    version = ipaddress.ip_network(cidr).version
    subnets = _body(conn.network.post("/subnets", json={"subnets": [
        {"network_id": net["id"], "name": net["name"], "cidr": cidr, "ip_version": version} for net in nets]}),
        "creating the subnets")["subnets"]
    by_network = {subnet["network_id"]: subnet for subnet in subnets}
    by_name = {net["name"]: net for net in nets}
    return [(by_name[n], by_network[by_name[n]["id"]]) for n in names]


def external_network(conn) -> dict | None:
    """The external network ``public`` (router:external), or None."""
    found = _body(conn.network.get("/networks", params={"name": EXTERNAL_NETWORK, "router:external": "True"}),
                  "looking for the external network")["networks"]
    return {"id": found[0]["id"], "name": found[0]["name"]} if found else None


def create_routers(conn, resources: list[str], subnet_ids: list[str], external: dict | None) -> list[dict]:
    """Each cluster's router with its gateway on ``external`` (if any) and an interface on its subnet (two
    requests each: Neutron has no bulk create of routers)."""
    found = []
    for resource, subnet_id in zip(resources, subnet_ids, strict=True):
        body = {"name": network_name(resource)}
        if external:
            body["external_gateway_info"] = {"network_id": external["id"]}
        router = _body(conn.network.post("/routers", json={"router": body}), "creating a router")["router"]
        _body(conn.network.put(f"/routers/{router['id']}/add_router_interface", json={"subnet_id": subnet_id}),
              "adding a router's interface")
        gateway = router.get("external_gateway_info") or {}
        found.append({"id": router["id"], "name": router["name"],
                      "ips": [ip["ip_address"] for ip in gateway.get("external_fixed_ips") or []]})
    return found


def pod_rules(group_id: str, pod_network: str) -> list[dict]:
    """The rules ``secgroup_ensure`` ensures for ``pod_cidr: [pod_network]``."""
    ethertype = f"IPv{ipaddress.ip_network(pod_network).version}"
    return [{"security_group_id": group_id, "direction": "ingress", "ethertype": ethertype, "protocol": proto,
             "remote_ip_prefix": pod_network, "description": POD_RULE_DESCRIPTION} for proto in POD_PROTOCOLS]


def create_security_groups(conn, resources: list[str], pod_network: str) -> list[dict]:
    """Both groups of each cluster (one bulk request for all) and the pod CIDR rules in each worker group (one
    bulk request per group: Neutron takes the rules of one group at a time); per cluster ``{role: {id,
    name}}``."""
    roles = (CONTROL_PLANE, WORKER)
    if not resources:
        return []
    groups = _body(conn.network.post("/security-groups", json={"security_groups": [
        {"name": secgroup_name(r, role), "description": f"Cluster API managed group {role}"}
        for r in resources for role in roles]}), "creating the security groups")["security_groups"]
    by_name = {g["name"]: {"id": g["id"], "name": g["name"]} for g in groups}
    for resource in resources:
        worker = by_name[secgroup_name(resource, WORKER)]["id"]
        _body(conn.network.post("/security-group-rules", json={"security_group_rules": pod_rules(worker,
                                                                                                 pod_network)}),
              "creating the pod CIDR rules")
    return [{role: by_name[secgroup_name(r, role)] for role in roles} for r in resources]


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
