"""Verbs lb, server and router: objects seeded as the demo user."""

from __future__ import annotations

import json

from minicloud.cli.common import print_json
from minicloud.runtime.control import Minicloud
from minicloud.seeding.neutron_routers import NODE_CIDR, parse_route


def cmd_lb(cloud: Minicloud, args) -> int:
    if args.lb_action == "create":
        print_json(cloud.create_lb(args.name, members=args.members, monitor=args.monitor,
                                   member_port=args.member_port, cidr=args.cidr, timeout=args.timeout))
    else:
        print(json.dumps({"deleted": cloud.delete_lb(args.name, timeout=args.timeout), "name": args.name}))
    return 0


def cmd_server(cloud: Minicloud, args) -> int:
    if args.server_action == "create":
        names = [args.name] if args.count is None else [f"{args.name}-{i}" for i in range(1, args.count + 1)]
        print_json(cloud.create_servers(names, args.network, ports=args.ports,
                                        port_security=not args.no_port_security, error=args.error))
    elif args.server_action == "delete":
        print(json.dumps({"deleted": cloud.delete_server(args.name), "name": args.name}))
    else:
        print_json(cloud.list_servers())
    return 0


def cmd_router(cloud: Minicloud, args) -> int:
    if args.router_action == "create":
        print_json(cloud.create_router(args.name, args.network, cidr=args.cidr))
    elif args.router_action == "routes":
        replace = [] if args.clear else ([parse_route(x) for x in args.set] if args.set else None)
        print_json(cloud.set_routes(args.name, replace=replace, add=[parse_route(x) for x in args.add or []],
                                    remove=[parse_route(x) for x in args.remove or []]))
    elif args.router_action == "nodes":
        print_json(cloud.create_nodes(args.name, args.count, prefix=args.prefix, pod_cidr=args.pod_cidr,
                                      pod_prefix=args.pod_prefix, first=args.first, routes=args.routes,
                                      address_pairs=args.address_pairs))
    elif args.router_action == "delete":
        print(json.dumps({"deleted": cloud.delete_router(args.name), "name": args.name}))
    else:
        print_json(cloud.router(args.name))
    return 0


def add_lb_verb(verbs) -> None:
    p = verbs.add_parser("lb", help="seed or remove a load balancer (as the demo user)")
    actions = p.add_subparsers(dest="lb_action", required=True)
    create = actions.add_parser("create", help="network, LB, listener, pool, monitor, members")
    create.add_argument("name")
    create.add_argument("--members", type=int, default=0)
    create.add_argument("--monitor", action="store_true", help="add a TCP health monitor")
    create.add_argument("--member-port", type=int, default=6443)
    create.add_argument("--cidr", default="10.0.0.0/24")
    create.add_argument("--timeout", type=float, default=120.0)
    delete = actions.add_parser("delete", help="cascade delete")
    delete.add_argument("name")
    delete.add_argument("--timeout", type=float, default=60.0)
    p.set_defaults(func=cmd_lb)


def add_server_verb(verbs) -> None:
    p = verbs.add_parser("server", help="seed, remove or list servers (as the demo user)")
    actions = p.add_subparsers(dest="server_action", required=True)
    create = actions.add_parser("create", help="a booted server with real Neutron ports (device_id = server)")
    create.add_argument("name")
    create.add_argument("--network", required=True, help="network name (created with a subnet if missing)")
    create.add_argument("--ports", type=int, default=1, help="ports per server (default 1)")
    create.add_argument("--no-port-security", action="store_true", help="ports with port_security_enabled false")
    create.add_argument("--count", type=int, help="create NAME-1 .. NAME-COUNT instead of NAME")
    create.add_argument("--error", action="store_true", help="servers whose boot failed (Nova status ERROR)")
    delete = actions.add_parser("delete", help="delete the server and its ports")
    delete.add_argument("name")
    actions.add_parser("list", help="servers with their ports and security groups")
    p.set_defaults(func=cmd_server)


def _add_router_routes(actions) -> None:
    routes = actions.add_parser("routes", help="replace, add or remove static routes, then show them")
    routes.add_argument("name")
    routes.add_argument("--set", action="append", metavar="DEST=NEXTHOP", help="the whole list (repeatable)")
    routes.add_argument("--clear", action="store_true", help="remove every route (a failover that lost them)")
    routes.add_argument("--add", action="append", metavar="DEST=NEXTHOP", help="add_extraroutes (repeatable)")
    routes.add_argument("--remove", action="append", metavar="DEST=NEXTHOP", help="remove_extraroutes (repeatable)")


def _add_router_nodes(actions) -> None:
    nodes = actions.add_parser("nodes", help="node ports with fixed addresses and pod CIDRs, as route_audit's nodes")
    nodes.add_argument("name", help="the router (its first subnet gives the addresses, host 10 on)")
    nodes.add_argument("--count", type=int, required=True)
    nodes.add_argument("--prefix", default="node", help="node names PREFIX-<i> (default node)")
    nodes.add_argument("--pod-cidr", default="198.19.0.0/16", help="the cluster CIDR the pod CIDRs come from")
    nodes.add_argument("--pod-prefix", type=int, default=24, help="pod CIDR length (default 24)")
    nodes.add_argument("--first", type=int, default=1, help="number of the first node and pod CIDR (default 1)")
    nodes.add_argument("--routes", action="store_true", help="also add each node's route to the router")
    nodes.add_argument("--address-pairs", action="store_true", help="ports with their pod CIDR as address pair")


def add_router_verb(verbs) -> None:
    p = verbs.add_parser("router", help="seed a cluster's router, node ports and (broken) routes (as the demo user)")
    actions = p.add_subparsers(dest="router_action", required=True)
    create = actions.add_parser("create", help="a router with an interface on the node network")
    create.add_argument("name")
    create.add_argument("--network", required=True, help="node network (created with a subnet if missing)")
    create.add_argument("--cidr", default=NODE_CIDR, help=f"the node subnet when it is created (default {NODE_CIDR})")
    _add_router_routes(actions)
    _add_router_nodes(actions)
    show = actions.add_parser("show", help="routes and interfaces")
    show.add_argument("name")
    delete = actions.add_parser("delete", help="clear routes, detach interfaces, delete")
    delete.add_argument("name")
    p.set_defaults(func=cmd_router)


def add_verbs(verbs) -> None:
    add_lb_verb(verbs)
    add_server_verb(verbs)
    add_router_verb(verbs)
