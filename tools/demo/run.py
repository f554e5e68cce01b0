"""The demo: a control-plane rollout whose new member the load balancer forgot, and the role that keeps it safe.

Run with ``make demo`` (or ``.venv/bin/python tools/demo/run.py``).  It starts minicloud unless one is
already up, seeds a Cluster API cluster with a three-node control plane on real servers behind a real
Octavia load balancer, and makes minicloud's CAPO behave like CAPO before v0.14 (it waits for the load
balancer only) while the Octavia emulator loses every new member (the amphora v2 failure).  The
``control_plane_rollout`` playbook holds the old Machines, starts the rollout, sees the new member stuck
in PENDING_CREATE and stops, naming it, with every old member still serving.  Then the emulator recovers
and the same playbook, draining each old member before it lets its Machine go, finishes the rollout healthy.  minicloud's record of the pool proves that serving
members never dropped, and a load generator through the VIP counts the requests that failed.  Exit status 0 means the story went as told.

``LB_PROVIDER=ovn`` (``make demo LB_PROVIDER=ovn``; default ``amphora``) tells the same story on a load balancer of
the ``ovn`` provider. ovn-octavia-provider has no PENDING window: a member is ACTIVE at once, and with a health
monitor ONLINE until OVN's own service monitor says otherwise. So there the new member is lost the OVN way: its
server does not answer on the API port (minicloud's ``backend-down`` for that member only, set as soon as the new
Machine appears), OVN's health checks find it and the member goes ACTIVE/ERROR. The guard stops once it has not
served for ``member_timeout``, naming it; then the server answers again and OVN's checks bring it back ONLINE.
"""

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

from minicloud.dataplane.load import failed_of
from minicloud.runtime.control import Minicloud

REPO = Path(__file__).resolve().parents[2]
PLAYBOOK = REPO / "playbooks" / "control_plane_rollout.yml"
BIN = Path(sys.executable).parent
CLUSTER = "demo"
NAMESPACE = "default"
LOAD_BALANCER = "k8s-clusterapi-cluster-%s-%s-kubeapi" % (NAMESPACE, CLUSTER)
POOL = LOAD_BALANCER + "-6443"
LOAD = "demo"  # the load generator through the VIP
STEPS = 8
PROVIDERS = ("amphora", "ovn")
NEW_MACHINE_SECONDS = 120  # how long the ovn story waits for the rollout's new Machine


def say(text=""):
    print(text, flush=True)


def step(number, text):
    say()
    say("[%d/%d] %s" % (number, STEPS, text))


def indent(text, prefix="      | "):
    """The playbook's output for a person: the tasks that changed or failed, their messages and the recap,
    long lines wrapped, raw result JSON reduced to its message."""
    lines = []
    kept = []
    task = None
    for line in text.rstrip().splitlines():
        if line.startswith("TASK ["):
            task = line.split(" : ", 1)[-1].rstrip("* ").rstrip("]")
        elif line.startswith(("changed:", "fatal:", "failed:")) and task:
            kept.extend(["TASK " + task, line])
        elif line.startswith("PLAY RECAP") or (kept and kept[-1].startswith("PLAY RECAP")):
            kept.append(line)
    for line in kept:
        if " => {" in line and (line.startswith("fatal: ") or line.startswith("ok: ")):
            head, _sep, body = line.partition(" => ")
            try:
                data = json.loads(body)
            except ValueError:
                data = None
            if isinstance(data, dict):
                line = head + (" => " + data["msg"] if data.get("msg") else " => (result with %s)" % ", ".join(
                    sorted(data)[:8]))
        lines.extend(textwrap.wrap(line, width=110, subsequent_indent="    ", break_on_hyphens=False) or [""])
    return "\n".join(prefix + line for line in lines)


