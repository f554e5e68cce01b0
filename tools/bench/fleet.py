"""Benchmark the fleet flight check over 10, 30 and 100 workload clusters, side by side with a shell loop.

One minicloud holds the fleet: every cluster is seeded as CAPO leaves one (``Minicloud.create_capi_fleet``: a
control-plane server and a worker server with real ports, the cluster's network, router with one route per Node,
the two security groups with the pod CIDR rules, its Nodes in its own Kubernetes API behind the
``<name>-kubeconfig`` Secret), spread over two namespaces and both contract versions (v1beta1 and v1beta2), every
fifth one with drift (a route, a rule and a port's group gone, a server that never became a Node). The load
balancer is left out: the flight check does not read it. The clusters are added in steps (10, then 20 more, then
70 more), so each size is measured on the same cloud a real fleet would have grown on.

For each size:

- ``playbooks/fleet_flight_check.yml`` with the ``capi_clusters`` inventory source, with forks 1, 10 and 25;
- the obvious alternative a user would write: ``playbooks/flight_check.yml`` once per cluster in a shell loop
  (``for f in vars/*.json; do ansible-playbook ... -e @$f; done``), each cluster's variables prepared beforehand
  from the same inventory (that preparation is not counted: it is in the loop's favour).

Every run is in check mode (``--check``): nothing is repaired, so every run sees the same drift. Measured: wall
time, the API requests minicloud counted (all services, per cluster), and the controller's peak memory (the
resident memory of ``ansible-playbook`` and its forks together, sampled every 0.1 s; and the main process alone).
Results go to the fleet section of docs/benchmarks.md.
"""

import json
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import psutil
import yaml

from harness import BIN, REPO, bench_parser, collections_path, markdown_table, playbook_env, running_cloud, write_doc

MARK = "fleet"
SIZES = (10, 30, 100)
FORKS = (1, 10, 25)
NAMESPACES = ["team-a", "team-b"]
API_VERSIONS = ["v1beta1", "v1beta2"]
DRIFT_EVERY = 5
MIB = 1024 * 1024


class PeakMemory:
    """The peak resident memory of a process and of its whole tree, sampled every ``interval`` seconds."""

    def __init__(self, pid, interval=0.1):
        self.process = psutil.Process(pid)
        self.interval = interval
        self.main = self.tree = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.sample, daemon=True)

    def sample(self):
        while not self.stop.is_set():
            try:
                main = self.process.memory_info().rss
                tree = main
                for child in self.process.children(recursive=True):
                    try:
                        tree += child.memory_info().rss
                    except psutil.Error:
                        pass
            except psutil.Error:
                return
            self.main, self.tree = max(self.main, main), max(self.tree, tree)
            self.stop.wait(self.interval)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *_exc):
        self.stop.set()
        self.thread.join()


def measured(cloud, args, env, clusters):
    """Run ``args``; wall time, requests per cluster by service and in all, peak memory (MiB)."""
    cloud.request_counts(reset=True)
    started = time.monotonic()
    proc = psutil.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with PeakMemory(proc.pid) as memory:
        output, _ = proc.communicate()
    wall = time.monotonic() - started
    counts = cloud.request_counts()
    by_service = {service: sum(n for paths in methods.values() for n in paths.values())
                  for service, methods in counts.get("requests", {}).items()}
    requests = sum(by_service.values())
    return {"wall": round(wall, 1), "rc": proc.returncode, "output": output, "requests": requests,
            "per_cluster": round(requests / clusters, 1), "by_service": by_service,
            "peak_tree_mib": round(memory.tree / MIB), "peak_main_mib": round(memory.main / MIB)}


def fleet_run(cloud, env, inventory, forks, clusters, report_dir):
    args = [str(BIN / "ansible-playbook"), "-i", str(inventory), "-f", str(forks), "--check",
            str(REPO / "playbooks" / "fleet_flight_check.yml"),
            "-e", json.dumps({"fleet_cloud": "minicloud", "fleet_kubeconfig": str(cloud.kubeconfig),
                              "fleet_report_dir": str(report_dir),
                              "fleet_fail_on_findings": False})]
    result = measured(cloud, args, env, clusters)
    fleet = json.loads((report_dir / "fleet.json").read_text())
    if result["rc"] != 0 or fleet["clusters"] != clusters:
        raise SystemExit("fleet run failed (rc %s, %s clusters):\n%s" % (result["rc"], fleet["clusters"],
                                                                         result["output"][-6000:]))
    result["counts"] = fleet["counts"]
    return result


