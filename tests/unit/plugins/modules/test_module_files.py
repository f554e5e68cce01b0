# -*- coding: utf-8 -*-
"""Every module file imports, and is what the layout promises: its documentation, one class holding its
argument spec (the class the fuzz suite reads), and ``main``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib

import pytest
import yaml

MODULES = ("cluster_info", "cluster_pause_ack", "lb_member_wait", "node_registration_audit", "resource_leak_audit",
           "rollout_guard", "route_audit", "secgroup_ensure")
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


REQUIRED = {
    "cluster_info": {"name": "c1"},
    "cluster_pause_ack": {"name": "c1"},
    "lb_member_wait": {"pool": "p"},
    "node_registration_audit": {"servers": ["node-*"]},
    "resource_leak_audit": {},
    "rollout_guard": {"cluster": "c1"},
    "route_audit": {"router": "r", "cluster_cidr": ["10.0.0.0/8"]},
    "secgroup_ensure": {"security_group": "sg"},
}


@pytest.mark.parametrize("name", MODULES)
def test_module_refuses_a_bad_timeout_in_its_words_before_connecting(name, monkeypatch, capsys):
    """The module class, its runner and the module base fit together: a negative timeout is refused by the
    number ranges before any connection (no cloud is needed to see it)."""
    import json
    from ansible.module_utils import basic
    module = importlib.import_module(PACKAGE + name)
    args = dict(REQUIRED[name], timeout=-1, _ansible_check_mode=False, _ansible_diff=False)
    monkeypatch.setattr(basic, "_ANSIBLE_ARGS", json.dumps({"ANSIBLE_MODULE_ARGS": args}).encode("utf-8"))
    monkeypatch.setattr(basic, "_ANSIBLE_PROFILE", "legacy", raising=False)
    with pytest.raises(SystemExit):
        module.main()
    result = json.loads(capsys.readouterr().out)
    assert result["failed"] and "timeout must be zero or more seconds, got -1" in result["msg"], result
    assert result["api_calls"] == 0 and result["changed"] is False
