"""Seeding helpers: a load balancer with listener, pool, monitor and members, in one call."""

from __future__ import annotations

import ipaddress
import itertools
import re
import time
import uuid

from openstack import exceptions as sdk_exceptions

NETWORK_NAME = "minicloud"
LISTENER_PORT = 6443
# Members at or above this count are added with one batch member update.
BATCH_THRESHOLD = 4
FIRST_MEMBER_HOST = 10


class SeedError(RuntimeError):
    pass


def wait_until(description: str, check, timeout: float, interval: float = 0.2, last_seen=None):
    """Poll ``check()`` until it returns something truthy (returned), or raise SeedError at ``timeout``.
    ``last_seen()``, when given, says what the last poll saw: the error names it."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            seen = f"; the last poll saw: {last_seen()}" if last_seen is not None else ""
            raise SeedError(f"timed out after {timeout:.0f} s waiting for {description}{seen}")
        time.sleep(interval)


def ensure_subnet(conn, cidr: str):
    """The ``minicloud`` network and its subnet for ``cidr``, created if missing."""
    net = conn.network.find_network(NETWORK_NAME) or conn.network.create_network(name=NETWORK_NAME)
    for subnet in conn.network.subnets(network_id=net.id):
        if subnet.cidr == str(ipaddress.ip_network(cidr)):
            return subnet
    return conn.network.create_subnet(
        network_id=net.id, name=f"{NETWORK_NAME}-{cidr}", cidr=cidr, ip_version=ipaddress.ip_network(cidr).version
    )


def member_addresses(cidr: str, count: int) -> list[str]:
    """``count`` addresses of ``cidr``, from its 10th host on."""
    start = FIRST_MEMBER_HOST - 1
    hosts = list(itertools.islice(ipaddress.ip_network(cidr).hosts(), start, start + count))
    if len(hosts) < count:
        raise SeedError(f"{cidr} has room for {len(hosts)} members from host {FIRST_MEMBER_HOST} on, not {count}")
    return [str(h) for h in hosts]


def _lb_active(lbapi, lb_id):
    lb = lbapi.get_load_balancer(lb_id)
    if lb.provisioning_status == "ERROR":
        raise SeedError(f"load balancer {lb_id} went to ERROR")
    return lb if lb.provisioning_status == "ACTIVE" else None


def create_lb(conn, name: str, members: int = 0, monitor: bool = False, member_port: int = 6443,
              cidr: str = "10.0.0.0/24", timeout: float = 120.0) -> dict:
    """Create a load balancer NAME with listener (TCP 6443), pool, optional TCP monitor and
    ``members`` members ``NAME-member-<i>``; wait until all is ACTIVE; return ids as a dict."""
    lbapi = conn.load_balancer
    if lbapi.find_load_balancer(name, ignore_missing=True):
        raise SeedError(f"a load balancer named {name!r} exists already")
    addresses = member_addresses(cidr, members)
    subnet = ensure_subnet(conn, cidr)

    def settle(what: str):
        return wait_until(f"{what} of {name} (load balancer ACTIVE)", lambda: _lb_active(lbapi, lb.id), timeout)

    lb = lbapi.create_load_balancer(name=name, vip_subnet_id=subnet.id)
    settle("load balancer")
    listener = lbapi.create_listener(name=f"{name}-listener", load_balancer_id=lb.id, protocol="TCP",
                                     protocol_port=LISTENER_PORT)
    settle("listener")
    pool = lbapi.create_pool(name=f"{name}-pool", listener_id=listener.id, protocol="TCP",
                             lb_algorithm="ROUND_ROBIN")
    settle("pool")
    hm = None
    if monitor:
        hm = lbapi.create_health_monitor(name=f"{name}-monitor", pool_id=pool.id, type="TCP", delay=5,
                                         timeout=3, max_retries=3)
        settle("health monitor")
    specs = [
        {"name": f"{name}-member-{i}", "address": addr, "protocol_port": member_port, "subnet_id": subnet.id}
        for i, addr in enumerate(addresses, start=1)
    ]
    if len(specs) >= BATCH_THRESHOLD:
        conn.load_balancer.put(f"/lbaas/pools/{pool.id}/members", json={"members": specs}).raise_for_status()
        settle("batch member update")
    else:
        for spec in specs:
            lbapi.create_member(pool.id, **spec)
            settle(f"member {spec['name']}")

    def all_members_active():
        found = list(lbapi.members(pool.id))
        stuck = [m.name for m in found if m.provisioning_status != "ACTIVE"]
        return found if len(found) == len(specs) and not stuck else None

    found = [] if not specs else wait_until(f"members of {name} to be ACTIVE", all_members_active, timeout)
    by_name = {m.name: m for m in found}
    return {
        "loadbalancer": {"id": lb.id, "name": lb.name, "vip_address": lb.vip_address},
        "listener": {"id": listener.id, "name": listener.name, "protocol_port": LISTENER_PORT},
        "pool": {"id": pool.id, "name": pool.name},
        "healthmonitor": {"id": hm.id, "name": hm.name} if hm else None,
        "subnet": {"id": subnet.id, "cidr": subnet.cidr, "network_id": subnet.network_id},
        "members": [
            {"id": by_name[s["name"]].id, "name": s["name"], "address": s["address"], "protocol_port": member_port}
            for s in specs
        ],
    }


def delete_lb(conn, name: str, timeout: float = 60.0) -> str:
    """Delete load balancer NAME and everything under it; wait until it is gone (``timeout`` for both waits
    together). Returns its id."""
    deadline = time.monotonic() + timeout
    lbapi = conn.load_balancer
    lb = lbapi.find_load_balancer(name, ignore_missing=True)
    if lb is None:
        raise SeedError(f"no load balancer named {name!r}")

    def accepted():
        try:
            lbapi.delete_load_balancer(lb.id, cascade=True)
        except sdk_exceptions.ConflictException:  # PENDING_*: Octavia takes no delete until the provider is done
            return False
        except sdk_exceptions.NotFoundException:
            pass
        return True

    wait_until(f"load balancer {name} to take its deletion (it is PENDING_*)", accepted, timeout)

    def gone():
        try:
            return lbapi.get_load_balancer(lb.id).provisioning_status == "DELETED"
        except sdk_exceptions.NotFoundException:
            return True

    wait_until(f"load balancer {name} to be deleted", gone, max(0.0, deadline - time.monotonic()))
    return lb.id


# -- servers -------------------------------------------------------------------------------

DEVICE_OWNER = "compute:nova"
SERVER_CIDR = "10.20.0.0/16"


def ensure_network(conn, name: str, cidr: str = SERVER_CIDR):
    """Network ``name`` (created with one subnet for ``cidr`` if missing) and its first subnet."""
    net = conn.network.find_network(name, ignore_missing=True)
    if net is None:
        net = conn.network.create_network(name=name)
    subnet = next(iter(conn.network.subnets(network_id=net.id)), None)
    if subnet is None:
        version = ipaddress.ip_network(cidr).version
        subnet = conn.network.create_subnet(network_id=net.id, name=f"{name}-subnet", cidr=cidr, ip_version=version)
    return net, subnet


def create_servers(conn, names: list[str], network: str, ports: int = 1, port_security: bool = True,
                   write_instances=None, error: bool = False, port_options: dict | None = None) -> list[dict]:
    """Create servers ``names``, each with ``ports`` Neutron ports on ``network`` (see :func:`boot_servers`);
    ``port_options``: server name -> more fields of its ports (``security_groups``, ``allowed_address_pairs``).
    Returns the servers with their ports."""
    check_server_names(conn, names)
    net, subnet = ensure_network(conn, network)
    specs = [{"name": name, "network": {"id": net.id, "name": net.name}, "cidr": subnet.cidr,
              "port": (port_options or {}).get(name, {})} for name in names]
    return boot_servers(conn, specs, write_instances, ports=ports, port_security=port_security, error=error)


def check_server_names(conn, names: list[str]) -> None:
    """SeedError if a name is taken (one list request, filtered by Nova: it reads every listed server) or
    given twice."""
    if not names:
        return
    pattern = "^(" + "|".join(re.escape(name) for name in sorted(set(names))) + ")$"
    taken = sorted(set(names) & {s.name for s in conn.compute.servers(name=pattern)})
    if taken:
        raise SeedError(f"server(s) named {', '.join(map(repr, taken))} exist already")
    if len(set(names)) != len(names):
        raise SeedError("server names must be unique")


def boot_servers(conn, specs: list[dict], write_instances, ports: int = 1, port_security: bool = True,
                 error: bool = False) -> list[dict]:
    """Servers ``specs`` (``{"name", "network": {"id", "name"}, "cidr", "port": more port fields}``), each
    with ``ports`` Neutron ports on its network whose device_id is the server (Neutron's bulk create, 100
    ports a request, whatever the networks), then the "booted" instances themselves through one
    ``write_instances(payload)`` (Nova's objects, in a process of its own); with ``error``, instances whose
    boot failed (vm_state error: Nova shows status ERROR). Returns the servers with their ports."""
    if ports < 1:
        raise SeedError("a server needs at least one port")
    servers = [{"uuid": str(uuid.uuid4()), "name": spec["name"], "vm_state": "error" if error else "active"}
               for spec in specs]
    body = []
    for server, spec in zip(servers, specs, strict=True):
        for i in range(1, ports + 1):
            port = {"network_id": spec["network"]["id"], "name": f"{server['name']}-port-{i}",
                    "device_id": server["uuid"], "device_owner": DEVICE_OWNER, **spec.get("port", {})}
            if not port_security:
                port["port_security_enabled"] = False
            body.append(port)
    created = []
    for chunk in range(0, len(body), 100):
        response = conn.network.post("/ports", json={"ports": body[chunk:chunk + 100]})
        if response.status_code >= 400:
            raise SeedError(f"creating ports failed: {response.status_code} {response.text}")
        created += response.json()["ports"]
    by_device: dict[str, list[dict]] = {}
    for port in created:
        by_device.setdefault(port["device_id"], []).append(port)
    for server, spec in zip(servers, specs, strict=True):
        server["ports"] = [
            {"port_id": p["id"], "mac": p["mac_address"], "network_id": spec["network"]["id"],
             "network_name": spec["network"]["name"], "cidr": spec["cidr"],
             "ip": p["fixed_ips"][0]["ip_address"] if p["fixed_ips"] else None}
            for p in sorted(by_device[server["uuid"]], key=lambda p: p["name"])
        ]
    if servers:
        write_instances({"project_id": conn.current_project_id, "user_id": conn.current_user_id,
                         "servers": servers})
    return [
        {"id": s["uuid"], "name": s["name"], "network": spec["network"]["name"],
         "status": "ERROR" if error else "ACTIVE",
         "ports": [{"id": p["port_id"], "ip_address": p["ip"], "port_security_enabled": port_security}
                   for p in s["ports"]]}
        for s, spec in zip(servers, specs, strict=True)
    ]


def find_server(conn, name_or_id: str):
    server = conn.compute.find_server(name_or_id, ignore_missing=True)
    if server is None:
        raise SeedError(f"no server named {name_or_id!r}")
    return server


def delete_server(conn, admin, name_or_id: str, write_instances) -> str:
    """Delete the server's ports and the instance itself. Returns its id.

    ``admin``: Neutron's policy lets only admins (and Nova) delete a port a server owns.
    """
    server = find_server(conn, name_or_id)
    for port in conn.network.ports(device_id=server.id):
        admin.network.delete_port(port.id)
    write_instances({"delete": [server.id]})
    return server.id


def list_servers(conn) -> list[dict]:
    """Servers (from nova-api) with their Neutron ports and those ports' security groups."""
    servers = list(conn.compute.servers())
    ports: dict[str, list] = {}
    if servers:
        for port in conn.network.ports(device_id=[s.id for s in servers]):
            ports.setdefault(port.device_id, []).append(port)
    return [
        {"id": s.id, "name": s.name, "status": s.status,
         "ports": [{"id": p.id, "name": p.name, "port_security_enabled": p.is_port_security_enabled,
                    "security_group_ids": sorted(p.security_group_ids or [])}
                   for p in sorted(ports.get(s.id, []), key=lambda p: p.name or "")]}
        for s in sorted(servers, key=lambda s: s.name)
    ]
