# -*- coding: utf-8 -*-

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import PlanError, ResolveError
from ansible_collections.flightcontrol.openstack.plugins.module_utils.secgroup_ensure import plan as sr

GROUP = "11111111-1111-1111-1111-111111111111"
OTHER = "22222222-2222-2222-2222-222222222222"


def neutron_rule(rule_id="r1", **fields):
    data = dict(id=rule_id, direction="ingress", ethertype="IPv4", protocol=None, port_range_min=None,
                port_range_max=None, remote_ip_prefix=None, remote_group_id=None, remote_address_group_id=None,
                description="")
    data.update(fields)
    return data


def key(**spec):
    return sr.normalize_rule(spec).key


# -- Neutron's duplicate semantics ----------------------------------------------------------------

def test_protocol_name_equals_number():
    assert key(protocol="tcp", remote_ip_prefix="10.0.0.0/8") == key(protocol="6", remote_ip_prefix="10.0.0.0/8")
    assert key(protocol="TCP") == key(protocol="6")


def test_ipv6_icmp_names_and_number_one_are_one_protocol():
    keys = set(key(protocol=p, ethertype="IPv6") for p in ("icmp", "icmpv6", "ipv6-icmp", "58", "1"))
    assert len(keys) == 1
    assert key(protocol="icmp") != key(protocol="icmp", ethertype="IPv6")


def test_any_address_equals_no_prefix():
    assert key(remote_ip_prefix="0.0.0.0/0") == key()
    assert key(remote_ip_prefix="::/0", ethertype="IPv6") == key(ethertype="IPv6")


def test_full_port_range_equals_no_range():
    assert key(protocol="tcp", port_range_min=1, port_range_max=65535) == key(protocol="tcp")
    assert key(protocol="tcp", port=22) == key(protocol="tcp", port_range_min=22, port_range_max=22)


def test_description_is_not_compared_and_prefix_in_network_form():
    assert key(protocol="udp", remote_ip_prefix="10.1.2.3/8", description="a") == \
        key(protocol="udp", remote_ip_prefix="10.0.0.0/8", description="b")


def test_any_protocol():
    assert key(protocol="any") == key() == key(protocol=None)
    assert key(protocol="0") != key()  # Neutron: 0 is a protocol (hopopt), not "any"


def test_ethertype_follows_prefix_family():
    assert sr.normalize_rule(dict(remote_ip_prefix="fd00::/64")).ethertype == "IPv6"


def test_existing_rule_from_neutron_matches_spec():
    stored = sr.rule_from_neutron(neutron_rule(protocol="6", port_range_min=1, port_range_max=65535,
                                               remote_ip_prefix="198.19.0.0/16"))
    assert stored.key == key(protocol="tcp", remote_ip_prefix="198.19.0.0/16")
    assert stored.id == "r1"


@pytest.mark.parametrize("spec, message", [
    (dict(remote_ip_prefix="10.0.0.0/33"), "not a valid CIDR"),
    (dict(remote_ip_prefix="banana"), "not a valid CIDR"),
    (dict(remote_ip_prefix="10.0.0.0/8", ethertype="IPv6"), "IPv4 prefix but the rule's ethertype is IPv6"),
    (dict(port_range_min=80, port_range_max=80), "needs a protocol"),
    (dict(protocol="gre", port=80), "takes no port range"),
    (dict(protocol="tcp", port_range_min=90, port_range_max=80), "port_range_min <= port_range_max"),
    (dict(protocol="tcp", port_range_min=80), "both given"),
    (dict(protocol="tcp", port=0), "port 0"),
    (dict(protocol="udp", port=70000), "1-65535"),
    (dict(protocol="icmp", port_range_min=300), "outside 0-255"),
    (dict(protocol="icmp", port_range_max=3), "needs an ICMP type"),
    (dict(protocol="ipv6-icmp", ethertype="IPv4"), "IPv6 only"),
    (dict(protocol="bogus"), "neither a known protocol"),
    (dict(protocol="300"), "outside 0-255"),
    (dict(protocol="tcp", port=1, port_range_min=1, port_range_max=2), "either port or"),
    (dict(remote_ip_prefix="10.0.0.0/8", remote_group=GROUP), "either remote_ip_prefix or remote_group"),
    (dict(remote_group="web"), "not a security group id nor a name found"),
    (dict(direction="sideways"), "direction"),
])
def test_rules_neutron_would_reject(spec, message):
    with pytest.raises(sr.RuleError, match=message):
        sr.normalize_rule(spec)


def test_remote_group_by_name_or_id():
    assert sr.normalize_rule(dict(remote_group="web"), {"web": GROUP}).remote_group_id == GROUP
    assert sr.normalize_rule(dict(remote_group=GROUP.upper().replace("-", ""))).remote_group_id == GROUP


