# -*- coding: utf-8 -*-
"""The ``servers`` option of secgroup_ensure and node_registration_audit: one rule for a name several
servers have, and one for names with glob characters (``core.names``)."""

import pytest

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core import names
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import ResolveError
from ansible_collections.flightcontrol.openstack.plugins.module_utils.nova.selection import (
    is_pattern,
    refuse_ambiguous_names,
    select,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.node_registration_audit import plan as registration_plan
from ansible_collections.flightcontrol.openstack.plugins.module_utils.secgroup_ensure import plan as secgroup_rules

DUP_A = "aaaaaaaa-0000-0000-0000-000000000001"
DUP_B = "aaaaaaaa-0000-0000-0000-000000000002"
SERVERS = [
    dict(id=DUP_A, name="worker", metadata={}),
    dict(id=DUP_B, name="worker", metadata={}),
    dict(id="aaaaaaaa-0000-0000-0000-000000000003", name="cp-1", metadata={}),
]


def test_patterns_are_told_from_names():
    assert is_pattern("prod-*") and is_pattern("node-?*") and is_pattern("node-[12]*")
    assert not is_pattern("prod-node-1")
    # without '*', '?', '[' and ']' are ordinary characters of a name
    assert not is_pattern("node-?") and not is_pattern("node-[12]") and not is_pattern("gm[1]")


GLOB_SERVERS = [dict(id="g-1", name="gm[1]"), dict(id="g-2", name="gm1"), dict(id="g-3", name="gm2"),
                dict(id="g-4", name="gm?"), dict(id="g-5", name="gma"), dict(id="g-6", name="a*"),
                dict(id="g-7", name="ab")]


@pytest.mark.parametrize("entries, chosen, missing", [
    (["gm[1]"], ["gm[1]"], []),  # the existing name, never gm1 (the character class)
    (["gm[12]"], [], ["gm[12]"]),  # no '*': a literal name that no server has
    (["gm?"], ["gm?"], []),  # the existing name, never gm1, gm2, gma
    (["gm-?"], [], ["gm-?"]),
    (["a*"], ["a*"], []),  # exactly an existing name: that server only, not ab
    (["gm*"], ["gm[1]", "gm1", "gm2", "gm?", "gma"], []),
    (["gm[12]*"], ["gm1", "gm2"], []),  # inside a '*' pattern, a class is a class
    (["g-5", "gm[1]"], ["gm[1]", "gma"], []),
], ids=["class-name", "class-absent", "question-name", "question-absent", "star-name", "star", "class-in-star",
        "id-and-name"])
def test_one_rule_for_names_with_glob_characters(entries, chosen, missing):
    selection = select(GLOB_SERVERS, entries)
    assert [s["name"] for s in selection.chosen] == chosen
    assert selection.missing == missing


def test_a_deletion_takes_only_what_an_entry_names_or_its_star_matches():
    selection = select(GLOB_SERVERS, ["gm[12]*", "gm?*", "gma"])
    by_name = dict((s["name"], s["id"]) for s in GLOB_SERVERS)
    # gm1 and gm2 matched only through the class [12]; gm? and gm[1] only through '?'
    assert not selection.destructible(by_name["gm1"]) and not selection.destructible(by_name["gm2"])
    assert selection.class_only(by_name["gm1"]) == ["gm[12]*", "gm?*"]
    assert not selection.destructible(by_name["gm[1]"])
    assert selection.destructible(by_name["gma"])  # named exactly
    assert select(GLOB_SERVERS, ["gm?*"]).destructible(by_name["gm?"])  # '?' read as itself, then '*'
    assert select(GLOB_SERVERS, ["gm*"]).destructible(by_name["gm1"])


@pytest.mark.parametrize("name, entry, how", [
    ("gm1", "gm[1]", None), ("gm[1]", "gm[1]", names.EXACT), ("gm1", "gm[1]*", names.CLASS_MATCH),
    ("gm[1]x", "gm[1]*", names.WILDCARD_MATCH), ("gm1x", "gm?x*", names.CLASS_MATCH),
    ("a.b", "a.*", names.WILDCARD_MATCH), ("axb", "a.*", None), ("", "*", names.WILDCARD_MATCH),
    ("ab", "a*", names.WILDCARD_MATCH),
])
def test_how_a_name_matches_an_entry(name, entry, how):
    assert names.how_matched(name, entry) == how


def test_an_entry_that_is_an_existing_name_is_no_pattern():
    assert names.how_matched("ab", "a*", existing_names={"a*", "ab"}) is None


def test_a_name_several_servers_have_is_refused_naming_them():
    with pytest.raises(ResolveError) as caught:
        refuse_ambiguous_names(SERVERS, ["cp-1", "worker"])
    message = str(caught.value)
    assert "server name 'worker' is ambiguous: 2 servers have it" in message
    assert DUP_A in message and DUP_B in message


def test_ids_patterns_and_unique_names_pass():
    refuse_ambiguous_names(SERVERS, [DUP_A, DUP_B.replace("-", "").upper(), "work*", "cp-1", "nope"])


@pytest.mark.parametrize("select", [
    lambda selectors: secgroup_rules.select_servers(SERVERS, selectors),
    lambda selectors: registration_plan.select_servers(SERVERS, selectors),
], ids=["secgroup_ensure", "node_registration_audit"])
def test_both_modules_refuse_a_duplicated_name_the_same_way(select):
    with pytest.raises(ResolveError, match="server name 'worker' is ambiguous: 2 servers have it"):
        select(["worker"])
    chosen = select(["work*"])
    chosen = chosen[0] if isinstance(chosen, tuple) else chosen  # secgroup_ensure also returns what is missing
    assert [s["id"] for s in chosen] == [DUP_A, DUP_B]
