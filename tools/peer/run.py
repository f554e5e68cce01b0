"""The peer suite (`make peer`): clients nobody here wrote, run against a minicloud, one named check at a time.

Clients: openstack.cloud 2.5.0 and kubernetes.core 6.2.0 (the ansible 12 package in .venv-bench, openstacksdk 4.14,
playbooks in tools/peer/playbooks), python-openstackclient (.venv/bin/openstack, with python-octaviaclient for the
`loadbalancer` commands) and the kubectl on PATH.

Every check is independent (it seeds what it needs, once per run, and names its objects after the run's prefix),
ends PASSED, FAILED (with what was asked and what came back) or SKIPPED (its client is missing, with the reason:
never counted as passed). The run brings up a minicloud of its own in build/peer-cloud (removed afterwards) unless
PEER_CLOUD (or --cloud) names the state folder of one that is up. The table goes to stdout and, after a full run,
into the peer section of docs/minicloud.md. The exit status is 1 when a check failed.

    .venv/bin/python tools/peer/run.py [--only WORD ...] [--no-write] [--cloud STATE_DIR] [--list]
"""

from __future__ import annotations

import argparse
import base64
import datetime
import importlib.util
import json
import os
import queue
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from minicloud.runtime.control import Minicloud
from minicloud.core.settings import Settings, free_port_offset
from minicloud.upstream import clusters as upstream_clusters

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "minicloud.md"
PLAYBOOKS = Path(__file__).resolve().parent / "playbooks"
OWN_CLOUD = REPO / "build" / "peer-cloud"
VENV_BIN = REPO / ".venv" / "bin"
BENCH = REPO / ".venv-bench"
BENCH_COLLECTIONS = BENCH / "lib" / "python3.11" / "site-packages"
START, END = "<!-- peer:start -->", "<!-- peer:end -->"
CLOUD, ADMIN_CLOUD = "minicloud", "minicloud-admin"
KUBECTL_MIN_MINOR = 26  # kubectl wait --for=jsonpath and server-side field validation
COLLECTIONS = {"openstack.cloud": "2.5.0", "kubernetes.core": "6.2.0"}


class Skip(Exception):
    """The check cannot run here (its client is missing); the message says why."""


class CheckFailed(AssertionError):
    """The check ran and the client did not get what it should have; the message says what."""


def expect(condition, message):
    if not condition:
        raise CheckFailed(message)


@dataclass
class Check:
    client: str
    name: str
    run: object  # function(ctx) -> optional detail
    result: str = ""
    seconds: float = 0.0
    detail: str = ""


@dataclass
class Outcome:
    checks: list = field(default_factory=list)
    setup: dict = field(default_factory=dict)  # fixture -> seconds


def short(text, limit=700):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


# -- the run's context: the cloud, the clients and the objects seeded for the checks -------------------------------