def test_to_api_body():
    rule = sr.normalize_rule(dict(protocol="6", port=6443, remote_ip_prefix="10.180.0.1/16", description="api"))
    assert rule.to_api(GROUP) == dict(security_group_id=GROUP, direction="ingress", ethertype="IPv4",
                                      protocol="tcp", port_range_min=6443, port_range_max=6443,
                                      remote_ip_prefix="10.180.0.0/16", description="api")


# -- pod CIDR shortcut ----------------------------------------------------------------------------

def test_pod_cidr_ipv4_and_ipv6():
    rules = sr.pod_cidr_rules(["198.19.0.0/16", "fd00:10::/56"])
    labels = [r.label() for r in rules]
    assert labels == [
        "ingress IPv4 tcp from 198.19.0.0/16", "ingress IPv4 udp from 198.19.0.0/16",
        "ingress IPv4 icmp from 198.19.0.0/16", "ingress IPv6 tcp from fd00:10::/56",
        "ingress IPv6 udp from fd00:10::/56", "ingress IPv6 ipv6-icmp from fd00:10::/56",
    ]
    assert rules[5].to_api(GROUP)["protocol"] == "ipv6-icmp"


def test_pod_cidr_malformed():
    with pytest.raises(sr.RuleError, match="pod_cidr '198.19.0.0/40'"):
        sr.pod_cidr_rules(["198.19.0.0/40"])


# -- rule plans -----------------------------------------------------------------------------------

def test_plan_partially_present():
    wanted = sr.pod_cidr_rules(["198.19.0.0/16"])
    existing = [sr.rule_from_neutron(neutron_rule("r-tcp", protocol="tcp", remote_ip_prefix="198.19.0.0/16")),
                sr.rule_from_neutron(neutron_rule("r-egress", direction="egress"))]
    plan = sr.plan_rules(wanted, existing)
    assert [r.label() for r in plan.create] == ["ingress IPv4 udp from 198.19.0.0/16",
                                                "ingress IPv4 icmp from 198.19.0.0/16"]
    assert [r.id for r in plan.present] == ["r-tcp"] and plan.delete == []
    exclusive = sr.plan_rules(wanted, existing, exclusive=True)
    assert [r.id for r in exclusive.delete] == ["r-egress"]
    absent = sr.plan_rules(wanted, existing, state="absent")
    assert [r.id for r in absent.delete] == ["r-tcp"] and absent.create == []


def test_plan_dedupes_wanted_rules():
    wanted = [sr.normalize_rule(dict(protocol="tcp")), sr.normalize_rule(dict(protocol="6"))]
    assert len(sr.plan_rules(wanted, []).create) == 1


RULE_SPECS = st.fixed_dictionaries({
    "direction": st.sampled_from(["ingress", "egress"]),
    "protocol": st.sampled_from([None, "tcp", "6", "udp", "17", "icmp", "1", "any"]),
    "remote_ip_prefix": st.sampled_from([None, "0.0.0.0/0", "10.0.0.0/8", "10.1.2.3/8", "198.19.0.0/16"]),
})


@settings(max_examples=200, deadline=None)
@given(st.lists(RULE_SPECS, max_size=8), st.lists(RULE_SPECS, max_size=8), st.booleans())
def test_plan_reaches_the_wanted_set_and_is_idempotent(wanted_specs, existing_specs, exclusive):
    wanted = [sr.normalize_rule(s) for s in wanted_specs]
    existing = sr.dedupe([sr.normalize_rule(s) for s in existing_specs])  # Neutron holds no duplicates
    for i, rule in enumerate(existing):
        rule.id = "r%d" % i
    plan = sr.plan_rules(wanted, existing, exclusive=exclusive)
    deleted = set(id(r) for r in plan.delete)
    after = [r for r in existing if id(r) not in deleted] + plan.create
    keys_after = [r.key for r in after]
    assert len(keys_after) == len(set(keys_after)), "a create would be a duplicate (409)"
    assert set(r.key for r in wanted) <= set(keys_after)
    if exclusive:
        assert set(keys_after) == set(r.key for r in wanted)
    else:
        assert plan.delete == []
    again = sr.plan_rules(wanted, after, exclusive=exclusive)
    assert again.create == [] and again.delete == []
    gone = sr.plan_rules(wanted, after, state="absent")
    remaining = [r for r in after if r not in gone.delete]
    assert not set(r.key for r in remaining) & set(r.key for r in wanted)


# -- servers and ports ----------------------------------------------------------------------------

SERVERS = [dict(id="00000000-0000-0000-0000-00000000000%d" % i, name=n)
           for i, n in enumerate(["node-1", "node-2", "bastion", "dup", "dup"])]


