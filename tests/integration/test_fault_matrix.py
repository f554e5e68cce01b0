# -*- coding: utf-8 -*-
"""The fault matrix: every write call of every module that writes, crossed with the faults production clouds
have, and the read paths of every module with the faults a read meets.

Each cell runs the module in this process (its runner and the whole HTTP stack, as ``ansible-playbook`` runs it)
against minicloud's real services, with minicloud injecting the fault on each of the module's write calls once
(``fault add --count 1``, with ``--after`` for the faults that come after the service committed). For every cell:

- the run ends without a traceback, ``changed`` true (the work was needed and was done), or it fails with a
  clear message where failing is the right answer (a token refused twice; a Kubernetes token, which no client
  can renew);
- the cloud holds what was asked for and nothing twice (one security group of the name, no rule, route or
  deletion made twice) and nothing foreign was lost (another group on the port, a route outside the cluster,
  the pool's other members, the servers that are Nodes);
- a second run changes nothing (``changed: false``), and it runs with the read faults of the same row on every
  read path the first run used: the read rows of the writing modules. The read-only modules get their read rows
  on their own.

``make reliability`` runs this file and writes the table of ``docs/reliability.md`` from the cells' outcomes.
"""

import json
import os
import threading
import uuid

import pytest

import inprocess
import rollouts

TIMEOUT = 2  # api_timeout of the runs (a scenario may need more); the slow rows answer 0.8 s after it
SLOWER = 0.8
POD = "198.19.0.0/16"
READ_SERVICES = ("network", "load-balancer", "compute", "kubernetes")

# row -> the fault rule's settings
FAULTS = {
    "429 Retry-After": dict(status=429, retry_after=0.2),
    "503 before": dict(status=503),
    "504 after commit": dict(status=504, after=True),
    "drop before": dict(status="drop"),
    "drop after commit": dict(status="drop", after=True),
    "slow, commit after timeout": dict(slow=True),
    "slow answer after commit": dict(slow=True, after=True),
    "401 token expired": dict(status=401),
    "401 twice": dict(status=401, count=2),
}
READ_ROWS = ("429 Retry-After", "503 before", "drop before", "401 token expired")
_report_lock = threading.Lock()


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:6])


def record(module, call, row, outcome, detail=""):
    """One cell's outcome, for ``make reliability`` (FAULT_MATRIX_REPORT names a JSON-lines file), with its place
    in this file's order (``order``: the write scenarios, then the read-only modules; the rows of FAULTS)."""
    path = os.environ.get("FAULT_MATRIX_REPORT")
    if not path:
        return
    modules = list(SCENARIOS) + list(READ_ONLY)
    order = [modules.index(module), list(FAULTS).index(row)]
    with _report_lock, open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(dict(module=module, call=call, row=row, outcome=outcome, detail=detail, order=order))
                  + "\n")


def glob_of(template):
    return template.replace("{id}", "*")


def read_paths(cloud):
    """(service, path glob) of every GET clients made since the last reset."""
    counts = cloud.requests()["requests"]
    return sorted(set((service, glob_of(path)) for service in READ_SERVICES
                      for path in counts.get(service, {}).get("GET", {})))


def add_rules(cloud, calls, row, api_timeout, stops_at_401=False):
    settings = dict(FAULTS[row])
    count = settings.pop("count", 1)
    if settings.pop("slow", False):
        settings["delay"] = api_timeout + SLOWER
    if row == "401 twice" or (stops_at_401 and row.startswith("401")):
        calls = calls[:1]  # the run stops at the first call it meets: the others never see it
    return [cloud.api.add_fault(service, method=method, path=path, count=count, **settings)["id"]
            for service, method, path in calls]


def fired(cloud, rule_ids):
    by_id = dict((rule["id"], rule["fired"]) for rule in cloud.faults())
    return [by_id.get(rule_id, 0) for rule_id in rule_ids]


def run_under(cloud, run_in_process, module, args, calls, row, stops_at_401=False):
    """Run the module with ``row``'s fault on each of ``calls`` (service, method, path glob); returns (result,
    how often each rule fired). The rules are removed afterwards, whatever happened. ``stops_at_401``: the first
    401 ends the run (a Kubernetes token, which no client renews)."""
    rule_ids = add_rules(cloud, calls, row, args.get("api_timeout", TIMEOUT), stops_at_401)
    try:
        result = run_in_process(module, args)
        return result, fired(cloud, rule_ids)
    finally:
        cloud.clear_faults()