def run_playbook(cloud, collections, extra, meanwhile=None):
    """Run the playbook; ``meanwhile(proc)``, if given, runs while it does (what the world does meanwhile).
    Returns (rc, output, seconds)."""
    variables = dict(cluster_name=CLUSTER, cluster_namespace=NAMESPACE, kubeconfig=str(cloud.kubeconfig),
                     openstack_cloud="minicloud", ansible_python_interpreter=sys.executable, **extra)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(collections), OS_CLIENT_CONFIG_FILE=str(cloud.clouds_yaml),
               ANSIBLE_NOCOLOR="1", ANSIBLE_LOCALHOST_WARNING="0", ANSIBLE_INVENTORY_UNPARSED_WARNING="0",
               ANSIBLE_DEPRECATION_WARNINGS="0", PYTHONWARNINGS="ignore", ANSIBLE_DISPLAY_SKIPPED_HOSTS="0")
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(variables, handle)
    cmd = [str(BIN / "ansible-playbook"), "-i", "localhost,", "-e", "@%s" % handle.name, str(PLAYBOOK)]
    started = time.monotonic()
    try:
        with tempfile.TemporaryFile("w+") as out:  # a file, not a pipe: nobody reads while ``meanwhile`` runs
            with subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, text=True, env=env) as proc:
                if meanwhile is not None:
                    meanwhile(proc)
                proc.wait()
            out.seek(0)
            output = out.read()
    finally:
        os.unlink(handle.name)
    return proc.returncode, output, time.monotonic() - started


def custom_objects(cloud):
    return k8s_client.CustomObjectsApi(k8s_config.new_client_from_config(config_file=str(cloud.kubeconfig)))


def set_capo_wait(cloud, capo_wait):
    """minicloud's CAPO waits for the member (v0.14 on) or, like older CAPO, for the load balancer only."""
    api = custom_objects(cloud)
    cluster = api.get_namespaced_custom_object("cluster.x-k8s.io", "v1beta2", NAMESPACE, "clusters", CLUSTER)
    api.patch_namespaced_custom_object("controlplane.cluster.x-k8s.io", "v1beta2", NAMESPACE, "kubeadmcontrolplanes",
                                       cluster["spec"]["controlPlaneRef"]["name"],
                                       {"metadata": {"annotations": {"minicloud.test/capo-wait": capo_wait}}})


def control_plane(cloud):
    """(name, held by a pre-drain hook, being deleted) of each control-plane Machine, oldest first (KCP's own
    pre-terminate hook is on every Machine it owns)."""
    items = custom_objects(cloud).list_namespaced_custom_object(
        "cluster.x-k8s.io", "v1beta2", NAMESPACE, "machines",
        label_selector="cluster.x-k8s.io/cluster-name=%s,cluster.x-k8s.io/control-plane" % CLUSTER)["items"]
    items.sort(key=lambda m: m["metadata"]["creationTimestamp"])
    return [(m["metadata"]["name"], any(k.startswith("pre-drain.delete.hook.") for k in m["metadata"].get("annotations") or {}),
             bool(m["metadata"].get("deletionTimestamp"))) for m in items]


def members(lbapi, pool_id):
    return [(m.name.replace(POOL + "-", ""), m.provisioning_status, m.operating_status) for m in lbapi.members(pool_id)]


def show_members(lbapi, pool_id):
    for name, provisioning, operating in members(lbapi, pool_id):
        say("      member %-28s %-15s %s" % (name, provisioning, operating))


def provider_asked():
    """The load balancer provider asked for (``LB_PROVIDER``, default amphora); exits on anything else before
    any write."""
    provider = (os.environ.get("LB_PROVIDER") or "amphora").strip().lower()
    if provider not in PROVIDERS:
        say("LB_PROVIDER=%s: choose one of %s" % (provider, ", ".join(PROVIDERS)))
        sys.exit(2)
    return provider


def main():
    provider = provider_asked()
    cloud = Minicloud()
    started_here = False
    rows = []
    say("flightcontrol.openstack demo: a control-plane rollout that must not lose the API (provider %s)" % provider)
    say("=" * 84)

    step(1, "minicloud: real Keystone, Neutron, Octavia and nova-api, an emulated Kubernetes API with CAPI")
    if cloud.status().healthy:
        say("      already running in %s; using it and leaving it running" % cloud.state_dir)
    else:
        t0 = time.monotonic()
        cloud.up()
        started_here = True
        say("      up in %.0f s (state in %s)" % (time.monotonic() - t0, cloud.state_dir))
    cloud.set_octavia_mode("normal", delay=0.2)
    with tempfile.TemporaryDirectory() as tmp:
        collections = Path(os.environ.get("ANSIBLE_COLLECTIONS_PATH") or tmp)
        if not os.environ.get("ANSIBLE_COLLECTIONS_PATH"):
            (collections / "ansible_collections" / "flightcontrol").mkdir(parents=True)
            (collections / "ansible_collections" / "flightcontrol" / "openstack").symlink_to(REPO)
        try:
            ok = story(cloud, collections, rows, provider)
        finally:
            cloud.load_stop(LOAD)
            cloud.set_octavia_mode("normal")
            try:
                cloud.delete_capi_openstack(CLUSTER, namespace=NAMESPACE)
                cloud.delete_capi_cluster(CLUSTER, namespace=NAMESPACE)
            except Exception as exc:  # pylint: disable=broad-except
                say("      (clean-up of the demo cluster: %s)" % exc)
            if started_here:
                cloud.down()
                say("      minicloud stopped")
    table(rows)
    say()
    say("Result: %s" % ("the role held the old control plane while the new member was lost, stopped with its name, "
                        "and finished the rollout once the member served; the API never lost a serving member."
                        if ok else "NOT AS EXPECTED, see above."))
    return 0 if ok else 1


