"""Benchmark cluster_pause_ack against minicloud's Kubernetes API, side by side with kubernetes.core.

Scenario per provider behaviour: a provisioned three-node CAPI cluster (v1beta2) whose infrastructure
provider reacts to a pause like a real one (``capi provider MODE --delay 15``):

- ``silent``: CAPO with a reconcile in flight (waiting on slow OpenStack calls), which goes on writing its
  objects for 15 s after the pause and reports nothing (no Paused condition of its own, no annotation);
- ``block-move``: a provider that keeps ``clusterctl.cluster.x-k8s.io/block-move`` on its objects for 15 s;
- ``stuck``: a provider that never lets go of block-move (ours then fails at its ``timeout``, 40 s here).

- ours, by watch: one ``flightcontrol.openstack.cluster_pause_ack`` task (``quiet_period: 10``), as it runs by
  default: the objects followed by watch;
- ours, polling: the same task with ``use_watch: false`` (every kind listed at every poll, as before watch);
- baseline: one ``kubernetes.core.k8s`` task (kubernetes.core from the ansible 12 package, in
  ``.venv-bench``) that patches ``spec.paused: true`` and waits for the Cluster's ``Paused`` condition,
  what the Cluster API documentation tells users to check.

After each task returns, the provider's objects are watched (a poll every 0.1 s) until the provider is
surely done: the writes it made after the task returned, and how long it went on, are what a
``clusterctl move`` or a maintenance started at that moment would race with. Request counts are
minicloud's (every request the task made to the Kubernetes API). Results go to the cluster_pause_ack
section of docs/benchmarks.md.
"""

import sys
import tempfile
import time
from pathlib import Path

from kubernetes import client, config

from harness import (BIN, baseline_bin, bench_parser, collections_path, markdown_table, run_playbook, running_cloud,
                     write_doc)

MARK = "cluster_pause_ack"
DELAY = 15.0
QUIET = 10
MODES = ("silent", "block-move", "stuck")
TIMEOUT = 40
TOOLS = ("watch", "poll", "baseline")
BLOCK_MOVE = "clusterctl.cluster.x-k8s.io/block-move"
INFRA = ("infrastructure.cluster.x-k8s.io", "v1beta1", ("openstackclusters", "openstackmachines"))


def playbook_ours(cloud, name, use_watch):
    return [{"name": "cluster_pause_ack", "hosts": "localhost", "gather_facts": False, "tasks": [
        {"name": "Pause and wait for every controller to stop", "register": "result", "ignore_errors": True,
         "flightcontrol.openstack.cluster_pause_ack": {
             "name": name, "state": "paused", "quiet_period": QUIET, "timeout": TIMEOUT, "use_watch": use_watch,
             "kubeconfig": str(cloud.kubeconfig)}}]}]


def playbook_baseline(cloud, name):
    return [{"name": "kubernetes.core baseline", "hosts": "localhost", "gather_facts": False, "tasks": [
        {"name": "Pause and wait for the Paused condition", "register": "result", "kubernetes.core.k8s": {
            "kubeconfig": str(cloud.kubeconfig), "state": "patched", "merge_type": "merge",
            "definition": {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
                           "metadata": {"name": name, "namespace": "default"}, "spec": {"paused": True}},
            "wait": True, "wait_condition": {"type": "Paused", "status": "True"}, "wait_timeout": TIMEOUT}}]}]


def provider_objects(api, name):
    """{(plural, name): (resourceVersion, has block-move)} of the provider's objects of cluster ``name``."""
    custom = client.CustomObjectsApi(api)
    group, version, plurals = INFRA
    seen = {}
    for plural in plurals:
        listed = custom.list_namespaced_custom_object(group, version, "default", plural,
                                                      label_selector="cluster.x-k8s.io/cluster-name=%s" % name)
        for item in listed["items"]:
            meta = item["metadata"]
            seen[(plural, meta["name"])] = (meta["resourceVersion"], BLOCK_MOVE in (meta.get("annotations") or {}))
    return seen


