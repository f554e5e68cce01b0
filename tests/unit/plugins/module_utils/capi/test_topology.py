# -*- coding: utf-8 -*-
"""capi/topology.py: a ClusterClass cluster read in either contract, the rollout patch through the Cluster, and
the dry run's answer read as "this Cluster API has the field" or not."""

import pytest

from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi import topology

V1BETA2 = {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
           "metadata": {"name": "c1", "namespace": "team-a"},
           "spec": {"topology": {"classRef": {"name": "in-memory"}, "version": "v1.34.0",
                                 "controlPlane": {"replicas": 3}}}}
V1BETA1 = {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
           "metadata": {"name": "c1", "namespace": "team-a"},
           "spec": {"topology": {"class": "in-memory", "classNamespace": "classes", "version": "v1.34.0",
                                 "controlPlane": {"replicas": 3}}}}
PLAIN = {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "metadata": {"name": "c1", "namespace": "a"},
         "spec": {"controlPlaneRef": {"kind": "KubeadmControlPlane", "name": "c1-control-plane"}}}
KCP = {"spec": {"version": "v1.34.0", "replicas": 3}}


def test_the_class_is_read_in_either_contract_its_namespace_defaulting_to_the_clusters():
    assert topology.class_of(V1BETA2) == ("in-memory", "team-a")
    assert topology.class_of(V1BETA1) == ("in-memory", "classes")
    assert topology.class_of(PLAIN) == (None, None)
    assert topology.is_managed(V1BETA2) and topology.is_managed(V1BETA1)
    assert not topology.is_managed(PLAIN) and not topology.is_managed(None)


def test_the_view_says_managed_by_which_class_and_whether_an_upgrade_is_under_way():
    view = topology.topology_view(V1BETA2, KCP)
    assert view["managed"] is True and view["class"] == "in-memory" and view["class_namespace"] == "team-a"
    assert view["upgrading"] is False and view["control_plane_replicas"] == 3 and view["rollout_after"] is None
    upgrading = dict(V1BETA2, spec={"topology": dict(V1BETA2["spec"]["topology"], version="v1.34.1")})
    assert topology.topology_view(upgrading, KCP)["upgrading"] is True
    assert topology.topology_view(upgrading, None)["upgrading"] is False, "unknown without the control plane"
    assert topology.topology_view(PLAIN, KCP) == {
        "managed": False, "class": None, "class_namespace": None, "version": None, "control_plane_version": None,
        "upgrading": False, "control_plane_replicas": None, "rollout_after": None}


def test_the_rollout_patch_is_the_clusters_topology_field_never_the_control_planes():
    patch = topology.rollout_after_patch("2026-11-27T06:00:01Z")
    assert patch == {"spec": {"topology": {"controlPlane": {"rollout": {"after": "2026-11-27T06:00:01Z"}}}}}


@pytest.mark.parametrize("answer, kept", [
    # Cluster API v1.13: the dry run's answer carries the value
    ({"spec": {"topology": {"controlPlane": {"rollout": {"after": "2026-11-27T06:00:01Z"}, "replicas": 3}}}}, True),
    # v1.12: the schema has no controlPlane.rollout, the API server pruned it
    ({"spec": {"topology": {"controlPlane": {"replicas": 3}}}}, False),
    # another time than asked (an older value kept, the patch dropped) is no proof
    ({"spec": {"topology": {"controlPlane": {"rollout": {"after": "2026-01-01T00:00:00Z"}}}}}, False),
    (None, False),
])
def test_the_dry_run_answer_tells_whether_this_cluster_api_has_the_field(answer, kept):
    assert topology.rollout_field_kept(answer, "2026-11-27T06:00:01Z") is kept


def test_the_refusal_names_the_class_the_field_the_release_and_what_to_do():
    message = topology.no_rollout_field(V1BETA2)
    assert "Cluster team-a/c1" in message and "ClusterClass team-a/in-memory" in message
    assert "spec.topology.controlPlane.rollout.after" in message and "v1.13" in message
    assert "spec.topology.version" in message and "nothing was changed" in message


