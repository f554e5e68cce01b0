"""Traffic through the API load balancer's VIP during three-node control-plane rollouts: what each way loses.

Scenario: one seeded cluster per way (three control-plane Machines on real servers, each serving a
kube-apiserver-like endpoint behind its member, CAPO's TCP health monitor), a load generator through the VIP
(``minicloud load``: RATE requests a second on new connections from CLIENTS clients, KEEPALIVE keep-alive clients
at KEEPALIVE_RATE requests a second each on the connection each keeps, as client-go does, WATCHES watches held
open) during each rollout, stopped when the rollout is over (all old Machines gone). The ways:

- (a) CAPO <= 0.13 alone (waits for the load balancer only) while the Octavia emulator loses every new member
  (the amphora v2 failure); after each rollout the emulator recovers, so the next one starts from a whole pool;
- (b) CAPO 0.14 alone (waits for the new member to be ACTIVE);
- (c) CAPO 0.14 with the control_plane_rollout role (holds, releases one Machine at a time, drains the old
  member first: ``control_plane_rollout_drain``, ``drain_timeout`` 30 s);
- (d) the same without the drain (the role's default).

A Machine's kube-apiserver fails its requests from the moment KCP removes its etcd member (the Machine's
``kcp-cleanup`` hook taken off) while the load balancer still sends to it, until CAPO deletes the member.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

from minicloud.dataplane.load import failed_of

from harness import BIN, REPO, bench_parser, collections_path, markdown_table, running_cloud, write_doc

MARK = "rollout_traffic"
NAMESPACE = "default"
RATE, CLIENTS, WATCHES = 20, 4, 2
KEEPALIVE, KEEPALIVE_RATE = 4, 5.0
PLAYBOOK = REPO / "playbooks" / "control_plane_rollout.yml"
WAYS = {"a": "CAPO <= 0.13 alone, lost member", "b": "CAPO 0.14 alone", "c": "CAPO 0.14 + control_plane_rollout (drain)",
        "d": "CAPO 0.14 + control_plane_rollout (no drain)"}
GUARDED = {"c": True, "d": False}  # way -> drain


def lb_name(cluster):
    return "k8s-clusterapi-cluster-%s-%s-kubeapi" % (NAMESPACE, cluster)


def set_capo_wait(cloud, cluster, capo_wait):
    from kubernetes import client as k8s_client
    from kubernetes import config as k8s_config

    api = k8s_client.CustomObjectsApi(k8s_config.new_client_from_config(config_file=str(cloud.kubeconfig)))
    found = api.get_namespaced_custom_object("cluster.x-k8s.io", "v1beta2", NAMESPACE, "clusters", cluster)
    api.patch_namespaced_custom_object("controlplane.cluster.x-k8s.io", "v1beta2", NAMESPACE, "kubeadmcontrolplanes",
                                       found["spec"]["controlPlaneRef"]["name"],
                                       {"metadata": {"annotations": {"minicloud.test/capo-wait": capo_wait}}})


def wait_rollout(cloud, cluster, timeout=900):
    """Until the controllers' rollout is over (no old Machine left)."""
    deadline = time.monotonic() + timeout
    time.sleep(2)
    while time.monotonic() < deadline:
        status = cloud.capi_rollout_status(cluster, NAMESPACE)
        if status["phase"] != "RollingOut" and not status["machines"]["old"] and not status["machines"]["deleting"]:
            return status
        time.sleep(1)
    raise SystemExit("rollout of %s not over after %d s: %s" % (cluster, timeout, status))


def run_role(cloud, cluster, collections, drain):
    variables = dict(cluster_name=cluster, cluster_namespace=NAMESPACE, kubeconfig=str(cloud.kubeconfig),
                     openstack_cloud="minicloud", ansible_python_interpreter=sys.executable, start_rollout=True,
                     drain=drain)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(collections), OS_CLIENT_CONFIG_FILE=str(cloud.clouds_yaml),
               PYTHONWARNINGS="ignore", ANSIBLE_DEPRECATION_WARNINGS="0", ANSIBLE_LOCALHOST_WARNING="0",
               ANSIBLE_INVENTORY_UNPARSED_WARNING="0")
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(variables, handle)
    try:
        proc = subprocess.run([str(BIN / "ansible-playbook"), "-i", "localhost,", "-e", "@%s" % handle.name,
                               str(PLAYBOOK)], capture_output=True, text=True, env=env, check=False)
    finally:
        os.unlink(handle.name)
    if proc.returncode != 0:
        raise SystemExit("the role failed:\n%s" % proc.stdout[-6000:])