def story(cloud, collections, rows, provider):
    lbapi, pool_id = seed_cluster(cloud, provider)
    first_ok = first_rollout(cloud, collections, rows, lbapi, pool_id, provider)
    recover(cloud, lbapi, pool_id)
    second_ok, machines, summary = second_rollout(cloud, collections, rows, provider)
    afterwards(cloud, lbapi, pool_id, machines, summary)
    step(8, "Clean up the demo cluster")
    return first_ok and second_ok


def seed_cluster(cloud, provider):
    """Steps 2 and 3: the cluster behind its load balancer, traffic through the VIP, an old CAPO and an Octavia
    that loses new members (amphora: the emulator's ``lost-member``; ovn: see ``lose_new_member``);
    ``(load balancer API, pool id)``."""
    step(2, "A Cluster API cluster: three control-plane Machines on real servers behind a real Octavia LB (%s)"
         % provider)
    if any(c.get("name") == CLUSTER for c in cloud.list_capi_clusters(namespace=NAMESPACE)):
        cloud.delete_capi_openstack(CLUSTER, namespace=NAMESPACE)
        cloud.delete_capi_cluster(CLUSTER, namespace=NAMESPACE)
    created = cloud.create_capi_cluster(CLUSTER, control_plane=3, namespace=NAMESPACE, openstack=True, monitor=True,
                                        lb_provider=provider)
    pool_id = created["openstack"]["pool_id"]
    lbapi = cloud.connect().load_balancer
    show_members(lbapi, pool_id)
    cloud.load_start(LOAD, LOAD_BALANCER, rate=10, clients=2, watches=1, keepalive=4, keepalive_rate=5)
    say("      traffic through the VIP (minicloud load): 10 requests a second from 2 clients on a new connection each,")
    say("      4 keep-alive clients (one connection each, as client-go) at 5 a second each, and a watch")

    set_capo_wait(cloud, "lb")
    if provider == "ovn":
        step(3, "CAPO as before v0.14 (waits for the load balancer only); the new server will not answer on 6443")
        say("      ovn-octavia-provider makes a member ACTIVE at once: only OVN's own health checks can find a new")
        say("      member whose server does not answer; its operating status then goes ERROR")
    else:
        step(3, "CAPO as before v0.14 (waits for the load balancer only); the Octavia emulator loses new members")
        cloud.set_octavia_mode("lost-member", members=POOL + "-*", delay=0.2)
    say("      without a guard, KCP would now delete an old Machine as soon as the LB says ACTIVE")
    return lbapi, pool_id


def lose_new_member(cloud, proc):
    """ovn: as soon as the rollout's new Machine appears (before CAPO adds its member), its server stops
    answering on the API port (minicloud's ``backend-down`` for its member only), until the playbook ends."""
    old = set(name for name, _h, _d in control_plane(cloud))
    deadline = time.monotonic() + NEW_MACHINE_SECONDS
    while proc.poll() is None and time.monotonic() < deadline:
        new = [name for name, _h, _d in control_plane(cloud) if name not in old]
        if new:
            cloud.set_octavia_mode("backend-down", members="%s-%s" % (POOL, new[0]), delay=0.2)
            say("      new Machine %s: its server does not answer on 6443 (its member: backend down)" % new[0])
            return
        time.sleep(0.2)


