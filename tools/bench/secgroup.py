"""Benchmark secgroup_ensure against minicloud, side by side with the openstack.cloud modules.

Scenario: SERVERS servers with one port each on one network; a security group that half of the ports
carry; the group lacks the pod-CIDR rules (ingress tcp, udp, icmp from POD). The goal state is the same
for both tools: the three rules present, every port carrying the group (next to the default group).

- ours: one ``flightcontrol.openstack.secgroup_ensure`` task (pod_cidr + servers pattern).
- baseline: ``openstack.cloud.security_group_rule`` looped over the three rules, then
  ``openstack.cloud.port`` looped over the ports with ``security_groups: [default, GROUP]``.

Before each tool the state is reset to the same start. Request counts are minicloud's (every request a
client made, token requests included). ``make bench`` runs it after tools/bench/run.py; results go to
the secgroup_ensure section of docs/benchmarks.md.
"""

import sys
import tempfile
import time
from pathlib import Path

from minicloud.core import clouds

from harness import BIN, baseline_bin, bench_parser, collections_path, run_playbook, running_cloud, write_doc

MARK = "secgroup_ensure"
NETWORK = "bench-sg-net"
GROUP = "bench-sg"
PREFIX = "bench-sg-node"
POD = "198.19.0.0/16"
RULES = [{"protocol": p} for p in ("tcp", "udp", "icmp")]


def playbook_ours():
    return [{"name": "secgroup_ensure", "hosts": "localhost", "gather_facts": False, "tasks": [
        {"name": "Ensure rules and memberships", "register": "result",
         "flightcontrol.openstack.secgroup_ensure": {
             "cloud": "minicloud", "security_group": GROUP, "pod_cidr": [POD], "servers": [PREFIX + "-*"]}}]}]


def playbook_baseline(ports):
    return [{"name": "openstack.cloud baseline", "hosts": "localhost", "gather_facts": False,
             "vars": {"rules": RULES, "ports": ports}, "tasks": [
                 {"name": "Pod CIDR rules", "openstack.cloud.security_group_rule": {
                     "cloud": "minicloud", "security_group": GROUP, "direction": "ingress", "ethertype": "IPv4",
                     "protocol": "{{ item.protocol }}", "remote_ip_prefix": POD},
                  "loop": "{{ rules }}"},
                 {"name": "Group on every port", "register": "result", "openstack.cloud.port": {
                     "cloud": "minicloud", "name": "{{ item }}", "network": NETWORK,
                     "security_groups": ["default", GROUP]},
                  "loop": "{{ ports }}"}]}]


def setup(cloud, n):
    """The servers (once), the group; returns (conn, group id, port names)."""
    conn = clouds.connect(cloud.state, clouds.CLOUD, internal=True)
    names = ["%s-%d" % (PREFIX, i) for i in range(1, n + 1)]
    existing = set(s.name for s in conn.compute.servers())
    missing = [name for name in names if name not in existing]
    if missing:
        cloud.create_servers(missing, NETWORK)
    group = conn.network.find_security_group(GROUP) or conn.network.create_security_group(name=GROUP)
    return conn, group.id, ["%s-port-1" % name for name in names]


def reset(conn, group_id, n):
    """The start state: no pod rules in the group, the group on the odd-numbered half of the ports."""
    for rule in conn.network.security_group_rules(security_group_id=group_id):
        if rule.remote_ip_prefix == POD:
            conn.network.delete_security_group_rule(rule.id)
    default = conn.network.find_security_group("default").id
    servers = dict((s.id, s.name) for s in conn.compute.servers() if s.name.startswith(PREFIX + "-"))
    for port in conn.network.ports(device_id=list(servers)):
        number = int(servers[port.device_id].rsplit("-", 1)[1])
        wanted = [default, group_id] if number % 2 else [default]
        if sorted(port.security_group_ids) != sorted(wanted):
            conn.network.update_port(port.id, security_groups=wanted)


def verify(conn, group_id, n):
    rules = [r for r in conn.network.security_group_rules(security_group_id=group_id) if r.remote_ip_prefix == POD]
    assert sorted(r.protocol for r in rules) == ["icmp", "tcp", "udp"], rules
    servers = [s.id for s in conn.compute.servers() if s.name.startswith(PREFIX + "-")]
    ports = list(conn.network.ports(device_id=servers))
    assert len(ports) == n and all(group_id in p.security_group_ids for p in ports)


def writes(counts):
    """Write requests to Neutron and Nova (token requests are POSTs too, but not changes)."""
    return sum(n for name, service in counts["requests"].items() if name != "identity"
               for method, paths in service.items() if method not in ("GET", "HEAD") for n in paths.values())


def measure(cloud, n, tool, venv_bin, collections):
    conn, group_id, ports = setup(cloud, n)
    reset(conn, group_id, n)
    cloud.request_counts(reset=True)
    with tempfile.TemporaryDirectory() as tmp:
        if tool == "ours":
            result, wall = run_playbook(playbook_ours(), BIN, cloud, Path(tmp), collections)
            assert len(result["ports_updated"]) == n // 2 and len(result["rules_created"]) == 3, result
        else:
            result, wall = run_playbook(playbook_baseline(ports), venv_bin, cloud, Path(tmp), collections)
    counts = cloud.request_counts()
    verify(conn, group_id, n)
    row = {"n": n, "tool": tool, "wall": wall, "requests": sum(counts["totals"]["by_service"].values()),
           "writes": writes(counts), "by_service": counts["totals"]["by_service"]}
    return row, result


def table(rows):
    lines = ["| servers | tool | wall time (s) | API requests in total | of which writes |",
             "| ---: | --- | ---: | ---: | ---: |"]
    for row in rows:
        label = ("`flightcontrol.openstack.secgroup_ensure` (one task)" if row["tool"] == "ours" else
                 "`openstack.cloud.security_group_rule` per rule + `openstack.cloud.port` per port")
        lines.append("| %d | %s | %.1f | %d | %d |" % (row["n"], label, row["wall"], row["requests"], row["writes"]))
    return "\n".join(lines)


def main():
    parser = bench_parser(__doc__)
    parser.add_argument("--servers", type=int, default=200)
    args = parser.parse_args()
    baseline = baseline_bin(args)
    rows = []
    with running_cloud() as cloud, collections_path() as collections:
        for tool in ("ours", "baseline"):
            row, _ = measure(cloud, args.servers, tool, baseline, collections)
            rows.append(row)
            print("%4d servers  %-8s  %7.1f s  %6d requests  %5d writes  %s" % (
                row["n"], tool, row["wall"], row["requests"], row["writes"], row["by_service"]), flush=True)
    text = table(rows)
    print(text)
    if not args.no_write:
        stamp = time.strftime("%Y-%m-%d")
        write_doc(MARK, "Measured %s on a 2-core machine with `make bench` (%d servers, one port each, half of the "
                  "ports missing the group, the three pod-CIDR rules missing).\n\n%s" % (stamp, args.servers, text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
