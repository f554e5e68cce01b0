# -*- coding: utf-8 -*-
"""Every module that takes a Cluster API cluster refuses, before any request, a value that can never name one
(one rule, core.names): an empty or upper-case name, a namespace/name with a part missing."""

import pytest

KUBERNETES_TOP = ("cluster_info", "cluster_pause_ack", "cluster_lease")

CASES = [
    ("resource_leak_audit", dict(cluster="default/"), "the name"),
    ("resource_leak_audit", dict(cluster="/"), "the namespace"),
    ("resource_leak_audit", dict(cluster="Default/C1"), "is no valid Kubernetes name"),
    ("resource_leak_audit", dict(cluster="C1"), "names no Cluster API cluster"),
    ("resource_leak_audit", dict(clusters=["default/c1", "default/"]), "clusters[1]"),
    ("cluster_info", dict(name="C1"), "is no valid Kubernetes name"),
    ("cluster_info", dict(name="c1", namespace=""), "namespace ''"),
    ("cluster_pause_ack", dict(name=""), "name ''"),
    ("cluster_lease", dict(name="C1", holder=dict(id="run-a")), "is no valid Kubernetes name"),
    ("cluster_lease", dict(name="c" * 250, holder=dict(id="run-a")), "too long"),
    ("cluster_lease", dict(name="c1", holder=dict(id="")), "holder.id must not be empty"),
    ("cluster_readiness", dict(name="", pool="p"), "name ''"),
    ("cluster_readiness", dict(name="C1"), "is no valid Kubernetes name"),
    ("workload_kubeconfig", dict(cluster=""), "cluster ''"),
    ("workload_kubeconfig", dict(cluster="c1", namespace="Default"), "namespace 'Default'"),
]


@pytest.mark.parametrize("module, args, words", CASES)
def test_a_value_that_names_no_cluster_is_refused_before_any_request(minicloud, run_in_process, module, args, words):
    task = dict(args)
    kubeconfig = str(minicloud.state_dir / "kubeconfig")
    if module in KUBERNETES_TOP:
        task["kubeconfig"] = kubeconfig
    if module in ("workload_kubeconfig", "cluster_readiness"):
        task["kubernetes"] = dict(kubeconfig=kubeconfig)
    if module in ("resource_leak_audit", "cluster_readiness"):
        task["cloud"] = "minicloud"
    minicloud.reset_counts()
    result = run_in_process(module, task)
    assert result.get("failed") and words in result["msg"], result
    assert result["api_calls"] == 0 and minicloud.write_count() == 0, result