class Context:
    def __init__(self, cloud: Minicloud, workdir: Path, outcome: Outcome):
        self.cloud = cloud
        self.state_dir = Path(cloud.state.root)
        self.workdir = workdir
        self.outcome = outcome
        self.prefix = "peer" + secrets.token_hex(2)
        self._fixtures: dict = {}
        self.kube_home = workdir / "kube-home"  # kubectl's discovery and OpenAPI caches, this run's own
        self.kube_home.mkdir()

    # fixtures: seeded once per run, on first use; their time is reported apart from the checks'
    def fixture(self, name, make):
        if name not in self._fixtures:
            started = time.monotonic()
            try:
                self._fixtures[name] = ("ok", make())
            except Exception as exc:  # pylint: disable=broad-except
                self._fixtures[name] = ("error", "%s: %s" % (type(exc).__name__, exc))
            self.outcome.setup[name] = time.monotonic() - started
        state, value = self._fixtures[name]
        if state == "error":
            raise CheckFailed("seeding %s failed: %s" % (name, value))
        return value

    def minicloud(self, *args):
        """``python -m minicloud ARGS`` on this run's cloud; its JSON output."""
        done = subprocess.run([sys.executable, "-m", "minicloud", "--state-dir", str(self.state_dir), *map(str, args)],
                              capture_output=True, text=True, timeout=300, check=False)
        if done.returncode != 0:
            raise RuntimeError("minicloud %s: %s %s" % (" ".join(map(str, args)), done.stdout[-500:], done.stderr[-1500:]))
        return json.loads(done.stdout) if done.stdout.strip().startswith(("{", "[")) else done.stdout

    def server(self):
        return self.fixture("server", lambda: self.cloud.create_servers(
            [self.prefix + "-node"], self.prefix + "-servers")[0])

    def lb(self):
        return self.fixture("load balancer", lambda: self.cloud.create_lb(
            self.prefix + "-lb", members=2, monitor=True, cidr="10.213.0.0/24"))

    def router(self):
        return self.fixture("router", lambda: self.cloud.create_router(
            self.prefix + "-router", self.prefix + "-nodes", "10.214.0.0/24"))

    def image(self):
        def make():
            conn = self.cloud.connect()
            image = conn.image.create_image(name=self.prefix + "-image", data=b"\0" * 65536, disk_format="raw",
                                            container_format="bare", wait=True)
            return {"id": image.id, "name": image.name}
        return self.fixture("image", make)

    @property
    def upstream(self):
        """Whether the cloud runs the real Kubernetes control plane (``up --kubernetes upstream``)."""
        settings = Settings.load(self.cloud.state)
        return settings is not None and settings.upstream

    def capi(self, role="main"):
        """A provisioned CAPI cluster, one per role: one control-plane Machine and one worker; on the real control
        plane (which makes no workers) one control-plane Machine with its OpenStack side."""
        name = "%s-%s" % (self.prefix, role)
        shape = ["--openstack"] if self.upstream else ["--workers", 1]
        return self.fixture("CAPI cluster '%s'" % role, lambda: self.minicloud(
            "capi", "cluster", "create", name, "--control-plane", 1, *shape) and name)

    def capi_machines(self):
        """(Machines per cluster of ``capi``, their Kubernetes minor version)."""
        if self.upstream:
            return 1, upstream_clusters.KUBERNETES_VERSION.rsplit(".", 1)[0]
        return 2, "v1.31"

    # clients
    def env(self, **extra):
        env = dict(os.environ, OS_CLIENT_CONFIG_FILE=str(self.state_dir / "clouds.yaml"), PYTHONWARNINGS="ignore")
        env.pop("OS_CLOUD", None)
        env.update(extra)
        return env

    def openstack(self, *args, fmt="json"):
        """``openstack --os-cloud minicloud ARGS -f json``; the parsed output."""
        cli = VENV_BIN / "openstack"
        if not cli.exists():
            raise Skip("python-openstackclient is not installed (%s missing: make venv)" % cli.relative_to(REPO))
        argv = [str(cli), "--os-cloud", CLOUD, *map(str, args)] + (["-f", fmt] if fmt else [])
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False, env=self.env())
        if done.returncode != 0:
            raise CheckFailed("openstack %s exited %d: %s" % (" ".join(map(str, args)), done.returncode,
                                                              short(done.stderr or done.stdout, 900)))
        return json.loads(done.stdout) if fmt == "json" else done.stdout

    def kubectl(self, *args, stdin=None, check=True, timeout=60):
        argv = [kubectl_path(), *map(str, args)]
        done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=timeout, check=False,
                              env=self.kube_env())
        if check and done.returncode != 0:
            raise CheckFailed("kubectl %s exited %d: %s" % (" ".join(map(str, args)), done.returncode,
                                                           short(done.stderr or done.stdout, 900)))
        return done

    def kube_env(self):
        return dict(os.environ, KUBECONFIG=str(self.cloud.kubeconfig), HOME=str(self.kube_home))

    def kube_get(self, kind, name, namespace="default"):
        return json.loads(self.kubectl("get", kind, name, "-n", namespace, "-o", "json").stdout)

    def kube_settled(self, kind, name, quiet=1.5, timeout=15):
        """The object once the CAPI controllers left it alone for ``quiet`` seconds (they write a new object's
        status about half a second after it appears)."""
        current = self.kube_get(kind, name)
        deadline, since = time.monotonic() + timeout, time.monotonic()
        while time.monotonic() - since < quiet and time.monotonic() < deadline:
            time.sleep(0.3)
            latest = self.kube_get(kind, name)
            if latest["metadata"]["resourceVersion"] != current["metadata"]["resourceVersion"]:
                current, since = latest, time.monotonic()
        return current

    def playbook(self, name, **extra_vars):
        """Run tools/peer/playbooks/NAME with .venv-bench's ansible-playbook; its output (CheckFailed naming the
        failed task and its message)."""
        bench_collections()
        variables = {"cloud": CLOUD, "admin_cloud": ADMIN_CLOUD, "prefix": self.prefix,
                     "kubeconfig": str(self.cloud.kubeconfig), "ansible_python_interpreter": str(BENCH / "bin" / "python"),
                     **extra_vars}
        vars_file = self.workdir / ("%s.vars.json" % name)
        vars_file.write_text(json.dumps(variables))
        env = self.env(ANSIBLE_COLLECTIONS_PATH=str(BENCH_COLLECTIONS), ANSIBLE_LOCALHOST_WARNING="0",
                       ANSIBLE_DEPRECATION_WARNINGS="0", ANSIBLE_INVENTORY_UNPARSED_WARNING="0",
                       ANSIBLE_CALLBACK_FORMAT_PRETTY="0", ANSIBLE_NOCOLOR="1", ANSIBLE_HOME=str(self.workdir / "ansible"),
                       K8S_AUTH_KUBECONFIG=str(self.cloud.kubeconfig))
        env.pop("ANSIBLE_CONFIG", None)
        done = subprocess.run([str(BENCH / "bin" / "ansible-playbook"), "-i", "localhost,", "-c", "local",
                               "-e", "@%s" % vars_file, str(PLAYBOOKS / name)],
                              capture_output=True, text=True, timeout=600, check=False, env=env, cwd=self.workdir)
        (self.workdir / ("%s.log" % name)).write_text(done.stdout + done.stderr)
        if done.returncode != 0:
            raise CheckFailed(playbook_failure(done.stdout + "\n" + done.stderr))
        return done.stdout

    def delete_cluster(self, name):
        """Delete a Cluster written paused by a check: unpaused first, since Cluster API keeps its finalizer on a
        paused Cluster (a deleted one waits for the unpause)."""
        self.kubectl("patch", "cluster", name, "--type", "merge", "-p", '{"spec":{"paused":false}}')
        self.kubectl("delete", "cluster", name)

    def kube_counts(self):
        return self.cloud.request_counts(service="kubernetes")["requests"].get("kubernetes", {})


