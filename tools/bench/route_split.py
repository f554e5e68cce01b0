"""Where route_audit's time goes at 1000 and 5000 nodes: the API answering versus the module's own work.

The scenario of ``routes.py`` (a router, N node ports with their address pairs and routes, then 10% of the
routes wiped, 5% duplicated to a dead node, 5% stale, one foreign route), and per size the audit
(``state: audited``) and the repair (``state: repaired``, ``max_changes`` 10000), each run ``--repeats``
times on the same drift (put back before every run); the median is reported.

Each run is a fresh Python process that imports the module (not timed, as the imports do not grow with
the nodes) and then calls its ``main()`` the way ``tests/integration/inprocess.py`` does: the same
argument parsing, runner and JSON result as under ``ansible-playbook``. Every HTTP request the module
makes goes through ``requests.adapters.HTTPAdapter.send``, which is timed, the answer's body read
included: that is the API's time (the service at work, its database, the loopback). The rest of
``main()`` is the module's own time: argument checks, JSON decoding, the audit, the repair plan, the
result.

``--before DIR`` measures a second checkout of the collection (an earlier commit, e.g. from
``git worktree add``) in the same runs, interleaved with this one, so both see the same machine load.

minicloud must run with a route limit above N + 10% (``up --max-routes``); this script starts its own in
a temporary state folder with ``--max-routes 6000`` unless ``--state-dir`` names a running one (there the
seeded routers are kept and used again by the next run: seeding 5000 node ports takes Neutron minutes).
Results go to the route_audit section of docs/benchmarks.md; ``--profile DIR`` writes a cProfile of each
size's first runs.
"""

import cProfile
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from minicloud.runtime.control import Minicloud
from minicloud.core.settings import free_port_offset
from minicloud.seeding.openstack import SeedError

from harness import REPO, bench_parser, write_doc
from routes import CLUSTER, break_routes, foreign_route, seed

MARK = "route_audit_split"
SIZES = (1000, 5000)
MAX_ROUTES = 6000
REPEATS = 3


# -- one run, in a process of its own ---------------------------------------------------------------

