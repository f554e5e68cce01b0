# -*- coding: utf-8 -*-
"""A workload cluster's Kubernetes API reached through its ``<name>-kubeconfig`` Secret in the management cluster:
``kubernetes.kubeconfig_secret`` of the modules that read Nodes, and the workload_kubeconfig module. minicloud
serves each seeded cluster's own API (its own Nodes and token); the Secret holds its kubeconfig."""

import base64
import json
import random
import stat
import uuid

import pytest
import yaml
from kubernetes import client
from kubernetes.config import kube_config

MODULE = "flightcontrol.openstack.workload_kubeconfig"
NAMESPACE = "fleet"


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:6])


@pytest.fixture
def workload(cloud):
    """A seeded cluster in namespace ``fleet``, with its own API: ``(name, kubeconfig text, token)``."""
    name = unique("wk")
    cloud.json("capi", "cluster", "create", name, "--namespace", NAMESPACE)
    text = cloud.api.workload_kubeconfig(name, namespace=NAMESPACE)
    token = yaml.safe_load(text)["users"][0]["user"]["token"]
    assert len(token) >= 16
    return name, text, token


def management(cloud, **secret):
    kubernetes = {"kubeconfig": str(cloud.state_dir / "kubeconfig")}
    if secret:
        kubernetes["kubeconfig_secret"] = secret
    return kubernetes


def management_by_options(cloud):
    """The management API by host, token and CA file: no kubeconfig data the kubernetes client would write out."""
    config = yaml.safe_load((cloud.state_dir / "kubeconfig").read_text())
    return {"host": config["clusters"][0]["cluster"]["server"], "api_key": config["users"][0]["user"]["token"],
            "ca_cert": str(cloud.state_dir / "kubernetes" / "pki" / "ca.crt")}


def ok(result):
    assert not result.get("failed"), result.get("msg") or result
    return result


def test_node_registration_audit_reads_the_nodes_of_the_workload_cluster(cloud, workload, run_module):
    name, _text, token = workload
    prefix = unique("wkn")
    made = cloud.json("server", "create", prefix, "--network", "regnet", "--count", 2)
    node = made[0]["name"]
    cloud.api.create_node(node, "10.%d.7.0/24" % random.randint(100, 250), made[0]["ports"][0]["ip_address"],
                          cluster=name, namespace=NAMESPACE)
    task = dict(cloud="minicloud", servers=[prefix + "-*"], registration_timeout=0,
                kubernetes=management(cloud, name="%s-kubeconfig" % name, namespace=NAMESPACE))
    audit = ok(run_module("flightcontrol.openstack.node_registration_audit", task).result)
    assert [s["name"] for s in audit["unregistered"]] == [made[1]["name"]]
    by_name = dict((s["name"], s) for s in audit["servers"])
    assert by_name[node]["node"] == node
    assert token not in json.dumps(audit)

    # the same servers seen from the management API's Nodes: that Node is not there
    task["kubernetes"] = management(cloud)
    direct = ok(run_module("flightcontrol.openstack.node_registration_audit", task).result)
    assert node in [s["name"] for s in direct["unregistered"]]


def test_workload_kubeconfig_checks_the_api_and_writes_nothing_without_dest(cloud, workload, run_in_process):
    name, text, token = workload
    # the kubernetes client writes certificate data to temporary files it remembers by content (this process's
    # own clients may have written this CA already): the module's CA must not become such a file
    ca = str(base64.b64decode(yaml.safe_load(text)["clusters"][0]["cluster"]["certificate-authority-data"]))
    earlier = kube_config._temp_files.pop(ca, None)
    try:
        result = ok(run_in_process(MODULE, dict(cluster=name, namespace=NAMESPACE,
                                                kubernetes=management_by_options(cloud))))
        assert ca not in kube_config._temp_files
    finally:
        if earlier:
            kube_config._temp_files[ca] = earlier
    assert result["server"].endswith("/clusters/%s/%s" % (NAMESPACE, name))
    assert result["server"] == yaml.safe_load(text)["clusters"][0]["cluster"]["server"]
    assert result["kubernetes_version"] and not result["changed"] and result["dest"] is None
    assert result["secret"] == {"name": "%s-kubeconfig" % name, "namespace": NAMESPACE, "key": "value"}
    assert result["api_calls"] == 2  # the Secret, then /version of the workload API
    assert token not in json.dumps(result)


