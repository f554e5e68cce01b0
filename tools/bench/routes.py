"""Benchmark route_audit against minicloud: audit and repair for 30, 300 and 1000 nodes.

Scenario per size N: a router with N node ports (fixed addresses, address pairs in place) and every
node's route, then broken the way clusters break: 10% of the routes gone (failover), 5% pointing at a
dead node as a second route (duplicates), 5% stale routes to pod CIDRs no node has. One audit, then one
repair with ``max_changes`` high enough for all of it. minicloud must run with a route limit above
N + 10% (``up --max-routes``); this script starts its own minicloud in a temporary state folder with
``--max-routes 2000`` unless ``--state-dir`` names a running one. Request counts are minicloud's (every
request a client made, token requests included). Results go to the route_audit section of
docs/benchmarks.md.
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from minicloud.control import Minicloud

from harness import BIN, collections_path, run_playbook, write_doc

MARK = "route_audit"
CLUSTER = "198.18.0.0/15"
SIZES = (30, 300, 1000)
MAX_ROUTES = 2000


def playbook(router, nodes, state):
    return [{"name": "route_audit", "hosts": "localhost", "gather_facts": False, "tasks": [
        {"name": "route_audit %s" % state, "register": "result", "flightcontrol.openstack.route_audit": {
            "cloud": "minicloud", "router": router, "cluster_cidr": [CLUSTER], "state": state,
            "max_changes": 10000, "nodes": [{"name": n["name"], "pod_cidr": n["pod_cidr"], "address": n["address"]}
                                             for n in nodes]}}]}]


def seed(cloud, n):
    """Router + N nodes with routes, then the drift; returns (router, nodes, expected change count)."""
    router = "bench-rt-%d-%d" % (n, int(time.time()))
    cloud.create_router(router, router + "-net", cidr="10.180.0.0/20")
    nodes = cloud.create_nodes(router, n, prefix=router, pod_cidr=CLUSTER, pod_prefix=26, routes=True,
                               address_pairs=True)
    wiped = nodes[::10]
    dupes = nodes[1::20]
    stale = ["198.19.255.%d/32" % (i % 250) for i in range(max(1, n // 20))]
    cloud.set_routes(router, remove=[{"destination": x["pod_cidr"], "nexthop": x["address"]} for x in wiped],
                     add=[{"destination": x["pod_cidr"], "nexthop": "10.180.15.250"} for x in dupes]
                     + [{"destination": s, "nexthop": "10.180.15.251"} for s in stale])
    return router, nodes, len(wiped) + len(dupes) + len(stale)


def writes(counts):
    return sum(n for name, service in counts["requests"].items() if name != "identity"
               for method, paths in service.items() if method not in ("GET", "HEAD") for n in paths.values())


def measure(cloud, n, collections):
    router, nodes, expected = seed(cloud, n)
    rows = []
    for state in ("audited", "repaired", "audited"):
        cloud.request_counts(reset=True)
        with tempfile.TemporaryDirectory() as tmp:
            result, wall = run_playbook(playbook(router, nodes, state), BIN, cloud, Path(tmp), collections)
        counts = cloud.request_counts()
        if state == "repaired":
            assert len(result["changes"]) == expected and result["remaining"] == [], result
        rows.append({"n": n, "state": state if not rows or state != "audited" else "audited again",
                     "wall": wall, "module": result["elapsed"], "requests": sum(counts["totals"]["by_service"].values()),
                     "writes": writes(counts), "findings": len(result["findings"]), "changes": len(result["changes"])})
    rows[-1]["state"] = "audit after repair"
    assert rows[-1]["findings"] == 0
    return rows


def table(rows):
    lines = ["| nodes | run | findings | changes | API requests | of which writes | module time (s) | wall time (s) |",
             "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for row in rows:
        lines.append("| %d | %s | %d | %d | %d | %d | %.2f | %.1f |" % (
            row["n"], row["state"], row["findings"], row["changes"], row["requests"], row["writes"], row["module"],
            row["wall"]))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--state-dir", help="a running minicloud with a high enough --max-routes")
    parser.add_argument("--no-write", action="store_true", help="print only, leave docs/benchmarks.md alone")
    args = parser.parse_args()
    own = args.state_dir is None
    state_dir = args.state_dir or tempfile.mkdtemp(prefix="bench-routes-")
    cloud = Minicloud(state_dir)
    os.environ["MINICLOUD_STATE_DIR"] = state_dir
    if own:
        cloud.up(port_offset=__import__("minicloud.settings").settings.free_port_offset(), max_routes=MAX_ROUTES,
                 timeout=300)
    rows = []
    try:
        with collections_path() as collections:
            for n in args.sizes:
                for row in measure(cloud, n, collections):
                    rows.append(row)
                    print("%5d nodes  %-20s %5d findings %5d changes %5d requests %4d writes %6.2f s module %6.1f s wall"
                          % (row["n"], row["state"], row["findings"], row["changes"], row["requests"], row["writes"],
                             row["module"], row["wall"]), flush=True)
    finally:
        if own:
            cloud.down(purge=True)
    text = table(rows)
    print(text)
    if not args.no_write:
        write_doc(MARK, "Measured %s on a 2-core machine with `tools/bench/routes.py` (minicloud up with "
                  "`--max-routes %d`; per size: 10%% of the routes wiped, 5%% duplicated to a dead node, 5%% stale; "
                  "`max_changes` 10000).\n\n%s" % (time.strftime("%Y-%m-%d"), MAX_ROUTES, text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
