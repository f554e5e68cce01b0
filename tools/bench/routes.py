"""Benchmark route_audit against minicloud: audit and repair for 30, 300 and 1000 nodes.

Scenario per size N: a router with N node ports (fixed addresses, address pairs in place) and every
node's route, then broken the way clusters break: 10% of the routes gone (failover), 5% pointing at a
dead node as a second route (duplicates), 5% stale routes to pod CIDRs no node has. One audit, then one
repair with ``max_changes`` high enough for all of it. minicloud must run with a route limit above
N + 10% (``up --max-routes``); this script starts its own minicloud in a temporary state folder with
``--max-routes 2000`` unless ``--state-dir`` names a running one. Request counts are minicloud's (every
request a client made, token requests included). Results go to the route_audit section of
docs/benchmarks.md.

Side by side (``--baseline-venv``, made by ``make venv-bench``): the same drift is put back and repaired
with what a user can write today with openstack.cloud 2.5.0: ``routers_info`` to read the routes, a
Jinja expression keeping the routes outside the cluster CIDR (``ansible.utils.network_in_network``) plus
one route per node, and ``openstack.cloud.resource`` writing the router's whole route list in one update.
Both must end with the same routes (checked by an audit that finds nothing); a second baseline run shows
whether it is idempotent.
"""

import ipaddress
import os
import sys
import tempfile
import time
from pathlib import Path

from minicloud.runtime.control import Minicloud
from minicloud.core.settings import free_port_offset

from harness import BIN, baseline_bin, bench_parser, collections_path, run_playbook, write_doc

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


def node_subnet(n):
    """The node subnet for N nodes (host 10 on): a /20 up to 4000 nodes, a /18 above."""
    return "10.180.0.0/20" if n <= 4000 else "10.180.0.0/18"


def pod_prefix(n):
    """The pod CIDRs' length for N nodes: /26 (2047 of them in the cluster CIDR) up to 2000 nodes, /28 above."""
    return 26 if n <= 2000 else 28


def foreign_route(n):
    """A VPN route: not the cluster's; its nexthop near the top of the node subnet, where no node is."""
    top = ipaddress.ip_network(node_subnet(n)).broadcast_address
    return {"destination": "192.0.2.0/24", "nexthop": str(top - 15)}


