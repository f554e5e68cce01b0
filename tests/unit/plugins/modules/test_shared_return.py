# -*- coding: utf-8 -*-
"""The RETURN keys every module shares (``elapsed``, ``api_calls``, ``retried_faults``, ``writes``,
``writes_total``) read the same in every module that documents them: Ansible has no RETURN doc fragment, so the
one text lives in shared_return.yml and each module's copy is held to it here."""

import importlib
import os
import re

import pytest
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
MODULES_DIR = os.path.join(HERE, "..", "..", "..", "..", "plugins", "modules")
MODULES = tuple(sorted(name[:-3] for name in os.listdir(MODULES_DIR)
                       if name.endswith(".py") and not name.startswith("_")))
PACKAGE = "ansible_collections.flightcontrol.openstack.plugins.modules."
with open(os.path.join(HERE, "shared_return.yml")) as handle:
    SHARED = yaml.safe_load(handle)
# Every module's result carries these (core.results.complete), so every module documents them.
ALWAYS = ("elapsed", "api_calls", "retried_faults")


def documented(name):
    return yaml.safe_load(importlib.import_module(PACKAGE + name).RETURN) or {}


def matches(canonical, text):
    """Whether ``text`` is ``canonical``, its ``{apis}`` standing for any words."""
    if isinstance(canonical, list):
        return isinstance(text, list) and len(text) == len(canonical) and all(map(matches, canonical, text))
    pattern = re.escape(canonical).replace(re.escape("{apis}"), ".+")
    return isinstance(text, str) and re.fullmatch(pattern, text) is not None


@pytest.mark.parametrize("name", MODULES)
def test_the_shared_keys_read_the_one_canonical_text(name):
    returned = documented(name)
    assert all(key in returned for key in ALWAYS), "%s: RETURN lacks %s" % (
        name, [key for key in ALWAYS if key not in returned])
    for key, canonical in SHARED.items():
        if key not in returned:
            continue
        mine = dict((field, value) for field, value in returned[key].items() if field != "sample")
        assert set(mine) == set(canonical), "%s: %s has the fields %s" % (name, key, sorted(mine))
        for field, value in canonical.items():
            assert matches(value, mine[field]), "%s: %s.%s reads %r, not the shared text %r (shared_return.yml)" % (
                name, key, field, mine[field], value)


def test_writes_and_writes_total_come_together():
    for name in MODULES:
        returned = documented(name)
        assert ("writes" in returned) == ("writes_total" in returned), name


def test_a_text_that_differs_is_caught():
    assert matches(SHARED["api_calls"]["description"], "HTTP requests sent to OpenStack, retries and authentication "
                                                       "requests included.")
    assert not matches(SHARED["api_calls"]["description"], "HTTP requests sent to OpenStack.")
    assert not matches(SHARED["writes"]["description"], [SHARED["writes"]["description"][0]])
