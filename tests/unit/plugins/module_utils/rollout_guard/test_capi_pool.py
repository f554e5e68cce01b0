# -*- coding: utf-8 -*-
"""rollout_guard mode=capi: the pool it guards, found on the OpenStackCluster in either of CAPO's API versions
when ``pool`` is not given."""

import copy

import pytest

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.capi_runner import api_pool
from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils import capi_samples as s
from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils.rollout_guard.rollout_options import (
    rollout_options,
)

LB = "k8s-clusterapi-cluster-default-c1"  # capi_samples' load balancer name


def capo_v1beta2(port=None):
    infra = copy.deepcopy(s.openstack_cluster())
    infra["apiVersion"] = "infrastructure.cluster.x-k8s.io/v1beta2"
    status = infra["status"]
    status["apiServerManagedLoadBalancer"] = status.pop("apiServerLoadBalancer")
    status.pop("ready")
    status["initialization"] = {"provisioned": True}
    if port:
        infra["spec"] = {"apiServer": {"port": port, "managedLoadBalancer": {"enabled": True}}}
    return infra


def test_capo_v1beta1_and_v1beta2_give_the_same_pool_without_pool_given():
    assert api_pool(rollout_options(), s.openstack_cluster(), "default/c1") == (LB + "-6443", "lb-1")
    assert api_pool(rollout_options(), capo_v1beta2(), "default/c1") == (LB + "-6443", "lb-1")
    assert api_pool(rollout_options(), capo_v1beta2(port=8443), "default/c1") == (LB + "-8443", "lb-1")


def test_given_pool_and_load_balancer_win():
    assert api_pool(rollout_options(pool="p"), capo_v1beta2(), "default/c1") == ("p", "lb-1")
    assert api_pool(rollout_options(pool="p", loadbalancer="lb-x"), None, "default/c1") == ("p", "lb-x")
    assert api_pool(rollout_options(pool="p"), None, "default/c1") == ("p", None)


def test_no_load_balancer_names_both_fields_and_asks_for_pool():
    infra = capo_v1beta2()
    del infra["status"]["apiServerManagedLoadBalancer"]
    with pytest.raises(ModuleFailure) as info:
        api_pool(rollout_options(), infra, "default/c1")
    message = str(info.value)
    assert message.startswith("Cluster default/c1: OpenStackCluster default/c1 reports no API load balancer")
    assert "status.apiServerManagedLoadBalancer" in message and message.endswith("; give pool")


def test_two_different_load_balancers_are_refused_unless_both_are_given():
    infra = capo_v1beta2()
    infra["status"]["apiServerLoadBalancer"] = {"id": "lb-2", "name": "other"}
    with pytest.raises(ModuleFailure) as info:
        api_pool(rollout_options(), infra, "default/c1")
    assert "carries both" in str(info.value) and "give pool and loadbalancer" in str(info.value)
    assert api_pool(rollout_options(pool="p", loadbalancer="lb-2"), infra, "default/c1") == ("p", "lb-2")
