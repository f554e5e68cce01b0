"""The emulated route controller against Neutron: one reconcile period (read the router, decide with
``reconcile.plan``, replace the router's whole route list), its record, and the loop that runs periods in the
background.

A controller is named and kept in ``<state>/route-controller/``: ``<name>.json`` (what it manages),
``<name>.jsonl`` (one line per period: the routes read, the list written, what it added and removed) and, while
it runs in the background, ``<name>.pid``. Started ``stepped`` (no period), it runs a period only when asked
(``step``), so a test decides what happens in each; started with a period, it runs by itself and
``wait_periods`` waits for a number of recorded periods (a count, never a guess of time).

The desired routes are those of the nodes given (``{"name", "pod_cidr", "address"}``, as ``router nodes``
prints them), or, without nodes, of the emulated Kubernetes API's Nodes (``spec.podCIDR`` to the InternalIP),
read at every period as the real controller's informer would see them; on those it sets the condition the real
one sets (``NetworkUnavailable`` false, reason ``RouteCreated``) once their route is on the router.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from pathlib import Path

from minicloud.core import background, clouds
from minicloud.core.paths import StateDir
from minicloud.route_controller import reconcile

FOLDER = "route-controller"
DEFAULT_PERIOD = 10.0  # the Kubernetes route controller's --route-reconciliation-period


def folder(state_root: Path) -> Path:
    return Path(state_root) / FOLDER


MARKER = "minicloud.route_controller"


def _pid(state_root: Path, name: str) -> int | None:
    return background.running(folder(state_root) / f"{name}.pid", MARKER)


def read_config(state_root: Path, name: str) -> dict:
    try:
        return json.loads((folder(state_root) / f"{name}.json").read_text())
    except FileNotFoundError:
        raise ValueError(f"no route controller {name!r} here: start it first") from None


def periods(state_root: Path, name: str) -> list[dict]:
    path = folder(state_root) / f"{name}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


class RouteControllers:
    """The route controllers of one state folder. ``connect()`` gives minicloud's own openstacksdk connection
    (its requests are not counted as a client's), ``kube()`` the emulated Kubernetes API (``KubeAdmin``)."""

    def __init__(self, state_root: Path, connect, kube=None):
        self.root = Path(state_root)
        self.connect = connect
        self.kube = kube

    def start(self, name: str, router: str, cluster_cidr: list[str], nodes: list[dict] | None = None,
              modes=(), period: float | None = DEFAULT_PERIOD, window: float = 1.0) -> dict:
        """Start controller ``name`` on ``router`` (name or id): stepped (``period`` None) or in the background."""
        if _pid(self.root, name) is not None:
            raise ValueError(f"the route controller {name!r} runs already: stop it first")
        found = self.connect().network.find_router(router, ignore_missing=True)
        if found is None:
            raise ValueError(f"no router {router!r}")
        config = {"name": name, "router": found.name, "router_id": found.id, "cluster_cidr": list(cluster_cidr),
                  "nodes": [dict(name=n["name"], pod_cidr=n["pod_cidr"], address=n["address"]) for n in nodes]
                  if nodes is not None else None, "modes": reconcile.check_modes(modes), "period": period,
                  "window": window, "started": round(time.time(), 3)}
        where = folder(self.root)
        where.mkdir(parents=True, exist_ok=True)
        (where / f"{name}.jsonl").unlink(missing_ok=True)
        (where / f"{name}.json").write_text(json.dumps(config) + "\n")
        if period is not None:
            background.start(where / f"{name}.pid", [sys.executable, "-m", "minicloud.route_controller.controller",
                                                    str(self.root), name], where / f"{name}.log")
        return self.status(name)

    def stop(self, name: str, timeout: float = 15.0) -> bool:
        """Stop the background loop (after its period in progress); a stepped controller is forgotten."""
        (folder(self.root) / f"{name}.json").unlink(missing_ok=True)
        return background.stop(folder(self.root) / f"{name}.pid", MARKER, timeout)

    def status(self, name: str) -> dict:
        done = periods(self.root, name)
        return {**read_config(self.root, name), "running": _pid(self.root, name) is not None,
                "periods": len(done), "last": done[-1] if done else None}

    def periods(self, name: str) -> list[dict]:
        return periods(self.root, name)

    def step(self, name: str, during=None) -> dict:
        """Run one period now, in this process (a stepped controller). ``during`` is called while the period is
        in progress: with ``non-atomic`` between its read and its write (the window), else before its read."""
        if _pid(self.root, name) is not None:
            raise ValueError(f"the route controller {name!r} runs in the background: stop it to step it")
        config = read_config(self.root, name)
        return run_period(self.root, config, self.connect(), self.kube, during=during)

    def wait_periods(self, name: str, count: int, timeout: float = 60.0) -> list[dict]:
        """The records once at least ``count`` periods are recorded (a background controller)."""
        deadline = time.monotonic() + timeout
        while True:
            done = periods(self.root, name)
            if len(done) >= count:
                return done
            if time.monotonic() >= deadline:
                raise TimeoutError(f"route controller {name!r}: {len(done)} of {count} periods in {timeout} s")
            time.sleep(0.05)


# -- one period ---------------------------------------------------------------------------------------------

def _node_of(item: dict) -> dict:
    spec, status = item.get("spec") or {}, item.get("status") or {}
    address = next((a["address"] for a in status.get("addresses") or [] if a.get("type") == "InternalIP"), None)
    return {"name": item["metadata"]["name"], "pod_cidr": spec.get("podCIDR"), "address": address}


def _nodes(config: dict, kube) -> tuple[list[dict], list[dict]]:
    """(desired nodes, the Kubernetes Nodes they came from or [])."""
    if config["nodes"] is not None:
        return config["nodes"], []
    items = kube().call("GET", "/api/v1/nodes")["items"]
    return [_node_of(item) for item in items], items


def _mark_routed(kube, items: list[dict], routes: list[dict]) -> None:
    """Set NetworkUnavailable=False reason RouteCreated on the Nodes whose route is on the router."""
    present = {(r["destination"], r["nexthop"]) for r in routes}
    for item in items:
        node = _node_of(item)
        if (node["pod_cidr"], node["address"]) not in present:
            continue
        conditions = [c for c in (item.get("status") or {}).get("conditions") or []
                      if c.get("type") != "NetworkUnavailable"]
        conditions.append({"type": "NetworkUnavailable", "status": "False", "reason": "RouteCreated",
                           "message": "RouteController created a route"})
        try:
            kube().call("PATCH", f"/api/v1/nodes/{node['name']}/status", {"status": {"conditions": conditions}},
                        content_type="application/merge-patch+json")
        except Exception:  # pylint: disable=broad-except  # a condition is best effort, as for the real one
            pass


def _put(conn, router_id: str, routes: list[dict]) -> str | None:
    response = conn.network.put(f"/routers/{router_id}", json={"router": {"routes": routes}})
    return None if response.status_code < 400 else f"{response.status_code} {response.text}"


def run_period(root: Path, config: dict, conn, kube, during=None, sleep=time.sleep) -> dict:
    """One reconcile period, recorded in ``<name>.jsonl``; a refused write is recorded, not raised (the real
    controller logs it and tries again at its next period)."""
    modes = config["modes"]
    non_atomic = "non-atomic" in modes
    if during is not None and not non_atomic:
        during()
    read = conn.network.get(f"/routers/{config['router_id']}").json()["router"].get("routes") or []
    nodes, items = _nodes(config, kube)
    decided = reconcile.plan(read, nodes, config["cluster_cidr"], modes)
    if non_atomic:
        if during is not None:
            during()
        elif decided.routes is not None:
            sleep(config.get("window") or 0)
    error = _put(conn, config["router_id"], decided.routes) if decided.routes is not None else None
    if items and kube is not None:
        _mark_routed(kube, items, decided.routes if decided.routes is not None else read)
    record = {"period": len(periods(root, config["name"])) + 1, "at": round(time.time(), 3), "read": read,
              "wrote": decided.routes, "added": decided.added, "removed": decided.removed, "error": error}
    with open(folder(root) / f"{config['name']}.jsonl", "a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\n")
    return record


def main(argv: list[str] | None = None) -> int:
    """The background loop: a period, then the rest of ``period`` seconds, until SIGTERM."""
    from minicloud.kube.admin import KubeAdmin  # needs the optional kubernetes client

    parser = argparse.ArgumentParser(prog="python -m minicloud.route_controller.controller")
    parser.add_argument("state_root", type=Path)
    parser.add_argument("name")
    args = parser.parse_args(argv)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    state = StateDir(args.state_root)
    kube = lambda: KubeAdmin(state.root / "kubeconfig")  # noqa: E731
    while not done.is_set():
        started = time.monotonic()
        try:
            config = read_config(state.root, args.name)
            run_period(state.root, config, clouds.connect(state, clouds.CLOUD, internal=True), kube,
                       sleep=done.wait)
        except Exception as exc:  # pylint: disable=broad-except  # a controller outlives a failed period
            print(f"period failed: {exc!r}", flush=True)
            config = {"period": DEFAULT_PERIOD}
        done.wait(max(0.0, (config.get("period") or DEFAULT_PERIOD) - (time.monotonic() - started)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
