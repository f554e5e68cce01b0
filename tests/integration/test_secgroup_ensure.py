# -*- coding: utf-8 -*-
"""secgroup_ensure against minicloud: real Neutron ports of servers seeded in real nova-api."""

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
