# -*- coding: utf-8 -*-

import pytest

pytest.importorskip("kubernetes")

from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.kubeconfig_secret import (  # noqa: E402
    SecretRef,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.workload_kubeconfig.runner import (  # noqa: E402
    file_diff,
    secret_options,
)

CONTENT = b"apiVersion: v1\nusers:\n- name: admin\n  user:\n    token: s3cr3t-token\n"
REF = SecretRef("prod-kubeconfig", "clusters")


def test_the_cluster_shortcut_names_cluster_apis_secret():
    assert secret_options({"cluster": "prod", "namespace": "clusters", "secret": None}) == (
        {"name": "prod-kubeconfig", "namespace": "clusters", "key": "value"}, "cluster")
    given = {"name": "admin", "namespace": "x", "key": "config"}
    assert secret_options({"cluster": None, "namespace": "default", "secret": given}) == (given, "secret")


@pytest.mark.parametrize("before, mode, words", [
    (None, None, ("", "content: (kubeconfig from Secret clusters/prod-kubeconfig, not shown)\nmode: 0600\n")),
    (b"old: kubeconfig\n", 0o600, ("content: (another kubeconfig, not shown)\nmode: 0600\n",
                                   "content: (kubeconfig from Secret clusters/prod-kubeconfig, not shown)\n"
                                   "mode: 0600\n")),
    (CONTENT, 0o644, ("content: (kubeconfig, not shown)\nmode: 0644\n",
                      "content: (kubeconfig, not shown)\nmode: 0600\n")),
])
def test_the_diff_says_what_changes_without_the_content(before, mode, words):
    diff = file_diff("/run/k.yaml", REF, before, mode, CONTENT)
    assert (diff["before"], diff["after"]) == words
    assert "s3cr3t" not in repr(diff) and "old: kubeconfig" not in repr(diff)
