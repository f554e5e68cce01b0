"""Command line: ``python -m minicloud VERB ...`` (see ``--help``)."""

from __future__ import annotations

import argparse
import json
import os
import sys

from minicloud.traffic import hidden_extensions
from minicloud.runtime.control import Minicloud, MinicloudError
from minicloud.traffic.faults import DROP, FAULT_STATUSES, SERVICES
from minicloud.kube.capo_mode import MODES as CAPI_PROVIDER_MODES
from minicloud.octavia_provider.modes import MODES
from minicloud.seeding.neutron_routers import NODE_CIDR, parse_route
from minicloud.seeding.openstack import SeedError
from minicloud.runtime.settings import Settings, free_port_offset


def _print_json(data) -> None:
    print(json.dumps(data, indent=2))


def _port_offset(value: str) -> int | str:
    return value if value == "auto" else int(value)


def cmd_up(cloud: Minicloud, args) -> int:
    offset = args.port_offset
    if offset == "auto":  # a state folder keeps the offset it was first set up with
        offset = 0 if Settings.load(cloud.state) else free_port_offset()
    status, summary = cloud.up(port_offset=offset, fresh=args.fresh, timeout=args.timeout, max_routes=args.max_routes)
    print(summary)
    _print_status(status)
    return 0


def cmd_down(cloud: Minicloud, args) -> int:
    stopped = cloud.down(purge=args.purge)
    print(f"stopped: {', '.join(stopped)}" if stopped else "nothing was running")
    if args.purge:
        print(f"removed {cloud.state_dir}")
    return 0


def _print_status(status) -> None:
    if not status.processes:
        print(f"no minicloud in {status.state_dir}")
        return
    for p in status.processes:
        health = "healthy" if p.healthy else "DOWN"
        print(f"{p.name:22} pid {str(p.pid or '-'):>8}  {health:8} {p.endpoint}")


def cmd_status(cloud: Minicloud, args) -> int:
    status = cloud.status()
    if args.json:
        _print_json(status.to_dict())
    else:
        _print_status(status)
    return 0 if status.healthy else 1


def cmd_env(cloud: Minicloud, args) -> int:
    print(cloud.env())
    return 0


def cmd_octavia(cloud: Minicloud, args) -> int:
    if args.mode is None:
        _print_json(cloud.octavia_mode())
    else:
        _print_json(cloud.set_octavia_mode(args.mode, members=args.members, delay=args.delay))
    return 0


def cmd_fault(cloud: Minicloud, args) -> int:
    if args.fault_action == "add":
        _print_json(cloud.add_fault(args.service, method=args.method, path=args.path, status=args.status,
                                    retry_after=args.retry_after, count=args.count, delay=args.delay))
    elif args.fault_action == "list":
        _print_json(cloud.faults())
    else:
        print(f"cleared {cloud.clear_faults()} fault rule(s)")
    return 0


def cmd_extension(cloud: Minicloud, args) -> int:
    if args.extension_action == "hide":
        hidden = cloud.hide_extension(args.alias)
    elif args.extension_action == "restore":
        hidden = cloud.restore_extensions(args.alias)
    else:
        hidden = cloud.hidden_extensions()
    _print_json({"hidden": hidden})
    return 0


def cmd_requests(cloud: Minicloud, args) -> int:
    _print_json(cloud.request_counts(service=args.service, reset=args.reset))
    return 0


def cmd_lb(cloud: Minicloud, args) -> int:
    if args.lb_action == "create":
        _print_json(cloud.create_lb(args.name, members=args.members, monitor=args.monitor,
                                    member_port=args.member_port, cidr=args.cidr, timeout=args.timeout))
    else:
        print(json.dumps({"deleted": cloud.delete_lb(args.name, timeout=args.timeout), "name": args.name}))
    return 0


def cmd_server(cloud: Minicloud, args) -> int:
    if args.server_action == "create":
        names = [args.name] if args.count is None else [f"{args.name}-{i}" for i in range(1, args.count + 1)]
        _print_json(cloud.create_servers(names, args.network, ports=args.ports,
                                         port_security=not args.no_port_security, error=args.error))
    elif args.server_action == "delete":
        print(json.dumps({"deleted": cloud.delete_server(args.name), "name": args.name}))
    else:
        _print_json(cloud.list_servers())
    return 0


