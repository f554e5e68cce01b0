"""Verbs up, down, status, env and octavia (the provider emulator's mode)."""

from __future__ import annotations

from minicloud.cli.common import port_offset, print_json
from minicloud.octavia_provider.modes import MODES
from minicloud.runtime.control import Minicloud
from minicloud.core.settings import CAPI_VERSIONS, KUBERNETES_KINDS, Settings, free_port_offset


def cmd_up(cloud: Minicloud, args) -> int:
    offset = args.port_offset
    if offset == "auto":  # a state folder keeps the offset it was first set up with
        offset = 0 if Settings.load(cloud.state) else free_port_offset()
    status, summary = cloud.up(port_offset=offset, fresh=args.fresh, timeout=args.timeout, max_routes=args.max_routes,
                               kubernetes=args.kubernetes, capi_version=args.capi_version)
    print(summary)
    print_status(status)
    return 0


def cmd_down(cloud: Minicloud, args) -> int:
    stopped = cloud.down(purge=args.purge)
    print(f"stopped: {', '.join(stopped)}" if stopped else "nothing was running")
    if args.purge:
        print(f"removed {cloud.state_dir}")
    return 0


def cmd_leftovers(cloud: Minicloud, args) -> int:
    if args.list_ports:
        print(",".join(map(str, cloud.listening_ports())))
        return 0
    ports = [int(port) for port in args.ports.split(",") if port.strip()] if args.ports else []
    left = cloud.leftovers(ports)
    for line in left:
        print(f"left running of {cloud.state_dir}: {line}")
    return 1 if left else 0


def print_status(status) -> None:
    if not status.processes:
        print(f"no minicloud in {status.state_dir}")
        return
    for p in status.processes:
        health = "healthy" if p.healthy else "DOWN"
        print(f"{p.name:22} pid {str(p.pid or '-'):>8}  {health:8} {p.endpoint}")


def cmd_status(cloud: Minicloud, args) -> int:
    status = cloud.status()
    if args.json:
        print_json(status.to_dict())
    else:
        print_status(status)
    return 0 if status.healthy else 1


def cmd_env(cloud: Minicloud, args) -> int:
    print(cloud.env())
    return 0


def cmd_octavia(cloud: Minicloud, args) -> int:
    if args.mode is None:
        print_json(cloud.octavia_mode())
    else:
        print_json(cloud.set_octavia_mode(args.mode, members=args.members, delay=args.delay))
    return 0


def add_verbs(verbs) -> None:
    p = verbs.add_parser("up", help="start Keystone, Neutron, Octavia, nova-api, Glance (idempotent)")
    p.add_argument("--port-offset", type=port_offset, default=0,
                   help="add this to every port (5000, 9696, 9876, 8774, 9292); 'auto' picks a free one")
    p.add_argument("--fresh", action="store_true", help="reset all data to the freshly initialised state")
    p.add_argument("--timeout", type=float, default=90.0, help="seconds to wait for the services")
    p.add_argument("--max-routes", type=int,
                   help="Neutron's per-router route limit (default 30; kept in the state folder)")
    p.add_argument("--kubernetes", choices=KUBERNETES_KINDS,
                   help="the Kubernetes control plane: emulated (minicloud's own, the default) or upstream (etcd, "
                        "kube-apiserver and Cluster API's managers built from their Go modules on the first run); "
                        "kept in the state folder")
    p.add_argument("--capi-version", choices=CAPI_VERSIONS,
                   help="the Cluster API release the upstream control plane runs: v1.13 (the default) or v1.12 "
                        "(built on its first use); kept in the state folder")
    p.set_defaults(func=cmd_up)

    p = verbs.add_parser("down", help="stop the processes minicloud started")
    p.add_argument("--purge", action="store_true", help="also remove the state folder")
    p.set_defaults(func=cmd_down)

    p = verbs.add_parser("leftovers", help="what still runs of this cloud (processes, listening ports); exit 1 if any")
    p.add_argument("--ports", help="comma-separated ports the cloud listened on (--list-ports before down): "
                                   "each one something still listens on counts too")
    p.add_argument("--list-ports", action="store_true", help="print the ports the cloud's processes listen on now")
    p.set_defaults(func=cmd_leftovers)

    p = verbs.add_parser("status", help="show each process; exit 1 unless all are healthy")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_status)

    p = verbs.add_parser("env", help="print the shell line pointing openstack clients at clouds.yaml")
    p.set_defaults(func=cmd_env)


def add_octavia_verb(verbs) -> None:
    p = verbs.add_parser("octavia", help="show or set the provider emulator's mode")
    p.add_argument("mode", nargs="?", choices=MODES)
    p.add_argument("--members", default="*", help="glob on member names or addresses (default *)")
    p.add_argument("--delay", type=float, help="seconds per status step (default 0.5; slow: 10)")
    p.set_defaults(func=cmd_octavia)
