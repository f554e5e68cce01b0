"""Verb route-controller: the emulated cloud route controller on a router (see minicloud.route_controller)."""

from __future__ import annotations

import json

from minicloud.cli.common import print_json
from minicloud.route_controller.controller import DEFAULT_PERIOD
from minicloud.route_controller.reconcile import MODES
from minicloud.runtime.control import Minicloud


def node_spec(text: str) -> dict:
    """``NAME=POD_CIDR=ADDRESS`` -> a node."""
    parts = text.split("=")
    if len(parts) != 3 or not all(parts):
        raise ValueError(f"a node is NAME=POD_CIDR=ADDRESS, e.g. node-1=198.19.1.0/24=10.180.0.10; got {text!r}")
    return {"name": parts[0], "pod_cidr": parts[1], "address": parts[2]}


def cmd_route_controller(cloud: Minicloud, args) -> int:
    controllers = cloud.route_controllers()
    if args.rc_action == "start":
        nodes = None
        if args.nodes_json:
            nodes = json.loads(args.nodes_json)
        elif args.node:
            nodes = [node_spec(x) for x in args.node]
        print_json(controllers.start(args.name, args.router, args.cluster_cidr, nodes=nodes, modes=args.mode or (),
                                     period=None if args.stepped else args.period, window=args.window))
    elif args.rc_action == "step":
        print_json(controllers.step(args.name))
    elif args.rc_action == "stop":
        print_json({"name": args.name, "stopped": controllers.stop(args.name)})
    elif args.rc_action == "wait":
        print_json(controllers.wait_periods(args.name, args.periods, timeout=args.timeout)[-1])
    else:
        print_json(controllers.status(args.name))
    return 0


def add_verbs(verbs) -> None:
    p = verbs.add_parser("route-controller", help="an emulated cloud-provider-openstack route controller on a router")
    actions = p.add_subparsers(dest="rc_action", required=True)
    start = actions.add_parser("start", help="start a controller: in the background, or --stepped")
    start.add_argument("name", help="the controller's name (its record keeps it)")
    start.add_argument("--router", required=True, help="router name or id ([Route] router-id)")
    start.add_argument("--cluster-cidr", action="append", required=True, help="its --cluster-cidr (repeatable)")
    start.add_argument("--node", action="append", metavar="NAME=POD_CIDR=ADDRESS",
                       help="a node it knows (repeatable); default: the emulated Kubernetes API's Nodes")
    start.add_argument("--nodes-json", help="the nodes as JSON (what 'router nodes' prints)")
    start.add_argument("--mode", action="append", choices=MODES, help="a reported bug to have (repeatable)")
    start.add_argument("--period", type=float, default=DEFAULT_PERIOD,
                       help=f"seconds between reconciles (default {DEFAULT_PERIOD:g})")
    start.add_argument("--window", type=float, default=1.0,
                       help="non-atomic: seconds between its read and its write (default 1)")
    start.add_argument("--stepped", action="store_true", help="no loop: a period runs at each 'step'")
    for verb, text in (("step", "run one period now (a stepped controller)"), ("stop", "stop and forget it"),
                       ("status", "its configuration, periods run and the last one")):
        actions.add_parser(verb, help=text).add_argument("name")
    wait = actions.add_parser("wait", help="wait until PERIODS periods are recorded, print the last")
    wait.add_argument("name")
    wait.add_argument("--periods", type=int, required=True)
    wait.add_argument("--timeout", type=float, default=60.0)
    p.set_defaults(func=cmd_route_controller)