# -- the modules that write --------------------------------------------------------------------------------


class Scenario:
    """One module's writes: ``prepare`` seeds what the run needs, ``args`` the task, ``calls`` the write calls
    (label, service, method, path glob), ``check`` the cloud afterwards."""

    module = None
    calls = ()
    kubernetes_writes = False  # a Kubernetes token expires for good: no client renews it
    uses_shared_setup = True  # the constructor takes what ``shared_setup`` made for all the cells

    def prepare(self, cloud):
        raise NotImplementedError

    def args(self, ctx):
        raise NotImplementedError

    def check(self, cloud, ctx, result):
        raise NotImplementedError

    def rerun_args(self, ctx):
        """The task of the second run, which must change nothing."""
        return self.args(ctx)

    def cleanup(self, cloud, ctx):
        """Undo what ``prepare`` changed in the cloud's settings."""


class SecurityGroup(Scenario):
    """A group that does not exist yet, its rule (the defaults of the new group are removed: exclusive) and the
    group on a server's port, which keeps the groups it had."""

    module = "secgroup_ensure"
    calls = (("create group", "network", "POST", "/v2.0/security-groups"),
             ("create rule", "network", "POST", "/v2.0/security-group-rules"),
             ("delete rule", "network", "DELETE", "/v2.0/security-group-rules/*"),
             ("update port (If-Match)", "network", "PUT", "/v2.0/ports/*"))

    def __init__(self, shared):
        self.shared = shared

    def prepare(self, cloud):
        server = self.shared.pop()
        port = server["ports"][0]
        return dict(name=unique("fm-group"), server=server, port=port["id"],
                    foreign=set(cloud.sdk().network.get_port(port["id"]).security_group_ids))

    def args(self, ctx):
        # exclusive: the group made by the run loses its default egress rules (the delete call)
        return dict(cloud="minicloud", api_timeout=TIMEOUT, security_group=ctx["name"], servers=[ctx["server"]["name"]],
                    rules=[dict(protocol="tcp", port_range_min=10250, port_range_max=10250, remote_ip_prefix=POD)],
                    exclusive=True)

    def check(self, cloud, ctx, result):
        conn = cloud.sdk()
        groups = list(conn.network.security_groups(name=ctx["name"]))
        assert len(groups) == 1, "%d groups named %s" % (len(groups), ctx["name"])
        rules = list(conn.network.security_group_rules(security_group_id=groups[0].id))
        assert [(r.direction, r.protocol, r.port_range_min, r.remote_ip_prefix) for r in rules] == [
            ("ingress", "tcp", 10250, POD)]
        port_groups = set(conn.network.get_port(ctx["port"]).security_group_ids)
        assert port_groups == ctx["foreign"] | {groups[0].id}
        assert result["security_group"]["created"] and len(result["rules_created"]) == 1
        assert len(result["rules_deleted"]) == 2 and len(result["ports_updated"]) == 1


