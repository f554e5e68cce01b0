# -*- coding: utf-8 -*-
"""Every module file imports, and is what the layout promises: its documentation, one class holding its
argument spec (the class the fuzz suite reads), and ``main``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib

import pytest
import yaml

MODULES = ("cluster_info", "cluster_pause_ack", "lb_member_wait", "node_registration_audit", "rollout_guard",
           "route_audit", "secgroup_ensure")
PACKAGE = "ansible_collections.flightcontrol.openstack.plugins.modules."


@pytest.mark.parametrize("name", MODULES)
def test_module_file_holds_docs_spec_and_main(name):
    module = importlib.import_module(PACKAGE + name)
    assert yaml.safe_load(module.DOCUMENTATION)["module"] == name
    spec_classes = [v for v in vars(module).values() if isinstance(v, type) and getattr(v, "argument_spec", None)
                    and v.__module__ == module.__name__]
    assert len(spec_classes) == 1, spec_classes
    assert isinstance(spec_classes[0].argument_spec, dict)
    assert callable(module.main)
