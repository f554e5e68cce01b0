"""Drift on a seeded cluster, on purpose, for tests and benchmarks: what a flight check must find.

``missing-route``: the last Node's route is removed from the router. ``missing-rule``: the udp pod CIDR rule
of the worker group (the group on every node) is deleted. ``lost-group``: the first worker's port (the first control-plane
server's without workers) loses the worker group. ``unregistered-server``: one more server, named like the cluster's control-plane machines and
set up like them, that never became a Node.

:func:`apply_drift` returns what it drifted (ids), so a test can assert that a check finds exactly that.
"""

from __future__ import annotations

from minicloud.seeding import cluster_network as network
from minicloud.seeding import openstack as seed

MISSING_ROUTE = "missing-route"
MISSING_RULE = "missing-rule"
LOST_GROUP = "lost-group"
UNREGISTERED_SERVER = "unregistered-server"
KINDS = (MISSING_ROUTE, MISSING_RULE, LOST_GROUP, UNREGISTERED_SERVER)
DRIFTED_RULE_PROTOCOL = "udp"


def check_kinds(kinds) -> list[str]:
    """The kinds asked for, each once, in the order given; ValueError on an unknown one."""
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown:
        raise ValueError(f"unknown drift kind(s) {', '.join(unknown)}; known: {', '.join(KINDS)}")
    return list(dict.fromkeys(kinds))


def unregistered_name(kcp_name: str) -> str:
    """A machine-like name (``<cluster>-control-plane-<suffix>``) that no Machine has."""
    return f"{kcp_name}-unreg"


def apply_drift(conn, resources: dict, nodes: list[dict], kinds, kcp_name: str, write_instances) -> dict:
    """Drift the cluster (``resources`` from ``capo.seed_networks``, ``nodes`` its Nodes with
    ``name, podCIDR, internalIP``) in each of ``kinds``; returns ``kind -> what was drifted``."""
    drifted = {}
    group = resources["securityGroups"]["worker"]
    for kind in check_kinds(kinds):
        if kind == MISSING_ROUTE:
            if not nodes:
                raise seed.SeedError("missing-route needs a Node")
            node = nodes[-1]
            route = {"destination": node["podCIDR"], "nexthop": node["internalIP"]}
            network.remove_route(conn, resources["router"]["id"], route)
            drifted[kind] = {"router": resources["router"]["id"], "node": node["name"], **route}
        elif kind == MISSING_RULE:
            rule = network.pod_rule(conn, group["id"], resources["podNetwork"], DRIFTED_RULE_PROTOCOL)
            network.delete_rule(conn, rule["id"])
            drifted[kind] = {"security_group": group["id"], "rule": rule["id"], "protocol": DRIFTED_RULE_PROTOCOL,
                             "remote_ip_prefix": rule["remote_ip_prefix"]}
        elif kind == LOST_GROUP:
            if not resources["servers"]:
                raise seed.SeedError("lost-group needs a server")
            # a worker's port when there are workers (the servers a check of the worker group looks at)
            machine, server = sorted(resources["servers"].items(), key=lambda item: (item[1].get("role") != "worker",
                                                                                  item[0]))[0]
            left = network.drop_group(conn, server["port"], group["id"])
            drifted[kind] = {"security_group": group["id"], "server": server["id"], "machine": machine,
                             "port": server["port"], "security_groups_left": left}
        else:
            name = unregistered_name(kcp_name)
            groups = resources["securityGroups"]
            options = {"security_groups": [groups["controlPlane"]["id"], group["id"]],
                       "allowed_address_pairs": [{"ip_address": resources["podNetwork"]}]}
            [server] = seed.create_servers(conn, [name], resources["network"]["name"], write_instances=write_instances,
                                           port_options={name: options})
            drifted[kind] = {"server": server["id"], "name": name, "port": server["ports"][0]["id"],
                             "address": server["ports"][0]["ip_address"]}
    return drifted
