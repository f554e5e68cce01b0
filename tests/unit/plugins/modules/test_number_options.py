# -*- coding: utf-8 -*-
"""Every number option of every module is judged on one path before any request (``module_base.number_problems``
with ``option_ranges``): NaN, infinities and -1 are refused everywhere, zero wherever the option's range says so,
and every module's ``timeout`` has the one range (a second up to 30 days)."""

import importlib
import pkgutil

import pytest

from ansible_collections.flightcontrol.openstack.plugins import modules
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.module_base import (
    number_problems,
    option_ranges,
    TIMEOUT,
)

# Number options whose range depends on another option, judged by the module's plan: secgroup_ensure's rule ports
# (1-65535 for tcp/udp/dccp/sctp, an ICMP type and code 0-255: secgroup_ensure/plan.py, _canonical_ports).
JUDGED_BY_THE_PLAN = {("secgroup_ensure", "rules.port_range_min"), ("secgroup_ensure", "rules.port_range_max"),
                      ("secgroup_ensure", "rules.port")}


def module_classes():
    for info in pkgutil.iter_modules(modules.__path__):
        plugin = importlib.import_module(modules.__name__ + "." + info.name)
        found = [v for v in vars(plugin).values() if isinstance(v, type) and getattr(v, "argument_spec", None)
                 and v.__module__ == plugin.__name__]
        yield info.name, found[0]


MODULES = sorted(module_classes())


def wrap(name, kind, inner):
    """params setting option ``name`` (of type ``kind``) around what ``inner(value)`` sets."""
    return lambda value: {name: [inner(value)] if kind == "list" else inner(value)}


def number_options(spec, prefix=""):
    """(label, name, params(value) setting it to ``value``) for each int or float option of ``spec``, suboptions
    included."""
    for name, option in spec.items():
        kind = option.get("type")
        if option.get("options"):
            for label, inner, params in number_options(option["options"], prefix + name + "."):
                yield label, inner, wrap(name, kind, params)
        elif kind in ("int", "float") or option.get("elements") in ("int", "float"):
            yield prefix + name, name, wrap(name, kind, lambda value: value)


def full_spec(cls):
    spec = cls.connection_argument_spec()
    spec.update(cls.argument_spec)
    return spec


@pytest.mark.parametrize("module, cls", MODULES)
def test_every_number_option_has_a_range_and_refuses_nan_infinities_and_minus_one(module, cls):
    ranges = option_ranges(cls.number_ranges)
    spec = full_spec(cls)
    for label, name, params in number_options(spec):
        if (module, label) in JUDGED_BY_THE_PLAN:
            continue
        assert name in ranges, "%s: %s has no range" % (module, label)
        for value in (float("nan"), float("inf"), float("-inf"), -1):
            problems = number_problems(spec, params(value), ranges)
            assert len(problems) == 1 and problems[0].startswith(label + " "), (module, label, value, problems)
        zero = ranges[name].problem(label, 0)
        assert number_problems(spec, params(0), ranges) == ([zero] if zero else []), (module, label)


@pytest.mark.parametrize("module, cls", MODULES)
def test_every_modules_timeout_is_a_second_up_to_thirty_days(module, cls):
    spec = full_spec(cls)
    assert "timeout" in spec, module
    ranges = option_ranges(cls.number_ranges)
    assert ranges["timeout"] is TIMEOUT
    assert number_problems(spec, {"timeout": 0}, ranges) == [
        "timeout must be 1 or more seconds, got 0 (the whole task's time, its requests included)"]
    assert number_problems(spec, {"timeout": 1}, ranges) == []
    assert number_problems(spec, {"timeout": 30 * 24 * 3600 + 1}, ranges)
