# -*- coding: utf-8 -*-
"""Every module file imports, and is what the layout promises: its documentation, one class holding its
argument spec (the class the fuzz suite reads), and ``main``."""

import importlib
import os

import pytest
import yaml

# Every module the collection ships: the files of plugins/modules, so that a new module is tested here at once.
MODULES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "plugins", "modules")
MODULES = tuple(sorted(name[:-3] for name in os.listdir(MODULES_DIR)
                       if name.endswith(".py") and not name.startswith("_")))
PACKAGE = "ansible_collections.flightcontrol.openstack.plugins.modules."
COUNTERS = ("changed", "elapsed", "api_calls", "retried_faults")


def test_the_module_list_is_every_module_file():
    assert "workload_kubeconfig" in MODULES and "rollout_guard" in MODULES and len(MODULES) >= 8


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
    "cluster_lease": {"name": "c1", "holder": {"id": "run-1"}},
    "cluster_move_check": {"name": "c1", "target_kubeconfig": "target.yaml"},
    "cluster_pause_ack": {"name": "c1"},
    "cluster_readiness": {"name": "c1"},
    "fleet_wave": {"action": "status", "run": "r1"},
    "lb_member_wait": {"pool": "p"},
    "node_registration_audit": {"servers": ["node-*"]},
    "resource_leak_audit": {},
    "rollout_guard": {"cluster": "c1"},
    "route_audit": {"router": "r", "cluster_cidr": ["10.0.0.0/8"]},
    "secgroup_ensure": {"security_group": "sg"},
    "workload_kubeconfig": {"cluster": "c1"},
}


def refusal(name, monkeypatch, capsys, **extra):
    """The result of the module ``name`` refusing ``timeout: -1`` (with ``extra`` options) before connecting."""
    import json
    from ansible.module_utils import basic
    from ansible.module_utils.common import warnings as module_warnings
    module_warnings._global_warnings.clear()  # a module process starts with none; earlier runs here left theirs
    module = importlib.import_module(PACKAGE + name)
    args = dict(REQUIRED[name], timeout=-1, _ansible_check_mode=False, _ansible_diff=False, **extra)
    monkeypatch.setattr(basic, "_ANSIBLE_ARGS", json.dumps({"ANSIBLE_MODULE_ARGS": args}).encode("utf-8"))
    monkeypatch.setattr(basic, "_ANSIBLE_PROFILE", "legacy", raising=False)
    with pytest.raises(SystemExit):
        module.main()
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name", MODULES)
def test_module_refuses_a_bad_timeout_in_its_words_before_connecting(name, monkeypatch, capsys):
    """The module class, its runner and the module base fit together: a negative timeout is refused by the
    number ranges before any connection (no cloud is needed to see it)."""
    result = refusal(name, monkeypatch, capsys)
    assert result["failed"] and "timeout must be 1 or more seconds, got -1" in result["msg"], result
    assert result["api_calls"] == 0 and result["changed"] is False


@pytest.mark.parametrize("name", MODULES)
def test_the_counters_documented_as_always_returned_are_in_a_refusal_too(name, monkeypatch, capsys):
    """RETURN documents changed's siblings (elapsed, api_calls, retried_faults) as returned always: the shared
    failure path puts them into every result, a refusal before any client was made included."""
    module = importlib.import_module(PACKAGE + name)
    documented = yaml.safe_load(module.RETURN)
    for key in COUNTERS[1:]:
        assert documented.get(key, {}).get("returned") == "always", (name, key)
    result = refusal(name, monkeypatch, capsys)
    always = [key for key, doc in documented.items() if isinstance(doc, dict) and doc.get("returned") == "always"
              and key in COUNTERS]
    assert set(always) == set(COUNTERS[1:])
    for key in COUNTERS:
        assert key in result, (name, key, result)
    assert result["retried_faults"] == []


def compat_options(name):
    """Options of openstack.cloud or kubernetes.core the module accepts and ignores, as module_defaults give them."""
    module = importlib.import_module(PACKAGE + name)
    spec = [v for v in vars(module).values() if isinstance(v, type) and getattr(v, "argument_spec", None)
            and v.__module__ == module.__name__][0]
    connection = spec.connection_argument_spec()
    if "cloud" in connection:
        return {"wait": True, "sdk_log_path": "/tmp/sdk.log", "sdk_log_level": "DEBUG"}, "openstack.cloud", ""
    if "kubeconfig" in connection:
        return {"persist_config": True}, "kubernetes.core", ""
    return {"kubernetes": {"persist_config": True}}, "kubernetes.core", "kubernetes."


@pytest.mark.parametrize("name", MODULES)
def test_options_of_openstack_cloud_and_kubernetes_core_are_accepted_and_warned_about(name, monkeypatch, capsys):
    """module_defaults written for openstack.cloud or kubernetes.core do not fail the task with "Unsupported
    parameters": their options that mean nothing here are ignored with a warning naming each."""
    from ansible.module_utils import basic
    options, source, prefix = compat_options(name)
    warnings = []
    warn = basic.AnsibleModule.warn
    # the warnings as the module gives them (how they reach the result depends on what else this process loaded)
    monkeypatch.setattr(basic.AnsibleModule, "warn", lambda self, warning: warnings.append(warning) or warn(self, warning))
    result = refusal(name, monkeypatch, capsys, **options)
    assert "timeout must be 1 or more seconds" in result["msg"], result
    names = options.get("kubernetes", options)
    for option in names:
        expected = "%s%s is accepted for module_defaults compatibility with %s and ignored" % (prefix, option, source)
        assert any(expected in w for w in warnings), (expected, warnings)


@pytest.mark.parametrize("name, option", [("route_audit", "cloud_controller"), ("workload_kubeconfig", "secret")])
@pytest.mark.parametrize("value", [12, 1.5, True, ["a"]])
def test_an_option_with_suboptions_given_another_shape_is_refused_in_words(name, option, value, monkeypatch, capsys):
    """ansible-core raised a TypeError from its fallbacks for a number where an option with suboptions is: the
    module base refuses it with a message naming the option instead."""
    result = refusal(name, monkeypatch, capsys, **{option: value})
    assert result["failed"] and result["msg"].startswith("%s must be a dictionary, got " % option), result
