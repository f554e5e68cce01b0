# -*- coding: utf-8 -*-
"""secgroup_ensure against minicloud: real Neutron ports of servers seeded in real nova-api."""

import threading
import uuid

import pytest

from races import with_concurrent_change

MODULE = "flightcontrol.openstack.secgroup_ensure"
POD = "198.19.0.0/16"


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:6])


@pytest.fixture(scope="module")
def conn(minicloud):
    return minicloud.sdk()


def port_groups(conn, server_id):
    return dict((p.id, set(p.security_group_ids or [])) for p in conn.network.ports(device_id=server_id))


def group_rules(conn, group_id):
    return list(conn.network.security_group_rules(security_group_id=group_id))


def pod_keys(rules, cidr=POD):
    return sorted(r.protocol for r in rules if r.remote_ip_prefix == cidr and r.direction == "ingress")


def run_ok(run_module, args, **kwargs):
    run = run_module(MODULE, dict(args, cloud="minicloud"), **kwargs)
    assert not run.result.get("failed"), run.result.get("msg") or run.output
    return run.result


def run_failed(run_module, args, **kwargs):
    run = run_module(MODULE, dict(args, cloud="minicloud"), **kwargs)
    assert run.result.get("failed"), run.result
    return run.result


def test_fresh_group_rules_and_every_port_then_idempotent(cloud, conn, run_module):
    name = unique("fresh")
    servers = [cloud.server(unique("node")), cloud.server(unique("node"))]
    cloud.requests(reset=True)
    result = run_ok(run_module, dict(security_group=name, description="pods", pod_cidr=[POD],
                                     servers=[s["name"] for s in servers]), diff=True, playbook=True)
    assert result["changed"] and result["security_group"]["created"]
    group = conn.network.find_security_group(name)
    assert group.description == "pods"
    assert pod_keys(group_rules(conn, group.id)) == ["icmp", "tcp", "udp"]
    assert len(result["rules_created"]) == 3
    for server in servers:
        assert all(group.id in groups for groups in port_groups(conn, server["id"]).values())
    assert sorted(p["server"] for p in result["ports_updated"]) == sorted(s["name"] for s in servers)
    assert "diff" in result and result["diff"]["after"]["ports"]
    writes = cloud.writes()
    # One group create, three rule creates, one port update per port: one write per change.
    assert sum(writes["POST"].values()) == 4 and sum(writes["PUT"].values()) == 2, writes

    cloud.requests(reset=True)
    again = run_ok(run_module, dict(security_group=name, pod_cidr=[POD], servers=[s["name"] for s in servers]))
    assert not again["changed"]
    assert again["rules_created"] == [] and again["ports_updated"] == []
    assert len(again["rules_unchanged"]) == 3
    assert cloud.writes() == {} and cloud.writes("compute") == {}


def test_partially_present_rules_and_numbers_equal_names(cloud, conn, run_module):
    name = unique("partial")
    group = conn.network.create_security_group(name=name)
    conn.network.create_security_group_rule(security_group_id=group.id, direction="ingress", ethertype="IPv4",
                                            protocol="6", remote_ip_prefix=POD)
    result = run_ok(run_module, dict(security_group=name, pod_cidr=[POD]))
    assert result["changed"] and not result["security_group"]["created"]
    assert sorted(r["protocol"] for r in result["rules_created"]) == ["icmp", "udp"]
    assert [r["protocol"] for r in result["rules_unchanged"]] == ["tcp"]
    # Neutron keeps the protocol as it was written: "6" is the tcp rule, no second one was made.
    assert pod_keys(group_rules(conn, group.id)) == ["6", "icmp", "udp"]


def test_server_with_two_ports_where_one_lacks_the_group(cloud, conn, run_module):
    name = unique("twoport")
    group = conn.network.create_security_group(name=name)
    server = cloud.server(unique("node"), ports=2)
    first, second = [p["id"] for p in server["ports"]]
    have = port_groups(conn, server["id"])
    conn.network.update_port(first, security_groups=sorted(have[first] | {group.id}))
    # Nova's merged view says all is well.
    assert name in set(g["name"] for g in conn.compute.get_server(server["id"]).security_groups)
    result = run_ok(run_module, dict(security_group=name, servers=[server["id"]]))
    assert [p["port"] for p in result["ports_updated"]] == [second]
    after = port_groups(conn, server["id"])
    assert group.id in after[first] and group.id in after[second]
    assert after[second] - {group.id} == have[second]  # the port's other groups are kept