def seed(cloud, n):
    """Router + N nodes with routes and one foreign route; returns (router, nodes, drift)."""
    router = "bench-rt-%d-%d" % (n, int(time.time()))
    cloud.create_router(router, router + "-net", cidr=node_subnet(n))
    nodes = cloud.create_nodes(router, n, prefix=router, pod_cidr=CLUSTER, pod_prefix=pod_prefix(n), routes=True,
                               address_pairs=True)
    cloud.set_routes(router, add=[foreign_route(n)])
    top = ipaddress.ip_network(node_subnet(n)).broadcast_address
    dead, gone = str(top - 5), str(top - 4)  # addresses of no node
    wiped = nodes[::10]
    drift = {"remove": [{"destination": x["pod_cidr"], "nexthop": x["address"]} for x in wiped],
             "add": [{"destination": x["pod_cidr"], "nexthop": dead} for x in nodes[1::20]]
             + [{"destination": "198.19.255.%d/32" % (i % 250), "nexthop": gone}
                for i in range(max(1, n // 20))]}
    return router, nodes, drift


def break_routes(cloud, router, drift):
    """Put the drift on the router: wiped routes, duplicates to a dead node, stale routes."""
    cloud.set_routes(router, remove=drift["remove"], add=drift["add"])
    return len(drift["remove"]) + len(drift["add"])


def playbook_baseline(router, nodes):
    """What a user writes with openstack.cloud 2.5.0: read, compute the whole list, write it back."""
    wanted = ("{%- set keep = [] -%}"
              "{%- for route in found.routers[0].routes -%}"
              "{%- if not (cluster_cidr | ansible.utils.network_in_network(route.destination)) -%}"
              "{%- set _ = keep.append(route) -%}{%- endif -%}{%- endfor -%}"
              "{{ keep + node_routes }}")
    return [{"name": "openstack.cloud baseline", "hosts": "localhost", "gather_facts": False,
             "vars": {"cluster_cidr": CLUSTER,
                      "node_routes": [{"destination": x["pod_cidr"], "nexthop": x["address"]} for x in nodes]},
             "tasks": [
                 {"name": "Read the router", "register": "found",
                  "openstack.cloud.routers_info": {"cloud": "minicloud", "name": router}},
                 {"name": "Write the routes: the foreign ones kept, one per node", "register": "result",
                  "openstack.cloud.resource": {
                      "cloud": "minicloud", "service": "network", "type": "router",
                      "attributes": {"id": "{{ found.routers[0].id }}", "routes": wanted},
                      "updateable_attributes": ["routes"]}}]}]


def writes(counts):
    return sum(n for name, service in counts["requests"].items() if name != "identity"
               for method, paths in service.items() if method not in ("GET", "HEAD") for n in paths.values())


def counted(cloud, play, venv_bin, collections):
    cloud.request_counts(reset=True)
    with tempfile.TemporaryDirectory() as tmp:
        result, wall = run_playbook(play, venv_bin, cloud, Path(tmp), collections)
    counts = cloud.request_counts()
    return result, wall, sum(counts["totals"]["by_service"].values()), writes(counts)


def findings_total(result):
    """Every finding of a route_audit result: its ``findings`` list stops at 200, ``counts`` counts them all."""
    return sum(result["counts"].values())


def measure(cloud, n, collections, baseline=None):
    router, nodes, drift = seed(cloud, n)
    expected = break_routes(cloud, router, drift)
    rows, side = [], []
    for state in ("audited", "repaired", "audited"):
        result, wall, requests, written = counted(cloud, playbook(router, nodes, state), BIN, collections)
        if state == "repaired":
            assert len(result["changes"]) == expected and result["remaining"] == [], result
            assert result["omitted"]["remaining"] == 0, result["omitted"]
            side.append({"n": n, "tool": "ours", "wall": wall, "requests": requests, "writes": written,
                         "changed": result["changed"]})
        rows.append({"n": n, "state": state if not rows or state != "audited" else "audited again",
                     "wall": wall, "module": result["elapsed"], "requests": requests,
                     "writes": written, "findings": findings_total(result), "changes": len(result["changes"])})
    rows[-1]["state"] = "audit after repair"
    assert rows[-1]["findings"] == 0
    assert foreign_route(n) in cloud.router(router)["routes"]
    if baseline is not None:
        break_routes(cloud, router, drift)
        for tool in ("baseline", "baseline again"):
            result, wall, requests, written = counted(cloud, playbook_baseline(router, nodes), baseline,
                                                      collections)
            side.append({"n": n, "tool": tool, "wall": wall, "requests": requests, "writes": written,
                         "changed": result["changed"]})
        audit, _, _, _ = counted(cloud, playbook(router, nodes, "audited"), BIN, collections)
        assert findings_total(audit) == 0, audit["counts"]
        assert foreign_route(n) in cloud.router(router)["routes"]
    return rows, side


def table(rows):
    lines = ["| nodes | run | findings | changes | API requests | of which writes | module time (s) | wall time (s) |",
             "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for row in rows:
        lines.append("| %d | %s | %d | %d | %d | %d | %.2f | %.1f |" % (
            row["n"], row["state"], row["findings"], row["changes"], row["requests"], row["writes"], row["module"],
            row["wall"]))
    return "\n".join(lines)


SIDE_LABELS = {"ours": "`flightcontrol.openstack.route_audit` `state: repaired`",
               "baseline": "`openstack.cloud.routers_info` + `openstack.cloud.resource` (whole route list)",
               "baseline again": "the same baseline playbook once more"}


def side_table(rows):
    lines = ["| nodes | tool | changed | API requests | of which writes | wall time (s) |",
             "| ---: | --- | --- | ---: | ---: | ---: |"]
    for row in rows:
        lines.append("| %d | %s | %s | %d | %d | %.1f |" % (
            row["n"], SIDE_LABELS[row["tool"]], "yes" if row["changed"] else "no", row["requests"], row["writes"],
            row["wall"]))
    return "\n".join(lines)


def main():
    parser = bench_parser(__doc__, optional_baseline=True)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--state-dir", help="a running minicloud with a high enough --max-routes")
    args = parser.parse_args()
    baseline = baseline_bin(args)
    own = args.state_dir is None
    state_dir = args.state_dir or tempfile.mkdtemp(prefix="bench-routes-")
    cloud = Minicloud(state_dir)
    os.environ["MINICLOUD_STATE_DIR"] = state_dir
    if own:
        cloud.up(port_offset=free_port_offset(), max_routes=MAX_ROUTES, timeout=300)
    rows, side = [], []
    try:
        with collections_path() as collections:
            for n in args.sizes:
                measured, compared = measure(cloud, n, collections, baseline)
                for row in measured:
                    print("%5d nodes  %-20s %5d findings %5d changes %5d requests %4d writes %6.2f s module %6.1f s wall"
                          % (row["n"], row["state"], row["findings"], row["changes"], row["requests"], row["writes"],
                             row["module"], row["wall"]), flush=True)
                for row in compared:
                    print("%5d nodes  %-20s changed=%-5s %5d requests %4d writes %6.1f s wall" % (
                        row["n"], row["tool"], row["changed"], row["requests"], row["writes"], row["wall"]),
                        flush=True)
                rows += measured
                side += compared
    finally:
        if own:
            cloud.down(purge=True)
    text = table(rows)
    if baseline is not None:
        text += "\n\nSide by side, the same repair:\n\n" + side_table(side)
    print(text)
    if not args.no_write:
        write_doc(MARK, "Measured %s on a 2-core machine with `tools/bench/routes.py` (minicloud up with "
                  "`--max-routes %d`; per size: 10%% of the routes wiped, 5%% duplicated to a dead node, 5%% stale, "
                  "one foreign route; `max_changes` 10000).\n\n%s" % (time.strftime("%Y-%m-%d"), MAX_ROUTES, text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