def plain(value):
    """The value as a playbook sees it (``ansible-inventory`` marks strings from a plugin as unsafe)."""
    if isinstance(value, dict):
        if set(value) == {"__ansible_unsafe"}:
            return value["__ansible_unsafe"]
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def loop_variables(cloud, env, inventory, workdir):
    """One variables file per cluster for playbooks/flight_check.yml, from the inventory and each cluster's
    Machines (what a user writing the loop has to prepare by hand)."""
    listing = json.loads(subprocess.run([str(BIN / "ansible-inventory"), "-i", str(inventory), "--list"], env=env,
                                        capture_output=True, text=True, check=True).stdout)
    from kubernetes import client, config

    api = client.CustomObjectsApi(config.new_client_from_config(config_file=str(cloud.kubeconfig)))
    machines = api.list_cluster_custom_object("cluster.x-k8s.io", "v1beta2", "machines")["items"]
    folder = workdir / "vars"
    folder.mkdir(parents=True)
    for host, hv in sorted(plain(listing["_meta"]["hostvars"]).items()):
        servers = [m["spec"]["providerID"].rsplit("/", 1)[-1] for m in machines
                   if m["metadata"]["namespace"] == hv["capi_cluster_namespace"]
                   and m["spec"]["clusterName"] == hv["capi_cluster_name"]
                   and "cluster.x-k8s.io/control-plane" not in m["metadata"].get("labels", {})
                   and m["spec"].get("providerID")]
        variables = {
            "flight_check_cluster_name": host, "flight_check_cloud": "minicloud",
            "flight_check_kubeconfig": str(cloud.kubeconfig),
            "flight_check_kubeconfig_secret": hv["capi_kubeconfig_secret"],
            "flight_check_servers": servers, "flight_check_security_group": hv["capi_security_groups"]["worker"]["id"],
            "flight_check_router": hv["capi_router"]["id"], "flight_check_cluster_cidr": hv["capi_pod_cidrs"],
            "flight_check_fail_on_findings": False,
            "flight_check_report_path": str(workdir / ("loop-%s.json" % host.replace("/", "_"))),
        }
        (folder / ("%s.json" % host.replace("/", "_"))).write_text(json.dumps(variables))
    return folder


def loop_run(cloud, env, folder, clusters):
    script = ('for f in "$1"/*.json; do "$2" -i localhost, -c local --check "$3" -e @"$f" > "$f.log" '
              '|| { echo "failed: $f"; tail -40 "$f.log"; exit 1; }; done')
    args = ["bash", "-c", script, "loop", str(folder), str(BIN / "ansible-playbook"),
            str(REPO / "playbooks" / "flight_check.yml")]
    result = measured(cloud, args, env, clusters)
    if result["rc"] != 0:
        raise SystemExit("loop failed:\n%s" % result["output"][-6000:])
    return result


def table(rows):
    header = ["clusters", "run", "forks", "wall time (s)", "per cluster (s)", "API requests", "requests per cluster",
              "peak memory, all processes (MiB)", "peak memory, controller (MiB)"]
    return markdown_table(header, ["---"] * 9, (
        ["%d" % row["clusters"], row["run"], str(row["forks"]), "%.1f" % row["wall"],
         "%.2f" % (row["wall"] / row["clusters"]), "%d" % row["requests"], "%.1f" % row["per_cluster"],
         "%d" % row["peak_tree_mib"],         "%d" % row["peak_main_mib"] if row["forks"] != "-" else "- (a shell)"]
        for row in rows))


