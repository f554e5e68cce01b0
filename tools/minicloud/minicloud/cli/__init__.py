"""Command line: ``python -m minicloud VERB ...`` (see ``--help``).

One module per command group, each with its handlers (``cmd_*``, thin calls of the Python API,
:class:`minicloud.runtime.control.Minicloud`) and the functions adding its verbs to the parser:
:mod:`.lifecycle` (up, down, status, env, octavia), :mod:`.traffic` (fault, extension, requests),
:mod:`.seeding` (lb, server, router), :mod:`.kube` (capi, kube), :mod:`.load` (load),
:mod:`.route_controller` (route-controller); :mod:`.common` is what they share.
"""

from __future__ import annotations

import argparse
import os
import sys

from minicloud.cli import kube, lifecycle, load, route_controller, seeding, traffic
from minicloud.cli.common import DESCRIPTION, STATE_DIR_HELP, parser_with
from minicloud.runtime.control import Minicloud, MinicloudError
from minicloud.seeding.openstack import SeedError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m minicloud", description=DESCRIPTION)
    parser.add_argument("--state-dir", help=STATE_DIR_HELP)
    # --state-dir is accepted after the verb too.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--state-dir", default=argparse.SUPPRESS, help=STATE_DIR_HELP)
    verbs = parser.add_subparsers(dest="verb", required=True, parser_class=parser_with(common))
    lifecycle.add_verbs(verbs)
    lifecycle.add_octavia_verb(verbs)
    traffic.add_verbs(verbs)
    seeding.add_verbs(verbs)
    kube.add_verbs(verbs)
    load.add_verbs(verbs)
    route_controller.add_verbs(verbs)
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