def one_rollout(cloud, way, cluster, collections):
    """One rollout under traffic; the load report and the rollout's wall time."""
    load = "bench-%s" % cluster
    if way == "a":
        cloud.set_octavia_mode("lost-member", members=lb_name(cluster) + "-6443-*")
    cloud.load_start(load, lb_name(cluster), rate=RATE, clients=CLIENTS, watches=WATCHES, keepalive=KEEPALIVE,
                     keepalive_rate=KEEPALIVE_RATE)
    time.sleep(3)
    started, since = time.monotonic(), time.time()
    if way in GUARDED:
        run_role(cloud, cluster, collections, GUARDED[way])
    else:
        cloud.capi_rollout(cluster, NAMESPACE, capo_wait="lb" if way == "a" else "member")
    wait_rollout(cloud, cluster)
    wall = time.monotonic() - started
    time.sleep(3)
    cloud.load_stop(load)
    report = cloud.load_report(load, since=since)
    summary = cloud.capi_history_summary(cluster, NAMESPACE)
    if way == "a":
        cloud.set_octavia_mode("normal")  # the lost members are provisioned: the next rollout starts whole
    return dict(report, wall=wall, min_serving=summary["minServing"])


def measure(cloud, way, provider, rollouts, collections):
    cluster = "traffic-%s-%s" % (way, provider)
    cloud.set_octavia_mode("normal")
    cloud.create_capi_cluster(cluster, control_plane=3, openstack=True, monitor=True, namespace=NAMESPACE,
                              lb_provider=provider)
    if way in GUARDED:
        set_capo_wait(cloud, cluster, "member")
    results = []
    try:
        for number in range(1, rollouts + 1):
            result = one_rollout(cloud, way, cluster, collections)
            print("%s on %s, rollout %d: %s" % (way, provider, number, json.dumps({k: result[k] for k in (
                "requests", "failed", "failures", "longest_error_streak", "longest_error_streak_seconds", "p99_ms",
                "watches_interrupted", "wall", "min_serving", "clients")})), flush=True)
            results.append(result)
    finally:
        cloud.set_octavia_mode("normal")
        cloud.delete_capi_openstack(cluster, NAMESPACE)
        cloud.delete_capi_cluster(cluster, NAMESPACE)
    return results


def rows(measured):
    out = []
    for (way, provider), results in measured.items():
        for number, r in enumerate(results, 1):
            clients = r["clients"]
            out.append([WAYS[way], provider, str(number), failed_of(clients["new"]), failed_of(clients["keepalive"]),
                        failed_of(clients["watch"]),
                        "%d (%.1f s)" % (r["longest_error_streak"], r["longest_error_streak_seconds"]),
                        "%.0f" % r["p99_ms"] if r["p99_ms"] is not None else "-",
                        str(r["min_serving"]), "%.0f" % r["wall"]])
    return out


def main():
    parser = bench_parser(__doc__, optional_baseline=True)
    parser.add_argument("--rollouts", default="a:2,b:2,c:5", help="way:count,... (default a:2,b:2,c:5)")
    parser.add_argument("--providers", default="amphora,ovn",
                        help="the API load balancer's Octavia providers, each measured in turn (default amphora,ovn; "
                             "way a, the amphora v2 lost member, only on amphora)")
    args = parser.parse_args()
    plan = dict((w, int(n)) for w, n in (item.split(":") for item in args.rollouts.split(",")))
    measured = {}
    with running_cloud() as cloud, collections_path() as collections:
        settings = cloud.dataplane_settings()
        for provider in args.providers.split(","):
            for way, count in plan.items():
                if way == "a" and provider != "amphora":
                    continue
                measured[(way, provider)] = measure(cloud, way, provider, count, collections)
    header = ["way", "provider", "rollout", "failed: new connection", "failed: keep-alive", "watches interrupted",
              "longest error streak (new connection)", "p99 ms", "fewest serving members", "rollout s"]
    text = markdown_table(header, ["---", "---"] + ["---:"] * 8, rows(measured))
    text += ("\n\nLoad: %d requests/s on new connections from %d clients, %d keep-alive clients at %g requests/s "
             "each (one connection each, retried once on a connection found closed), %d watches; health checks every "
             "min(delay, %s s). Command: `.venv/bin/python tools/bench/rollout_traffic.py --rollouts %s --providers %s`.\n"
             % (RATE, CLIENTS, KEEPALIVE, KEEPALIVE_RATE, WATCHES, settings["check_interval_cap"], args.rollouts,
                args.providers))
    print(text)
    if not args.no_write:
        write_doc(MARK, text)


if __name__ == "__main__":
    main()
