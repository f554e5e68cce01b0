"""Seeding for cluster routing: a router on a node subnet, node ports with fixed addresses, static
routes (healthy or broken on purpose: duplicates, stale, missing) and allowed address pairs.

    python -m minicloud router create r1 --network nodes --cidr 10.180.0.0/24
    python -m minicloud router nodes r1 --count 3 --pod-cidr 198.19.0.0/16 --routes --address-pairs
    python -m minicloud router routes r1 --add 198.19.1.0/24=10.180.0.3 --add 198.19.1.0/24=10.180.0.4
    python -m minicloud router routes r1 --clear          # a failover that lost every route

Routes are written the way a client would: ``--set`` and ``--clear`` with a router update of the whole
list, ``--add`` and ``--remove`` with the extraroute-atomic calls. Neutron checks each nexthop (on a
subnet of the router) and the route limit (``up --max-routes``) for these as for anyone.
"""

from __future__ import annotations

import ipaddress
import itertools
import random
import uuid

from minicloud.seeding.openstack import DEVICE_OWNER, SeedError, ensure_network

NODE_CIDR = "10.180.0.0/24"
FIRST_NODE_HOST = 10
PORTS_PER_REQUEST = 100
# Node ports get their MAC from here: locally administered (02:...), so never one Neutron draws itself from
# its base_mac (fa:16:3e:...), 32 random bits each.
NODE_MAC_PREFIX = "02:fc:"


def parse_route(text: str) -> dict:
    """``DEST=NEXTHOP`` -> a route dict (the strings as given: Neutron gets to judge them)."""
    destination, sep, nexthop = text.partition("=")
    if not sep or not destination or not nexthop:
        raise SeedError(f"a route is DEST=NEXTHOP, e.g. 198.19.1.0/24=10.180.0.5; got {text!r}")
    return {"destination": destination.strip(), "nexthop": nexthop.strip()}


def find_router(conn, name: str):
    router = conn.network.find_router(name, ignore_missing=True)
    if router is None:
        raise SeedError(f"no router named {name!r}")
    return router


def _router_view(conn, router_id: str) -> dict:
    router = conn.network.get(f"/routers/{router_id}").json()["router"]
    ports = conn.network.get("/ports", params={"device_id": router_id}).json()["ports"]
    return {"id": router["id"], "name": router["name"], "revision_number": router.get("revision_number"),
            "routes": router.get("routes", []),
            "interfaces": [ip for p in ports for ip in p["fixed_ips"]]}


def create_router(conn, name: str, network: str, cidr: str = NODE_CIDR) -> dict:
    """Router NAME with an interface on ``network`` (created with a subnet for ``cidr`` if missing)."""
    if conn.network.find_router(name, ignore_missing=True):
        raise SeedError(f"a router named {name!r} exists already")
    net, subnet = ensure_network(conn, network, cidr)
    router = conn.network.create_router(name=name)
    conn.network.add_interface_to_router(router, subnet_id=subnet.id)
    view = _router_view(conn, router.id)
    view.update(network={"id": net.id, "name": net.name}, subnet={"id": subnet.id, "cidr": subnet.cidr})
    return view


def show_router(conn, name: str) -> dict:
    return _router_view(conn, find_router(conn, name).id)


def _write(response, what: str):
    if response.status_code >= 400:
        raise SeedError(f"{what} failed: {response.status_code} {response.text}")
    return response.json()


def set_routes(conn, name: str, replace: list[dict] | None = None, add: list[dict] | None = None,
               remove: list[dict] | None = None) -> dict:
    """Replace the router's routes (``replace``, [] clears), then add and remove some; returns the router."""
    router = find_router(conn, name)
    if replace is not None:
        _write(conn.network.put(f"/routers/{router.id}", json={"router": {"routes": replace}}), "router update")
    if add:
        _write(conn.network.put(f"/routers/{router.id}/add_extraroutes", json={"router": {"routes": add}}),
               "add_extraroutes")
    if remove:
        _write(conn.network.put(f"/routers/{router.id}/remove_extraroutes", json={"router": {"routes": remove}}),
               "remove_extraroutes")
    return _router_view(conn, router.id)


def pod_cidrs(pod_cidr: str, prefix: int, count: int, first: int = 1) -> list[str]:
    """``count`` pod CIDRs of length ``prefix`` inside ``pod_cidr``, from the ``first``-th on."""
    subnets = itertools.islice(ipaddress.ip_network(pod_cidr).subnets(new_prefix=prefix), first, first + count)
    found = [str(s) for s in subnets]
    if len(found) < count:
        raise SeedError(f"{pod_cidr} holds {len(found)} /{prefix} pod CIDRs from number {first} on, not {count}")
    return found