def playbook_failure(output):
    """The failed task and its message, from ansible-playbook's default output."""
    task = None
    for line in output.splitlines():
        if line.startswith("TASK ["):
            task = line[len("TASK ["):line.rfind("]")]
        elif line.startswith(("fatal: ", "failed: ")) and "=>" in line:
            payload = line.split("=>", 1)[1].strip()
            try:
                message = json.loads(payload).get("msg", payload)
            except ValueError:
                message = payload
            return "task %r: %s" % (task, short(message, 900))
    error = [line for line in output.splitlines() if line.startswith("[ERROR]")]
    return short(error[0] if error else output[-900:], 900)


def counts_diff(before, after):
    """{(method, path): n} of the requests counted between two readings of one service's counts."""
    diff = {}
    for method, paths in after.items():
        for path, n in paths.items():
            delta = n - before.get(method, {}).get(path, 0)
            if delta:
                diff[(method, path)] = delta
    return diff


def kubectl_path():
    path = shutil.which("kubectl")
    if path is None:
        raise Skip("no kubectl on PATH (Debian's kubernetes-client is 1.20, too old for these checks: install "
                   "kubectl 1.%d or newer)" % KUBECTL_MIN_MINOR)
    return path


_KUBECTL_VERSION: dict = {}


def kubectl_version():
    """The kubectl on PATH as 'v1.32.4', or Skip when it is missing or too old."""
    path = kubectl_path()
    if path not in _KUBECTL_VERSION:
        done = subprocess.run([path, "version", "--client", "-o", "json"], capture_output=True, text=True,
                              timeout=30, check=False)
        try:
            version = json.loads(done.stdout)["clientVersion"]
            release = re.match(r"v?\d+\.\d+\.\d+", version["gitVersion"])
            _KUBECTL_VERSION[path] = (release.group(0) if release else version["gitVersion"],
                                      int(re.sub(r"\D.*", "", version["minor"])))
        except (ValueError, KeyError):
            _KUBECTL_VERSION[path] = ("unknown", 0)
    version, minor = _KUBECTL_VERSION[path]
    if minor < KUBECTL_MIN_MINOR:
        raise Skip("kubectl on PATH is %s: these checks need 1.%d or newer (Debian's kubernetes-client is 1.20)"
                   % (version, KUBECTL_MIN_MINOR))
    return version


def bench_collections():
    """Skip unless .venv-bench has ansible-playbook and the pinned collections."""
    if not (BENCH / "bin" / "ansible-playbook").exists():
        raise Skip("%s has no ansible-playbook (make venv-bench)" % BENCH.name)
    for name, version in COLLECTIONS.items():
        manifest = BENCH_COLLECTIONS / "ansible_collections" / name.replace(".", "/") / "MANIFEST.json"
        if not manifest.exists():
            raise Skip("%s is not in %s (make venv-bench)" % (name, BENCH.name))
        found = json.loads(manifest.read_text())["collection_info"]["version"]
        if found != version:
            raise Skip("%s in %s is %s, the suite is written for %s" % (name, BENCH.name, found, version))


def octavia_plugin():
    """Skip unless python-octaviaclient (the `openstack loadbalancer` commands) is installed in .venv."""
    if importlib.util.find_spec("octaviaclient") is None:
        raise Skip("python-octaviaclient (the openstack loadbalancer commands) is not installed: make venv")


# -- openstack.cloud ------------------------------------------------------------------------------------------------

def os_security_group(ctx):
    ctx.playbook("os_security_group.yml")


def os_network(ctx):
    ctx.playbook("os_network.yml")


def os_router(ctx):
    ctx.playbook("os_router.yml")


def os_keypair(ctx):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    key = ed25519.Ed25519PrivateKey.generate().public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()
    ctx.playbook("os_keypair.yml", public_key=key + " peer-suite")


def os_loadbalancer(ctx):
    bench_collections()
    mode = ctx.cloud.octavia_mode()
    ctx.cloud.set_octavia_mode("normal", members="*", delay=0.1)  # each provisioning step 0.1 s instead of 0.5
    try:
        ctx.playbook("os_loadbalancer.yml")
    finally:
        ctx.cloud.set_octavia_mode(mode["name"], members=mode["members"], delay=mode["delay"])
    return "Octavia emulator steps of 0.1 s"


def os_server_image_info(ctx):
    bench_collections()
    server = ctx.server()
    image = ctx.workdir / "image.raw"
    image.write_bytes(os.urandom(1 << 20))
    ctx.playbook("os_server_image_info.yml", server_name=server["name"], server_network=ctx.prefix + "-servers",
                 image_file=str(image), image_size=image.stat().st_size)


# -- python-openstackclient -------------------------------------------------------------------------------------------

def osc_server_list(ctx):
    server = ctx.server()
    listed = {s["Name"]: s for s in ctx.openstack("server", "list")}
    expect(server["name"] in listed, "server list: %s not among %s" % (server["name"], sorted(listed)))
    row = listed[server["name"]]
    expect(row["Status"] == "ACTIVE" and row["ID"] == server["id"], "server list row: %s" % row)
    expect(ctx.prefix + "-servers" in json.dumps(row["Networks"]), "server list: no network in %s" % row)