def test_workload_kubeconfig_writes_dest_0600_once_and_check_mode_writes_nothing(
        cloud, workload, run_in_process, tmp_path):
    name, text, token = workload
    dest = tmp_path / "workload.kubeconfig"
    args = dict(cluster=name, namespace=NAMESPACE, kubernetes=management(cloud), dest=str(dest), check_api=False)

    planned = ok(run_in_process(MODULE, args, check_mode=True, diff=True))
    assert planned["changed"] and not dest.exists()
    assert token not in json.dumps(planned) and "(kubeconfig from Secret" in planned["diff"]["after"]

    written = ok(run_in_process(MODULE, args))
    assert written["changed"] and "kubernetes_version" not in written and written["api_calls"] == 1
    assert dest.read_text() == text
    assert stat.S_IMODE(dest.stat().st_mode) == 0o600

    again = ok(run_in_process(MODULE, args, diff=True))
    assert not again["changed"] and "diff" not in again

    dest.chmod(0o644)
    loose = ok(run_in_process(MODULE, args, check_mode=True))
    assert loose["changed"] and stat.S_IMODE(dest.stat().st_mode) == 0o644
    assert ok(run_in_process(MODULE, args))["changed"] and stat.S_IMODE(dest.stat().st_mode) == 0o600


def test_the_token_is_not_in_verbose_playbook_output(cloud, workload, run_module, tmp_path):
    name, text, token = workload
    dest = tmp_path / "kubeconfig"
    run = run_module(MODULE, dict(secret={"name": "%s-kubeconfig" % name, "namespace": NAMESPACE},
                                  kubernetes=management(cloud), dest=str(dest)), diff=True, verbosity=3)
    assert run.rc == 0, run.output[-3000:]
    assert run.result["changed"] and dest.read_text() == text
    assert "%s-kubeconfig" % name in run.output  # the invocation shows the reference
    assert token not in run.output
    assert base64.b64encode(text.encode()).decode()[:40] not in run.output


def test_a_missing_secret_a_missing_key_and_a_refusal_are_clear_errors(cloud, workload, run_in_process):
    name, text, token = workload
    missing = run_in_process(MODULE, dict(cluster="no-such-cluster", namespace=NAMESPACE,
                                          kubernetes=management(cloud)))
    assert missing["failed"]
    assert missing["msg"].startswith("Secret fleet/no-such-cluster-kubeconfig does not exist")

    core = client.CoreV1Api(cloud.api.kube_client())
    other = unique("other")
    core.create_namespaced_secret(NAMESPACE, {"metadata": {"name": other},
                                              "data": {"config": base64.b64encode(text.encode()).decode()}})
    try:
        nokey = run_in_process(MODULE, dict(secret={"name": other, "namespace": NAMESPACE},
                                            kubernetes=management(cloud)))
        assert nokey["failed"] and "Secret fleet/%s has no key 'value' (its keys: config)" % other in nokey["msg"]
        assert ok(run_in_process(MODULE, dict(secret={"name": other, "namespace": NAMESPACE, "key": "config"},
                                              kubernetes=management(cloud), check_api=False)))["user"]
    finally:
        core.delete_namespaced_secret(other, NAMESPACE)

    secret_path = "/api/v1/namespaces/%s/secrets/%s-kubeconfig" % (NAMESPACE, name)
    cloud.fault("kubernetes", secret_path, 401, count=1)
    refused = run_in_process(MODULE, dict(cluster=name, namespace=NAMESPACE, kubernetes=management(cloud)))
    assert refused["failed"] and refused["msg"] == (
        "reading Secret fleet/%s-kubeconfig: the cluster at %s refused the credentials (HTTP 401)"
        % (name, yaml.safe_load((cloud.state_dir / "kubeconfig").read_text())["clusters"][0]["cluster"]["server"]))
    assert refused["api_calls"] == 1

    cloud.fault("kubernetes", secret_path, 503, count=1)
    retried = ok(run_in_process(MODULE, dict(cluster=name, namespace=NAMESPACE, kubernetes=management(cloud),
                                             check_api=False)))
    assert retried["api_calls"] == 2 and retried["retried_faults"]
    for result in (missing, nokey, refused, retried):
        assert token not in json.dumps(result)
