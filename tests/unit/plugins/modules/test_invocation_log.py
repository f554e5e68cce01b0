# -*- coding: utf-8 -*-
"""What a module hands to syslog when it starts (AnsibleModule logs its invocation): no secret of a ``cloud``
dict or of a kubeconfig given as a dict."""

import json
import types

import pytest

from ansible.module_utils import basic

from ansible_collections.flightcontrol.openstack.plugins.modules import cluster_info, route_audit, secgroup_ensure

PASSWORD = "pw-0f3c9a"
APP_SECRET = "appsecret-77b1"
TOKEN = "kube-token-5d2e"
CLIENT_KEY = "LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0t"

CLOUD = {"auth": {"auth_url": "https://keystone.example:5000/v3", "username": "ops", "password": PASSWORD,
                  "project_name": "infra", "user_domain_name": "Default", "project_domain_name": "Default",
                  "application_credential_secret": APP_SECRET}, "region_name": "RegionOne"}
KUBECONFIG = {"apiVersion": "v1", "kind": "Config", "current-context": "admin",
              "clusters": [{"name": "c", "cluster": {"server": "https://10.0.0.1:6443"}}],
              "users": [{"name": "admin", "user": {"token": TOKEN, "client-key-data": CLIENT_KEY}}],
              "contexts": [{"name": "admin", "context": {"cluster": "c", "user": "admin"}}]}
SECRETS = (PASSWORD, APP_SECRET, TOKEN, CLIENT_KEY)


@pytest.fixture
def syslog_messages(monkeypatch):
    """Everything the module hands to syslog (the journal switched off, as on a host without it)."""
    messages = []
    fake = types.SimpleNamespace(LOG_USER=8, LOG_INFO=6, openlog=lambda *a: None,
                                 syslog=lambda priority, msg: messages.append(msg))
    monkeypatch.setattr(basic, "has_journal", False)
    monkeypatch.setattr(basic, "HAS_SYSLOG", True)
    monkeypatch.setattr(basic, "syslog", fake)
    yield messages
    basic._ANSIBLE_ARGS = None


def start(module_class, args, tmp_path):
    payload = dict(args, _ansible_tmpdir=str(tmp_path), _ansible_remote_tmp=str(tmp_path), _ansible_no_log=False,
                   _ansible_verbosity=0, _ansible_debug=False, _ansible_check_mode=False)
    basic._ANSIBLE_ARGS = json.dumps({"ANSIBLE_MODULE_ARGS": payload}).encode("utf-8")
    basic._ANSIBLE_PROFILE = "legacy"
    return module_class()


@pytest.mark.parametrize("module_class, args", [
    (secgroup_ensure.SecgroupEnsure, dict(cloud=CLOUD, security_group="k8s-nodes", pod_cidr="10.244.0.0/16",
                                          servers=["node-1"])),
    (cluster_info.ClusterInfo, dict(kubeconfig=KUBECONFIG, name="c1", namespace="default")),
    (route_audit.RouteAudit, dict(cloud=CLOUD, router="r1", cluster_cidr="10.244.0.0/16",
                                  kubernetes=dict(kubeconfig=KUBECONFIG))),
], ids=["cloud-dict", "kubeconfig-dict", "both"])
def test_the_invocation_log_holds_no_secret(syslog_messages, tmp_path, module_class, args):
    module = start(module_class, args, tmp_path)
    logged = "\n".join(syslog_messages)
    assert "Invoked with" in logged
    assert not [s for s in SECRETS if s in logged], logged
    assert "keystone.example" in logged or "10.0.0.1" in logged  # the rest is still there to read
    # and the same values are masked in the module's results
    present = set(s for s in SECRETS if s in json.dumps(args))
    assert present <= module.ansible.no_log_values