class Routes(Scenario):
    """A node without its route and address pair and a stale route to a node that is gone, in a cluster
    CIDR of the cell's own on a router the cells share: the other cells' routes are foreign to this one (outside
    its cluster CIDR) and must all stay."""

    module = "route_audit"
    calls = (("add routes (extraroute-atomic)", "network", "PUT", "/v2.0/routers/*/add_extraroutes"),
             ("remove routes (extraroute-atomic)", "network", "PUT", "/v2.0/routers/*/remove_extraroutes"),
             ("add address pairs (If-Match)", "network", "PUT", "/v2.0/ports/*"))

    def __init__(self, shared):
        self.router, self.cidrs = shared

    def prepare(self, cloud):
        cluster = self.cidrs.pop()  # a /20 of POD
        nodes = cloud.json("router", "nodes", self.router, "--count", 1, "--prefix", unique("fm-n"),
                           "--pod-cidr", cluster)
        base = cluster.rsplit(".", 2)[0] + "." + str(int(cluster.split(".")[2]) + 15) + ".0/24"
        cloud.cli("router", "routes", self.router, "--add", base + "=10.180.0.200")  # stale: no node has it
        return dict(router=self.router, nodes=nodes, cluster=cluster, stale=base + "=10.180.0.200",
                    before=self.routes(cloud))

    def routes(self, cloud):
        return sorted("%s=%s" % (r["destination"], r["nexthop"])
                      for r in cloud.json("router", "show", self.router)["routes"])

    def args(self, ctx):
        nodes = [dict(name=n["name"], pod_cidr=n["pod_cidr"], address=n["address"]) for n in ctx["nodes"]]
        return dict(cloud="minicloud", api_timeout=TIMEOUT, router=ctx["router"], cluster_cidr=[ctx["cluster"]],
                    nodes=nodes, state="repaired", check_address_pairs=True, max_removal_share=1)

    def check(self, cloud, ctx, result):
        wanted = ["%s=%s" % (n["pod_cidr"], n["address"]) for n in ctx["nodes"]]
        assert self.routes(cloud) == sorted(set(ctx["before"]) - {ctx["stale"]} | set(wanted))
        conn = cloud.sdk()
        for node in ctx["nodes"]:
            pairs = conn.network.get_port(node["port"]).allowed_address_pairs
            assert [p["ip_address"] for p in pairs] == [node["pod_cidr"]], pairs
        self.check_changes(result)
        assert result["healthy"]

    @staticmethod
    def check_changes(result):
        done = sorted((c["action"], c["status"]) for c in result["changes"])
        assert done == sorted([("add_address_pairs", "done"), ("add_route", "done"), ("remove_route", "done")]), \
            result["changes"]


class RoutesPlainUpdate(Routes):
    """The same on a Neutron without extraroute-atomic: the whole route list in one router update, guarded by
    the router's revision (If-Match)."""

    calls = (("update routes (If-Match)", "network", "PUT", "/v2.0/routers/*"),)

    def prepare(self, cloud):
        cloud.cli("extension", "hide", "extraroute-atomic")
        return super().prepare(cloud)

    def cleanup(self, cloud, ctx):
        cloud.cli("extension", "restore")


class Registration(Scenario):
    """Two servers, one of them a Node: the one that never registered is deleted (the opt-in)."""

    module = "node_registration_audit"
    calls = (("delete server", "compute", "DELETE", "*/servers/*"),)

    def __init__(self, shared):
        self.shared = shared

    def prepare(self, cloud):
        prefix, made = self.shared.pop()
        server = made[0]
        cloud.cli("kube", "node", "create", server["name"], "--pod-cidr", "10.200.%d.0/24" % (
            int(uuid.uuid4().hex[:2], 16)), "--address", server["ports"][0]["ip_address"])
        return dict(prefix=prefix, servers=made)

    def args(self, ctx):
        # Nova's server list is the slowest answer of the cloud (1.5 s with 300 servers on 2 busy cores)
        return dict(cloud="minicloud", api_timeout=4, servers=[ctx["prefix"] + "-*"],
                    kubernetes={"kubeconfig": ctx["kubeconfig"]}, registration_timeout=0, state="cleaned",
                    max_deletions=1)

    def check(self, cloud, ctx, result):
        listed = cloud.sdk().compute.get("/servers", raise_exc=True).json()["servers"]
        left = sorted(s["name"] for s in listed if s["name"].startswith(ctx["prefix"] + "-"))
        assert left == [ctx["servers"][0]["name"]]
        assert [(d["name"], d["status"]) for d in result["deleted"]] == [(ctx["servers"][1]["name"], "done")]

    def cleanup(self, cloud, ctx):
        cloud.cli("kube", "node", "delete", ctx["servers"][0]["name"], check=False)


class MemberReplacement(Scenario):
    """A pool's old member replaced by a new one that serves: the old one is deleted, every other member stays."""

    module = "rollout_guard"
    calls = (("delete member", "load-balancer", "DELETE", "/v2/lbaas/pools/*/members/*"),)

    def __init__(self, shared):
        self.lb, self.pairs = shared

    def prepare(self, cloud):
        old, new = self.pairs.pop()
        others = sorted(m.name for m in cloud.sdk().load_balancer.members(self.lb["pool"]["id"]) if m.name != old)
        return dict(old=old, new=new, others=others)

    def args(self, ctx):
        return dict(cloud="minicloud", api_timeout=TIMEOUT, mode="direct", pool=self.lb["pool"]["name"],
                    replace=[{"old": ctx["old"], "new": ctx["new"]}], timeout=60, poll_interval=0.5,
                    member_timeout=30)

    def check(self, cloud, ctx, result):
        cloud.wait_lb_active(self.lb)
        names = sorted(m.name for m in cloud.sdk().load_balancer.members(self.lb["pool"]["id"]))
        assert names == ctx["others"]
        assert result["released"] == [ctx["old"]]
        assert [a["action"] for a in result["actions"]].count("delete_member") == 1


