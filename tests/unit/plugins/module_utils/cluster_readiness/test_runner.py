# -*- coding: utf-8 -*-
"""What makes a view unknown rather than the run failed: a refusal (403), a kind or object not there (404, not
served); anything else fails the run."""

import pytest
from kubernetes.client import ApiException

from ansible_collections.flightcontrol.openstack.plugins.module_utils.cluster_readiness import plan
from ansible_collections.flightcontrol.openstack.plugins.module_utils.cluster_readiness.runner import (
    ClusterReadinessRunner,
    openstack_given,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import NotServed


class Module(object):
    clock = None
    started = 0.0
    deadline = None


def raising(exc):
    def func():
        raise exc
    return func


@pytest.mark.parametrize("exc, words", [
    (ApiException(status=403, reason="Forbidden"), "HTTP 403"),
    (ApiException(status=404, reason="Not Found"), "HTTP 404"),
    (NotServed("cluster.x-k8s.io/v1beta2 does not serve kind MachineHealthCheck"), "does not serve"),
])
def test_a_refused_or_missing_read_is_unknown(exc, words):
    found = ClusterReadinessRunner(Module(), None).read("listing things", raising(exc))
    assert plan.is_unknown(found) and found.reason.startswith("listing things: ") and words in found.reason


def test_other_errors_fail_the_run():
    with pytest.raises(ApiException):
        ClusterReadinessRunner(Module(), None).read("listing things", raising(ApiException(status=500)))


def test_the_monitor_is_asked_for_by_a_connection_or_a_pool():
    assert not openstack_given({"cloud": None, "auth": None, "pool": None}, {})
    assert openstack_given({"cloud": "prod"}, {}) and openstack_given({"pool": "p"}, {})
    assert openstack_given({}, {"OS_CLOUD": "prod"})
