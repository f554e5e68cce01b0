"""Load generators as background processes of a state folder: start, stop, report (``python -m minicloud load``).

Each runs ``python -m minicloud.dataplane.loadrun`` (this module), records into
``<state>/dataplane/load/<name>.jsonl`` beside ``<name>.json`` (what it targets) and ``<name>.pid``.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from pathlib import Path

from minicloud.core import background
from minicloud.dataplane.endpoints import FOLDER
from minicloud.dataplane.load import (KEEPALIVE_CLIENTS, KEEPALIVE_RATE, LoadGenerator, Target, read_record,
                                      summarise)


def folder(state_root: Path) -> Path:
    return Path(state_root) / FOLDER / "load"


MARKER = "minicloud.dataplane.loadrun"


def _pid(state_root: Path, name: str) -> int | None:
    return background.running(folder(state_root) / f"{name}.pid", MARKER)


def start(state_root: Path, name: str, target: str, lb: str, rate: float, clients: int, watches: int,
          keepalive: int = KEEPALIVE_CLIENTS, keepalive_rate: float = KEEPALIVE_RATE) -> dict:
    if _pid(state_root, name) is not None:
        raise ValueError(f"the load generator {name!r} runs already: stop it first")
    where = folder(state_root)
    where.mkdir(parents=True, exist_ok=True)
    (where / f"{name}.jsonl").unlink(missing_ok=True)
    meta = {"name": name, "lb": lb, "target": target, "rate": rate, "clients": clients, "watches": watches,
            "keepalive": keepalive, "keepalive_rate": keepalive_rate, "started": round(time.time(), 3)}
    (where / f"{name}.json").write_text(json.dumps(meta) + "\n")
    background.start(where / f"{name}.pid", [sys.executable, "-m", MARKER, str(where / f"{name}.jsonl"), target,
                                            str(rate), str(clients), str(watches), "--keepalive", str(keepalive),
                                            "--keepalive-rate", str(keepalive_rate)], where / f"{name}.log")
    return meta


def stop(state_root: Path, name: str, timeout: float = 15.0) -> bool:
    return background.stop(folder(state_root) / f"{name}.pid", MARKER, timeout)


def stop_all(state_root: Path) -> list[str]:
    where = folder(state_root)
    names = [p.stem for p in where.glob("*.pid")] if where.is_dir() else []
    return [name for name in names if stop(state_root, name)]


def report(state_root: Path, name: str, since: float | None = None, until: float | None = None) -> dict:
    where = folder(state_root)
    try:
        meta = json.loads((where / f"{name}.json").read_text())
    except FileNotFoundError:
        raise ValueError(f"no load generator {name!r} ran here") from None
    summary = summarise(read_record(where / f"{name}.jsonl"), since, until)
    return {**meta, "running": _pid(state_root, name) is not None, **summary}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minicloud.dataplane.loadrun")
    parser.add_argument("record", type=Path)
    parser.add_argument("target")
    parser.add_argument("rate", type=float)
    parser.add_argument("clients", type=int)
    parser.add_argument("watches", type=int)
    parser.add_argument("--keepalive", type=int, default=KEEPALIVE_CLIENTS)
    parser.add_argument("--keepalive-rate", type=float, default=KEEPALIVE_RATE)
    args = parser.parse_args(argv)
    host, port = args.target.rsplit(":", 1)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    generator = LoadGenerator(Target(host, int(port)), args.record, args.rate, args.clients, args.watches,
                              args.keepalive, args.keepalive_rate).start()
    done.wait()
    generator.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