def osc_server_show(ctx):
    server = ctx.server()
    shown = ctx.openstack("server", "show", server["name"])
    expect(shown["id"] == server["id"] and shown["status"] == "ACTIVE", "server show: id %s status %s" % (
        shown.get("id"), shown.get("status")))
    expect("m1.tiny" in json.dumps(shown.get("flavor")), "server show: flavor %s" % shown.get("flavor"))
    address = server["ports"][0]["ip_address"]
    expect(address in json.dumps(shown.get("addresses")), "server show: %s not in addresses %s" % (
        address, shown.get("addresses")))


def osc_image_list(ctx):
    image = ctx.image()
    listed = {i["Name"]: i for i in ctx.openstack("image", "list")}
    expect(image["name"] in listed, "image list: %s not among %s" % (image["name"], sorted(listed)))
    expect(listed[image["name"]]["Status"] == "active", "image list row: %s" % listed[image["name"]])


def osc_network_list(ctx):
    ctx.server()  # its network
    listed = {n["Name"]: n for n in ctx.openstack("network", "list")}
    name = ctx.prefix + "-servers"
    expect(name in listed, "network list: %s not among %s" % (name, sorted(listed)))
    expect(len(listed[name]["Subnets"]) == 1, "network list row: %s" % listed[name])


def osc_router_show(ctx):
    router = ctx.router()
    shown = ctx.openstack("router", "show", router["name"])
    expect(shown["status"] == "ACTIVE", "router show: status %s" % shown.get("status"))
    interfaces = json.dumps(shown.get("interfaces_info"))
    expect("10.214.0.1" in interfaces, "router show: no interface 10.214.0.1 in %s" % interfaces)


def osc_security_group_rule_list(ctx):
    rules = ctx.openstack("security", "group", "rule", "list", "default")
    seen = {(r["Direction"], r["Ethertype"]) for r in rules}
    expect({("ingress", "IPv4"), ("ingress", "IPv6"), ("egress", "IPv4"), ("egress", "IPv6")} <= seen,
           "security group rule list default: the default group's four rules expected, got %s" % rules)


def osc_loadbalancer_list(ctx):
    octavia_plugin()
    lb = ctx.lb()
    listed = {b["name"]: b for b in ctx.openstack("loadbalancer", "list")}
    name = lb["loadbalancer"]["name"]
    expect(name in listed, "loadbalancer list: %s not among %s" % (name, sorted(listed)))
    row = listed[name]
    expect((row["provisioning_status"], row["operating_status"], row["provider"]) == ("ACTIVE", "ONLINE", "amphora"),
           "loadbalancer list row: %s" % row)


def osc_loadbalancer_member_list(ctx):
    octavia_plugin()
    lb = ctx.lb()
    members = ctx.openstack("loadbalancer", "member", "list", lb["pool"]["name"])
    got = sorted((m["address"], m["protocol_port"], m["provisioning_status"], m["operating_status"]) for m in members)
    want = sorted((m["address"], 6443, "ACTIVE", "ONLINE") for m in lb["members"])
    expect(got == want, "loadbalancer member list %s: %s, expected %s" % (lb["pool"]["name"], got, want))


def osc_extension_list(ctx):
    listed = ctx.openstack("extension", "list")
    aliases = {e.get("Alias") for e in listed}
    for alias in ("extraroute-atomic", "revision-if-match", "security-group", "router"):
        expect(alias in aliases, "extension list: %s missing (%d extensions listed)" % (alias, len(listed)))
    return "%d extensions" % len(listed)


# -- kubectl ---------------------------------------------------------------------------------------------------------

def reader(stream, lines):
    for line in iter(stream.readline, ""):
        lines.put(line.rstrip("\n"))
    lines.put(None)


def next_line(lines, want, timeout, what):
    """The first line from ``lines`` for which ``want(line)`` holds, within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    seen = []
    while True:
        left = deadline - time.monotonic()
        try:
            line = lines.get(timeout=max(left, 0.01))
        except queue.Empty:
            line = False
        if line is None or line is False or left <= 0:
            raise CheckFailed("%s: not seen within %.0f s (%s); lines: %s" % (
                what, timeout, "stream ended" if line is None else "timed out", short(seen[-8:], 600)))
        seen.append(line)
        if want(line):
            return line


def kubectl_get_watch(ctx):
    kubectl_version()
    name = ctx.capi()
    mark = "seen-" + secrets.token_hex(3)
    proc = subprocess.Popen([kubectl_path(), "get", "cluster", name, "--watch", "-o",
                             r'jsonpath={.metadata.annotations.peer\.test/watch}{"\n"}'],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ctx.kube_env())
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=reader, args=(proc.stdout, lines), daemon=True).start()
    try:
        next_line(lines, lambda line: True, 20, "kubectl get --watch: the first state")
        ctx.kubectl("annotate", "cluster", name, "peer.test/watch=" + mark, "--overwrite")
        next_line(lines, lambda line: line == mark, 20, "kubectl get --watch: the annotation %s" % mark)
    finally:
        proc.terminate()
        proc.wait(10)


def kubectl_wait_jsonpath(ctx):
    kubectl_version()
    name = ctx.capi()
    mark = "ready-" + secrets.token_hex(3)
    before = ctx.kube_counts()
    proc = subprocess.Popen([kubectl_path(), "wait", "cluster/" + name, "-v=6", "--timeout=30s",
                             r"--for=jsonpath={.metadata.annotations.peer\.test/wait}=" + mark],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ctx.kube_env())
    log: queue.Queue = queue.Queue()
    threading.Thread(target=reader, args=(proc.stderr, log), daemon=True).start()
    try:
        # the answer's line: 'GET URL 200 OK in N milliseconds' (kubectl 1.32), '"Response" ... status="200 OK"' (1.34)
        watch = next_line(log, lambda line: "watch=true" in line and ("Response" in line or " in " in line), 20,
                          "kubectl wait -v=6: a request with watch=true")
        ctx.kubectl("annotate", "cluster", name, "peer.test/wait=" + mark, "--overwrite")
        out, _ = proc.communicate(timeout=40)
    finally:
        if proc.poll() is None:
            proc.kill()
    expect(proc.returncode == 0 and "condition met" in out, "kubectl wait exited %s: %s" % (proc.returncode, out))
    expect("200 OK" in watch, "kubectl wait: the watch was answered %s" % watch)
    counted = {path: n for (method, path), n in counts_diff(before, ctx.kube_counts()).items()
               if method == "GET" and path.endswith("/clusters?watch=true")}
    expect(counted, "minicloud counted no watch of clusters during kubectl wait")
    return "watch=true in -v=6 and in minicloud's counts (%d)" % sum(counted.values())


CLUSTER_MANIFEST = """apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  name: {name}
  namespace: default
  labels:
    peer.test/colour: {colour}
