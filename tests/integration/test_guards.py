# -*- coding: utf-8 -*-
"""No input may turn a repair into an outage: the guards, against minicloud, each module run in-process.

Each test gives an input that looks harmless and once made a module destroy what serves (or write before
refusing, or answer in Python's words), and checks the refusal, its message, that nothing was written
(minicloud's request counts) and that what served still serves. The playbook path of every module is
tested in its own file; here the module's runner is what is tested.
"""

import time
import uuid

import pytest

CLUSTER = "198.19.0.0/16"


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:6])


def refused(result, *words):
    assert result.get("failed"), result
    for word in words:
        assert word in result["msg"], (word, result["msg"])
    return result


# -- route_audit: an empty or partial view of the nodes never removes the routes ----------------------------

def make_router(cloud, count):
    name = unique("gr")
    cloud.json("router", "create", name, "--network", unique("gnodes"))
    nodes = cloud.json("router", "nodes", name, "--count", count, "--prefix", unique("gn"), "--routes",
                       "--address-pairs")
    return name, nodes


def routes_of(cloud, router):
    return sorted("%s=%s" % (r["destination"], r["nexthop"]) for r in cloud.api.router(router)["routes"])


def node_args(nodes):
    return [{"name": n["name"], "pod_cidr": n["pod_cidr"], "address": n["address"]} for n in nodes]


def route_task(router, nodes, **args):
    task = dict(cloud="minicloud", router=router, cluster_cidr=[CLUSTER], nodes=node_args(nodes),
                state="repaired")
    task.update(args)
    return task


@pytest.mark.parametrize("check_mode", [False, True], ids=["real", "check"])
def test_route_audit_empty_node_list_removes_no_route(cloud, run_in_process, check_mode):
    router, nodes = make_router(cloud, 3)
    before = routes_of(cloud, router)
    cloud.reset_counts()
    result = refused(run_in_process("route_audit", route_task(router, []), check_mode=check_mode),
                     "refusing to repair", "3 of the 3 pod CIDRs", "node view is empty", "max_removal_share: 1")
    assert not result["changed"] and result["changes"] == []
    assert [f["kind"] for f in result["findings"]] == ["stale"] * 3  # the audit is still reported
    assert cloud.write_count() == 0 and routes_of(cloud, router) == before


def test_route_audit_partial_node_list_is_refused_and_the_override_removes(cloud, run_in_process):
    router, nodes = make_router(cloud, 3)
    before = routes_of(cloud, router)
    cloud.reset_counts()
    refused(run_in_process("route_audit", route_task(router, nodes[:1])), "2 of the 3 pod CIDRs",
            "more than max_removal_share 0.5")
    assert cloud.write_count() == 0 and routes_of(cloud, router) == before
    # One node of three really gone is a third: under the share, repaired as before.
    done = run_in_process("route_audit", route_task(router, nodes[:2]))
    assert not done.get("failed"), done["msg"]
    assert done["changed"] and routes_of(cloud, router) == sorted(
        "%s=%s" % (n["pod_cidr"], n["address"]) for n in nodes[:2])
    # The explicit override: the cluster really has no nodes any more.
    gone = run_in_process("route_audit", route_task(router, [], max_removal_share=1))
    assert not gone.get("failed"), gone["msg"]
    assert routes_of(cloud, router) == []


def test_route_audit_node_selector_matching_nothing_removes_no_route(cloud, run_in_process):
    router, nodes = make_router(cloud, 2)
    before = routes_of(cloud, router)
    cloud.reset_counts()
    task = route_task(router, [], node_selector="flightcontrol.test/none=true",
                      kubernetes={"kubeconfig": str(cloud.state_dir / "kubeconfig")})
    task.pop("nodes")  # read from the Kubernetes API
    result = refused(run_in_process("route_audit", task), "node view is empty", "the Kubernetes API")
    assert result["node_source"] == "kubernetes"
    assert cloud.write_count() == 0 and routes_of(cloud, router) == before