def test_select_servers_by_id_name_and_pattern():
    chosen, missing = sr.select_servers(SERVERS, ["node-*", SERVERS[2]["id"], "nope", "node-1"])
    assert [s["name"] for s in chosen] == ["node-1", "node-2", "bastion"]
    assert missing == ["nope"]
    assert sr.select_servers(SERVERS, ["zzz-*"]) == ([], [])


def test_select_servers_ambiguous_name():
    with pytest.raises(ResolveError, match="ambiguous"):
        sr.select_servers(SERVERS, ["dup"])
    assert len(sr.select_servers(SERVERS, ["du*"])[0]) == 2  # a pattern needs "*" (core.names)


def port(pid, server, groups, security=True, revision=3):
    return dict(id=pid, name=pid, device_id=server["id"], security_groups=groups, port_security_enabled=security,
                revision_number=revision)


def test_plan_ports_fixes_only_the_port_that_lacks_the_group():
    node1, node2 = SERVERS[0], SERVERS[1]
    ports = [port("p1", node1, [OTHER, GROUP]), port("p2", node1, [OTHER]), port("p3", node2, [], security=False)]
    changes, skipped, portless = sr.plan_ports([node1, node2, SERVERS[2]], ports, GROUP)
    assert [(c.port["id"], c.before, c.after) for c in changes] == [("p2", [OTHER], [OTHER, GROUP])]
    assert [s["port"] for s in skipped] == ["p3"] and "port security is disabled" in skipped[0]["reason"]
    assert portless == [SERVERS[2]]


def test_plan_ports_absent():
    node1 = SERVERS[0]
    ports = [port("p1", node1, [OTHER, GROUP]), port("p2", node1, [OTHER]), port("p3", node1, [], security=False)]
    changes, skipped, portless = sr.plan_ports([node1], ports, GROUP, state="absent")
    assert [(c.port["id"], c.after) for c in changes] == [("p1", [OTHER])]
    assert skipped == [] and portless == []  # nothing to remove from a port without port security


@given(st.lists(st.sampled_from([GROUP, OTHER, "33333333-3333-3333-3333-333333333333"]), unique=True),
       st.sampled_from(["present", "absent"]))
def test_wanted_groups_keeps_the_others(current, state):
    after = sr.wanted_groups(current, GROUP, state)
    assert set(after) - {GROUP} == set(current) - {GROUP}
    assert (GROUP in after) == (state == "present")
    assert sr.wanted_groups(after, GROUP, state) == after


# -- what exclusive and state absent protect: the final guard over the rule plan --------------------------------

_SPECS = st.fixed_dictionaries(dict(
    protocol=st.sampled_from(["tcp", "6", "udp", "icmp", None, "any"]),
    remote_ip_prefix=st.sampled_from(["10.0.0.0/8", "10.0.0.5/8", "0.0.0.0/0", None, "198.19.0.0/16"]),
    port=st.sampled_from([None, 22, 443])))


def _spec_rule(spec):
    if spec["port"] is not None and spec["protocol"] not in ("tcp", "6", "udp"):
        spec = dict(spec, port=None)
    return sr.normalize_rule(spec)


@settings(max_examples=300, deadline=None)
@given(st.lists(_SPECS, max_size=5), st.lists(_SPECS, max_size=6), st.booleans())
def test_exclusive_never_deletes_a_wanted_rule_and_absent_deletes_only_wanted_ones(wanted, existing, exclusive):
    wanted = [_spec_rule(s) for s in wanted]
    stored = [sr.rule_from_neutron(dict(sr.protocol_name(r.protocol) and {"protocol": sr.protocol_name(r.protocol)} or {},
                                        id="r%d" % i, direction=r.direction, ethertype=r.ethertype,
                                        port_range_min=r.port_range_min, port_range_max=r.port_range_max,
                                        remote_ip_prefix=r.remote_ip_prefix))
              for i, r in enumerate(_spec_rule(s) for s in existing)]
    keys = set(r.key for r in wanted)
    present = sr.plan_rules(wanted, stored, "present", exclusive)
    assert not [r for r in present.delete if r.key in keys]
    absent = sr.plan_rules(wanted, stored, "absent")
    assert all(r.key in keys for r in absent.delete)


def test_the_final_guard_stops_a_plan_that_deletes_a_rule_the_rules_keep():
    keep = sr.normalize_rule(dict(protocol="tcp", port=22, remote_ip_prefix="10.0.0.0/8"))
    other = sr.normalize_rule(dict(protocol="udp", port=53))
    with pytest.raises(PlanError, match="internal error.*ingress IPv4 tcp 22-22 from 10.0.0.0/8.*ask to keep"):
        sr.guard_deletes([keep], {keep.key}, "present")
    with pytest.raises(PlanError, match="internal error.*udp.*do not name"):
        sr.guard_deletes([other], {keep.key}, "absent")
    assert sr.guard_deletes([other], {keep.key}, "present") == [other]
