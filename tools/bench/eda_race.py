"""The race of the guard_rollouts rulebook against KubeadmControlPlane: is every old Machine held before KCP deletes one?

One cluster (one control-plane Machine, CAPO waiting only for the load balancer, as CAPO before v0.14 does: the
case where a late guard loses the API) on minicloud, the real ansible-rulebook running
extensions/eda/rulebooks/guard_rollouts.yml for the whole run. Each rollout is started as `kubectl patch` starts one
(a merge patch of the KubeadmControlPlane's rollout time); the emulated Octavia takes ``delay`` seconds per status
step (the new member's, and the load balancer's: how long provisioning the replacement takes; 0.02 is the fast one).
The Machines are read every 50 ms from the patch on: ``hold`` is the first moment every old Machine carries the
guard's pre-drain hook, ``delete`` the first moment KCP has set an old Machine's deletionTimestamp (with the hook in
place the deletion waits at the hook; without it the drain would start there). The hook must come first every time.
Results go to the EDA section of docs/benchmarks.md.
"""

import datetime
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import yaml
from kubernetes import client, config

from harness import BIN, REPO, bench_parser, collections_path, markdown_table, running_cloud, write_doc

MARK = "eda_race"
HOOK = "pre-drain.delete.hook.machine.cluster.x-k8s.io/flightcontrol-rollout"
STANDING = "pre-drain.delete.hook.machine.cluster.x-k8s.io/flightcontrol-standing"
DELAYS = (0.02, 0.1, 0.3, 0.6, 1.0)
POLL = 0.05


def java_home():
    if os.environ.get("JAVA_HOME"):
        return os.environ["JAVA_HOME"]
    return str(Path(os.path.realpath(subprocess.check_output(["which", "java"], text=True).strip())).parents[1])


def control_plane(api, namespace, name):
    items = api.list_namespaced_custom_object("cluster.x-k8s.io", "v1beta2", namespace, "machines")["items"]
    return [m for m in items if (m["metadata"].get("labels") or {}).get("cluster.x-k8s.io/cluster-name") == name
            and "cluster.x-k8s.io/control-plane" in (m["metadata"].get("labels") or {})]


def start_rulebook(cloud, collections, workdir, namespace):
    inventory = workdir / "fleet.capi_clusters.yml"
    inventory.write_text(yaml.safe_dump({"plugin": "flightcontrol.openstack.capi_clusters",
                                         "kubeconfig": str(cloud.kubeconfig), "namespaces": [namespace]}))
    variables = workdir / "vars.yml"
    variables.write_text(yaml.safe_dump({"kubeconfig": str(cloud.kubeconfig), "namespaces": [namespace],
                                         "openstack_cloud": "minicloud", "member_timeout": 120}))
    log = workdir / "rulebook.log"
    env = dict(os.environ, JAVA_HOME=java_home(), PATH=str(BIN) + os.pathsep + os.environ["PATH"],
               ANSIBLE_COLLECTIONS_PATH=str(collections), OS_CLIENT_CONFIG_FILE=str(cloud.clouds_yaml),
               ANSIBLE_NOCOLOR="1", PYTHONWARNINGS="ignore")
    proc = subprocess.Popen([str(BIN / "ansible-rulebook"), "-r",
                             str(REPO / "extensions" / "eda" / "rulebooks" / "guard_rollouts.yml"),
                             "-i", str(inventory), "--vars", str(variables), "-v"],
                            cwd=str(workdir), env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
                            start_new_session=True)
    wait_log(proc, log, "capi_events: following", 0, 300)
    return proc, log


def wait_log(proc, log, text, count, timeout):
    ends = time.monotonic() + timeout
    while time.monotonic() < ends:
        if log.read_text(errors="replace").count(text) > count:
            return
        if proc.poll() is not None:
            raise SystemExit("ansible-rulebook ended:\n" + log.read_text(errors="replace")[-5000:])
        time.sleep(0.2)
    raise SystemExit("no %r within %d s:\n%s" % (text, timeout, log.read_text(errors="replace")[-5000:]))


def patch_rollout(api, namespace, kcp):
    """What `kubectl patch kcp NAME --type merge -p '{"spec":{"rollout":{"after":"<now>"}}}'` sends."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    started = time.time()
    api.patch_namespaced_custom_object("controlplane.cluster.x-k8s.io", "v1beta2", namespace, "kubeadmcontrolplanes",
                                       kcp, {"spec": {"rollout": {"after": now}}})
    return started


def wait_standing(api, namespace, name, timeout=60):
    """The cluster at rest: every control-plane Machine carries the source's standing hook."""
    ends = time.monotonic() + timeout
    while time.monotonic() < ends:
        machines = control_plane(api, namespace, name)
        if machines and all(STANDING in (m["metadata"].get("annotations") or {}) for m in machines):
            return
        time.sleep(POLL)
    raise SystemExit("the standing hook is not on every control-plane Machine of %s" % name)