def test_rule_created_by_someone_else_meanwhile_is_success(cloud, conn, run_module):
    """The module's rule create is held back by the cloud; another client creates the same rule
    meanwhile; Neutron answers the module's create with 409 SecurityGroupRuleExists."""
    name = unique("race409")
    group = conn.network.create_security_group(name=name)

    def concurrent_create():
        return cloud.sdk().network.create_security_group_rule(
            security_group_id=group.id, direction="ingress", ethertype="IPv4", protocol="tcp", remote_ip_prefix=POD)

    result, other_rule = with_concurrent_change(
        cloud, "network", "POST", "/v2.0/security-group-rules",
        lambda: run_ok(run_module, dict(security_group=name, pod_cidr=[POD]), playbook=True), concurrent_create)
    assert [c["kind"] for c in result["conflicts"]] == ["rule_exists"]
    assert sorted(r["protocol"] for r in result["rules_created"]) == ["icmp", "udp"]
    rules = group_rules(conn, group.id)
    assert pod_keys(rules) == ["icmp", "tcp", "udp"]
    assert other_rule.id in set(r.id for r in rules)


def test_port_changed_concurrently_is_read_again_and_not_overwritten(cloud, conn, run_module):
    """The module's port update is held back; another client adds a group to the port meanwhile;
    the module's If-Match gets 412, it reads the port again and keeps the other client's group."""
    name = unique("race412")
    group = conn.network.create_security_group(name=name)
    other_group = conn.network.create_security_group(name=unique("other"))
    server = cloud.server(unique("node"))
    port_id = server["ports"][0]["id"]

    def concurrent_update():
        other = cloud.sdk()
        groups = set(other.network.get_port(port_id).security_group_ids) | {other_group.id}
        return other.network.update_port(port_id, security_groups=sorted(groups))

    result, updated = with_concurrent_change(
        cloud, "network", "PUT", "/v2.0/ports/*",
        lambda: run_ok(run_module, dict(security_group=name, servers=[server["name"]]), playbook=True),
        concurrent_update)
    assert other_group.id in updated.security_group_ids  # the other client's change went in first
    assert [c["kind"] for c in result["conflicts"]] == ["port_changed"]
    (update,) = result["ports_updated"]
    assert update["attempts"] == 2
    final = port_groups(conn, server["id"])[port_id]
    assert {group.id, other_group.id} <= final


def test_port_without_port_security_fails_with_no_write_unless_skipped(cloud, conn, run_module):
    name = unique("noportsec")
    normal = cloud.server(unique("node"))
    bare = cloud.server(unique("bare"), port_security=False)
    cloud.requests(reset=True)
    failed = run_failed(run_module, dict(security_group=name, pod_cidr=[POD], servers=[normal["name"], bare["name"]]))
    assert "port security is disabled" in failed["msg"] and bare["ports"][0]["id"] in failed["msg"]
    assert cloud.writes() == {}
    assert conn.network.find_security_group(name) is None

    result = run_ok(run_module, dict(security_group=name, pod_cidr=[POD], servers=[normal["name"], bare["name"]],
                                     skip_ports_without_port_security=True))
    assert [p["port"] for p in result["ports_skipped"]] == [bare["ports"][0]["id"]]
    assert [p["port"] for p in result["ports_updated"]] == [normal["ports"][0]["id"]]