def unique_macs(count: int, taken, rng: random.Random | None = None) -> list[str]:
    """``count`` MAC addresses for new node ports, none of them in ``taken`` (the MACs on the network, any
    case) and none twice.

    Neutron draws a port's MAC at random (24 bits after its base_mac) and a bulk create does not look at the
    ports the network has, so seeding thousands of ports on one network meets HTTP 409
    NeutronDbObjectDuplicateEntry on (network_id, mac_address) sooner or later (one in two at 5000 ports).
    Ports created with these MACs never collide with each other or with the network's ports."""
    rng = rng or random.Random()
    used = {str(mac).lower() for mac in taken}
    macs: list[str] = []
    while len(macs) < count:
        mac = NODE_MAC_PREFIX + ":".join(f"{byte:02x}" for byte in rng.getrandbits(32).to_bytes(4, "big"))
        if mac not in used:
            used.add(mac)
            macs.append(mac)
    return macs


def create_nodes(conn, router_name: str, count: int, prefix: str = "node", pod_cidr: str = "198.19.0.0/16",
                 pod_prefix: int = 24, first: int = 1, routes: bool = False, address_pairs: bool = False) -> list[dict]:
    """``count`` node ports (``PREFIX-<i>``, compute ports with fixed addresses from the router's first
    subnet, host 10 on) with pod CIDRs; with ``routes`` the router gets each node's route, with
    ``address_pairs`` each port its pod CIDR in allowed_address_pairs. Each port gets an explicit MAC
    (``unique_macs``): Neutron's random ones collide on networks of thousands of ports. Returns the nodes
    in the shape route_audit's ``nodes`` option takes (plus ``port``)."""
    view = show_router(conn, router_name)
    if not view["interfaces"]:
        raise SeedError(f"router {router_name!r} has no interface")
    subnet = conn.network.get_subnet(view["interfaces"][0]["subnet_id"])
    hosts = itertools.islice(ipaddress.ip_network(subnet.cidr).hosts(), FIRST_NODE_HOST - 1 + first - 1, None)
    existing = list(conn.network.ports(network_id=subnet.network_id))
    taken = {ip["ip_address"] for p in existing for ip in p.fixed_ips}
    free = (str(h) for h in hosts if str(h) not in taken)
    addresses = list(itertools.islice(free, count))
    if len(addresses) < count:
        raise SeedError(f"subnet {subnet.cidr} has room for {len(addresses)} more nodes, not {count}")
    cidrs = pod_cidrs(pod_cidr, pod_prefix, count, first)
    nodes = [{"name": f"{prefix}-{i}", "pod_cidr": cidr, "address": address}
             for i, (cidr, address) in enumerate(zip(cidrs, addresses), start=first)]
    macs = unique_macs(len(nodes), (p.mac_address for p in existing))
    body = [{"network_id": subnet.network_id, "name": f"{n['name']}-port", "device_id": str(uuid.uuid4()),
             "device_owner": DEVICE_OWNER, "mac_address": mac,
             "fixed_ips": [{"subnet_id": subnet.id, "ip_address": n["address"]}],
             **({"allowed_address_pairs": [{"ip_address": n["pod_cidr"]}]} if address_pairs else {})}
            for n, mac in zip(nodes, macs)]
    created = []
    for start in range(0, len(body), PORTS_PER_REQUEST):
        created += _write(conn.network.post("/ports", json={"ports": body[start:start + PORTS_PER_REQUEST]}),
                          "creating node ports")["ports"]
    by_name = {p["name"]: p["id"] for p in created}
    for node in nodes:
        node["port"] = by_name[f"{node['name']}-port"]
    if routes and nodes:
        set_routes(conn, router_name, add=[{"destination": n["pod_cidr"], "nexthop": n["address"]} for n in nodes])
    return nodes


def delete_router(conn, name: str) -> str:
    """Clear the routes, detach every interface, delete the router. Returns its id."""
    router = find_router(conn, name)
    conn.network.put(f"/routers/{router.id}", json={"router": {"routes": []}})
    for port in conn.network.ports(device_id=router.id):
        for ip in port.fixed_ips:
            conn.network.remove_interface_from_router(router, subnet_id=ip["subnet_id"])
    conn.network.delete_router(router.id)
    return router.id
