"""Benchmarks against minicloud: API requests and wall time, side by side with what users write today.

``make bench`` runs this with the openstack.cloud baseline in ``.venv-bench`` (Python 3.11, the
``ansible`` 12 package's openstack.cloud 2.5.0 with openstacksdk 4.14).  Results replace the
generated section of docs/benchmarks.md.  Request counts are minicloud's (every client request
the services saw, token requests included; Keystone's own token validations excluded).

Scenario (per member count N): a load balancer whose pool gets N members in one batch call while
the Octavia emulator is ``slow`` (each provider step takes STEP_DELAY seconds), then a wait until
every member is ACTIVE, started right after the batch call.
"""

import ipaddress
import itertools
import sys
import tempfile
import time
from pathlib import Path

from harness import BIN, baseline_bin, bench_parser, collections_path, run_playbook, running_cloud, write_doc

STEP_DELAY = 3.0
POLL = 2
MARK = "lb_member_wait"


def playbook_ours(pool_id):
    return [{"name": "lb_member_wait", "hosts": "localhost", "gather_facts": False, "tasks": [
        {"name": "Wait for every member", "register": "result",
         "flightcontrol.openstack.lb_member_wait": {
             "cloud": "minicloud", "pool": pool_id, "timeout": 900, "poll_interval": POLL}}]}]


def playbook_baseline(pool_id, members):
    # openstack.cloud 2.5.0 has no lb_member_info: lb_member with unchanged parameters is its reader.
    return [{"name": "openstack.cloud baseline", "hosts": "localhost", "gather_facts": False,
             "vars": {"members": members}, "tasks": [
                 {"name": "Wait for each member", "register": "result",
                  "openstack.cloud.lb_member": {
                      "cloud": "minicloud", "pool": pool_id, "name": "{{ item.name }}",
                      "address": "{{ item.address }}", "protocol_port": 6443},
                  "loop": "{{ members }}",
                  "until": "result.member.provisioning_status == 'ACTIVE'",
                  "retries": 450, "delay": POLL}]}]


def client_requests(counts):
    return sum(counts["totals"]["by_service"].values())


def poll_gets(counts):
    """GETs a poll of ours makes: the status tree (with a fallback, the member list and the load balancer)."""
    gets = counts["requests"].get("load-balancer", {}).get("GET", {})
    tree = sum(n for path, n in gets.items() if path.endswith("/status"))
    return tree or sum(n for path, n in gets.items() if path.endswith(("/members", "/loadbalancers/{id}")))


def measure(cloud, n, tool, venv_bin, collections):
    name = "bench-%d-%s" % (n, tool)
    cloud.set_octavia_mode("normal")
    if cloud.connect().load_balancer.find_load_balancer(name, ignore_missing=True):
        cloud.delete_lb(name)
    cidr = ipaddress.ip_network("10.%d.0.0/22" % (100 + n % 100))
    created = cloud.create_lb(name, members=0, cidr=str(cidr))
    conn = cloud.connect()
    pool_id = created["pool"]["id"]
    addresses = itertools.islice(cidr.hosts(), 20, None)  # leave the first hosts to the VIP and router
    members = [{"name": "%s-member-%d" % (name, i), "address": str(next(addresses)),
                "protocol_port": 6443, "subnet_id": created["subnet"]["id"]} for i in range(n)]
    cloud.set_octavia_mode("slow", delay=STEP_DELAY)
    conn.load_balancer.put("/lbaas/pools/%s/members" % pool_id, json={"members": members}).raise_for_status()
    cloud.request_counts(reset=True)
    with tempfile.TemporaryDirectory() as tmp:
        if tool == "ours":
            result, wall = run_playbook(playbook_ours(pool_id), BIN, cloud, Path(tmp), collections)
            polls = result["polls"]
            assert len(result["members"]) == n and all(m["provisioning_status"] == "ACTIVE" for m in result["members"])
        else:
            result, wall = run_playbook(playbook_baseline(pool_id, [{"name": m["name"], "address": m["address"]}
                                                                   for m in members]),
                                        venv_bin, cloud, Path(tmp), collections)
            polls = sum(r.get("attempts", 1) for r in result["results"])
    counts = cloud.request_counts()
    cloud.set_octavia_mode("normal")
    cloud.delete_lb(name)
    return {"n": n, "tool": tool, "wall": wall, "requests": client_requests(counts), "poll_gets": poll_gets(counts),
            "polls": polls}


def table(rows):
    lines = ["| members | tool | wall time (s) | API requests in total | polls | requests per poll of the pool |",
             "| ---: | --- | ---: | ---: | ---: | ---: |"]
    for row in rows:
        if row["tool"] == "ours":
            label = "`flightcontrol.openstack.lb_member_wait`"
            per_poll = "%.0f" % (row["poll_gets"] / row["polls"])
            polls = "%d" % row["polls"]
        else:
            label = "`openstack.cloud.lb_member` in `until`, looped"
            per_poll = "%.0f" % (row["n"] * row["requests"] / row["polls"])
            polls = "%d (module runs)" % row["polls"]
        lines.append("| %d | %s | %.1f | %d | %s | %s |" % (
            row["n"], label, row["wall"], row["requests"], polls, per_poll))
    return "\n".join(lines)


def main():
    parser = bench_parser(__doc__)
    parser.add_argument("--sizes", default="3,30,300")
    args = parser.parse_args()
    baseline = baseline_bin(args)
    rows = []
    with running_cloud() as cloud, collections_path() as collections:
        try:
            for n in [int(size) for size in args.sizes.split(",")]:
                for tool in ("ours", "baseline"):
                    row = measure(cloud, n, tool, baseline, collections)
                    rows.append(row)
                    print("%4d members  %-8s  %7.1f s  %6d requests  %5d polls" % (
                        n, tool, row["wall"], row["requests"], row["polls"]), flush=True)
        finally:
            cloud.set_octavia_mode("normal")
    text = table(rows)
    print(text)
    if not args.no_write:
        stamp = time.strftime("%Y-%m-%d")
        write_doc(MARK, "Measured %s on a 2-core machine with `make bench` (provider step %.0f s, poll interval "
                        "%d s).\n\n%s" % (stamp, STEP_DELAY, POLL, text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
