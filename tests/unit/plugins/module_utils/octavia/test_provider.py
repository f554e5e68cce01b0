# -*- coding: utf-8 -*-
"""How a member is taken out of rotation on each provider, and which providers are refused."""

import pytest

from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia import provider


@pytest.mark.parametrize("name", ["amphora", "AMPHORA", "amphorav2", "octavia", "minicloud"])
def test_amphora_drains_with_weight(name):
    assert provider.drain_method(name) == provider.WEIGHT and provider.drain_refusal(name) is None


def test_ovn_drains_with_admin_state_because_it_ignores_weight():
    assert provider.drain_method("ovn") == provider.ADMIN_STATE
    assert provider.field_of(provider.ADMIN_STATE) == "admin_state_up"
    assert provider.drained_value(provider.ADMIN_STATE) is False
    assert provider.before_value(provider.ADMIN_STATE, {"admin_state_up": True}) is True


@pytest.mark.parametrize("name", ["f5", "", None, "vmwareedge"])
def test_an_unknown_provider_is_refused_naming_it(name):
    assert provider.drain_method(name) is None
    assert repr(name) in provider.drain_refusal(name) and "ovn" in provider.drain_refusal(name)


def test_the_value_before_the_drain_is_what_the_restore_puts_back():
    assert provider.before_value(provider.WEIGHT, {"weight": 7}) == 7
    assert provider.before_value(provider.WEIGHT, {}) == 1
    assert provider.drained_value(provider.WEIGHT) == 0
