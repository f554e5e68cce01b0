# -*- coding: utf-8 -*-
"""rollout_guard's start on a ClusterClass cluster: through the Cluster's spec.topology.controlPlane.rollout.after,
never a patch of the control plane; refused before any write where the dry run shows the field missing."""

import datetime

import pytest

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard import machines
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.topology_start import (
    TopologyStart,
)

NOW = datetime.datetime(2026, 11, 27, 6, 0, 0, 400000, tzinfo=datetime.timezone.utc)
CLUSTER = {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
           "metadata": {"name": "c1", "namespace": "default"},
           "spec": {"topology": {"classRef": {"name": "in-memory"}, "version": "v1.34.0",
                                 "controlPlane": {"replicas": 3}}}}
PLAIN = {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "metadata": {"name": "c1", "namespace": "default"},
         "spec": {}}
KCP = {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlane", "spec": {"replicas": 3}}


class FakeCapi:
    """The Cluster's patches, recorded; ``has_field``: whether this Cluster API keeps the topology rollout field."""

    def __init__(self, has_field):
        self.has_field = has_field
        self.patches = []

    def patch_cluster(self, cluster, body, what, deadline, dry_run=False):
        self.patches.append((body, dry_run))
        answer = {"spec": {"topology": {"controlPlane": {"replicas": 3}}}}
        if self.has_field:
            answer["spec"]["topology"]["controlPlane"]["rollout"] = body["spec"]["topology"]["controlPlane"]["rollout"]
        return answer


def test_on_a_topology_cluster_the_start_is_the_clusters_field():
    target, patch = machines.rollout_start(CLUSTER, KCP, NOW)
    assert target == machines.TOPOLOGY_START
    assert patch == {"spec": {"topology": {"controlPlane": {"rollout": {"after": "2026-11-27T06:00:00Z"}}}}}


def test_on_a_plain_cluster_the_start_is_the_control_planes_rollout_time_in_its_version():
    assert machines.rollout_start(PLAIN, KCP, NOW) == (
        machines.CONTROL_PLANE_START, {"spec": {"rollout": {"after": "2026-11-27T06:00:00Z"}}})
    v1beta1 = dict(KCP, apiVersion="controlplane.cluster.x-k8s.io/v1beta1")
    assert machines.rollout_start(PLAIN, v1beta1, NOW)[1] == {"spec": {"rolloutAfter": "2026-11-27T06:00:00Z"}}


def test_the_check_is_a_dry_run_and_the_start_one_patch_of_the_cluster():
    capi = FakeCapi(has_field=True)
    start = TopologyStart(capi, CLUSTER)
    start.check(NOW, deadline=None)
    assert capi.patches == [({"spec": {"topology": {"controlPlane": {"rollout": {"after": "2026-11-27T06:00:01Z"}}}}},
                             True)]
    target, patched = start.start(KCP, machines.rollout_time(NOW), deadline=None)
    assert target == machines.TOPOLOGY_START and patched is not None
    assert capi.patches[-1] == (
        {"spec": {"topology": {"controlPlane": {"rollout": {"after": "2026-11-27T06:00:01Z"}}}}}, False)


def test_where_cluster_api_prunes_the_field_the_run_is_refused_with_only_the_dry_run_sent():
    capi = FakeCapi(has_field=False)
    with pytest.raises(ModuleFailure) as refused:
        TopologyStart(capi, CLUSTER).check(NOW, deadline=None)
    assert "Upgrade Cluster API to v1.13" in str(refused.value) and "spec.topology.version" in str(refused.value)
    assert refused.value.data["changed"] is False and refused.value.data["topology"]["class"] == "in-memory"
    assert [dry for dummy, dry in capi.patches] == [True]


def test_a_plain_cluster_is_not_checked_and_its_start_left_to_the_control_plane():
    capi = FakeCapi(has_field=False)
    start = TopologyStart(capi, PLAIN)
    start.check(NOW, deadline=None)
    assert start.start(KCP, NOW, deadline=None) == (machines.CONTROL_PLANE_START, None)
    assert capi.patches == []


def test_the_guard_starts_a_topology_cluster_through_the_cluster_and_never_patches_its_control_plane():
    from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils.rollout_guard.test_capi_runner import (
        rollout,
    )
    runner, world = rollout()
    capi = FakeCapi(has_field=True)
    runner.starter = TopologyStart(capi, CLUSTER)
    runner.progress.started_after = runner.clock.utc_now() - datetime.timedelta(seconds=1)
    runner.start_rollout(KCP, deadline=2000)
    assert world.writes == [], "nothing written to the KubeadmControlPlane"
    assert [dry for dummy, dry in capi.patches] == [False] and runner.progress.started
    assert [a["action"] for a in runner.log.actions] == ["start"]
