# -*- coding: utf-8 -*-
"""The fuzz suite: every module, with arguments drawn from its own argument spec, against minicloud.

Each module gets a fixed, reproducible sample (hypothesis ``derandomize``) of FUZZ_EXAMPLES draws
(default 12 in ``make test``; ``make fuzz`` runs 150). Draws run in-process (``inprocess.run_module``), in
check mode or for real on throwaway objects: a load balancer with three serving members, a router with
three nodes and their routes, three servers that are Kubernetes Nodes, a Cluster API cluster. For every
draw:

- no traceback: the module returns a result, whatever it was given;
- a failure has a message in our words (none of ``fuzz_spec.PYTHON_WORDS``);
- check mode writes nothing, and a failure that reports ``changed: false`` wrote nothing;
- a run that wrote says ``changed: true``;
- nothing that serves is lost: the members keep serving, each node keeps its route unless the draw lifted
  the guard (``max_removal_share``) within its share, every Node's server stays, ports keep their groups;
- a run that fails after it wrote (a read after its first write answered 503 until the deadline, or 401) says
  ``changed: true`` and lists its writes (``writes``, each with its ``call`` and ``outcome``);
- names with glob characters (``[``, ``]``, ``?``, ``*``) are read by one rule (``core.names``): a server
  called ``<p>-g[1]`` next to a decoy ``<p>-g1`` gets the group or is deleted only when an entry names it or
  a ``*`` pattern matches it, and a deletion never takes a server matched only through ``?`` or ``[...]``.

Waits are cut short (``timeout`` at most 3 s) so no draw waits long; hostile timeouts (NaN, 10^30, -1) are
kept as drawn.
"""

