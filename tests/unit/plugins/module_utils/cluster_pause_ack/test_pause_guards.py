# -*- coding: utf-8 -*-
"""The refusals of cluster_pause_ack before its write: an unpause during a move, a reference not served."""

import pytest

from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.service import CapiService
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import NotServed
from ansible_collections.flightcontrol.openstack.plugins.module_utils.cluster_pause_ack.plan import moving


def obj(kind, name, **annotations):
    return {"kind": kind, "metadata": {"namespace": "ns", "name": name, "annotations": annotations}}


def test_objects_in_a_move_are_named_with_their_annotation():
    objects = [obj("Cluster", "c"), obj("OpenStackCluster", "c", **{"clusterctl.cluster.x-k8s.io/block-move": ""}),
               obj("Machine", "m", **{"clusterctl.cluster.x-k8s.io/delete-for-move": ""})]
    assert moving(objects) == ["OpenStackCluster ns/c (clusterctl.cluster.x-k8s.io/block-move)",
                               "Machine ns/m (clusterctl.cluster.x-k8s.io/delete-for-move)"]
    assert moving(objects[:1]) == []


def capi(served):
    service = CapiService(kube=None)
    service.served = served
    return service


def cluster(ref):
    return {"metadata": {"namespace": "ns", "name": "c"}, "spec": {"infrastructureRef": ref}}


def test_a_reference_to_a_group_not_served_is_refused_naming_it():
    service = capi({"cluster.x-k8s.io": ["v1beta2"]})
    with pytest.raises(NotServed) as info:
        service.check_refs(cluster({"apiGroup": "infra.example.org", "kind": "FooCluster", "name": "c"}), "v1beta2")
    assert str(info.value).startswith("the infrastructureRef of Cluster ns/c names FooCluster ns/c in API group "
                                      "infra.example.org, which this Kubernetes API does not serve (no such group")


def test_a_reference_to_a_version_not_served_names_the_versions_served():
    service = capi({"cluster.x-k8s.io": ["v1beta2"], "infra.example.org": ["v1beta1"]})
    with pytest.raises(NotServed, match="version v1alpha7, which .* serves infra.example.org in versions v1beta1"):
        service.check_refs(cluster({"apiVersion": "infra.example.org/v1alpha7", "kind": "F", "name": "c"}), "v1beta2")
    service.check_refs(cluster({"apiVersion": "infra.example.org/v1beta1", "kind": "F", "name": "c"}), "v1beta2")
    service.check_refs(cluster(None), "v1beta2")