def test_exclusive_removes_other_rules_of_this_group_only(cloud, conn, run_module):
    name = unique("exclusive")
    group = conn.network.create_security_group(name=name)
    bystander = conn.network.create_security_group(name=unique("bystander"))
    stray = conn.network.create_security_group_rule(security_group_id=group.id, direction="ingress",
                                                    ethertype="IPv4", protocol="tcp", port_range_min=22,
                                                    port_range_max=22)
    conn.network.create_security_group_rule(security_group_id=bystander.id, direction="ingress",
                                            ethertype="IPv4", protocol="tcp", port_range_min=22, port_range_max=22)
    bystander_before = sorted(r.id for r in group_rules(conn, bystander.id))
    result = run_ok(run_module, dict(security_group=name, pod_cidr=[POD], exclusive=True,
                                     rules=[dict(direction="egress"), dict(direction="egress", ethertype="IPv6")]))
    assert stray.id in [r["id"] for r in result["rules_deleted"]]
    rules = group_rules(conn, group.id)
    assert sorted((r.direction, r.ether_type, r.protocol) for r in rules) == sorted(
        [("egress", "IPv4", None), ("egress", "IPv6", None),
         ("ingress", "IPv4", "icmp"), ("ingress", "IPv4", "tcp"), ("ingress", "IPv4", "udp")])
    assert sorted(r.id for r in group_rules(conn, bystander.id)) == bystander_before
    again = run_ok(run_module, dict(security_group=name, pod_cidr=[POD], exclusive=True,
                                    rules=[dict(direction="egress"), dict(direction="egress", ethertype="IPv6")]))
    assert not again["changed"]


def test_absent_removes_listed_rules_and_memberships(cloud, conn, run_module):
    name = unique("absent")
    server = cloud.server(unique("node"), ports=2)
    run_ok(run_module, dict(security_group=name, pod_cidr=[POD], rules=[dict(protocol="tcp", port=6443)],
                            servers=[server["name"]]))
    group = conn.network.find_security_group(name)
    result = run_ok(run_module, dict(security_group=name, pod_cidr=[POD], servers=[server["name"]], state="absent"))
    assert result["changed"] and len(result["rules_deleted"]) == 3 and len(result["ports_updated"]) == 2
    rules = group_rules(conn, group.id)
    assert pod_keys(rules) == [] and [r.port_range_min for r in rules if r.protocol == "tcp"] == [6443]
    assert not any(group.id in g for g in port_groups(conn, server["id"]).values())
    again = run_ok(run_module, dict(security_group=name, pod_cidr=[POD], servers=[server["name"]], state="absent"))
    assert not again["changed"]


@pytest.mark.parametrize("args, message", [
    (dict(pod_cidr=["198.19.0.0/33"]), "not a valid CIDR"),
    (dict(rules=[dict(protocol="icmp", port_range_max=3)]), "needs an ICMP type"),
    (dict(rules=[dict(protocol="gre", port=80)]), "takes no port range"),
    (dict(pod_cidr=[POD], servers=["no-such-server-xyz"]), "no-such-server-xyz not found"),
])
def test_bad_input_fails_with_no_write(cloud, conn, run_module, args, message):
    name = unique("bad")
    cloud.server(unique("node"))
    cloud.requests(reset=True)
    failed = run_failed(run_module, dict(args, security_group=name))
    assert message in failed["msg"]
    assert cloud.writes() == {} and cloud.writes("compute") == {}
    assert conn.network.find_security_group(name) is None


def test_check_mode_makes_no_write_at_all(cloud, conn, run_module):
    name = unique("check")
    server = cloud.server(unique("node"), ports=2)
    cloud.requests(reset=True)
    result = run_ok(run_module, dict(security_group=name, pod_cidr=[POD], servers=[server["name"]]),
                    check_mode=True, diff=True)
    assert result["changed"] and result["security_group"]["created"] and result["security_group"]["id"] is None
    assert len(result["rules_created"]) == 3 and len(result["ports_updated"]) == 2
    assert cloud.writes() == {} and cloud.writes("compute") == {}
    assert conn.network.find_security_group(name) is None
    # An existing group with drift: still no write.
    run_ok(run_module, dict(security_group=name, pod_cidr=[POD]))
    cloud.requests(reset=True)
    drift = run_ok(run_module, dict(security_group=name, pod_cidr=[POD], servers=[server["name"]]), check_mode=True)
    assert drift["changed"] and drift["rules_created"] == [] and len(drift["ports_updated"]) == 2
    assert cloud.writes() == {}


