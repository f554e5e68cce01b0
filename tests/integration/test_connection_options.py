# -*- coding: utf-8 -*-
"""kubernetes.core's connection options beside a kubeconfig, against minicloud's Kubernetes API (which checks the
bearer token): an option given wins over the kubeconfig (a wrong api_key gets its 401), and credentials of two
kinds, or half a pair, are refused before any request."""

import uuid

import yaml


def kubeconfig(cloud):
    return str(cloud.state_dir / "kubeconfig")


def token(cloud):
    return yaml.safe_load((cloud.state_dir / "kubeconfig").read_text())["users"][0]["user"]["token"]


def seed(cloud):
    name = "co-%s" % uuid.uuid4().hex[:6]
    cloud.json("capi", "cluster", "create", name, "--control-plane", 1, "--workers", 0, "--api-version", "v1beta2")
    return name


def test_a_wrong_api_key_beside_a_valid_kubeconfig_gets_its_401(cloud, run_module):
    name = seed(cloud)
    for playbook in (False, True):
        run = run_module("flightcontrol.openstack.cluster_info", {"kubeconfig": kubeconfig(cloud), "api_key": "WRONG",
                                                                  "name": name}, playbook=playbook)
        assert run.rc != 0 and run.result["failed"] is True, run.result
        assert "HTTP 401" in run.result["msg"] and "api_key" in run.result["msg"], run.result["msg"]
    right = run_module("flightcontrol.openstack.cluster_info", {"kubeconfig": kubeconfig(cloud), "api_key": token(cloud),
                                                                "name": name})
    assert right.rc == 0 and right.result["cluster"]["name"] == name, right.result


def test_a_wrong_api_key_in_the_kubernetes_dictionary_gets_its_401(cloud, run_module):
    name = seed(cloud)
    run = run_module("flightcontrol.openstack.cluster_readiness", {
        "cloud": "minicloud", "name": name, "kubernetes": {"kubeconfig": kubeconfig(cloud), "api_key": "WRONG"}})
    assert run.rc != 0 and "HTTP 401" in run.result["msg"] and "api_key" in run.result["msg"], run.result


def test_credentials_of_two_kinds_or_half_a_pair_are_refused_before_any_request(cloud, run_module):
    cases = [({"username": "admin"}, "username is given without password"),
             ({"api_key": "WRONG", "username": "admin", "password": "secret"},
              "api_key and username/password are given together")]
    for extra, words in cases:
        cloud.reset_counts()
        run = run_module("flightcontrol.openstack.cluster_info", dict(extra, kubeconfig=kubeconfig(cloud), name="x"))
        assert run.rc != 0 and words in run.result["msg"], run.result
        assert run.result["api_calls"] == 0, run.result
