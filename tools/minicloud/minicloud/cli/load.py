"""Verb load: a load generator through a load balancer's VIP, and the data plane's settings."""

from __future__ import annotations

from minicloud.cli.common import print_json
from minicloud.runtime.control import Minicloud


def cmd_load(cloud: Minicloud, args) -> int:
    if args.load_action == "start":
        print_json(cloud.load_start(args.name, args.lb, rate=args.rate, clients=args.clients, watches=args.watches,
                                    port=args.port, keepalive=args.keepalive, keepalive_rate=args.keepalive_rate))
    elif args.load_action == "stop":
        print_json({"name": args.name, "stopped": cloud.load_stop(args.name)})
    elif args.load_action == "sessions":
        print_json(cloud.lb_sessions(args.lb))
    elif args.load_action == "report":
        print_json(cloud.load_report(args.name, since=args.since, until=args.until))
    else:
        changes = {}
        if args.check_interval_cap is not None:
            cap = args.check_interval_cap
            changes["check_interval_cap"] = None if cap == "none" else float(cap)
        print_json(cloud.set_dataplane(**changes) if changes else cloud.dataplane_settings())
    return 0


def add_verbs(verbs) -> None:
    load = verbs.add_parser("load", help="traffic through a load balancer's VIP: start, stop, report; "
                                         "the data plane's settings")
    actions = load.add_subparsers(dest="load_action", required=True)
    start = actions.add_parser("start", help="start a load generator (in the background)")
    start.add_argument("name", help="the generator's name (its record keeps it)")
    start.add_argument("--lb", required=True, help="load balancer name or id")
    start.add_argument("--port", type=int, default=6443, help="listener port (default 6443)")
    start.add_argument("--rate", type=float, default=20.0, help="requests a second, all clients (default 20)")
    start.add_argument("--clients", type=int, default=4, help="client threads (default 4)")
    start.add_argument("--watches", type=int, default=2, help="long-lived watches held open (default 2)")
    start.add_argument("--keepalive", type=int, default=4,
                       help="clients that keep one HTTP/1.1 connection each, as client-go does (default 4)")
    start.add_argument("--keepalive-rate", type=float, default=5.0,
                       help="requests a second, each keep-alive client (default 5)")
    sessions = actions.add_parser("sessions", help="the client connections each member's server holds now")
    sessions.add_argument("--lb", required=True, help="load balancer name or id")
    stop = actions.add_parser("stop", help="stop a load generator")
    stop.add_argument("name")
    report = actions.add_parser("report", help="requests, failures by kind, longest error streak, latency")
    report.add_argument("name")
    report.add_argument("--since", type=float, help="only from this time (epoch seconds)")
    report.add_argument("--until", type=float, help="only up to this time (epoch seconds)")
    settings = actions.add_parser("settings", help="show or change the data plane's settings")
    settings.add_argument("--check-interval-cap", help="seconds between health checks at most, or 'none' for "
                                                       "the monitors' delays (default 2)")
    load.set_defaults(func=cmd_load)
