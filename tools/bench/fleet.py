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

``--waves N`` measures the rollout in waves instead (section ``fleet-waves``): N clusters with one control-plane
machine and a real API load balancer each, ``playbooks/fleet_rollout.yml`` with waves ``[1, 3, "25%", "100%"]`` run
as 3 ``ansible-playbook`` processes at once, each given an inventory holding only its slice's hosts (the way AWX
slices a job: a static inventory per slice made from ``ansible-inventory --list`` of the capi_clusters source): first with the first cluster of the
second wave made stuck (its new member never serves): the time from the start to the halt record, and which
clusters were touched (their Lease taken); then, the halt lifted, the whole fleet without a stuck cluster, against
the same playbook without waves (one cluster at a time, one process).
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


WAVES = [1, 3, "25%", "100%"]
SLICES = 3


def core_api(cloud):
    from kubernetes import client, config
    api = config.new_client_from_config(config_file=str(cloud.kubeconfig))
    return client.CoreV1Api(api), client.CoordinationV1Api(api)


def plain(value):
    """ansible-inventory's JSON without its ``{"__ansible_unsafe": ...}`` wrappers (AWX stores plain values)."""
    if isinstance(value, dict):
        return plain(value["__ansible_unsafe"]) if set(value) == {"__ansible_unsafe"} else dict(
            (k, plain(v)) for k, v in value.items())
    return [plain(v) for v in value] if isinstance(value, list) else value


def slice_inventories(env, inventory, slices, folder):
    """One static inventory per slice holding only its hosts, their variables and groups: what AWX gives each job
    of a sliced job template (not a limit on the whole inventory)."""
    listed = json.loads(subprocess.run([str(BIN / "ansible-inventory"), "-i", str(inventory), "--list"], env=env,
                                       check=True, capture_output=True, text=True).stdout)
    hostvars = plain(listed["_meta"]["hostvars"])
    paths = []
    for index, hosts in enumerate(slices):
        groups = dict((group, {"hosts": dict((h, None) for h in entry["hosts"] if h in hosts)})
                      for group, entry in listed.items()
                      if group not in ("_meta", "all", "ungrouped") and set(entry.get("hosts") or []) & set(hosts))
        path = Path(folder) / ("%s-slice-%d.yml" % (Path(inventory).stem.split(".")[0], index))
        path.write_text(yaml.safe_dump({"all": {"hosts": dict((h, hostvars[h]) for h in hosts), "children": groups}}))
        paths.append(path)
    return paths


