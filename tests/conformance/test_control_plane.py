# -*- coding: utf-8 -*-
"""The real control plane itself: what minicloud started, as the real clients see it."""

import json

from conftest import capi_version

# what each release's plane runs, as pinned in tools/upstream (CAPD of v1.13 comes from the test module v1.13.7)
PINNED = {"v1.13": {"cluster-api": "v1.13.6", "kubeadm-control-plane": "v1.13.6", "kubeadm-bootstrap": "v1.13.6",
                    "capd": "v1.13.7"},
          "v1.12": {"cluster-api": "v1.12.5", "kubeadm-control-plane": "v1.12.5", "kubeadm-bootstrap": "v1.12.5",
                    "capd": "v1.12.5"}}


def test_readyz_shows_the_real_servers_checks_etcd_included(kubectl):
    out = kubectl("get", "--raw", "/readyz?verbose").stdout
    assert "[+]etcd ok" in out
    assert "readyz check passed" in out


def test_status_names_every_component_with_its_version_and_process(upstream):
    status = json.loads(upstream.process("status", "--json").stdout)
    names = {p["name"].split(" ")[0]: p for p in status["processes"]}
    expected = dict(PINNED[capi_version()], etcd="v3.6.16", **{"kube-apiserver": "v1.34.4"})
    for component, version in expected.items():
        assert names[component]["name"] == "%s %s" % (component, version)
        assert names[component]["healthy"] and names[component]["pid"]
    assert names["capo-load-balancer"]["healthy"]
    # the clients' kubeconfig names the fault proxy, which forwards to kube-apiserver on a port of its own
    proxy, server = names["kubernetes-api-proxy"], names["kube-apiserver"]
    assert proxy["healthy"] and proxy["pid"] and proxy["endpoint"] != server["endpoint"], (proxy, server)
    assert status["healthy"]


def test_kubectl_prints_capi_columns_from_the_real_server(kubectl, capi_cluster):
    out = kubectl("get", "kubeadmcontrolplanes", "-n", capi_cluster["namespace"]).stdout
    header = out.splitlines()[0].split()
    assert header[:2] == ["NAME", "CLUSTER"]
    assert capi_cluster["kcp"] in out


def test_a_v1beta1_reader_gets_the_cluster_through_the_real_conversion_webhook(kubectl, capi_cluster):
    old = json.loads(kubectl("get", "clusters.v1beta1.cluster.x-k8s.io", capi_cluster["name"], "-n",
                             capi_cluster["namespace"], "-o", "json").stdout)
    new = json.loads(kubectl("get", "clusters.v1beta2.cluster.x-k8s.io", capi_cluster["name"], "-n",
                             capi_cluster["namespace"], "-o", "json").stdout)
    assert old["apiVersion"] == "cluster.x-k8s.io/v1beta1"
    # v1beta1 refs carry apiVersion, v1beta2 refs apiGroup: the webhook converted it
    assert old["spec"]["controlPlaneRef"]["apiVersion"].startswith("controlplane.cluster.x-k8s.io/")
    assert new["spec"]["controlPlaneRef"]["apiGroup"] == "controlplane.cluster.x-k8s.io"
    # v1beta2 conditions live under status.v1beta2.conditions for a v1beta1 reader
    assert any(c["type"] == "Available" for c in old["status"]["v1beta2"]["conditions"])
