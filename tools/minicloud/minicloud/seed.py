"""Seeding helpers: a load balancer with listener, pool, monitor and members, in one call."""

from __future__ import annotations

import ipaddress
import itertools
import time

from openstack import exceptions as sdk_exceptions

NETWORK_NAME = "minicloud"
LISTENER_PORT = 6443
# Members at or above this count are added with one batch member update.
BATCH_THRESHOLD = 4
FIRST_MEMBER_HOST = 10


class SeedError(RuntimeError):
    pass


def wait_until(description: str, check, timeout: float, interval: float = 0.2):
    """Poll ``check()`` until it returns something truthy (returned), or raise SeedError at ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise SeedError(f"timed out after {timeout:.0f} s waiting for {description}")
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
    """Delete load balancer NAME and everything under it; wait until it is gone. Returns its id."""
    lbapi = conn.load_balancer
    lb = lbapi.find_load_balancer(name, ignore_missing=True)
    if lb is None:
        raise SeedError(f"no load balancer named {name!r}")
    lbapi.delete_load_balancer(lb.id, cascade=True)

    def gone():
        try:
            return lbapi.get_load_balancer(lb.id).provisioning_status == "DELETED"
        except sdk_exceptions.NotFoundException:
            return True

    wait_until(f"load balancer {name} to be deleted", gone, timeout)
    return lb.id