class ControlPlaneRollout(Scenario):
    """A one-Machine control plane rolled by rollout_guard in capi mode on minicloud's CAPI and the real Octavia:
    the old Machine held, the rollout started, the old Machine released once its replacement's member serves. The
    second run guards without starting (``start: false``), as the role's re-run does."""

    module = "rollout_guard"
    kubernetes_writes = True
    uses_shared_setup = False
    calls = (("hold / release Machine (merge patch)", "kubernetes", "PATCH",
              "/apis/cluster.x-k8s.io/*/namespaces/*/machines/*"),
             ("start: KCP rolloutAfter (merge patch)", "kubernetes", "PATCH",
              "/apis/controlplane.cluster.x-k8s.io/*/namespaces/*/kubeadmcontrolplanes/*"))

    def prepare(self, cloud):
        name = rollouts.seed_cluster(cloud, 1)
        rollouts.set_capo_wait(cloud, name, "member")
        return dict(name=name, old=[m["metadata"]["name"] for m in rollouts.machines(cloud, name)])

    def args(self, ctx):
        return dict(cloud="minicloud", api_timeout=TIMEOUT, mode="capi", cluster=ctx["name"],
                    kubernetes=dict(kubeconfig=ctx["kubeconfig"], api_timeout=TIMEOUT), start=True, timeout=180,
                    poll_interval=0.5, member_timeout=120)

    def rerun_args(self, ctx):
        return dict(self.args(ctx), start=False)  # guards a rollout if one runs; starts none

    def check(self, cloud, ctx, result):
        now = [m["metadata"]["name"] for m in rollouts.machines(cloud, ctx["name"])]
        assert len(now) == 1 and now != ctx["old"], now
        assert not rollouts.hooks_left(cloud, ctx["name"])
        assert result["released"] == ctx["old"], result
        assert [a["action"] for a in result["actions"]].count("start") == 1, result["actions"]
        assert result["observed_with"]["method"] == "watch", result["observed_with"]  # faults on writes only
        rollouts.assert_safe_history(rollouts.history(cloud, ctx["name"]), 1, rollouts.pool_name(ctx["name"]))


class Pause(Scenario):
    """Pause a cluster whose provider acknowledges with block-move."""

    module = "cluster_pause_ack"
    kubernetes_writes = True
    uses_shared_setup = False
    calls = (("set spec.paused (merge patch)", "kubernetes", "PATCH",
              "/apis/cluster.x-k8s.io/*/namespaces/*/clusters/*"),)

    def prepare(self, cloud):
        cloud.cli("capi", "provider", "block-move", "--delay", "0.5")
        name = "c-%s" % uuid.uuid4().hex[:6]
        cloud.json("capi", "cluster", "create", name, "--control-plane", 1, "--workers", 0)
        return dict(name=name)

    def args(self, ctx):
        return dict(kubeconfig=ctx["kubeconfig"], api_timeout=TIMEOUT, name=ctx["name"], timeout=60, poll_interval=0.5,
                    quiet_period=1)

    def check(self, cloud, ctx, result):
        assert result["cluster"]["paused"] is True
        assert all(o.get("acknowledged") for o in result["objects"]), result["objects"]

    def cleanup(self, cloud, ctx):
        cloud.cli("capi", "provider", "silent", "--delay", "2")


def expected_failure(scenario, row):
    """The clear message a run must fail with under ``row``, or None when it must succeed."""
    if row.startswith("401") and scenario.kubernetes_writes:
        return "credentials were refused"  # a Kubernetes token: no client renews it
    if row == "401 twice":
        return "requires authentication"
    return None


ROWS_RUN = len(FAULTS)


@pytest.fixture(scope="module")
def shared_setup(minicloud):
    """What the cells of each scenario start from, made in few requests for all of them; built on first use."""
    made = {}

    def get(scenario_name):
        if scenario_name not in made:
            made[scenario_name] = _shared(minicloud, scenario_name)
        return made[scenario_name]
    yield get
    if "rollout_guard" in made:
        minicloud.cli("lb", "delete", made["rollout_guard"][0]["loadbalancer"]["name"], check=False)