@pytest.mark.parametrize("state", ["audited", "repaired"])
def test_route_audit_cluster_cidr_covering_the_routers_subnet_is_refused(cloud, run_in_process, state):
    router, nodes = make_router(cloud, 2)
    cloud.api.set_routes(router, add=[{"destination": "10.180.0.128/25", "nexthop": nodes[0]["address"]}])
    before = routes_of(cloud, router)
    cloud.reset_counts()
    result = refused(run_in_process("route_audit", route_task(router, nodes, cluster_cidr=["10.0.0.0/8", CLUSTER],
                                                              state=state)),
                     "cluster_cidr is wider than the cluster's pod network", "10.180.0.0/24")
    assert not result["changed"]
    assert cloud.write_count() == 0 and routes_of(cloud, router) == before


# -- rollout_guard: a member never replaces itself ----------------------------------------------------------

def member_names(cloud, lb):
    pool = cloud.sdk().load_balancer
    return sorted(m.name for m in pool.members(lb["pool"]["id"]))


@pytest.mark.parametrize("replace, words", [
    ([{"old": "M0", "new": "M0"}], "are the same member"),
    ([{"old": "M0", "new": "A0"}], "are the same member"),  # a name and an address of one member
    ([{"old": "M0", "new": "M1"}, {"old": "M1", "new": "M2"}], "is the old member of replace[1]"),
    ([{"old": "M0", "new": "M2"}, {"old": "M0", "new": "M1"}], "both replace"),
], ids=["same-text", "name-and-address", "replacement-replaced", "old-twice"])
def test_rollout_guard_direct_refuses_self_referencing_pairs(cloud, run_in_process, shared_lb, replace, words):
    lb = shared_lb
    members = sorted(cloud.sdk().load_balancer.members(lb["pool"]["id"]), key=lambda m: m.name)
    names = dict(("M%d" % i, m.name) for i, m in enumerate(members))
    names.update(("A%d" % i, "%s:%s" % (m.address, m.protocol_port)) for i, m in enumerate(members))
    pairs = [dict((k, names[v]) for k, v in pair.items()) for pair in replace]
    before = member_names(cloud, lb)
    cloud.reset_counts()
    result = refused(run_in_process("rollout_guard", dict(
        cloud="minicloud", mode="direct", pool=lb["pool"]["name"], replace=pairs, timeout=20, poll_interval=0.5,
        member_timeout=5)), words, "nothing was changed")
    assert not result["changed"]
    assert cloud.write_count() == 0 and member_names(cloud, lb) == before


# -- secgroup_ensure: everything checked before the first write ---------------------------------------------

def groups_named(cloud, name):
    return list(cloud.sdk().network.security_groups(name=name))


def test_secgroup_ensure_unknown_remote_group_id_creates_nothing(cloud, run_in_process):
    name = unique("gsg")
    cloud.reset_counts()
    result = refused(run_in_process("secgroup_ensure", dict(
        cloud="minicloud", security_group=name, pod_cidr=[CLUSTER],
        rules=[{"protocol": "tcp", "port": 443, "remote_group": str(uuid.uuid4())}])),
        "remote_group", "no security group with that id", "nothing was changed")
    assert not result["changed"]
    assert cloud.write_count() == 0 and groups_named(cloud, name) == []


@pytest.mark.parametrize("args, words", [
    (dict(security_group=""), "security_group must not be empty or blank"),
    (dict(security_group="   "), "security_group must not be empty or blank"),
    (dict(security_group="g" * 256), "Neutron takes at most 255"),
    (dict(description="d" * 300), "description is 300 characters long"),
    (dict(exclusive=True, pod_cidr=None), "would remove every rule of the group"),
], ids=["empty-name", "blank-name", "long-name", "long-description", "exclusive-without-rules"])
def test_secgroup_ensure_refuses_before_any_request(cloud, run_in_process, args, words):
    task = dict(cloud="minicloud", security_group=unique("gsg"), pod_cidr=[CLUSTER])
    task.update(args)
    cloud.reset_counts()
    result = refused(run_in_process("secgroup_ensure", task), words)
    assert result["api_calls"] == 0 and cloud.write_count() == 0