def tcp_rule(conn, group_id, port):
    return conn.network.create_security_group_rule(security_group_id=group_id, direction="ingress", protocol="tcp",
                                                   port_range_min=port, port_range_max=port, remote_ip_prefix=POD)


def tcp_ports(conn, group_id):
    return sorted(r.port_range_min for r in group_rules(conn, group_id) if r.protocol == "tcp")


def a_group_with_rules(conn, ports):
    """A group (with Neutron's two default egress rules) and its tcp ingress rules from POD on ``ports``."""
    group = conn.network.create_security_group(name=unique("moving"))
    return group, dict((port, tcp_rule(conn, group.id, port)) for port in ports)


def test_exclusive_removal_guard_is_judged_on_the_group_as_it_is_at_the_deletes(cloud, conn, run_module):
    # The plan reads 2 egress + 3 wanted + 1 other rule: removing 3 of 6 is within max_removal_share 0.5. While
    # the create of a fourth wanted rule is held, another client removes the 3 wanted rules: removing 3 of what is
    # left (4) is not, and the deletes must be refused on that fresh state.
    group, rules = a_group_with_rules(conn, [1001, 1002, 1003, 2000])
    wanted = [dict(protocol="tcp", port=p, remote_ip_prefix=POD) for p in (1001, 1002, 1003, 1004)]
    result, _changed = with_concurrent_change(
        cloud, "network", "POST", "/v2.0/security-group-rules",
        lambda: run_module(MODULE, dict(cloud="minicloud", security_group=group.name, rules=wanted, exclusive=True,
                                        max_removal_share=0.5), playbook=True).result,
        lambda: [conn.network.delete_security_group_rule(rules[p]) for p in (1001, 1002, 1003)])
    assert result["failed"] is True
    assert "on the group as it is now" in result["msg"] and "refusing exclusive" in result["msg"], result["msg"]
    assert result["changed"] is True and [r["port_range_min"] for r in result["rules_created"]] == [1004]
    assert tcp_ports(conn, group.id) == [1004, 2000]  # nothing removed: the other rule and the egress rules stay
    assert len([r for r in group_rules(conn, group.id) if r.direction == "egress"]) == 2


def test_exclusive_never_removes_a_rule_added_after_its_read(cloud, conn, run_module):
    group, rules = a_group_with_rules(conn, [1001, 2000])
    wanted = [dict(protocol="tcp", port=p, remote_ip_prefix=POD) for p in (1001, 1004)]
    result, added = with_concurrent_change(
        cloud, "network", "POST", "/v2.0/security-group-rules",
        lambda: run_module(MODULE, dict(cloud="minicloud", security_group=group.name, rules=wanted, exclusive=True,
                                        max_removal_share=1), playbook=True).result,
        lambda: tcp_rule(conn, group.id, 3000))
    assert result["failed"] is False, result["msg"]
    assert sorted(r["port_range_min"] for r in result["rules_deleted"] if r["protocol"] == "tcp") == [2000]
    assert tcp_ports(conn, group.id) == [1001, 1004, 3000], "the rule added during the run is not the run's to remove"
    assert any(r.id == added.id for r in group_rules(conn, group.id))


def test_a_failing_read_after_a_rule_was_created_says_changed_and_what_was_made(cloud, conn, run_module):
    group, _rules = a_group_with_rules(conn, [2000])
    cloud.fault("network", "/v2.0/security-groups/*", 503)  # the read of the group before its deletes
    run = run_module(MODULE, dict(cloud="minicloud", security_group=group.name, api_timeout=2, timeout=6,
                                  rules=[dict(protocol="tcp", port=1004, remote_ip_prefix=POD)], exclusive=True,
                                  max_removal_share=1), playbook=True)
    result = run.result
    assert result["failed"] is True and result["changed"] is True, result
    assert [r["port_range_min"] for r in result["rules_created"]] == [1004]
    assert [w["call"] for w in result["writes"]] == ["create security group rule"]
    assert len(result["not_done"]) == 3  # the three deletes
    assert tcp_ports(conn, group.id) == [1004, 2000]
    assert "Traceback" not in run.output