def _shared(cloud, scenario_name):
    if scenario_name == "secgroup_ensure":
        return cloud.api.create_servers([unique("fm-node") for _cell in range(ROWS_RUN)], "fm-servers")
    if scenario_name == "node_registration_audit":
        prefixes = [unique("fm-reg") for _cell in range(ROWS_RUN)]
        servers = cloud.api.create_servers(["%s-%d" % (p, i) for p in prefixes for i in (1, 2)], "regnet")
        return [(p, servers[2 * k:2 * k + 2]) for k, p in enumerate(prefixes)]
    if scenario_name.startswith("route_audit"):
        router = unique("fm-rt")
        cloud.json("router", "create", router, "--network", unique("fm-nodes"))
        cidrs = ["198.19.%d.0/20" % (16 * k) for k in range(1, ROWS_RUN + 1)]
        cloud.cli("router", "routes", router, "--add", "172.31.9.0/24=10.180.0.201")  # not the cluster's
        return router, cidrs
    # rollout_guard: an old and a new member per cell, added to the pool in one batch update
    lb = cloud.json("lb", "create", unique("fm-lb"), "--members", 3)
    conn = cloud.sdk()
    pool = lb["pool"]["id"]
    current = [dict(address=m.address, protocol_port=m.protocol_port, name=m.name, subnet_id=m.subnet_id)
               for m in conn.load_balancer.members(pool)]
    pairs = [(unique("fm-old"), unique("fm-new")) for _cell in range(ROWS_RUN)]
    added = [dict(name=name, address="10.0.0.%d" % (100 + 2 * k + side), protocol_port=6443,
                  subnet_id=lb["subnet"]["id"]) for k, pair in enumerate(pairs) for side, name in enumerate(pair)]
    conn.load_balancer.put("/lbaas/pools/%s/members" % pool, json={"members": current + added}).raise_for_status()
    cloud.wait_lb_active(lb)
    return lb, pairs


SCENARIOS = {"secgroup_ensure": SecurityGroup, "route_audit": Routes,
             "route_audit (no extraroute-atomic)": RoutesPlainUpdate, "node_registration_audit": Registration,
             "rollout_guard": MemberReplacement, "rollout_guard (capi)": ControlPlaneRollout,
             "cluster_pause_ack": Pause}


@pytest.mark.parametrize("row", list(FAULTS))
@pytest.mark.parametrize("scenario_name", list(SCENARIOS))
def test_write_cell(cloud, run_in_process, shared_setup, scenario_name, row):
    kind = SCENARIOS[scenario_name]
    scenario = kind(shared_setup(scenario_name)) if kind.uses_shared_setup else kind()
    calls = ", ".join(call[0] for call in scenario.calls)
    ctx = scenario.prepare(cloud)
    ctx["kubeconfig"] = str(cloud.state_dir / "kubeconfig")
    outcome, detail = "failed", ""
    try:
        detail = _write_cell(cloud, run_in_process, scenario, ctx, row)
        outcome = "pass"
    finally:
        scenario.cleanup(cloud, ctx)
        record(scenario_name, calls, row, outcome, detail)


def _write_cell(cloud, run_in_process, scenario, ctx, row):
    args = scenario.args(ctx)
    cloud.requests(reset=True)
    first, fired_counts = run_under(cloud, run_in_process, scenario.module, args,
                                    [c[1:] for c in scenario.calls], row, stops_at_401=scenario.kubernetes_writes)
    assert all(fired_counts), "a write call never met the fault: %s; the run: %s" % (
        list(zip(scenario.calls, fired_counts)), first)
    failure = expected_failure(scenario, row)
    if failure:
        assert first["failed"] and failure in first["msg"], first
        assert "Traceback" not in first["msg"]
        detail = "fails clearly: %s" % first["msg"][:160]
        settled = run_in_process(scenario.module, args)  # the token works again: a re-run does the work
        paths = read_paths(cloud) if row in READ_ROWS else []
        assert not settled["failed"], settled.get("msg")
        scenario.check(cloud, ctx, settled)
    else:
        paths = read_paths(cloud) if row in READ_ROWS else []  # the module's reads, not those of the checks
        assert not first["failed"], first.get("msg")
        assert first["changed"] is True
        scenario.check(cloud, ctx, first)
        detail = "changed; retried %s" % (first.get("retried_faults") or "nothing")
    # the second run, with the row's read fault on every read path the first one used
    cloud.requests(reset=True)
    args = scenario.rerun_args(ctx)
    second, read_fired = run_under(cloud, run_in_process, scenario.module, args,
                                   [(service, "GET", path) for service, path in paths], row)
    if row == "401 token expired" and any(path[0] == "kubernetes" for path in paths):
        assert second["failed"] and "credentials were refused" in second["msg"], second
        second = run_in_process(scenario.module, args)
        detail += "; re-run with the fault on %d read paths: fails clearly (Kubernetes token)" % len(paths)
    elif paths:
        assert sum(read_fired) >= 1, "no read met the fault"
        detail += "; re-run with the fault on %d read paths: unchanged" % len(paths)
    assert not second["failed"], second.get("msg")
    assert second["changed"] is False, second
    return detail