def cmd_router(cloud: Minicloud, args) -> int:
    if args.router_action == "create":
        _print_json(cloud.create_router(args.name, args.network, cidr=args.cidr))
    elif args.router_action == "routes":
        replace = [] if args.clear else ([parse_route(x) for x in args.set] if args.set else None)
        _print_json(cloud.set_routes(args.name, replace=replace, add=[parse_route(x) for x in args.add or []],
                                     remove=[parse_route(x) for x in args.remove or []]))
    elif args.router_action == "nodes":
        _print_json(cloud.create_nodes(args.name, args.count, prefix=args.prefix, pod_cidr=args.pod_cidr,
                                       pod_prefix=args.pod_prefix, first=args.first, routes=args.routes,
                                       address_pairs=args.address_pairs))
    elif args.router_action == "delete":
        print(json.dumps({"deleted": cloud.delete_router(args.name), "name": args.name}))
    else:
        _print_json(cloud.router(args.name))
    return 0


def cmd_capi(cloud: Minicloud, args) -> int:
    if args.capi_area == "provider":
        if args.mode is None:
            _print_json(cloud.capi_provider_mode())
        else:
            _print_json(cloud.set_capi_provider_mode(args.mode, delay=args.delay))
    elif args.capi_area == "rollout":
        if len(args.words) == 2 and args.words[0] == "status":
            _print_json(cloud.capi_rollout_status(args.words[1], namespace=args.namespace))
        elif len(args.words) == 1:
            _print_json(cloud.capi_rollout(args.words[0], namespace=args.namespace, capo_wait=args.capo_wait))
        else:
            raise ValueError("usage: capi rollout NAME [--capo-wait member|lb] | capi rollout status NAME")
    elif args.capi_area == "history":
        if args.summary:
            _print_json(cloud.capi_history_summary(args.name, namespace=args.namespace, rollout=args.rollout))
        else:
            _print_json(cloud.capi_history(args.name, namespace=args.namespace, rollout=args.rollout))
    elif args.cluster_action == "create":
        _print_json(cloud.create_capi_cluster(args.name, control_plane=args.control_plane, workers=args.workers,
                                              api_version=args.api_version, namespace=args.namespace,
                                              openstack=args.openstack, monitor=args.monitor))
    elif args.cluster_action == "delete":
        _print_json({"deleted": cloud.delete_capi_cluster(args.name, namespace=args.namespace, target=args.target),
                     "name": args.name})
    else:
        _print_json(cloud.list_capi_clusters(namespace=args.namespace, target=args.target))
    return 0


