"""What the command groups share: JSON output, argument types, the parser class with --state-dir."""

from __future__ import annotations

import argparse
import json

from minicloud.traffic.faults import DROP, FAULT_STATUSES

DESCRIPTION = "Command line: ``python -m minicloud VERB ...`` (see ``--help``)."
STATE_DIR_HELP = ("state folder (default: $MINICLOUD_STATE_DIR, else .minicloud/ beside the nearest "
                  "galaxy.yml, else ./.minicloud)")


def print_json(data) -> None:
    print(json.dumps(data, indent=2))


def port_offset(value: str) -> int | str:
    return value if value == "auto" else int(value)


def status_value(text: str):
    if text == DROP:
        return text
    try:
        value = int(text)
    except ValueError:
        value = None
    if value not in FAULT_STATUSES:
        raise argparse.ArgumentTypeError(f"choose from {', '.join(map(str, FAULT_STATUSES))} or {DROP}")
    return value


def label(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError("a label is KEY=VALUE")
    return key, value


def parser_with(common: argparse.ArgumentParser):
    """A parser class whose instances all inherit the options of ``common``."""

    class Parser(argparse.ArgumentParser):
        def __init__(self, *args, **kwargs):
            kwargs.setdefault("parents", [common])
            super().__init__(*args, **kwargs)

    return Parser