def skipped(rows, sizes):
    """What the plan left out at a size, with the time it would take at the per-cluster time measured at the
    largest size where it ran (runs at saturated cores grow linearly with the clusters)."""
    notes = []
    kinds = sorted({(r["run"], r["forks"]) for r in rows}, key=str)
    for run, forks in kinds:
        measured = [r for r in rows if (r["run"], r["forks"]) == (run, forks)]
        missing = [s for s in sizes if s not in {r["clusters"] for r in measured}]
        if missing:
            last = max(measured, key=lambda r: r["clusters"])
            per = last["wall"] / last["clusters"]
            label = "the shell loop" if forks == "-" else "%s with forks %s" % (run, forks)
            notes.append("Not run: %s at %s clusters; at the %.1f s per cluster measured at %d clusters that is "
                         "about %s" % (label, ", ".join(map(str, missing)), per, last["clusters"],
                                       ", ".join("%.0f s at %d" % (per * s, s) for s in missing)))
    return "".join("\n\n" + note + "." for note in notes)


def main():
    parser = bench_parser(__doc__)
    parser.add_argument("--plan", default=" ".join("%d:1,10,25,loop" % size for size in SIZES),
                        help="what runs at each size: SIZE:FORKS,...[,loop] separated by spaces (default: forks 1, 10 "
                             "and 25 and the shell loop at 10, 30 and 100 clusters)")
    args = parser.parse_args()
    plan = {}
    for entry in args.plan.split():
        size, _, runs = entry.partition(":")
        plan[int(size)] = [r if r == "loop" else int(r) for r in runs.split(",") if r]
    sizes = sorted(plan)
    rows, seeding = [], []
    with running_cloud() as cloud, collections_path() as collections, tempfile.TemporaryDirectory() as tmp:
        env = playbook_env(cloud, collections, ANSIBLE_INVENTORY_UNPARSED_FAILED="true",
                           ANSIBLE_PYTHON_INTERPRETER=str(BIN / "python"))
        workdir = Path(tmp)
        inventory = workdir / "fleet.capi_clusters.yml"
        inventory.write_text(yaml.safe_dump({"plugin": "flightcontrol.openstack.capi_clusters",
                                             "kubeconfig": str(cloud.kubeconfig), "namespaces": NAMESPACES}))
        have, run = 0, "b" + uuid.uuid4().hex[:4]
        for step, size in enumerate(sizes):
            seeded = cloud.create_capi_fleet(size - have, prefix="%s%d" % (run, step), namespaces=NAMESPACES,
                                             api_versions=API_VERSIONS, control_plane=1, workers=1,
                                             load_balancer=False, drift_every=DRIFT_EVERY)
            seeding.append((size - have, seeded["seconds"]))
            print("seeded %d clusters in %.1f s" % (size - have, seeded["seconds"]), flush=True)
            have = size
            for count in [r for r in plan[size] if r != "loop"]:
                report_dir = workdir / ("reports-%d-%d" % (size, count))
                result = fleet_run(cloud, env, inventory, count, size, report_dir)
                rows.append(dict(result, clusters=size, run="fleet_flight_check.yml", forks=count))
                print("%4d clusters  fleet forks %-3d %7.1f s  %6d requests (%.1f per cluster)  %4d MiB all, "
                      "%4d MiB controller  %s" % (size, count, result["wall"], result["requests"], result["per_cluster"],
                                                  result["peak_tree_mib"], result["peak_main_mib"], result["counts"]),
                      flush=True)
            if "loop" in plan[size]:
                folder = loop_variables(cloud, env, inventory, workdir / ("loop-%d" % size))
                result = loop_run(cloud, env, folder, size)
                rows.append(dict(result, clusters=size, run="flight_check.yml in a shell loop", forks="-"))
                print("%4d clusters  shell loop      %7.1f s  %6d requests (%.1f per cluster)  %4d MiB all, "
                      "%4d MiB controller" % (size, result["wall"], result["requests"], result["per_cluster"],
                                              result["peak_tree_mib"], result["peak_main_mib"]), flush=True)
    text = table(rows) + skipped(rows, sizes) + "\n\nSeeding (not part of the runs): " + ", ".join(
        "%d clusters in %.0f s" % pair for pair in seeding) + "."
    print(text)
    if not args.no_write:
        write_doc(MARK, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