def first_rollout(cloud, collections, rows, lbapi, pool_id, provider):
    """Step 4: the playbook starts the rollout and stops, holding every Machine; whether it did."""
    step(4, "ansible-playbook %s (start the rollout, member_timeout 20 s)" % PLAYBOOK.relative_to(REPO))
    since = time.time()
    meanwhile = (lambda proc: lose_new_member(cloud, proc)) if provider == "ovn" else None
    rc, output, took = run_playbook(cloud, collections, dict(start_rollout=True, member_timeout=20), meanwhile)
    say(indent(output))
    machines = control_plane(cloud)
    held = [name for name, hold, _deleting in machines if hold]
    summary = cloud.capi_history_summary(CLUSTER, namespace=NAMESPACE)
    say("      control plane now: %s" % ", ".join("%s%s" % (n, " (held)" if h else "") for n, h, _d in machines))
    show_members(lbapi, pool_id)
    rows.append(("rollout with CAPO<0.14 and a lost member", "stopped after %.0f s (rc %d)" % (took, rc),
                 "%d held, 0 released" % len(held), summary["minServing"], *failed_requests(cloud, since)))
    stuck = "ACTIVE/ERROR" if provider == "ovn" else "PENDING_CREATE"
    return rc != 0 and stuck in output and len(held) == 3 and summary["minServing"] >= 3


def recover(cloud, lbapi, pool_id):
    """Step 5: the emulator recovers (amphora: the lost member is provisioned; ovn: the server answers again and
    OVN's checks bring the member back ONLINE); waited for, up to a minute."""
    step(5, "The fault ends: the lost member is provisioned, or its server answers again")
    cloud.set_octavia_mode("normal", delay=0.2)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and any((p, o) != ("ACTIVE", "ONLINE") for _n, p, o in members(lbapi, pool_id)):
        time.sleep(0.5)
    show_members(lbapi, pool_id)


def second_rollout(cloud, collections, rows, provider):
    """Step 6: the playbook follows the rollout to its end; whether it did, the control plane's Machines and
    minicloud's summary of the pool's history."""
    step(6, "The same playbook again, following the rollout already started, draining each old member first")
    say("      (-e drain=true: %s before release, then its server stopped, so no request reaches an API server"
        % ("admin_state_up false (OVN reads no weight)" if provider == "ovn" else "weight 0"))
    say("      whose etcd member is gone)")
    since = time.time()
    rc2, output, took = run_playbook(cloud, collections, dict(start_rollout=False, member_timeout=120, drain=True,
                                                              drain_timeout=10))
    say(indent(output))
    summary = cloud.capi_history_summary(CLUSTER, namespace=NAMESPACE)
    machines = control_plane(cloud)
    second_ok = rc2 == 0 and not any(h for _n, h, _d in machines) and summary["minServing"] >= 3
    failed = failed_requests(cloud, since)
    rows.append(("same playbook after recovery", "passed after %.0f s (rc %d)" % (took, rc2),
                 "3 released one by one, %d new" % len(machines), summary["minServing"], *failed))
    return second_ok, machines, summary


def afterwards(cloud, lbapi, pool_id, machines, summary):
    """Step 7: the control plane, the pool, minicloud's record of the pool and of the traffic."""
    step(7, "Afterwards: the control plane and the pool")
    say("      control plane: %s" % ", ".join(n for n, _h, _d in machines))
    show_members(lbapi, pool_id)
    say("      minicloud's pool record: %d samples, never fewer than %d serving members (final %d of %d)" % (
        summary["samples"], summary["minServing"], summary["final"]["serving"], summary["final"]["members"]))

    report = cloud.load_report(LOAD)
    new, keepalive, watches = failed_requests(cloud, None)
    say("      traffic through the VIP, failed: new connection per request %s (p99 %s ms); keep-alive %s; "
        "watches interrupted %s" % (new, report["p99_ms"], keepalive, watches))


def failed_requests(cloud, since):
    """"failed of sent" through the VIP since ``since`` (epoch seconds), for each kind of client: new connection
    per request, keep-alive, watches; failures split into 5xx, timeouts, closed connections."""
    clients = cloud.load_report(LOAD, since=since)["clients"]
    return tuple(failed_of(clients[kind]) for kind in ("new", "keepalive", "watch"))


def table(rows):
    say()
    say("What happened")
    headers = ("step", "outcome", "old control-plane Machines", "fewest serving members", "failed: new connection",
               "failed: keep-alive", "watches interrupted")
    widths = [max(len(str(r[i])) for r in rows + [headers]) for i in range(len(headers))]
    line = "  ".join("%-*s" % (w, h) for w, h in zip(widths, headers))
    say(line)
    say("-" * len(line))
    for row in rows:
        say("  ".join("%-*s" % (w, c) for w, c in zip(widths, row)))


if __name__ == "__main__":
    sys.exit(main())