def register_collection(root):
    """Make ``root`` importable as ansible_collections.flightcontrol.openstack (as the pytest plugin does)."""
    import importlib.machinery
    import importlib.util
    parent = None
    for name, path in (("ansible_collections", []), ("ansible_collections.flightcontrol", []),
                       ("ansible_collections.flightcontrol.openstack", [str(root)])):
        spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
        spec.submodule_search_locations = list(path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        if parent is not None:
            setattr(parent, name.rsplit(".", 1)[1], module)
        parent = module


def worker(job_file):
    """Run route_audit once as the job says; print the split as JSON."""
    job = json.loads(Path(job_file).read_text())
    register_collection(job["collection"])
    sys.path.insert(0, str(REPO / "tests" / "integration"))
    import requests.adapters
    from ansible.module_utils import basic
    import inprocess
    inprocess.importlib.import_module(inprocess.PACKAGE + "route_audit")  # imported before the clock starts

    original = requests.adapters.HTTPAdapter.send
    api = {"seconds": 0.0, "requests": 0}

    def send(adapter, request, **kwargs):
        started = time.perf_counter()
        try:
            response = original(adapter, request, **kwargs)
            if not kwargs.get("stream"):
                response.content  # pylint: disable=pointless-statement  (the body read is the API's time)
            return response
        finally:
            api["seconds"] += time.perf_counter() - started
            api["requests"] += 1

    requests.adapters.HTTPAdapter.send = send
    ansible = {"seconds": 0.0}

    def timed(method):
        def call(*args, **kwargs):
            started = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                ansible["seconds"] += time.perf_counter() - started
        return call

    # Ansible's part: AnsibleModule checking the arguments against the spec, and writing the result
    for name in ("__init__", "exit_json", "fail_json"):
        setattr(basic.AnsibleModule, name, timed(getattr(basic.AnsibleModule, name)))
    profiler = cProfile.Profile() if job.get("profile") else None
    started = time.perf_counter()
    if profiler:
        profiler.enable()
    result = inprocess.run_module("route_audit", job["args"], env={"OS_CLIENT_CONFIG_FILE": job["clouds_yaml"]})
    if profiler:
        profiler.disable()
    total = time.perf_counter() - started
    if profiler:
        profiler.dump_stats(job["profile"])
    print(json.dumps({"total": total, "api": api["seconds"], "requests": api["requests"], "ansible": ansible["seconds"],
                      "failed": result.get("failed"), "msg": result.get("msg"), "elapsed": result.get("elapsed"),
                      "findings": len(result.get("findings") or []), "changes": len(result.get("changes") or []),
                      "remaining": len(result.get("remaining") or [])}))


def run_split(cloud, collection, router, nodes, state, workdir, profile=None):
    """One run of route_audit from ``collection`` in a new process: its split (dict)."""
    job = Path(workdir) / "job.json"
    job.write_text(json.dumps({
        "collection": str(collection), "clouds_yaml": str(cloud.clouds_yaml), "profile": str(profile or ""),
        "args": {"cloud": "minicloud", "router": router, "cluster_cidr": [CLUSTER], "state": state,
                 "max_changes": 10000,
                 "nodes": [{"name": n["name"], "pod_cidr": n["pod_cidr"], "address": n["address"]} for n in nodes]}}))
    proc = subprocess.run([sys.executable, __file__, "--worker", str(job)], capture_output=True, text=True,
                          check=False, env=dict(os.environ, PYTHONWARNINGS="ignore"))
    if proc.returncode != 0:
        raise SystemExit("route_audit %s run failed:\n%s\n%s" % (state, proc.stdout[-4000:], proc.stderr[-4000:]))
    split = json.loads(proc.stdout.strip().splitlines()[-1])
    if split["failed"]:
        raise SystemExit("route_audit %s failed: %s" % (state, split["msg"]))
    split["own"] = split["total"] - split["api"] - split["ansible"]
    return split


# -- the scenario and the table ---------------------------------------------------------------------

def seeded(cloud, n, state_dir):
    """The scenario for N nodes: seeded now, or the one a run before seeded on this cloud."""
    saved = Path(state_dir) / ("bench-route-split-%d.json" % n)
    if saved.exists():
        scenario = json.loads(saved.read_text())
        try:
            cloud.router(scenario["router"])
            return scenario["router"], scenario["nodes"], scenario["drift"]
        except SeedError:
            pass
    started = time.monotonic()
    router, nodes, drift = seed(cloud, n)
    print("%5d nodes  seeded in %.0f s" % (n, time.monotonic() - started), flush=True)
    saved.write_text(json.dumps({"router": router, "nodes": nodes, "drift": drift}))
    return router, nodes, drift


def measure(cloud, n, collections, repeats, state_dir, profile_dir=None):
    """Per collection and state, the runs' splits (``collections``: label -> checkout)."""
    router, nodes, drift = seeded(cloud, n, state_dir)
    expected = len(drift["remove"]) + len(drift["add"])
    runs = dict(((label, state), []) for label in collections for state in ("audited", "repaired"))
    with tempfile.TemporaryDirectory() as workdir:
        for attempt in range(repeats):
            for label, collection in collections.items():
                break_routes(cloud, router, drift)
                for state in ("audited", "repaired"):
                    profile = Path(profile_dir) / ("%s-%d-%s.prof" % (label, n, state)) \
                        if profile_dir and attempt == 0 else None
                    split = run_split(cloud, collection, router, nodes, state, workdir, profile)
                    assert split["findings"] == expected, (label, state, split["findings"], expected)
                    if state == "repaired":
                        assert split["changes"] == expected and split["remaining"] == 0, split
                    runs[(label, state)].append(split)
                    print("%5d nodes  %-6s %-9s run %d: %6.2f s total, %6.2f s API, %5.2f s Ansible, %5.2f s own "
                          "(%4.1f%%), %2d requests" % (
                              n, label, state, attempt + 1, split["total"], split["api"], split["ansible"],
                              split["own"], 100 * split["own"] / split["total"], split["requests"]), flush=True)
        after = run_split(cloud, collections["after"], router, nodes, "audited", workdir)
    assert after["findings"] == 0, after
    assert foreign_route(n) in cloud.router(router)["routes"]
    rows = []
    for label in collections:
        for state, run in (("audited", "audit"), ("repaired", "repair")):
            measured = runs[(label, state)]
            row = {"n": n, "run": run, "code": label, "requests": measured[0]["requests"], "changes": expected
                   if state == "repaired" else 0}
            for key in ("total", "api", "ansible", "own", "elapsed"):
                row[key] = statistics.median(m[key] for m in measured)
            row["share"] = 100 * statistics.median(m["own"] / m["total"] for m in measured)
            row["not_api"] = 100 * statistics.median(1 - m["api"] / m["total"] for m in measured)
            rows.append(row)
    return rows


def table(rows):
    lines = ["| nodes | run | code | changes | API requests | total (s) | API (s) | Ansible (s) | own (s) | own share "
             "| all but the API | module `elapsed` (s) |",
             "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for row in sorted(rows, key=lambda r: (r["n"], r["run"], r["code"] != "before")):
        lines.append("| %d | %s | %s | %d | %d | %.2f | %.2f | %.2f | %.2f | %.1f%% | %.1f%% | %.2f |" % (
            row["n"], row["run"], row["code"], row["changes"], row["requests"], row["total"], row["api"],
            row["ansible"], row["own"], row["share"], row["not_api"], row["elapsed"]))
    return "\n".join(lines)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        worker(sys.argv[2])
        return 0
    parser = bench_parser(__doc__, optional_baseline=True)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--repeats", type=int, default=REPEATS,
                        help="runs per size, state and code (the median is reported; default %d)" % REPEATS)
    parser.add_argument("--before", metavar="DIR", help="also measure this checkout of the collection (say, the "
                        "commit before a change), interleaved with this one")
    parser.add_argument("--state-dir", help="a running minicloud with a high enough --max-routes")
    parser.add_argument("--profile", metavar="DIR", help="write a cProfile of each size's first runs to DIR")
    args = parser.parse_args()
    collections = {"after": REPO}
    if args.before:
        collections = {"before": Path(args.before).resolve(), "after": REPO}
    own = args.state_dir is None
    state_dir = args.state_dir or tempfile.mkdtemp(prefix="bench-route-split-")
    cloud = Minicloud(state_dir)
    os.environ["MINICLOUD_STATE_DIR"] = state_dir
    if own:
        cloud.up(port_offset=free_port_offset(), max_routes=MAX_ROUTES, timeout=300)
    if args.profile:
        Path(args.profile).mkdir(parents=True, exist_ok=True)
    rows = []
    try:
        for n in args.sizes:
            rows += measure(cloud, n, collections, args.repeats, state_dir, args.profile)
    finally:
        if own:
            cloud.down(purge=True)
    text = table(rows)
    print(text)
    max_routes = json.loads((Path(state_dir) / "settings.json").read_text())["max_routes"] if not own else MAX_ROUTES
    if not args.no_write:
        write_doc(MARK, "Measured %s on a 2-core machine with `tools/bench/route_split.py%s` (minicloud up with "
                  "`--max-routes %d`; the drift of the table above; median of %d runs of each; each run a new "
                  "process, the module's `main()` timed, `HTTPAdapter.send` timed within it).\n\n%s" % (
                      time.strftime("%Y-%m-%d"), " --before DIR" if args.before else "", max_routes, args.repeats,
                      text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
