# -*- coding: utf-8 -*-
"""The ``servers`` option of secgroup_ensure and node_registration_audit: one rule for a name several
servers have."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import ResolveError
from ansible_collections.flightcontrol.openstack.plugins.module_utils.nova.selection import (
    is_pattern,
    refuse_ambiguous_names,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.registration import plan as registration_plan
from ansible_collections.flightcontrol.openstack.plugins.module_utils.secgroups import rules as secgroup_rules

DUP_A = "aaaaaaaa-0000-0000-0000-000000000001"
DUP_B = "aaaaaaaa-0000-0000-0000-000000000002"
SERVERS = [
    dict(id=DUP_A, name="worker", metadata={}),
    dict(id=DUP_B, name="worker", metadata={}),
    dict(id="aaaaaaaa-0000-0000-0000-000000000003", name="cp-1", metadata={}),
]


def test_patterns_are_told_from_names():
    assert is_pattern("prod-*") and is_pattern("node-?") and is_pattern("node-[12]")
    assert not is_pattern("prod-node-1")


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