def watch_after(api, name, seconds):
    """Poll the provider's objects for ``seconds``: (writes seen, seconds until the last one, block-move
    annotations present at the start)."""
    started = time.monotonic()
    before = provider_objects(api, name)
    blocked = sum(1 for _rv, flag in before.values() if flag)
    writes, last = 0, 0.0
    while time.monotonic() - started < seconds:
        time.sleep(0.1)
        now = provider_objects(api, name)
        changed = sum(1 for key, (rv, _flag) in now.items() if before.get(key, (None,))[0] != rv)
        if changed:
            writes += changed
            last = time.monotonic() - started
        before = now
    return writes, last, blocked


def measure(cloud, mode, tool, baseline_bin, collections, api):
    name = "bench-pause-%s-%s-%d" % (mode.replace("-", ""), tool, int(time.time()))
    cloud.create_capi_cluster(name, control_plane=3)
    cloud.set_capi_provider_mode(mode, delay=DELAY)
    time.sleep(1.0)  # the provider has seen the new cluster (block-move: annotated while not paused)
    cloud.request_counts(reset=True)
    play = playbook_baseline(cloud, name) if tool == "baseline" else playbook_ours(cloud, name, tool == "watch")
    with tempfile.TemporaryDirectory() as tmp:
        result, wall = run_playbook(play, baseline_bin if tool == "baseline" else BIN, cloud, Path(tmp), collections)
    requests = sum(cloud.request_counts(service="kubernetes")["totals"]["by_service"].values())
    writes, last, blocked = watch_after(api, name, DELAY + 3)
    cloud.delete_capi_cluster(name)
    assert result.get("changed"), result
    if tool != "baseline":
        assert (result.get("observed_with") or {}).get("method") == tool, result.get("observed_with")
    outcome = ("returned" if not result.get("failed") else "failed") if tool == "baseline" else (
        "acknowledged" if result.get("acknowledged") else "failed: not acknowledged")
    return {"mode": mode, "tool": tool, "wall": wall, "requests": requests, "writes_after": writes,
            "last_write_after": last, "blocked_after": blocked, "outcome": outcome}


LABELS = {"watch": "`cluster_pause_ack`, by watch (the default)",
          "poll": "`cluster_pause_ack`, polling (`use_watch: false`)",
          "baseline": "`kubernetes.core.k8s` patch + `wait_condition` Paused"}


def table(rows):
    header = ["provider", "tool", "outcome", "wall time (s)", "API requests", "provider writes after it returned",
              "provider still writing for (s)", "objects still blocking a move"]
    return markdown_table(header, ["---"] * 3 + ["---:"] * 5, (
        [row["mode"], LABELS[row["tool"]], row["outcome"], "%.1f" % row["wall"], "%d" % row["requests"],
         "%d" % row["writes_after"], "%.1f" % row["last_write_after"], "%d" % row["blocked_after"]]
        for row in rows))


def main():
    parser = bench_parser(__doc__)
    args = parser.parse_args()
    baseline = baseline_bin(args)
    rows = []
    with running_cloud() as cloud, collections_path() as collections:
        api = config.new_client_from_config(config_file=str(cloud.kubeconfig))
        try:
            for mode in MODES:
                for tool in TOOLS:
                    row = measure(cloud, mode, tool, baseline, collections, api)
                    rows.append(row)
                    print("%-10s %-8s %-24s %6.1f s  %4d requests  %3d writes after  %4.1f s  %d blocking" % (
                        mode, tool, row["outcome"], row["wall"], row["requests"], row["writes_after"],
                        row["last_write_after"], row["blocked_after"]), flush=True)
        finally:
            cloud.set_capi_provider_mode("silent")
    text = table(rows)
    print(text)
    if not args.no_write:
        write_doc(MARK, "Measured %s on a 2-core machine with `make bench` (a three-node v1beta2 cluster; the "
                  "provider's reaction lasts %.0f s; `timeout` %d s).\n\n%s" % (
                      time.strftime("%Y-%m-%d"), DELAY, TIMEOUT, text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
