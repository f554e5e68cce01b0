# -*- coding: utf-8 -*-
"""module_defaults written for openstack.cloud and kubernetes.core carry over: their options that mean nothing here
are accepted and ignored with a warning naming each, instead of failing the task with "Unsupported parameters"."""

import importlib
import json
import uuid

import yaml

PACKAGE = "ansible_collections.flightcontrol.openstack.plugins.modules."

OPENSTACK_ONLY = {"wait": True, "sdk_log_path": "/nonexistent/openstacksdk.log", "sdk_log_level": "DEBUG"}
KUBERNETES_ONLY = {"persist_config": False}
# honoured: sent to a proxy (the API is reached without one here, so they change nothing)
KUBERNETES_HONOURED = {"proxy_headers": {"user_agent": "copied-from-kubernetes-core"}}


def test_defaults_of_openstack_cloud_and_kubernetes_core_are_accepted_and_warned_about(cloud, shared_lb, playbooks):
    name = "compat-%s" % uuid.uuid4().hex[:6]
    cloud.json("capi", "cluster", "create", name, "--control-plane", 1, "--workers", 0, "--api-version", "v1beta2")
    wait = {"pool": shared_lb["pool"]["id"], "timeout": 60, "poll_interval": 0.5}
    tasks = [
        {"name": "members", "flightcontrol.openstack.lb_member_wait": wait, "register": "members"},
        {"name": "cluster", "flightcontrol.openstack.cluster_info": {"name": name}, "register": "info"},
    ]
    play, record = playbooks.keeping(tasks, keep="{{ {'members': members, 'info': info} | to_json }}")
    play[0]["module_defaults"] = {
        "group/flightcontrol.openstack.openstack": dict(OPENSTACK_ONLY, cloud="minicloud"),
        "group/flightcontrol.openstack.kubernetes": dict(KUBERNETES_ONLY, **KUBERNETES_HONOURED,
                                                         kubeconfig=str(cloud.state_dir / "kubeconfig")),
    }
    proc = playbooks.run(play)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads(record.read_text())
    members, info = results["members"], results["info"]
    assert members["failed"] is False and members["members"], members
    assert info["failed"] is False and info["cluster"]["name"] == name, info
    ignored = ((members, OPENSTACK_ONLY, "openstack.cloud"), (info, KUBERNETES_ONLY, "kubernetes.core"))
    for result, options, source in ignored:
        for option in options:
            assert "%s is accepted for module_defaults compatibility with %s and ignored" % (option, source) in \
                result.get("warnings", []), result.get("warnings")
    assert "Unsupported parameters" not in proc.stdout + proc.stderr
    for module, result in (("lb_member_wait", members), ("cluster_info", info)):
        always = [key for key, doc in yaml.safe_load(importlib.import_module(PACKAGE + module).RETURN).items()
                  if isinstance(doc, dict) and doc.get("returned") == "always"]
        assert always and not [key for key in always if key not in result], (module, always, sorted(result))