def one_rollout(cloud, api, namespace, name, kcp, delay, proc, log, done):
    """Patch, then watch the old Machines until the guard's run ends; (hold, delete) seconds after the patch."""
    cloud.set_octavia_mode("normal", members="*", delay=delay)
    old = set(m["metadata"]["name"] for m in control_plane(api, namespace, name))
    wait_standing(api, namespace, name)
    started = patch_rollout(api, namespace, kcp)
    hold = guard = delete = None
    while True:
        now = time.time()
        present = [m for m in control_plane(api, namespace, name) if m["metadata"]["name"] in old]
        notes = [m["metadata"].get("annotations") or {} for m in present]
        if hold is None and present and all(HOOK in n or STANDING in n for n in notes):
            hold = now - started
        if guard is None and present and all(HOOK in n for n in notes):
            guard = now - started
        if delete is None and any(m["metadata"].get("deletionTimestamp") for m in present):
            delete = now - started
        if log.read_text(errors="replace").count("PLAY RECAP") > done:
            break
        if now - started > 600 or proc.poll() is not None:
            raise SystemExit("rollout %s did not end:\n%s" % (delay, log.read_text(errors="replace")[-5000:]))
        time.sleep(POLL)
    text = log.read_text(errors="replace").rsplit("PLAY RECAP", 1)[1]
    return hold, guard, delete, "failed=0" in text.split("\n\n")[0]


def run(rounds):
    rows = []
    with running_cloud() as cloud, collections_path() as given, tempfile.TemporaryDirectory() as tmp:
        # a copy of its own: a collection rebuilt during the run must not change the guard's playbooks under it
        collections = Path(tmp) / "collections"
        shutil.copytree(given, collections, symlinks=False)
        name = "race-%s" % uuid.uuid4().hex[:6]
        cloud.set_octavia_mode("normal", members="*", delay=0.1)
        cloud.create_capi_cluster(name, control_plane=1, openstack=True)
        api = client.CustomObjectsApi(config.new_client_from_config(config_file=str(cloud.kubeconfig)))
        cluster = api.get_namespaced_custom_object("cluster.x-k8s.io", "v1beta2", "default", "clusters", name)
        kcp = cluster["spec"]["controlPlaneRef"]["name"]
        api.patch_namespaced_custom_object("controlplane.cluster.x-k8s.io", "v1beta2", "default",
                                           "kubeadmcontrolplanes", kcp,
                                           {"metadata": {"annotations": {"minicloud.test/capo-wait": "lb"}}})
        proc, log = start_rulebook(cloud, collections, Path(tmp), "default")
        try:
            for index in range(rounds):
                delay = DELAYS[index % len(DELAYS)]
                hold, guard, delete, ok = one_rollout(cloud, api, "default", name, kcp, delay, proc, log, index)
                rows.append((index + 1, delay, hold, guard, delete, ok))
                print("rollout %d delay %.2f: hold %s guard %s delete %s ok %s" % rows[-1], flush=True)
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
            cloud.delete_capi_cluster(name, "default")
    return rows


def table(rows):
    def seconds(value):
        return "%.2f" % value if value is not None else "never"
    cells = [[str(i), "%.2f" % delay, "before the patch" if hold is not None and hold < POLL * 4 else seconds(hold),
              seconds(guard), seconds(delete),
              seconds(delete - hold) if hold is not None and delete is not None else "-",
              "yes" if hold is not None and (delete is None or hold < delete) else "**no**",
              "yes" if guard is not None and (delete is None or guard < delete) else "no", "ok" if ok else "failed"]
             for i, delay, hold, guard, delete, ok in rows]
    return markdown_table(["rollout", "Octavia step (s)", "a hook on every old Machine (s)", "the guard's own hook (s)",
                           "KCP deletes the first (s)", "margin (s)", "held first", "guard alone first", "guard run"],
                          ["---:", "---:", "---:", "---:", "---:", "---:", "---", "---", "---"], cells)


def main():
    signal.signal(signal.SIGTERM, lambda *_args: sys.exit(1))  # the rulebook and the cluster are cleaned up
    parser = bench_parser(__doc__, optional_baseline=True)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    rows = run(args.rounds)
    text = table(rows)
    won = sum(1 for r in rows if r[2] is not None and (r[4] is None or r[2] < r[4]))
    alone = sum(1 for r in rows if r[3] is not None and (r[4] is None or r[3] < r[4]))
    text += ("\n\nA hook was on every old Machine before KCP deleted the first in %d of %d rollouts; the guard's own "
             "hook alone (without the standing hook) in %d of %d." % (won, len(rows), alone, len(rows)))
    print(text)
    if not args.no_write:
        write_doc(MARK, text)
    return 0 if won == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