# -- the read-only modules ---------------------------------------------------------------------------------


READ_ONLY = ("lb_member_wait", "cluster_info")


@pytest.fixture(scope="module")
def read_baselines(minicloud, shared_lb):
    """module -> (its task, the read paths a clean run of it takes): one clean run per module for all its rows,
    made before any cell's own fixtures (a cluster made here outlives the cells' clean-up)."""
    name = "c-%s" % uuid.uuid4().hex[:6]
    minicloud.json("capi", "cluster", "create", name, "--control-plane", 1, "--workers", 0)
    tasks = {"lb_member_wait": dict(cloud="minicloud", api_timeout=TIMEOUT, pool=shared_lb["pool"]["name"],
                                    timeout=30, poll_interval=0.5),
             "cluster_info": dict(kubeconfig=str(minicloud.state_dir / "kubeconfig"), name=name)}
    baselines = {}
    for module in READ_ONLY:
        minicloud.requests(reset=True)
        clean = inprocess.run_module(module, tasks[module], env={"OS_CLIENT_CONFIG_FILE": str(minicloud.clouds_yaml)})
        assert not clean["failed"], clean.get("msg")
        baselines[module] = (tasks[module], read_paths(minicloud))
    yield baselines
    minicloud.api.delete_capi_cluster(name, "default")


@pytest.mark.parametrize("row", READ_ROWS)
@pytest.mark.parametrize("module", READ_ONLY)
def test_read_cell(cloud, run_in_process, read_baselines, module, row):
    args, paths = read_baselines[module]
    result, read_fired = run_under(cloud, run_in_process, module, args,
                                   [(service, "GET", path) for service, path in paths], row)
    if row == "401 token expired" and module == "cluster_info":
        assert result["failed"] and "credentials were refused" in result["msg"], result
        detail = "fails clearly (Kubernetes token): %s" % result["msg"][:120]
    else:
        assert not result["failed"], result.get("msg")
        assert all(read_fired), list(zip(paths, read_fired))
        assert result["changed"] is False
        detail = "same answer; retried %s" % (result.get("retried_faults") or "nothing")
    record(module, "reads (%d paths)" % len(paths), row, "pass", detail)


# -- a read that fails after a write -----------------------------------------------------------------------------


def test_a_read_failing_after_a_write_reports_the_write(cloud, run_in_process):
    """rollout_guard (capi): its first write (a Machine held, or the rollout started) is held until every read of
    the load balancer is refused for good (HTTP 401 after keystoneauth's one re-authentication); the run fails on a
    read, after its write, and must say changed: true and name the write (the class: any failure after a write)."""
    from races import with_concurrent_change
    scenario = ControlPlaneRollout()
    ctx = scenario.prepare(cloud)
    ctx["kubeconfig"] = str(cloud.state_dir / "kubeconfig")
    args = dict(scenario.args(ctx), timeout=40)
    result, _changed = with_concurrent_change(
        cloud, "kubernetes", "PATCH", "/apis/*", lambda: run_in_process(scenario.module, args),
        lambda: cloud.api.add_fault("load-balancer", method="GET", path="*", status=401))
    cloud.clear_faults()
    assert result["failed"] is True, result
    assert result["changed"] is True, result
    assert result["writes"] and result["writes"][0]["outcome"] == "done", result.get("writes")
    assert "written before this failure: " + result["writes"][0]["call"] in result["msg"], result["msg"]