def test_secgroup_ensure_exclusive_refuses_to_strip_most_of_a_group(cloud, run_in_process):
    name = unique("gsg")
    rules = [{"protocol": "tcp", "port": p, "remote_ip_prefix": "10.0.0.0/8"} for p in (22, 80, 443, 6443)]
    made = run_in_process("secgroup_ensure", dict(cloud="minicloud", security_group=name, rules=rules))
    assert not made.get("failed"), made["msg"]
    group_rules = len(groups_named(cloud, name)[0].security_group_rules)  # four plus Neutron's egress rules
    cloud.reset_counts()
    result = refused(run_in_process("secgroup_ensure", dict(
        cloud="minicloud", security_group=name, rules=rules[:1], exclusive=True)),
        "refusing exclusive", "of the group's %d rules" % group_rules, "max_removal_share: 1")
    assert cloud.write_count() == 0 and len(groups_named(cloud, name)[0].security_group_rules) == group_rules
    # Keeping most of the group (egress and three of the four) is under the share: done as before.
    kept = rules[:3] + [{"direction": "egress"}, {"direction": "egress", "ethertype": "IPv6"}]
    trimmed = run_in_process("secgroup_ensure", dict(cloud="minicloud", security_group=name, rules=kept,
                                                     exclusive=True))
    assert not trimmed.get("failed"), trimmed["msg"]
    assert [r["port_range_min"] for r in trimmed["rules_deleted"]] == [6443]


def test_secgroup_ensure_write_failing_halfway_says_what_was_done(cloud, run_in_process):
    name = unique("gsg")
    server = cloud.server(unique("gsrv"), network=unique("gsgnet"))
    # Neutron answers the port update with a terminal error (500): the group and its rules are made first.
    cloud.fault("network", "/v2.0/ports/*", 500, method="PUT")
    result = refused(run_in_process("secgroup_ensure", dict(
        cloud="minicloud", security_group=name, pod_cidr=[CLUSTER], servers=[server["name"]])),
        "a write failed halfway", "HTTP 500", "minicloud fault injection", "Made before it: the group created",
        "a re-run finishes the job")
    assert result["changed"] and result["security_group"]["created"]
    assert len(result["rules_created"]) == 3
    assert [n["what"] for n in result["not_done"]] == ["update_port"]
    cloud.clear_faults()
    rerun = run_in_process("secgroup_ensure", dict(cloud="minicloud", security_group=name, pod_cidr=[CLUSTER],
                                                   servers=[server["name"]]))
    assert not rerun.get("failed"), rerun["msg"]
    assert rerun["rules_created"] == [] and len(rerun["ports_updated"]) == 1


# -- node_registration_audit: never another cluster's server ------------------------------------------------

def test_node_registration_audit_never_deletes_a_server_with_another_clusters_mark(cloud, run_in_process):
    prefix = unique("greg")
    made = cloud.json("server", "create", prefix, "--network", "regnet", "--count", 3)
    compute = cloud.sdk().compute
    for server, cluster in zip(made, ("prod", "prod", "staging")):
        compute.set_server_metadata(server["id"], cluster=cluster)
    for server in made[:2]:
        cloud.api.create_node(server["name"], "10.%d.0.0/24" % (100 + int(server["name"].rsplit("-", 1)[1])),
                              server["ports"][0]["ip_address"])
    try:
        cloud.reset_counts()
        result = run_in_process("node_registration_audit", dict(
            cloud="minicloud", servers=[prefix + "-*"], registration_timeout=0, state="cleaned",
            kubernetes={"kubeconfig": str(cloud.state_dir / "kubeconfig")}))
        assert not result.get("failed"), result["msg"]
        assert [s["name"] for s in result["unregistered"]] == [made[2]["name"]]
        assert result["deleted"] == [] and not result["changed"]
        assert "carries cluster=staging" in result["not_deleted"][0]["reason"]
        assert cloud.write_count() == 0
    finally:
        for server in made[:2]:
            cloud.api.delete_node(server["name"])


# -- numbers, timing contradictions and TLS: our words, before any request ----------------------------------