def test_two_runs_creating_one_group_at_once_leave_one_group(cloud, conn, run_module):
    name = unique("twins")
    outcomes = {}

    def run(key):
        outcomes[key] = run_module(MODULE, dict(cloud="minicloud", security_group=name, pod_cidr=[POD]),
                                   playbook=True).result

    gate = cloud.api.add_fault("network", method="POST", path="/v2.0/security-groups", gate=True, count=2)
    threads = [threading.Thread(target=run, args=(key,), daemon=True) for key in ("a", "b")]
    try:
        for thread in threads:
            thread.start()
        cloud.api.wait_held(gate["id"], 2, timeout=120)  # both runs found no group and sent their create
    finally:
        cloud.api.release_fault(gate["id"])
    for thread in threads:
        thread.join(180)
    results = [outcomes["a"], outcomes["b"]]
    assert not any(r["failed"] for r in results), [r.get("msg") for r in results]
    groups = list(conn.network.security_groups(name=name))
    assert len(groups) == 1, "%d groups named %s" % (len(groups), name)
    assert [r["security_group"]["id"] for r in results] == [groups[0].id] * 2
    twins = [c for r in results for c in r["conflicts"] if c["kind"] == "group_created_concurrently"]
    assert any("was deleted and the older one" in c["detail"] for c in twins), twins
    assert sorted(r["security_group"]["created"] for r in results) == [False, True]
    assert pod_keys(group_rules(conn, groups[0].id)) == ["icmp", "tcp", "udp"]
    again = run_ok(run_module, dict(security_group=name, pod_cidr=[POD]))
    assert again["changed"] is False


def test_a_server_name_with_a_character_class_means_that_server_only(cloud, conn, run_module):
    """``servers: ["<p>-gm[1]"]`` with servers ``<p>-gm[1]`` and ``<p>-gm1``: the group goes on the ports of
    ``<p>-gm[1]``, never on those of ``<p>-gm1`` (no '*': a name, not a pattern)."""
    prefix = unique("sgglob")
    named, other = cloud.server(prefix + "-gm[1]"), cloud.server(prefix + "-gm1")
    group = unique("sg-glob")
    result = run_ok(run_module, dict(security_group=group, pod_cidr=[POD], servers=[prefix + "-gm[1]"]))
    assert [p["server"] for p in result["ports_updated"]] == [named["name"]]
    group_id = conn.network.find_security_group(group).id
    assert all(group_id in groups for groups in port_groups(conn, named["id"]).values())
    assert not any(group_id in groups for groups in port_groups(conn, other["id"]).values())
    missing = run_module(MODULE, dict(cloud="minicloud", security_group=group, pod_cidr=[POD],
                                      servers=[prefix + "-gm[2]"])).result
    assert missing.get("failed") and "%s-gm[2]" % prefix in missing["msg"] and "not found" in missing["msg"]


def test_a_server_name_with_a_star_means_that_server_only(cloud, conn, run_module):
    """``servers: ["<p>-a*b"]`` with servers ``<p>-a*b`` and ``<p>-aXb``: the entry is exactly the first server's
    name, so it means that server only, not the pattern that would also take ``<p>-aXb``."""
    prefix = unique("sgstar")
    named, other = cloud.server(prefix + "-a*b"), cloud.server(prefix + "-aXb")
    group = unique("sg-star")
    result = run_ok(run_module, dict(security_group=group, pod_cidr=[POD], servers=[prefix + "-a*b"]))
    assert [p["server"] for p in result["ports_updated"]] == [named["name"]]
    group_id = conn.network.find_security_group(group).id
    assert all(group_id in groups for groups in port_groups(conn, named["id"]).values())
    assert not any(group_id in groups for groups in port_groups(conn, other["id"]).values())
    both = run_ok(run_module, dict(security_group=group, pod_cidr=[POD], servers=[prefix + "-a*"]))
    assert [p["server"] for p in both["ports_updated"]] == [other["name"]]