spec:
  paused: true
  clusterNetwork:
    pods:
      cidrBlocks: ["10.244.0.0/16"]
  controlPlaneRef:
    apiGroup: controlplane.cluster.x-k8s.io
    kind: KubeadmControlPlane
    name: {name}-control-plane
  infrastructureRef:
    apiGroup: infrastructure.cluster.x-k8s.io
    kind: DevCluster
    name: {name}
{extra}"""


def kubectl_apply(ctx):
    kubectl_version()
    name = ctx.prefix + "-applied"
    manifest = ctx.workdir / (name + ".yaml")
    manifest.write_text(CLUSTER_MANIFEST.format(name=name, colour="red", extra=""))
    created = ctx.kubectl("apply", "--validate=strict", "-f", manifest).stdout
    expect("cluster.cluster.x-k8s.io/%s created" % name in created, "kubectl apply (create): %s" % created)
    manifest.write_text(CLUSTER_MANIFEST.format(name=name, colour="blue", extra=""))
    updated = ctx.kubectl("apply", "--validate=strict", "-f", manifest).stdout
    expect("cluster.cluster.x-k8s.io/%s configured" % name in updated, "kubectl apply (update): %s" % updated)
    labels = ctx.kube_get("cluster", name)["metadata"].get("labels", {})
    expect(labels.get("peer.test/colour") == "blue", "after the update the labels are %s" % labels)
    manifest.write_text(CLUSTER_MANIFEST.format(name=name, colour="blue", extra="  colour: green\n"))
    refused = ctx.kubectl("apply", "--validate=strict", "-f", manifest, check=False)
    expect(refused.returncode != 0 and 'unknown field "spec.colour"' in refused.stderr,
           "kubectl apply of an unknown field: exit %d, %s" % (refused.returncode, short(refused.stderr)))
    ctx.delete_cluster(name)


def kubectl_explain(ctx):
    kubectl_version()
    out = ctx.kubectl("explain", "cluster.spec.paused").stdout
    expect("FIELD: paused <boolean>" in out and "cluster.x-k8s.io" in out, "kubectl explain: %s" % short(out))


def kubectl_create_secret(ctx):
    kubectl_version()
    name = ctx.prefix + "-secret"
    out = ctx.kubectl("create", "secret", "generic", name, "--from-literal=token=s3cret", "-n", "default").stdout
    expect("secret/%s created" % name in out, "kubectl create secret generic: %s" % out)
    secret = ctx.kube_get("secret", name)
    expect(secret["type"] == "Opaque" and base64.b64decode(secret["data"]["token"]) == b"s3cret",
           "the Secret read back: %s" % secret)
    ctx.kubectl("delete", "secret", name)


def kubectl_create_namespace(ctx):
    kubectl_version()
    name = ctx.prefix + "-ns"
    out = ctx.kubectl("create", "namespace", name).stdout
    expect("namespace/%s created" % name in out, "kubectl create namespace: %s" % out)
    phase = ctx.kubectl("get", "namespace", name, "-o", "jsonpath={.status.phase}").stdout
    expect(phase == "Active", "namespace %s phase %r" % (name, phase))
    # without a wait: with no kube-controller-manager (the real control plane here) a namespace stays Terminating
    ctx.kubectl("delete", "namespace", name, "--wait=false")


def kubectl_get_events(ctx):
    kubectl_version()
    if ctx.upstream:
        raise Skip("the real control plane here makes no workers, so no MachineSet to scale")
    cluster = ctx.capi("events")
    machineset = ctx.kubectl("get", "machinesets", "-l", "cluster.x-k8s.io/cluster-name=" + cluster,
                             "-o", "jsonpath={.items[0].metadata.name}").stdout
    expect(machineset, "no MachineSet of cluster %s" % cluster)
    ctx.kubectl("patch", "machineset", machineset, "--type", "merge", "-p", '{"spec":{"replicas":2}}')
    selector = "involvedObject.name=%s,reason=SuccessfulCreate" % machineset
    deadline = time.monotonic() + 30
    while True:
        table = ctx.kubectl("get", "events", "-n", "default", "--field-selector", selector).stdout
        if "SuccessfulCreate" in table or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    lines = table.splitlines()
    expect(lines and lines[0].split()[:4] == ["LAST", "SEEN", "TYPE", "REASON"],
           "kubectl get events: header %r" % (lines[0] if lines else table))
    expect(any("machineset/%s" % machineset in line and "Created Machine" in line for line in lines[1:]),
           "kubectl get events --field-selector %s: no SuccessfulCreate row within 30 s: %s" % (selector, short(table)))


def kubectl_get_machines(ctx):
    kubectl_version()
    cluster = ctx.capi()
    selector = "cluster.x-k8s.io/cluster-name=" + cluster
    v1beta2 = ctx.kubectl("get", "machines", "-l", selector).stdout.splitlines()
    v1beta1 = ctx.kubectl("get", "machines.v1beta1.cluster.x-k8s.io", "-l", selector).stdout.splitlines()
    for lines, columns in ((v1beta2, ("NAME", "CLUSTER", "NODE NAME", "READY", "AVAILABLE", "UP-TO-DATE", "PHASE",
                                      "AGE", "VERSION")),
                           (v1beta1, ("NAME", "CLUSTER", "NODENAME", "PROVIDERID", "PHASE", "AGE", "VERSION"))):
        header = re.split(r"\s{2,}", lines[0].strip()) if lines else []
        expect(tuple(header) == columns, "kubectl get machines: columns %s, expected CAPI's %s" % (header, columns))
        count, version = ctx.capi_machines()
        expect(len(lines) == count + 1 and all("Running" in line and version in line for line in lines[1:]),
               "kubectl get machines: rows %s (%d Running at %s expected)" % (lines[1:], count, version))


def kubectl_dry_run(ctx):
    kubectl_version()
    cluster = ctx.capi()
    machine = ctx.kubectl("get", "machines", "-l", "cluster.x-k8s.io/cluster-name=" + cluster,
                          "-o", "jsonpath={.items[0].metadata.name}").stdout
    before = {kind: ctx.kube_settled(kind, name) for kind, name in (("cluster", cluster), ("machine", machine))}
    patched = ctx.kubectl("patch", "cluster", cluster, "--type", "merge", "-p", '{"spec":{"paused":true}}',
                          "--dry-run=server", "-o", "jsonpath={.spec.paused}").stdout
    expect(patched == "true", "kubectl patch --dry-run=server answered spec.paused=%r" % patched)
    deleted = ctx.kubectl("delete", "machine", machine, "--dry-run=server").stdout
    # kubectl 1.34 says "deleted from default namespace (server dry run)"
    expect(re.search(r"deleted (from \S+ namespace )?\(server dry run\)", deleted),
           "kubectl delete --dry-run=server: %s" % deleted)
    for kind, name in (("cluster", cluster), ("machine", machine)):
        after = ctx.kube_get(kind, name)
        expect(after["metadata"]["resourceVersion"] == before[kind]["metadata"]["resourceVersion"],
               "%s %s: resourceVersion %s -> %s after the dry runs" % (
                   kind, name, before[kind]["metadata"]["resourceVersion"], after["metadata"]["resourceVersion"]))
        expect("deletionTimestamp" not in after["metadata"] and not after.get("spec", {}).get("paused"),
               "%s %s changed by a dry run: %s" % (kind, name, short(after["metadata"])))


def kubectl_diff(ctx):
    kubectl_version()
    name = ctx.prefix + "-diff"
    manifest = ctx.workdir / (name + ".yaml")
    manifest.write_text(CLUSTER_MANIFEST.format(name=name, colour="red", extra=""))
    ctx.kubectl("apply", "-f", manifest)
    rv = ctx.kube_settled("cluster", name)["metadata"]["resourceVersion"]
    same = ctx.kubectl("diff", "-f", manifest, check=False)
    expect(same.returncode == 0 and not same.stdout, "kubectl diff of the applied manifest: exit %d, %s %s" % (
        same.returncode, short(same.stdout), short(same.stderr)))
    manifest.write_text(CLUSTER_MANIFEST.format(name=name, colour="blue", extra=""))
    changed = ctx.kubectl("diff", "-f", manifest, check=False)
    expect(changed.returncode == 1 and "+    peer.test/colour: blue" in changed.stdout,
           "kubectl diff of a changed manifest: exit %d (1 expected), %s %s" % (
               changed.returncode, short(changed.stdout), short(changed.stderr)))
    after = ctx.kube_get("cluster", name)["metadata"]
    expect(after["resourceVersion"] == rv and after["labels"]["peer.test/colour"] == "red",
           "kubectl diff changed the Cluster: resourceVersion %s -> %s, labels %s" % (
               rv, after["resourceVersion"], after.get("labels")))
    ctx.delete_cluster(name)


# -- kubernetes.core --------------------------------------------------------------------------------------------------

def k8s_info(ctx):
    ctx.playbook("k8s_info.yml", cluster=ctx.capi(), machine_count=ctx.capi_machines()[0])


def k8s_configmap(ctx):
    ctx.playbook("k8s_configmap.yml")


def k8s_check_mode(ctx):
    ctx.playbook("k8s_check_mode.yml", cluster=ctx.capi())


def k8s_wait(ctx):
    bench_collections()
    cluster = ctx.capi("wait")
    before = ctx.kube_counts()
    out = ctx.playbook("k8s_wait.yml", cluster=cluster)
    diff = counts_diff(before, ctx.kube_counts())
    own = "/namespaces/default/clusters/%s" % cluster
    polls = sum(n for (method, path), n in diff.items() if method == "GET" and path.endswith(own))
    watches = sum(n for (method, path), n in diff.items() if method == "GET" and path.endswith("?watch=true"))
    patches = sum(n for (method, path), n in diff.items() if method == "PATCH" and path.endswith(own))
    expect(patches == 2, "minicloud counted %d PATCHes of the Cluster (2 expected): %s" % (patches, diff))
    expect(polls >= 2 or watches, "minicloud counted neither polls nor a watch of the Cluster: %s" % diff)
    durations = re.search(r"PEER durations (\d+) (\d+)", out)
    how = "by watch (%d watch requests)" % watches if watches else "by polling (no watch request)"
    return "waited %s: %d GETs of the Cluster for two waits of %s s" % (
        how, polls, " and ".join(durations.groups()) if durations else "?")


def k8s_delete(ctx):
    ctx.playbook("k8s_delete.yml")


CHECKS = [
    Check("openstack.cloud", "security_group + security_group_rule: create, idempotent, info, delete",
          os_security_group),
    Check("openstack.cloud", "network + subnet + port: create, idempotent, info, delete", os_network),
    Check("openstack.cloud", "router (external gateway, interface): create, idempotent, info, delete", os_router),
    Check("openstack.cloud", "keypair: create, idempotent, info, delete", os_keypair),
    Check("openstack.cloud", "loadbalancer + lb_listener + lb_pool + lb_member + lb_health_monitor: create, "
          "idempotent, delete", os_loadbalancer),
    Check("openstack.cloud", "server_info of a seeded server; image upload + image_info", os_server_image_info),
    Check("python-openstackclient", "server list", osc_server_list),
    Check("python-openstackclient", "server show", osc_server_show),
    Check("python-openstackclient", "image list", osc_image_list),
    Check("python-openstackclient", "network list", osc_network_list),
    Check("python-openstackclient", "router show", osc_router_show),
    Check("python-openstackclient", "security group rule list", osc_security_group_rule_list),
    Check("python-openstackclient", "loadbalancer list", osc_loadbalancer_list),
    Check("python-openstackclient", "loadbalancer member list", osc_loadbalancer_member_list),
    Check("python-openstackclient", "extension list", osc_extension_list),
    Check("kubectl", "get --watch sees a change", kubectl_get_watch),
    Check("kubectl", "wait --for=jsonpath (by watch)", kubectl_wait_jsonpath),
    Check("kubectl", "apply -f --validate=strict: create, update, unknown field refused", kubectl_apply),
    Check("kubectl", "explain cluster.spec.paused", kubectl_explain),
    Check("kubectl", "create secret generic", kubectl_create_secret),
    Check("kubectl", "create namespace", kubectl_create_namespace),
    Check("kubectl", "get events (a MachineSet's SuccessfulCreate)", kubectl_get_events),
    Check("kubectl", "get machines: CAPI's columns (v1beta2, v1beta1)", kubectl_get_machines),
    Check("kubectl", "patch and delete --dry-run=server change nothing", kubectl_dry_run),
    Check("kubectl", "diff -f changes nothing", kubectl_diff),
    Check("kubernetes.core", "k8s_info of Clusters and Machines", k8s_info),
    Check("kubernetes.core", "k8s state=present of a ConfigMap, idempotent", k8s_configmap),
    Check("kubernetes.core", "k8s check mode patching Cluster spec.paused changes nothing", k8s_check_mode),
    Check("kubernetes.core", "k8s wait + wait_condition (Cluster Paused)", k8s_wait),
    Check("kubernetes.core", "k8s state=absent of a ConfigMap, idempotent", k8s_delete),
]


# -- running, reporting ------------------------------------------------------------------------------------------------

def run_check(ctx, check):
    fixtures_before = sum(ctx.outcome.setup.values())
    started = time.monotonic()
    try:
        detail = check.run(ctx)
        check.result, check.detail = "PASSED", detail or ""
    except Skip as exc:
        check.result, check.detail = "SKIPPED", str(exc)
    except (CheckFailed, AssertionError) as exc:
        check.result, check.detail = "FAILED", str(exc)
    except subprocess.TimeoutExpired as exc:
        check.result, check.detail = "FAILED", "timed out: %s" % short(exc, 400)
    except Exception as exc:  # pylint: disable=broad-except
        check.result, check.detail = "FAILED", "%s: %s\n%s" % (type(exc).__name__, exc, traceback.format_exc(limit=3))
    seeding = sum(ctx.outcome.setup.values()) - fixtures_before
    check.seconds = time.monotonic() - started - seeding
    print("%-7s %5.1f s  %-22s %s%s" % (check.result, check.seconds, check.client, check.name,
                                          ("\n        " + short(check.detail, 1500)) if check.detail else ""),
          flush=True)


def versions():
    found = {}
    for name in COLLECTIONS:
        manifest = BENCH_COLLECTIONS / "ansible_collections" / name.replace(".", "/") / "MANIFEST.json"
        if manifest.exists():
            found[name] = json.loads(manifest.read_text())["collection_info"]["version"]

    def dist(python, package):
        done = subprocess.run([str(python), "-c", "import importlib.metadata as m; print(m.version(%r))" % package],
                              capture_output=True, text=True, check=False)
        return done.stdout.strip() or None

    bench_python = BENCH / "bin" / "python"
    if bench_python.exists():
        for package in ("ansible-core", "openstacksdk", "kubernetes"):
            found["%s (%s)" % (package, BENCH.name)] = dist(bench_python, package)
    if (VENV_BIN / "python").exists():
        for package in ("python-openstackclient", "python-octaviaclient"):
            found[package] = dist(VENV_BIN / "python", package)
    try:
        found["kubectl"] = kubectl_version()
    except Skip:
        found["kubectl"] = None
    return found


def table(checks):
    rows = ["| client | check | result | seconds |", "| --- | --- | --- | --- |"]
    rows += ["| %s | %s | %s | %.1f |" % (c.client, c.name, c.result, c.seconds) for c in checks]
    return "\n".join(rows)


def doc_block(outcome, wall, found, command):
    checks = outcome.checks
    counts = {r: sum(1 for c in checks if c.result == r) for r in ("PASSED", "FAILED", "SKIPPED")}
    lines = [
        "Command: `%s` (a minicloud of its own, brought up for the run: %.0f s of the wall time), run %s UTC: "
        "%d checks, %d passed, %d failed, %d skipped, %.0f s in all." % (
            command, outcome.setup.get("minicloud up", 0), datetime.datetime.now(datetime.timezone.utc).strftime(
                "%Y-%m-%d %H:%M"), len(checks), counts["PASSED"], counts["FAILED"], counts["SKIPPED"], wall),
        "",
        "Clients: " + ", ".join("%s %s" % (k, v) for k, v in found.items() if v) + ".",
        "",
        table(checks),
        "",
        "Seconds are the check's own; seeding what checks share (once per run) took: " + ", ".join(
            "%s %.1f s" % (name, seconds) for name, seconds in outcome.setup.items() if name != "minicloud up") + ".",
    ]
    notes = [c for c in checks if c.detail]
    if notes:
        lines += ["", "What the checks reported:", ""]
        lines += ["- %s, %s: **%s** %s" % (c.client, c.name, c.result, short(c.detail, 1200).replace("|", "\\|"))
                  for c in notes]
    return "\n".join(lines)


def write_doc(text):
    doc = DOC.read_text()
    block = "%s\n%s\n%s" % (START, text, END)
    if START in doc and END in doc:
        doc = re.sub(re.escape(START) + ".*?" + re.escape(END), lambda _m: block, doc, flags=re.S)
    else:
        doc = doc.rstrip() + "\n\n## Peer suite\n\n" + block + "\n"
    DOC.write_text(doc)


def bring_up(state_dir, outcome):
    """This run's own minicloud in ``state_dir`` (whatever was there removed first)."""
    cloud = Minicloud(state_dir)
    if state_dir.exists():
        cloud.down(purge=True)
        shutil.rmtree(state_dir, ignore_errors=True)
    started = time.monotonic()
    print("bringing up a minicloud in %s ..." % state_dir.relative_to(REPO), flush=True)
    cloud.up(port_offset=free_port_offset(), timeout=300)
    outcome.setup["minicloud up"] = time.monotonic() - started
    print("minicloud up in %.1f s" % outcome.setup["minicloud up"], flush=True)
    return cloud


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cloud", default=os.environ.get("PEER_CLOUD") or None,
                        help="state folder of a minicloud that is up (default: $PEER_CLOUD, else one of the run's "
                             "own in build/peer-cloud)")
    parser.add_argument("--only", action="append", default=[],
                        help="run only the checks whose client or name contains this (repeatable)")
    parser.add_argument("--no-write", action="store_true", help="leave docs/minicloud.md alone")
    parser.add_argument("--list", action="store_true", help="list the checks and exit")
    args = parser.parse_args(argv)
    checks = [c for c in CHECKS if not args.only or any(w in "%s %s" % (c.client, c.name) for w in args.only)]
    if args.list or not checks:
        for check in CHECKS:
            print("%-24s %s" % (check.client, check.name))
        return 0 if checks else 2

    outcome = Outcome(checks=checks)
    started = time.monotonic()
    own = args.cloud is None
    if own:
        cloud = bring_up(OWN_CLOUD, outcome)
    else:
        cloud = Minicloud(Path(args.cloud).resolve())
        if not cloud.status().healthy:
            print("error: the minicloud in %s is not up" % args.cloud, file=sys.stderr)
            return 2
    try:
        with tempfile.TemporaryDirectory(prefix="peer-") as tmp:
            ctx = Context(cloud, Path(tmp), outcome)
            print("run prefix %s, cloud %s" % (ctx.prefix, ctx.state_dir), flush=True)
            for check in checks:
                run_check(ctx, check)
    finally:
        if own:
            cloud.down(purge=True)
            shutil.rmtree(OWN_CLOUD, ignore_errors=True)
    wall = time.monotonic() - started
    print()
    print(table(checks))
    if outcome.setup:
        print("seeding (once per run): " + ", ".join("%s %.1f s" % kv for kv in outcome.setup.items()))
    failed = [c for c in checks if c.result == "FAILED"]
    print("%d checks: %d passed, %d failed, %d skipped; %.0f s" % (
        len(checks), sum(c.result == "PASSED" for c in checks), len(failed),
        sum(c.result == "SKIPPED" for c in checks), wall))
    if not args.no_write and not args.only:
        write_doc(doc_block(outcome, wall, versions(), "make peer" if own else "PEER_CLOUD=... make peer"))
        print("wrote the peer section of %s" % DOC.relative_to(REPO))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