@pytest.mark.parametrize("module, args, words", [
    ("lb_member_wait", dict(pool="p", poll_interval=float("nan")), "poll_interval must be a finite number"),
    ("lb_member_wait", dict(pool="p", timeout=10 ** 30), "timeout is out of range"),
    ("lb_member_wait", dict(pool="p", poll_interval=float("inf")), "poll_interval must be a finite number"),
    ("route_audit", dict(router="r", cluster_cidr=[CLUSTER], nodes=[], limit_warning_ratio=float("-inf")),
     "limit_warning_ratio must be a finite number"),
    ("route_audit", dict(router="r", cluster_cidr=[CLUSTER], nodes=[], max_removal_share=2),
     "max_removal_share must be at most 1"),
    ("node_registration_audit", dict(servers=["x-*"], registration_timeout=10 ** 12),
     "registration_timeout is out of range"),
    ("node_registration_audit", dict(servers=["x-*"], registration_timeout=40 * 24 * 3600),
     "registration_timeout must be at most 2592000 seconds"),
    ("rollout_guard", dict(mode="direct", pool="p", replace=[{"old": "a", "new": "b"}], member_timeout=-1),
     "member_timeout must be zero or more seconds"),
    ("secgroup_ensure", dict(security_group="g", rules=[{"protocol": "tcp", "port": 10 ** 20}]),
     "rules[0].port is out of range"),
    ("cluster_pause_ack", dict(name="c", quiet_period=float("nan")), "quiet_period must be a finite number"),
    ("cluster_pause_ack", dict(name="c", poll_interval=0), "poll_interval must be more than zero seconds"),
    ("cluster_info", dict(name="c", timeout=-5), "timeout must be 1 or more seconds"),
    ("resource_leak_audit", dict(timeout=0), "timeout must be 1 or more seconds, got 0"),
    ("cluster_info", dict(name="Not_A_Name"), "is no valid Kubernetes name"),
    ("rollout_guard", dict(cluster="c", hook_name="bad hook!"), "hook_name 'bad hook!' is no valid Kubernetes name"),
    ("lb_member_wait", dict(pool="p", cloud=["minicloud"]), "cloud must be the name of a cloud in clouds.yaml"),
    ("secgroup_ensure", dict(security_group="g", cloud={"auth": ["x"]}), "auth of the cloud dict has the wrong type"),
    ("route_audit", dict(router="r", cluster_cidr=[CLUSTER], kubernetes={"kubeconfig": ["x"]}),
     "kubeconfig must be the path of a kubeconfig file or a kubeconfig as a dict, got a list"),
])
def test_numbers_and_names_are_refused_in_our_words_before_any_request(minicloud, run_in_process, module, args,
                                                                       words):
    task = dict(args)
    if module in ("cluster_pause_ack", "cluster_info"):
        task["kubeconfig"] = str(minicloud.state_dir / "kubeconfig")
    else:
        task.setdefault("cloud", "minicloud")
    minicloud.reset_counts()
    result = refused(run_in_process(module, task), words)
    assert result["api_calls"] == 0 and minicloud.write_count() == 0


def test_cluster_pause_ack_quiet_period_longer_than_timeout_writes_no_pause(cloud, run_in_process):
    name = unique("gpause")
    cloud.api.create_capi_cluster(name)
    cloud.reset_counts()
    result = refused(run_in_process("cluster_pause_ack", dict(
        kubeconfig=str(cloud.state_dir / "kubeconfig"), name=name, quiet_period=60, timeout=30)),
        "quiet_period (60.0 s) is longer than timeout (30 s)", "nothing was changed")
    assert not result["changed"] and result["api_calls"] == 0 and cloud.write_count() == 0
    clusters = dict((c["name"], c) for c in cloud.api.list_capi_clusters())
    assert not clusters[name].get("paused")
    cloud.api.delete_capi_cluster(name)


def test_kubernetes_ca_that_does_not_verify_fails_at_once_as_tls(cloud, run_in_process, tmp_path):
    ca = tmp_path / "other-ca.pem"
    # A well-formed CA that did not sign minicloud's certificate: the kubeconfig's own CA is replaced.
    ca.write_text(open(__file__.replace("test_guards.py", "fixtures/other-ca.pem")).read())
    started = time.monotonic()
    result = refused(run_in_process("cluster_info", dict(
        kubeconfig=str(cloud.state_dir / "kubeconfig"), name="anything", ca_cert=str(ca))),
        "TLS verification of the Kubernetes API failed", "CERTIFICATE_VERIFY_FAILED", "ca_cert")
    assert result["retried_faults"] == [] and result["api_calls"] == 1
    assert time.monotonic() - started < 8  # the unreachable-API wait is 10 s; a TLS failure does not wait
