# -*- coding: utf-8 -*-
"""Faults of the Kubernetes API on the real server: minicloud's fault proxy in front of kube-apiserver (the
kubeconfig names it) applies the same rules as the emulated API server. The modules retry what is transient, and
a pause whose answer is lost after the real server committed it is still acknowledged."""

import pytest

CLUSTERS = "/apis/cluster.x-k8s.io/*/namespaces/*/clusters/*"


@pytest.fixture
def faults(upstream):
    upstream.clear_faults()
    upstream.reset_counts()
    yield upstream
    upstream.clear_faults()


def pause_args(cluster, state):
    return {"name": cluster["name"], "namespace": cluster["namespace"], "state": state, "timeout": 120,
            "poll_interval": 0.5, "quiet_period": 3}


def test_the_proxy_counts_and_faults_requests_to_the_real_server(faults, kubectl, capi_cluster):
    faults.fault("kubernetes", CLUSTERS, 503, count=1)
    failed = kubectl("get", "clusters.v1beta2.cluster.x-k8s.io", capi_cluster["name"], "-n",
                     capi_cluster["namespace"], "-o", "name", check=False)
    assert failed.returncode != 0 and "minicloud fault injection" in failed.stderr, failed.stderr
    served = kubectl("get", "clusters.v1beta2.cluster.x-k8s.io", capi_cluster["name"], "-n",
                     capi_cluster["namespace"], "-o", "name")
    assert served.stdout.strip() == "cluster.cluster.x-k8s.io/" + capi_cluster["name"]
    counted = faults.requests(service="kubernetes")["requests"]["kubernetes"]["GET"]
    path = "/apis/cluster.x-k8s.io/v1beta2/namespaces/%s/clusters/%s" % (
        capi_cluster["namespace"], capi_cluster["name"])
    assert counted.get(path, 0) == 2, counted  # kubectl's two reads, one faulted; nothing else went by it


def test_transient_faults_and_a_lost_answer_do_not_fail_a_pause(faults, run_module, capi_cluster):
    faults.fault("kubernetes", CLUSTERS, 429, count=1, retry_after=1)
    faults.fault("kubernetes", "/apis/cluster.x-k8s.io/*/namespaces/*/machines", "drop", count=1)
    # the real server commits the pause; the client gets a 503 instead of its answer
    faults.api.add_fault("kubernetes", method="PATCH", path=CLUSTERS, status=503, count=1, after=True)
    try:
        paused = run_module("cluster_pause_ack", pause_args(capi_cluster, "paused"))
        assert not paused.get("failed"), paused
        assert paused["cluster"]["paused"] is True and paused["acknowledged"] is True, paused
        assert sorted(paused["retried_faults"], key=str) == [429, 503, "connection"], paused["retried_faults"]
    finally:
        faults.clear_faults()
        unpaused = run_module("cluster_pause_ack", pause_args(capi_cluster, "unpaused"))
    assert not unpaused.get("failed") and unpaused["cluster"]["paused"] is False, unpaused