import fnmatch
import math
import os
import re
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fuzz_spec
import inprocess
from races import with_reads_failing_after_first_write

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "12"))
FUZZ = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))
# Draws that fail after a write wait for their deadline: fewer of them.
FUZZ_AFTER_WRITE = settings(FUZZ, max_examples=max(2, EXAMPLES // 3))
CLUSTER = "198.19.0.0/16"
SHORT = dict(timeout=3, member_timeout=2, quiet_period=1, poll_interval=0.5)


def unique(prefix):
    return "fz%s-%s" % (prefix, uuid.uuid4().hex[:5])


class World:
    """The throwaway objects every draw may touch, and what must still serve after each draw."""

    def __init__(self, cloud):
        self.cloud = cloud
        api = cloud.api
        self.lb = api.create_lb(unique("lb"), members=3)
        self.router = unique("rt")
        api.create_router(self.router, unique("net"))
        self.nodes = [dict(name=n["name"], pod_cidr=n["pod_cidr"], address=n["address"]) for n in api.create_nodes(
            self.router, 3, prefix=unique("n"), routes=True, address_pairs=True)]
        self.routes = self.router_routes()
        prefix = unique("srv")
        self.servers = api.create_servers(["%s-%d" % (prefix, i) for i in range(1, 4)], unique("snet"))
        self.server_prefix = prefix
        for index, server in enumerate(self.servers):
            api.create_node(server["name"], "10.%d.%d.0/24" % (200 + index, len(prefix)),
                            server["ports"][0]["ip_address"])
        # unregistered servers with glob characters: one named with a class, its decoy the class would match
        self.glob_names = ["%s-g[1]" % prefix, "%s-g1" % prefix]
        self.glob_servers = api.create_servers(self.glob_names, unique("gnet"))
        self.groups = self.port_groups()
        self.cluster = unique("capi")
        api.create_capi_cluster(self.cluster)
        self.kubeconfig = str(cloud.state_dir / "kubeconfig")
        self.fuzz_groups = ["fzgroup-a", "fzgroup-b"]

    def close(self):
        api = self.cloud.api
        for server in self.servers:
            api.delete_node(server["name"])
        for server in api.list_servers():
            if server["name"] in self.glob_names:
                self.cloud.sdk().compute.delete_server(server["id"])
        api.delete_capi_cluster(self.cluster)
        api.delete_lb(self.lb["loadbalancer"]["name"])

    # -- what serves --------------------------------------------------------------------

    def serving_members(self):
        members = self.cloud.sdk().load_balancer.members(self.lb["pool"]["id"])
        return sorted(m.name for m in members if m.provisioning_status == "ACTIVE")

    def router_routes(self):
        return sorted("%s=%s" % (r["destination"], r["nexthop"]) for r in self.cloud.api.router(self.router)["routes"])

    def port_groups(self):
        ports = self.cloud.sdk().network.ports(device_id=[s["id"] for s in self.servers])
        return dict((p.id, set(p.security_group_ids or [])) for p in ports)

    def server_ids(self):
        return set(s["id"] for s in self.cloud.api.list_servers())

    def glob_groups(self):
        """{server name: the security groups on its ports} of the glob-named servers."""
        ports = self.cloud.sdk().network.ports(device_id=[s["id"] for s in self.glob_servers])
        names = dict((s["id"], s["name"]) for s in self.glob_servers)
        found = dict((name, set()) for name in names.values())
        for port in ports:
            found[names[port.device_id]] |= set(port.security_group_ids or [])
        return found

    def restore_glob_servers(self):
        """Seed again a glob-named server a clean-up deleted (the next draw finds the world as it was)."""
        present = set(s["name"] for s in self.cloud.api.list_servers())
        for index, name in enumerate(self.glob_names):
            if name not in present:
                self.glob_servers[index] = self.cloud.api.create_servers([name], unique("gnet"))[0]


def named_by(name, entries, destructive):
    """Whether an entry names ``name`` (exactly) or a ``*`` pattern matches it: with ``destructive``, '?' and '['
    read as themselves (only ``*`` is wild), else as glob (the rule in docs/guards.md, written again here)."""
    for entry in entries if isinstance(entries, list) else []:
        entry = str(entry)
        if entry == name:
            return True
        if "*" not in entry:
            continue
        if destructive:
            if re.match("^" + ".*".join(re.escape(part) for part in entry.split("*")) + "$", name, re.DOTALL):
                return True
        elif fnmatch.fnmatchcase(name, entry):
            return True
    return False


@pytest.fixture(scope="module")
def world(minicloud):
    minicloud.normal()
    made = World(minicloud)
    yield made
    made.close()


def shorten(args):
    """Cut valid waits short; keep hostile values (NaN, infinities, huge, negative, wrong types) as drawn."""
    for key, limit in SHORT.items():
        value = args.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
                and limit < value <= 10 ** 9:
            args[key] = limit
    return args


def judge(cloud, module, args, check_mode):
    """Run one draw and check what holds for every module; returns (result, writes)."""
    cloud.reset_counts()
    result = inprocess.run_module(module, args, check_mode=check_mode,
                                  env={"OS_CLIENT_CONFIG_FILE": str(cloud.clouds_yaml)})
    writes = cloud.write_count()
    if result.get("failed"):
        message = result.get("msg")
        assert isinstance(message, str) and message.strip(), result
        assert not fuzz_spec.python_words(message), (args, message)
        if not result.get("changed"):
            assert writes == 0, ("a refusal wrote", args, message)
    if check_mode:
        assert writes == 0, ("check mode wrote", args, result.get("msg"))
    if writes:
        assert result.get("changed"), ("wrote %d times but says changed false" % writes, args, result.get("msg"))
    return result, writes


def module_spec(module):
    plugin = __import__("ansible_collections.flightcontrol.openstack.plugins.modules." + module, fromlist=["x"])
    runner = [v for v in vars(plugin).values() if isinstance(v, type) and getattr(v, "argument_spec", None)
              and v.__module__ == plugin.__name__][0]
    return dict(runner.argument_spec)


def module_args_strategy(spec, hints, fixed, skip=()):
    return fuzz_spec.module_args(spec, hints, fixed, skip).map(shorten)


def glob_entries(world):
    """``servers`` entries with glob characters around the glob-named servers (``<p>-g[1]``, decoy ``<p>-g1``)."""
    prefix = world.server_prefix
    return [prefix + "-g[1]", prefix + "-g?", prefix + "-g[1]*", prefix + "-g?*", prefix + "-g[12]", prefix + "-g*"]


# -- the draws, one test per module ---------------------------------------------------------------------

@FUZZ
@given(data=st.data())
def test_fuzz_lb_member_wait(minicloud, world, data):
    lb = world.lb
    members = [m["name"] for m in lb["members"]] + [m["address"] for m in lb["members"]]
    hints = dict(pool=st.sampled_from([lb["pool"]["name"], lb["pool"]["id"], "fz-no-such-pool"]),
                 loadbalancer=st.sampled_from([lb["loadbalancer"]["name"], lb["loadbalancer"]["id"], "fz-nope"]),
                 members=st.lists(st.sampled_from(members + ["10.9.9.9:6443", "fz-gone", members[0] + "*",
                                                             members[0][:-1] + "?", "[%s]" % members[0]]), max_size=4))
    args = data.draw(module_args_strategy(module_spec("lb_member_wait"), hints, dict(cloud="minicloud")))
    judge(minicloud, "lb_member_wait", args, data.draw(st.booleans()))
    assert minicloud.write_count() == 0  # a wait only reads


@FUZZ
@given(data=st.data())
def test_fuzz_rollout_guard(minicloud, world, data):
    lb = world.lb
    names = [m["name"] for m in lb["members"]] + ["%s:6443" % m["address"] for m in lb["members"]] + ["fz-new"]
    names += [lb["members"][0]["name"][:-1] + "?", lb["members"][1]["name"] + "*", "[%s]" % lb["members"][2]["name"]]
    pair = st.fixed_dictionaries(dict(old=st.sampled_from(names), new=st.sampled_from(names)))
    hints = dict(pool=st.sampled_from([lb["pool"]["name"], "fz-no-such-pool"]), replace=st.lists(pair, max_size=3),
                 cluster=st.sampled_from([world.cluster, "fz-missing", "Bad_Name"]),
                 mode=st.sampled_from(["direct", "direct", "capi"]))
    fixed = dict(cloud="minicloud", kubernetes=dict(kubeconfig=world.kubeconfig))
    args = data.draw(module_args_strategy(module_spec("rollout_guard"), hints, fixed))
    before = world.serving_members()
    judge(minicloud, "rollout_guard", args, check_mode=True)  # real rollouts: test_rollout_property, direct tests
    assert world.serving_members() == before


def kept_route(world):
    """A ``keep_routes`` entry naming one of the world's routes (so a repair that drops its node must keep it)."""
    return st.sampled_from(world.routes).map(lambda text: dict(zip(("destination", "nexthop"), text.split("="))))


def hostile_route():
    return st.fixed_dictionaries(dict(destination=st.sampled_from(fuzz_spec.HOSTILE_CIDRS),
                                      nexthop=st.sampled_from(fuzz_spec.HOSTILE_NEXTHOPS)))


@FUZZ
@given(data=st.data())
def test_fuzz_route_audit(minicloud, world, data):
    node = st.sampled_from(world.nodes).map(dict)
    hints = dict(router=st.sampled_from([world.router, "fz-no-such-router"]),
                 cluster_cidr=st.lists(st.sampled_from([CLUSTER, CLUSTER, "10.0.0.0/8", "0.0.0.0/0", "198.19.1.0/24",
                                                        "198.19.1.5/16", "fd00::/56", "bogus"]), min_size=1,
                                       max_size=2),
                 nodes=st.lists(node, max_size=3), state=st.sampled_from(["audited", "repaired", "repaired"]),
                 max_removal_share=st.sampled_from([0.0, 0.5, 0.5, 1.0, 1]),
                 keep_routes=st.lists(st.one_of(kept_route(world), kept_route(world), hostile_route()), max_size=3))
    fixed = dict(cloud="minicloud", kubernetes=dict(kubeconfig=world.kubeconfig))
    args = data.draw(module_args_strategy(module_spec("route_audit"), hints, fixed, skip=("cloud_controller",)))
    # a dictionary (a non-dict value of an option with suboptions crashes ansible-core's own argument checks)
    controller = data.draw(st.one_of(st.none(), st.just({}), st.fixed_dictionaries(dict(cluster_cidr=st.lists(
        st.sampled_from([CLUSTER, "198.19.0.0/17"] + fuzz_spec.HOSTILE_CIDRS), max_size=2)))))
    if controller is not None:
        args["cloud_controller"] = controller
    if "nodes" not in args:
        args["nodes"] = [dict(n) for n in world.nodes]  # the Kubernetes API's Nodes are other tests'
    result, writes = judge(minicloud, "route_audit", args, data.draw(st.booleans()))
    after = world.router_routes()
    keep = args.get("keep_routes") if isinstance(args.get("keep_routes"), list) else []
    kept = set("%s=%s" % (k.get("destination"), k.get("nexthop")) for k in keep if isinstance(k, dict))
    assert not [r for r in world.routes if r in kept and r not in after], ("a kept route was removed", args)
    lost = [r for r in world.routes if r not in after]
    if lost:
        share = args.get("max_removal_share", 0.5)
        listed = args.get("nodes")
        assert isinstance(share, (int, float)) and share > 0, (args, lost)
        assert listed or share >= 1, ("an empty node view removed routes", args, lost)
        assert share >= 1 or float(len(lost)) / len(world.routes) <= share, ("more than the share", args, lost)
    if after != world.routes:
        world.cloud.api.set_routes(world.router, replace=[dict(zip(("destination", "nexthop"), r.split("=")))
                                                          for r in world.routes])


@FUZZ
@given(data=st.data())
def test_fuzz_secgroup_ensure(minicloud, world, data):
    names = [s["name"] for s in world.servers] + [world.server_prefix + "-*", "fz-no-such-server"] + glob_entries(world)
    rule = st.fixed_dictionaries({}, optional=dict(
        protocol=st.sampled_from(["tcp", "udp", "icmp", "6", "300", "any", "bogus"]),
        port=st.sampled_from([22, 0, 65536, -1]),
        remote_ip_prefix=st.sampled_from(["10.0.0.0/8", "10.0.0.5/8", "::/0", "bad"]),
        remote_group=st.sampled_from(world.fuzz_groups + [str(uuid.UUID(int=7)), ""]),
        direction=st.sampled_from(["ingress", "egress"]), ethertype=st.sampled_from(["IPv4", "IPv6"])))
    hints = dict(security_group=st.sampled_from(world.fuzz_groups), servers=st.lists(st.sampled_from(names), max_size=3),
                 pod_cidr=st.lists(st.sampled_from([CLUSTER, "fd00:10::/56", "198.19.0.5/16", "nope"]), max_size=2),
                 rules=st.lists(rule, max_size=3), state=st.sampled_from(["present", "present", "absent"]))
    args = data.draw(module_args_strategy(module_spec("secgroup_ensure"), hints, dict(cloud="minicloud")))
    glob_before = world.glob_groups()
    judge(minicloud, "secgroup_ensure", args, data.draw(st.booleans()))
    ours = set(g.id for name in world.fuzz_groups for g in world.cloud.sdk().network.security_groups(name=name))
    now = world.port_groups()
    for port, groups in world.groups.items():
        assert groups - ours <= now.get(port, set()), ("a port lost a group that is not the fuzzed one", args)
    entries = args.get("servers") if isinstance(args.get("servers"), list) else []
    glob_ids = set(s["id"] for s in world.glob_servers)
    for name, groups in world.glob_groups().items():
        if (groups - glob_before[name]) & ours:
            assert named_by(name, entries, destructive=False) or any(str(e) in glob_ids for e in entries), (
                "a server no entry named got the group", name, args)


@FUZZ
@given(data=st.data())
def test_fuzz_node_registration_audit(minicloud, world, data):
    names = [s["name"] for s in world.servers]
    hints = dict(servers=st.lists(st.sampled_from(names + [world.server_prefix + "-*", "fz-none-*"] + glob_entries(world)),
                                  max_size=3),
                 server_metadata=st.sampled_from([{}, {"cluster": "fz"}, {"x": ["y"]}]),
                 state=st.sampled_from(["audited", "cleaned"]))
    fixed = dict(cloud="minicloud", kubernetes=dict(kubeconfig=world.kubeconfig))
    args = data.draw(module_args_strategy(module_spec("node_registration_audit"), hints, fixed))
    # A real clean-up only where the draw names the fuzz servers: other tests' servers share the project.
    scoped = all(str(p).startswith(world.server_prefix) for p in (args.get("servers") or ["*"])) \
        if isinstance(args.get("servers"), list) else False
    check_mode = not scoped or data.draw(st.booleans())
    result, _writes = judge(minicloud, "node_registration_audit", args, check_mode)
    assert set(s["id"] for s in world.servers) <= world.server_ids(), ("a server that is a Node was deleted", args)
    for deleted in result.get("deleted") or []:
        assert named_by(deleted["name"], args.get("servers"), destructive=True), (
            "deleted a server no entry named or matched through '*'", deleted["name"], args)
    world.restore_glob_servers()


@FUZZ
@given(data=st.data())
def test_fuzz_cluster_pause_ack(minicloud, world, data):
    hints = dict(name=st.sampled_from([world.cluster, world.cluster, "fz-missing", "Bad_Name", ""]),
                 namespace=st.sampled_from(["default", "default", "kube-system", "Bad_NS"]),
                 scope=st.sampled_from(["move", "cluster"]), wait=st.booleans())
    args = data.draw(module_args_strategy(module_spec("cluster_pause_ack"), hints, dict(kubeconfig=world.kubeconfig)))
    judge(minicloud, "cluster_pause_ack", args, data.draw(st.booleans()))


@FUZZ
@given(data=st.data())
def test_fuzz_cluster_info(minicloud, world, data):
    hints = dict(name=st.sampled_from([world.cluster, "fz-missing", "Bad_Name"]),
                 namespace=st.sampled_from(["default", "Bad_NS", "fz-ns"]))
    # credentials beside the kubeconfig: a wrong key, half a pair, two kinds (never silently the kubeconfig's)
    beside = data.draw(st.sampled_from([{}, {}, {"api_key": "fz-wrong"}, {"username": "fz"},
                                        {"api_key": "fz-wrong", "username": "fz", "password": "fz"}]))
    args = data.draw(module_args_strategy(module_spec("cluster_info"), hints, dict(beside, kubeconfig=world.kubeconfig)))
    result, _writes = judge(minicloud, "cluster_info", args, data.draw(st.booleans()))
    assert minicloud.write_count() == 0  # it only reads
    assert not beside or result.get("failed"), (beside, result)


#: cluster values that name no cluster (an empty part, upper case): refused before any request
NO_CLUSTER = ["default/", "/", "Default/C1", "default-", "-c1"]


@FUZZ
@given(data=st.data())
def test_fuzz_resource_leak_audit(minicloud, world, data):
    """Always in check mode (the project is shared with other tests): nothing is written, and a cluster value
    that names no cluster is refused before any request."""
    cluster = st.sampled_from(["default/" + world.cluster, "default-" + world.cluster, "default/fz-gone"] + NO_CLUSTER)
    hints = dict(cluster=cluster, clusters=st.lists(cluster, max_size=2))
    args = data.draw(module_args_strategy(module_spec("resource_leak_audit"), hints, dict(cloud="minicloud")))
    result, _writes = judge(minicloud, "resource_leak_audit", args, check_mode=True)
    named = [args.get("cluster")] + (args.get("clusters") if isinstance(args.get("clusters"), list) else [])
    if any(value in NO_CLUSTER for value in named):
        assert result.get("failed") and result.get("api_calls") == 0, (args, result)


# -- failures after a write ---------------------------------------------------------------------------------------

def after_write_args(world, data):
    """(module, args) of a run that writes: a rule the fuzzed group lacks (with ``exclusive``, the group is read again
    after that write), or a repair of a route removed first."""
    fixed = dict(cloud="minicloud", timeout=data.draw(st.sampled_from([2, 3])), api_timeout=1)
    if data.draw(st.booleans()):
        rule = dict(protocol=data.draw(st.sampled_from(["tcp", "udp"])), port=data.draw(st.integers(1024, 65535)),
                    remote_ip_prefix=data.draw(st.sampled_from(["10.0.0.0/8", "192.0.2.0/24"])))
        args = dict(fixed, security_group=data.draw(st.sampled_from(world.fuzz_groups)), rules=[rule])
        if data.draw(st.booleans()):  # the group is read again before its deletes, after the rule's create
            args.update(exclusive=True, max_removal_share=1)
        if data.draw(st.booleans()):  # ports too: the reads of servers and ports come before any port write
            args["servers"] = data.draw(st.lists(st.sampled_from([s["name"] for s in world.servers]), min_size=1,
                                                 max_size=2))
        return "secgroup_ensure", args
    gone = data.draw(st.sampled_from(world.routes))
    world.cloud.api.set_routes(world.router, remove=[dict(zip(("destination", "nexthop"), gone.split("=")))])
    return "route_audit", dict(fixed, router=world.router, cluster_cidr=[CLUSTER], state="repaired",
                               nodes=[dict(n) for n in world.nodes])


@FUZZ_AFTER_WRITE
@given(data=st.data())
def test_fuzz_failures_after_a_write_say_changed_and_list_the_writes(minicloud, world, data):
    module, args = after_write_args(world, data)
    status = data.draw(st.sampled_from([503, 401]))
    minicloud.reset_counts()
    result, held = with_reads_failing_after_first_write(
        minicloud, ("network", "compute"), status,
        lambda: inprocess.run_module(module, args, env={"OS_CLIENT_CONFIG_FILE": str(minicloud.clouds_yaml)}))
    writes = minicloud.write_count()
    if result.get("failed"):
        assert not fuzz_spec.python_words(result.get("msg") or ""), (module, args, result.get("msg"))
    if result.get("failed") and writes:
        assert result.get("changed") is True, ("failed after %d write(s) but says changed false" % writes, module,
                                               args, status, result.get("msg"))
        listed = result.get("writes")
        assert isinstance(listed, list) and listed, ("failed after a write without listing it", module, args, status,
                                                     result.get("msg"))
        assert all(w.get("call") and w.get("outcome") in ("done", "unknown") for w in listed), listed
    assert held or not writes, ("a write went by the gate", module, args)
    if world.router_routes() != world.routes:
        world.cloud.api.set_routes(world.router, replace=[dict(zip(("destination", "nexthop"), r.split("=")))
                                                          for r in world.routes])