def _label(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError("a label is KEY=VALUE")
    return key, value


def cmd_kube(cloud: Minicloud, args) -> int:
    if args.node_action == "create":
        _print_json(cloud.create_node(args.name, args.pod_cidr, args.address, labels=dict(args.label or [])))
    elif args.node_action == "delete":
        cloud.delete_node(args.name)
        print(json.dumps({"deleted": args.name}))
    else:
        _print_json(cloud.list_nodes())
    return 0


def _parser_with(common: argparse.ArgumentParser):
    """A parser class whose instances all inherit the options of ``common``."""

    class Parser(argparse.ArgumentParser):
        def __init__(self, *args, **kwargs):
            kwargs.setdefault("parents", [common])
            super().__init__(*args, **kwargs)

    return Parser


def _status_value(text: str):
    if text == DROP:
        return text
    try:
        value = int(text)
    except ValueError:
        value = None
    if value not in FAULT_STATUSES:
        raise argparse.ArgumentTypeError(f"choose from {', '.join(map(str, FAULT_STATUSES))} or {DROP}")
    return value


STATE_DIR_HELP = ("state folder (default: $MINICLOUD_STATE_DIR, else .minicloud/ beside the nearest "
                  "galaxy.yml, else ./.minicloud)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m minicloud", description=__doc__)
    parser.add_argument("--state-dir", help=STATE_DIR_HELP)
    # --state-dir is accepted after the verb too.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--state-dir", default=argparse.SUPPRESS, help=STATE_DIR_HELP)
    verbs = parser.add_subparsers(dest="verb", required=True, parser_class=_parser_with(common))

    p = verbs.add_parser("up", help="start Keystone, Neutron, Octavia, nova-api (idempotent)")
    p.add_argument("--port-offset", type=_port_offset, default=0,
                   help="add this to every port (5000, 9696, 9876, 8774); 'auto' picks a free one")
    p.add_argument("--fresh", action="store_true", help="reset all data to the freshly initialised state")
    p.add_argument("--timeout", type=float, default=90.0, help="seconds to wait for the services")
    p.add_argument("--max-routes", type=int,
                   help="Neutron's per-router route limit (default 30; kept in the state folder)")
    p.set_defaults(func=cmd_up)

    p = verbs.add_parser("down", help="stop the processes minicloud started")
    p.add_argument("--purge", action="store_true", help="also remove the state folder")
    p.set_defaults(func=cmd_down)

    p = verbs.add_parser("status", help="show each process; exit 1 unless all are healthy")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_status)

    p = verbs.add_parser("env", help="print the shell line pointing openstack clients at clouds.yaml")
    p.set_defaults(func=cmd_env)

    p = verbs.add_parser("octavia", help="show or set the provider emulator's mode")
    p.add_argument("mode", nargs="?", choices=MODES)
    p.add_argument("--members", default="*", help="glob on member names or addresses (default *)")
    p.add_argument("--delay", type=float, help="seconds per status step (default 0.5; slow: 10)")
    p.set_defaults(func=cmd_octavia)

    p = verbs.add_parser("fault", help="add, list or clear HTTP fault rules")
    actions = p.add_subparsers(dest="fault_action", required=True)
    add = actions.add_parser("add", help="add a rule")
    add.add_argument("--service", required=True, choices=SERVICES)
    add.add_argument("--method", default="*", help="HTTP method (default any)")
    add.add_argument("--path", default="*", help="glob on the request path, e.g. /v2/lbaas/pools/*/members")
    add.add_argument("--status", type=_status_value, help="429, 500, 502, 503, 504 or drop")
    add.add_argument("--retry-after", type=float, help="Retry-After header value, seconds")
    add.add_argument("--count", type=int, help="fire this many times, then the rule is spent")
    add.add_argument("--delay", type=float, default=0.0, help="seconds to wait before answering")
    actions.add_parser("list", help="list rules with how often each fired")
    actions.add_parser("clear", help="remove all rules")
    p.set_defaults(func=cmd_fault)

    p = verbs.add_parser("extension", help="hide API extensions: answer as an older cloud without them")
    actions = p.add_subparsers(dest="extension_action", required=True)
    hide = actions.add_parser("hide", help="leave ALIAS out of the extension list and answer 404 on its paths")
    hide.add_argument("alias", choices=sorted(hidden_extensions.HIDEABLE))
    restore = actions.add_parser("restore", help="serve ALIAS again (default: every hidden extension)")
    restore.add_argument("alias", nargs="?", choices=sorted(hidden_extensions.HIDEABLE))
    actions.add_parser("list", help="the hidden extensions")
    p.set_defaults(func=cmd_extension)

    p = verbs.add_parser("requests", help="request counts by service, method and path")
    p.add_argument("--service", choices=SERVICES)
    p.add_argument("--reset", action="store_true", help="zero the counts after printing")
    p.set_defaults(func=cmd_requests)

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

    p = verbs.add_parser("router", help="seed a cluster's router, node ports and (broken) routes (as the demo user)")
    actions = p.add_subparsers(dest="router_action", required=True)
    create = actions.add_parser("create", help="a router with an interface on the node network")
    create.add_argument("name")
    create.add_argument("--network", required=True, help="node network (created with a subnet if missing)")
    create.add_argument("--cidr", default=NODE_CIDR, help=f"the node subnet when it is created (default {NODE_CIDR})")
    routes = actions.add_parser("routes", help="replace, add or remove static routes, then show them")
    routes.add_argument("name")
    routes.add_argument("--set", action="append", metavar="DEST=NEXTHOP", help="the whole list (repeatable)")
    routes.add_argument("--clear", action="store_true", help="remove every route (a failover that lost them)")
    routes.add_argument("--add", action="append", metavar="DEST=NEXTHOP", help="add_extraroutes (repeatable)")
    routes.add_argument("--remove", action="append", metavar="DEST=NEXTHOP", help="remove_extraroutes (repeatable)")
    nodes = actions.add_parser("nodes", help="node ports with fixed addresses and pod CIDRs, as route_audit's nodes")
    nodes.add_argument("name", help="the router (its first subnet gives the addresses, host 10 on)")
    nodes.add_argument("--count", type=int, required=True)
    nodes.add_argument("--prefix", default="node", help="node names PREFIX-<i> (default node)")
    nodes.add_argument("--pod-cidr", default="198.19.0.0/16", help="the cluster CIDR the pod CIDRs come from")
    nodes.add_argument("--pod-prefix", type=int, default=24, help="pod CIDR length (default 24)")
    nodes.add_argument("--first", type=int, default=1, help="number of the first node and pod CIDR (default 1)")
    nodes.add_argument("--routes", action="store_true", help="also add each node's route to the router")
    nodes.add_argument("--address-pairs", action="store_true", help="ports with their pod CIDR as address pair")
    show = actions.add_parser("show", help="routes and interfaces")
    show.add_argument("name")
    delete = actions.add_parser("delete", help="clear routes, detach interfaces, delete")
    delete.add_argument("name")
    p.set_defaults(func=cmd_router)

    p = verbs.add_parser("capi", help="CAPI on the emulated Kubernetes API: provider mode, seeded clusters")
    areas = p.add_subparsers(dest="capi_area", required=True)
    provider = areas.add_parser("provider", help="show or set how the infrastructure provider reacts to a pause")
    provider.add_argument("mode", nargs="?", choices=CAPI_PROVIDER_MODES)
    provider.add_argument("--delay", type=float, help="seconds after the pause (default 2)")
    cluster = areas.add_parser("cluster", help="seed, remove or list CAPI clusters")
    actions = cluster.add_subparsers(dest="cluster_action", required=True)
    create = actions.add_parser("create", help="a provisioned cluster: Cluster, KCP, Machines, Nodes, Secrets...")
    create.add_argument("name")
    create.add_argument("--control-plane", type=int, default=1, help="control-plane machines (default 1)")
    create.add_argument("--workers", type=int, default=0, help="worker machines (default 0)")
    create.add_argument("--api-version", choices=("v1beta1", "v1beta2"), default="v1beta2",
                        help="CAPI contract the objects are written in (default v1beta2)")
    create.add_argument("--namespace", default="default")
    create.add_argument("--openstack", action="store_true",
                        help="also a network, a server per control-plane machine and the API load balancer "
                             "with their members, as CAPO makes them (needed by 'capi rollout')")
    create.add_argument("--monitor", action="store_true", help="with --openstack: a TCP health monitor on the pool")
    delete = actions.add_parser("delete", help="remove every object of the cluster")
    delete.add_argument("name")
    delete.add_argument("--namespace", default="default")
    listing = actions.add_parser("list", help="clusters as JSON")
    listing.add_argument("--namespace", help="default: all namespaces")
    for action in (delete, listing):
        action.add_argument("--target", action="store_true",
                            help="on the move target API (kubernetes-target) instead of the main one")
    rolling = areas.add_parser("rollout", help="roll a control plane (cluster created with --openstack)")
    rolling.add_argument("words", nargs="+", metavar="[status] NAME",
                         help="NAME starts a rollout and returns at once; 'status NAME' shows it (JSON)")
    rolling.add_argument("--namespace", default="default")
    rolling.add_argument("--capo-wait", choices=("member", "lb"), default="member",
                         help="member: CAPO waits for the new member to be ACTIVE; lb: only for the load "
                              "balancer (CAPO before v0.14)")
    recorded = areas.add_parser("history", help="pool members and machines sampled during the last rollout")
    recorded.add_argument("name")
    recorded.add_argument("--namespace", default="default")
    recorded.add_argument("--rollout", type=int, help="which rollout (default: the latest)")
    recorded.add_argument("--summary", action="store_true", help="min serving, min active... instead of samples")
    p.set_defaults(func=cmd_capi)

    p = verbs.add_parser("kube", help="objects of the emulated Kubernetes API")
    areas = p.add_subparsers(dest="kube_area", required=True)
    node = areas.add_parser("node", help="create, delete or list nodes")
    actions = node.add_subparsers(dest="node_action", required=True)
    create = actions.add_parser("create", help="a Ready node with a pod CIDR and an InternalIP")
    create.add_argument("name")
    create.add_argument("--pod-cidr", required=True)
    create.add_argument("--address", required=True, help="InternalIP")
    create.add_argument("--label", type=_label, action="append", help="KEY=VALUE (repeatable)")
    delete = actions.add_parser("delete")
    delete.add_argument("name")
    actions.add_parser("list", help="nodes with pod CIDRs and InternalIPs")
    p.set_defaults(func=cmd_kube)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    cloud = Minicloud(args.state_dir)
    try:
        return args.func(cloud, args)
    except (MinicloudError, SeedError, ValueError) as exc:
        print(f"minicloud: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # output piped into e.g. head: no traceback at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