def test_the_dry_run_is_a_read_and_the_start_a_write_of_the_cluster():
    from types import SimpleNamespace

    from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.service import CapiService
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.retry import IDEMPOTENT, READ

    kinds, sent = [], []

    def patch(group, version, namespace, plural, name, body, **extra):
        sent.append((group, version, namespace, plural, name, extra))
        return body

    kube = SimpleNamespace(custom=SimpleNamespace(patch_namespaced_custom_object=patch),
                           call=lambda func, what, deadline, kind=None: kinds.append(kind) or func())
    service = CapiService(kube)
    service.patch_cluster(V1BETA2, {"spec": {}}, "checking", None, dry_run=True)
    service.patch_cluster(V1BETA2, {"spec": {}}, "starting", None)
    assert kinds == [READ, IDEMPOTENT], "a dry run persists nothing: it is no write (no changed, not in writes)"
    assert sent == [("cluster.x-k8s.io", "v1beta2", "team-a", "clusters", "c1", {"dry_run": "All"}),
                    ("cluster.x-k8s.io", "v1beta2", "team-a", "clusters", "c1", {})]


def test_the_control_plane_as_wanted_takes_the_clusters_version_and_later_rollout_time():
    upgraded = {**V1BETA2, "spec": {"topology": {**V1BETA2["spec"]["topology"], "version": "v1.35.0",
                                                 "controlPlane": {"rollout": {"after": "2026-01-01T10:00:00Z"}}}}}
    kcp2 = {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2",
            "spec": {"version": "v1.34.0", "rollout": {"after": "2025-01-01T00:00:00Z"}}}
    wanted = topology.control_plane_as_wanted(upgraded, kcp2)
    assert wanted["spec"] == {"version": "v1.35.0", "rollout": {"after": "2026-01-01T10:00:00Z"}}
    assert kcp2["spec"]["version"] == "v1.34.0"  # a copy: the control plane as read is left as it is
    kcp1 = {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "spec": {"version": "v1.34.0"}}
    assert topology.control_plane_as_wanted(upgraded, kcp1)["spec"] == {
        "version": "v1.35.0", "rolloutAfter": "2026-01-01T10:00:00Z"}
    later = {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2",
             "spec": {"version": "v1.35.0", "rollout": {"after": "2027-01-01T00:00:00Z"}}}
    assert topology.control_plane_as_wanted(upgraded, later)["spec"]["rollout"]["after"] == "2027-01-01T00:00:00Z"
    assert topology.control_plane_as_wanted(PLAIN, kcp2) is kcp2  # not topology-managed: as it is
    assert topology.control_plane_as_wanted(V1BETA2, None) is None


def test_an_upgrade_in_steps_is_judged_step_by_step():
    """The topology controller may write an intermediate version onto the control plane (an upgrade in steps, or
    the Cluster's version raised again during a rollout): while the control plane rolls to it, its Machines of that
    version are the new ones; once every Machine has it, the Cluster's version is wanted again."""
    cluster = {**V1BETA2, "spec": {"topology": {**V1BETA2["spec"]["topology"], "version": "v1.33.0"}}}
    kcp = {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "spec": {"version": "v1.32.0"}}
    rolling = topology.control_plane_as_wanted(cluster, kcp, ["v1.31.0", "v1.32.0", None])
    assert rolling["spec"]["version"] == "v1.32.0"
    between = topology.control_plane_as_wanted(cluster, kcp, ["v1.32.0", "1.32.0"])
    assert between["spec"]["version"] == "v1.33.0"
    not_yet = topology.control_plane_as_wanted(cluster, {**kcp, "spec": {"version": "v1.31.0"}}, ["v1.31.0"] * 3)
    assert not_yet["spec"]["version"] == "v1.33.0"  # the Cluster changed, the control plane not yet