def run_slices(env, inventories, extra):
    """``ansible-playbook`` once per inventory, all at once; (rc, output) of each."""
    procs = [subprocess.Popen([str(BIN / "ansible-playbook"), "-i", str(inventory),
                               str(REPO / "playbooks" / "fleet_rollout.yml"), "-e", json.dumps(extra)],
                              env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
             for inventory in inventories]
    return [proc.communicate() for proc in procs], procs


def first_seen(core, name, namespace, started, stop):
    """Seconds from ``started`` until the ConfigMap ``name`` exists (polled every 0.2 s), in ``found``."""
    found = {}

    def poll():
        while not stop.is_set():
            try:
                core.read_namespaced_config_map(name, namespace)
                found["at"] = time.monotonic() - started
                return
            except Exception:  # pylint: disable=broad-except
                stop.wait(0.2)
    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    return found, thread


def common_vars(cloud, hosts, namespace):
    urls = dict((h, "https://%s/readyz" % cloud.lb_vip("k8s-clusterapi-cluster-%s-kubeapi" % h.replace("/", "-")))
                for h in hosts)
    return {"fleet_cloud": "minicloud", "fleet_kubeconfig": str(cloud.kubeconfig), "fleet_records_namespace":
            namespace, "fleet_namespaces": [namespace], "fleet_waves": WAVES, "fleet_soak": 5, "fleet_poll_interval": 1, "fleet_readyz_urls": urls,
            "control_plane_rollout_member_timeout": 30, "control_plane_rollout_poll_interval": 1}


def report(row):
    print("%-48s wall %7.1f s  halt %s  touched %d  of a later wave %s  rc %s" % (
        row["run"], row["wall"], "%.1f s" % row["halt"] if row["halt"] else "-", row["touched"],
        "-" if row["later_touched"] is None else row["later_touched"], row["rc"]), flush=True)
    return row


def wave_runs(cloud, env, fleets, run, folder):
    """The three runs of the waves benchmark, each on a fleet of its own (a stuck cluster keeps its holds);
    rows for the table. ``fleets``: three ``(inventory, hosts, namespace)``."""
    core, coordination = core_api(cloud)
    inventory, hosts, namespace = fleets[0]
    common = common_vars(cloud, hosts, namespace)
    slices = [hosts[i::SLICES] for i in range(SLICES)]
    stuck, later = hosts[1], hosts[1 + 3:]
    cloud.set_octavia_mode("lost-member", members="k8s-clusterapi-cluster-%s-kubeapi-6443-*" % stuck.replace("/", "-"),
                           delay=0.2)
    inventories = slice_inventories(env, inventory, slices, folder)
    stop, started = threading.Event(), time.monotonic()
    halt, watcher = first_seen(core, "flightcontrol-fleet-halt", namespace, started, stop)
    outputs, procs = run_slices(env, inventories, dict(common, fleet_run=run + "-stuck"))
    wall = time.monotonic() - started
    stop.set()
    watcher.join()
    cloud.set_octavia_mode("normal")
    touched = [h for h in hosts if lease_of(coordination, h)]
    rows = [report(dict(run="waves, 3 slices, first cluster of wave 2 stuck", wall=wall, halt=halt.get("at"),
                        touched=len(touched), later_touched=len(set(touched) & set(later)),
                        rc=[p.returncode for p in procs]))]
    core.delete_namespaced_config_map("flightcontrol-fleet-halt", namespace)
    inventory, hosts, namespace = fleets[1]
    common = common_vars(cloud, hosts, namespace)
    slices = [hosts[i::SLICES] for i in range(SLICES)]
    inventories = slice_inventories(env, inventory, slices, folder)
    started = time.monotonic()
    outputs, procs = run_slices(env, inventories, dict(common, fleet_run=run + "-clean"))
    rows.append(report(dict(run="waves, 3 slices, no stuck cluster", wall=time.monotonic() - started, halt=None,
                            touched=len(hosts), later_touched=None, rc=[p.returncode for p in procs])))
    if any(p.returncode for p in procs):
        raise SystemExit("waves run failed:\n%s" % outputs[0][0][-6000:])
    inventory, hosts, namespace = fleets[2]
    plain_vars = dict((k, v) for k, v in common_vars(cloud, hosts, namespace).items() if k != "fleet_waves")
    started = time.monotonic()
    outputs, procs = run_slices(env, [inventory], plain_vars)
    rows.append(report(dict(run="no waves, one cluster at a time, 1 process", wall=time.monotonic() - started,
                            halt=None, touched=len(hosts), later_touched=None, rc=[p.returncode for p in procs])))
    return rows


def lease_of(coordination, host):
    namespace, name = host.split("/")
    try:
        return coordination.read_namespaced_lease("flightcontrol-" + name, namespace)
    except Exception:  # pylint: disable=broad-except
        return None


def seed_fleet(cloud, count, prefix, folder):
    namespace = "bench-waves-" + prefix
    seeded = cloud.create_capi_fleet(count, prefix=prefix, namespaces=[namespace], control_plane=1)
    print("seeded %d clusters in %.1f s" % (count, seeded["seconds"]), flush=True)
    hosts = sorted("%s/%s" % (c["namespace"], c["name"]) for c in seeded["clusters"])
    inventory = Path(folder) / ("%s.capi_clusters.yml" % prefix)
    inventory.write_text(yaml.safe_dump({"plugin": "flightcontrol.openstack.capi_clusters",
                                         "kubeconfig": str(cloud.kubeconfig), "namespaces": [namespace]}))
    return inventory, hosts, namespace


def waves_main(args):
    with running_cloud() as cloud, collections_path() as collections, tempfile.TemporaryDirectory() as tmp:
        env = playbook_env(cloud, collections, ANSIBLE_INVENTORY_UNPARSED_FAILED="true",
                           ANSIBLE_PYTHON_INTERPRETER=str(BIN / "python"))
        run = "w" + uuid.uuid4().hex[:4]
        prefixes = [run + kind for kind in ("s", "c", "o")]
        try:
            fleets = [seed_fleet(cloud, args.waves, prefix, tmp) for prefix in prefixes]
            rows = wave_runs(cloud, env, fleets, run, tmp)
        finally:
            cloud.set_octavia_mode("normal")
            for prefix in prefixes:
                cloud.delete_capi_fleet(prefix=prefix, namespaces=["bench-waves-" + prefix])
    text = markdown_table(
        ["clusters", "run", "wall time (s)", "time to halt (s)", "clusters touched", "of a later wave", "rc"],
        ["---"] * 7, ([str(args.waves), r["run"], "%.1f" % r["wall"], "%.1f" % r["halt"] if r["halt"] else "-",
                       str(r["touched"]), "-" if r["later_touched"] is None else str(r["later_touched"]),
                       ",".join(map(str, r["rc"]))] for r in rows))
    print(text)
    if not args.no_write:
        write_doc("fleet-waves", text)
    return 0


def main():
    parser = bench_parser(__doc__)
    parser.add_argument("--plan", default=" ".join("%d:1,10,25,loop" % size for size in SIZES),
                        help="what runs at each size: SIZE:FORKS,...[,loop] separated by spaces (default: forks 1, 10 "
                             "and 25 and the shell loop at 10, 30 and 100 clusters)")
    parser.add_argument("--waves", type=int, default=0,
                        help="measure the rollout in waves over this many clusters instead (30 or more)")
    args = parser.parse_args()
    if args.waves:
        return waves_main(args)
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
