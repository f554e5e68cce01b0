# -*- coding: utf-8 -*-
"""The cluster values a module takes: refused before any request when they can never name a Cluster API cluster
(core.names, the one rule of every module that takes a cluster), and resource_leak_audit refusing them."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core import names
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.flightcontrol.openstack.plugins.module_utils.resource_leak_audit.runner import (
    ResourceLeakAuditOptions,
    ResourceLeakAuditRunner,
)

REFUSED = ["default/", "/", "/c1", "Default/C1", "default/C1", "default/c1/x", "", "-", "default-", "-c1", "C1",
           "default_c1", " default/c1", "default/c1 ", "default/c 1", "a" * 64 + "/c1", "de.fault/c1", "default/-c1",
           "DEFAULT-C1"]
ACCEPTED = ["default/c1", "team-a/pk-kubeapi", "default/c1.example", "default-c1", "team-a-pk-kubeapi", "a/b"]


@pytest.mark.parametrize("text", REFUSED)
def test_a_value_that_names_no_cluster_is_refused(text):
    assert names.cluster_reference_problem("cluster", text) is not None


@pytest.mark.parametrize("text", ACCEPTED)
def test_a_cluster_as_namespace_name_or_resource_name_is_accepted(text):
    assert names.cluster_reference_problem("cluster", text) is None


def test_the_one_rule_for_a_name_and_namespace_given_apart():
    assert names.cluster_problems("c1", "default") == []
    assert names.cluster_problems(None, "default") == []  # not given
    assert len(names.cluster_problems("", "Default")) == 2
    with pytest.raises(ModuleFailure, match="'C1' is no valid Kubernetes name.*nothing was changed"):
        names.check_cluster("C1", "default")
    with pytest.raises(ModuleFailure, match="cluster ''"):
        names.check_cluster("", "default", "cluster")


LABEL = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,8}[a-z0-9])?", fullmatch=True)


@settings(max_examples=200, deadline=None)
@given(LABEL, LABEL, st.text(max_size=12))
def test_valid_names_pass_and_anything_else_never_passes_as_namespace_name(namespace, name, noise):
    assert names.cluster_reference_problem("cluster", "%s/%s" % (namespace, name)) is None
    assert names.cluster_reference_problem("cluster", "%s-%s" % (namespace, name)) is None
    text = "%s/%s%s" % (namespace, name, noise)
    valid = names.name_problem("n", name + noise) is None
    assert (names.cluster_reference_problem("cluster", text) is None) == valid


class NoRequests:
    """A module base whose connection must not be made."""

    clock = None
    started = 0.0
    deadline = None

    def connect(self):
        raise AssertionError("a request was about to be made")


def runner(**options):
    values = dict(cluster=None, clusters=[], port_grace_period=3600, cleanup=["security_groups"], max_deletions=3,
                  fail_on_findings=False, timeout=300)
    values.update(options)
    return ResourceLeakAuditRunner(NoRequests(), ResourceLeakAuditOptions(**values))


@pytest.mark.parametrize("options", [dict(cluster="default/"), dict(cluster="/"), dict(cluster="Default/C1"),
                                     dict(cluster=""), dict(clusters=["default/c1", "Default/C1"]),
                                     dict(clusters=[""])])
def test_resource_leak_audit_refuses_before_any_request(options):
    with pytest.raises(ModuleFailure, match="nothing was read or deleted"):
        runner(**options).run()
