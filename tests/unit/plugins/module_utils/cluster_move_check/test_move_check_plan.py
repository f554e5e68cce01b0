# -*- coding: utf-8 -*-
"""cluster_move_check/plan.py and the ClusterClass reads of capi/topology.py: the kinds a ClusterClass cluster
needs on a move target (both contracts), the ones a target's discovery lacks, and a different class there."""

import copy

from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi import topology
from ansible_collections.flightcontrol.openstack.plugins.module_utils.cluster_move_check import plan

INFRA = "infrastructure.cluster.x-k8s.io"
CP = "controlplane.cluster.x-k8s.io"
BOOT = "bootstrap.cluster.x-k8s.io"
CORE = "cluster.x-k8s.io"


def ref(group, kind, name):
    return {"apiVersion": "%s/v1beta2" % group, "kind": kind, "name": name}


CLASS_V1BETA2 = {
    "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "ClusterClass",
    "metadata": {"name": "in-memory", "namespace": "team-a"},
    "spec": {
        "infrastructure": {"templateRef": ref(INFRA, "DevClusterTemplate", "in-memory-cluster")},
        "controlPlane": {"templateRef": ref(CP, "KubeadmControlPlaneTemplate", "in-memory-control-plane"),
                         "machineInfrastructure": {"templateRef": ref(INFRA, "DevMachineTemplate", "in-memory-cp")}},
        "workers": {"machineDeployments": [{
            "class": "default-worker",
            "bootstrap": {"templateRef": ref(BOOT, "KubeadmConfigTemplate", "in-memory-worker-boot")},
            "infrastructure": {"templateRef": ref(INFRA, "OpenStackMachineTemplate", "in-memory-worker")}}]},
        # a patch's selector names an apiVersion and a kind too: it references no template
        "patches": [{"name": "p", "definitions": [{"selector": {"apiVersion": "%s/v1beta2" % INFRA,
                                                                "kind": "DevClusterTemplate"}}]}],
    },
}

CLASS_V1BETA1 = {
    "apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "ClusterClass",
    "metadata": {"name": "in-memory", "namespace": "team-a"},
    "spec": {
        "infrastructure": {"ref": dict(ref(INFRA, "DevClusterTemplate", "c"), apiVersion=INFRA + "/v1beta1")},
        "controlPlane": {"ref": ref(CP, "KubeadmControlPlaneTemplate", "cp"),
                         "machineInfrastructure": {"ref": dict(ref(INFRA, "DevMachineTemplate", "m"),
                                                               apiVersion=INFRA + "/v1beta1")},
                         "machineHealthCheck": {"remediationTemplate": {
                             "apiVersion": INFRA + "/v1beta1", "kind": "Metal3RemediationTemplate", "name": "r"}}},
        "workers": {"machineDeployments": [{"class": "md", "template": {
            "bootstrap": {"ref": ref(BOOT, "KubeadmConfigTemplate", "b")},
            "infrastructure": {"ref": dict(ref(INFRA, "DevMachineTemplate", "w"), apiVersion=INFRA + "/v1beta1")}}}]},
    },
}

CLUSTER = {
    "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "metadata": {"name": "c1", "namespace": "team-a"},
    "spec": {"topology": {"classRef": {"name": "in-memory"}, "version": "v1.34.0"},
             "infrastructureRef": {"apiGroup": INFRA, "kind": "DevCluster", "name": "c1-x"},
             "controlPlaneRef": {"apiGroup": CP, "kind": "KubeadmControlPlane", "name": "c1-y"}},
}

ALL_KINDS = {
    (CORE, "v1beta2"): {"Cluster", "ClusterClass", "Machine"},
    (INFRA, "v1beta2"): {"DevClusterTemplate", "DevCluster", "DevMachineTemplate", "DevMachine",
                         "OpenStackMachineTemplate", "OpenStackMachine"},
    (CP, "v1beta2"): {"KubeadmControlPlaneTemplate", "KubeadmControlPlane"},
    (BOOT, "v1beta2"): {"KubeadmConfigTemplate", "KubeadmConfig"},
}


def apis(kinds):
    served = {}
    for group, version in kinds:
        served.setdefault(group, []).append(version)
    return plan.TargetApis(served, kinds)


def test_every_template_of_a_v1beta2_class_is_found_with_where_it_is():
    refs = topology.class_template_refs(CLASS_V1BETA2)
    assert [(r["kind"], r["field"]) for r in refs] == [
        ("DevClusterTemplate", "spec.infrastructure.templateRef"),
        ("KubeadmControlPlaneTemplate", "spec.controlPlane.templateRef"),
        ("DevMachineTemplate", "spec.controlPlane.machineInfrastructure.templateRef"),
        ("KubeadmConfigTemplate", "spec.workers.machineDeployments[default-worker].bootstrap.templateRef"),
        ("OpenStackMachineTemplate", "spec.workers.machineDeployments[default-worker].infrastructure.templateRef"),
    ]


def test_every_template_of_a_v1beta1_class_is_found_remediation_included():
    refs = topology.class_template_refs(CLASS_V1BETA1)
    assert [(r["api_version"], r["kind"]) for r in refs] == [
        (INFRA + "/v1beta1", "DevClusterTemplate"), (CP + "/v1beta2", "KubeadmControlPlaneTemplate"),
        (INFRA + "/v1beta1", "DevMachineTemplate"), (INFRA + "/v1beta1", "Metal3RemediationTemplate"),
        (BOOT + "/v1beta2", "KubeadmConfigTemplate"), (INFRA + "/v1beta1", "DevMachineTemplate")]
    assert refs[-1]["field"] == "spec.workers.machineDeployments[md].template.infrastructure.ref"
    assert topology.class_template_refs(None) == [] and topology.class_template_refs({"spec": {}}) == []


def test_a_template_makes_the_kind_without_its_suffix():
    assert topology.created_kind("DevMachineTemplate") == "DevMachine"
    assert topology.created_kind("KubeadmControlPlaneTemplate") == "KubeadmControlPlane"
    assert topology.created_kind("Template") is None and topology.created_kind("DevMachine") is None


def test_a_target_with_every_provider_lacks_nothing():
    needs = plan.needed_kinds(CLUSTER, CLASS_V1BETA2, "v1beta2")
    kinds = {(n.group, n.kind) for n in needs}
    assert {(CORE, "Cluster"), (CORE, "ClusterClass"), (INFRA, "DevCluster"), (CP, "KubeadmControlPlane"),
            (INFRA, "OpenStackMachine"), (BOOT, "KubeadmConfig")} <= kinds
    assert plan.missing_kinds(needs, apis(ALL_KINDS)) == []
    assert plan.blockers([], None) == []


def test_a_target_without_one_provider_names_each_of_its_kinds_and_what_needs_them():
    without_capo = copy.deepcopy(ALL_KINDS)
    without_capo[(INFRA, "v1beta2")] -= {"OpenStackMachineTemplate", "OpenStackMachine"}
    needs = plan.needed_kinds(CLUSTER, CLASS_V1BETA2, "v1beta2")
    missing = plan.missing_kinds(needs, apis(without_capo))
    assert [(m["api"], m["kind"]) for m in missing] == [(INFRA + "/v1beta2", "OpenStackMachineTemplate"),
                                                        (INFRA + "/v1beta2", "OpenStackMachine")]
    assert missing[0]["reason"] == "%s/v1beta2 does not serve kind OpenStackMachineTemplate" % INFRA
    assert missing[0]["needed_by"] == [
        "ClusterClass team-a/in-memory spec.workers.machineDeployments[default-worker].infrastructure.templateRef "
        "(in-memory-worker)"]
    words = plan.blockers(missing, None)
    assert len(words) == 1 and "does not serve 2 kind(s)" in words[0]
    assert "OpenStackMachineTemplate" in words[0] and "OpenStackMachine (" in words[0]


def test_a_target_without_kubeadm_control_plane_lacks_the_group_and_says_so_once_per_kind():
    without_kcp = dict((key, value) for key, value in ALL_KINDS.items() if key[0] != CP)
    missing = plan.missing_kinds(plan.needed_kinds(CLUSTER, CLASS_V1BETA2, "v1beta2"), apis(without_kcp))
    assert [(m["api"], m["kind"]) for m in missing] == [(CP, "KubeadmControlPlane"),
                                                        (CP + "/v1beta2", "KubeadmControlPlaneTemplate")]
    assert all(m["reason"] == "API group %s is not served" % CP for m in missing)
    # the Cluster's reference and the template's clone both need KubeadmControlPlane: one entry naming both
    assert len(missing[0]["needed_by"]) == 2 and "spec.controlPlaneRef" in missing[0]["needed_by"][0]
    assert missing[0]["needed_by"][1].startswith("what the topology controller makes from ClusterClass")


def test_a_version_the_target_does_not_serve_is_named_with_the_ones_it_serves():
    older = {(CORE, "v1beta2"): {"Cluster", "ClusterClass"}, (INFRA, "v1beta1"): {"DevClusterTemplate"}}
    need = plan.Need(INFRA, "v1beta2", "DevClusterTemplate", "x")
    assert plan.gap(need, apis(older)) == "%s is served only as v1beta1" % INFRA
    # a reference naming only the group (v1beta2 Cluster references) is served by any version
    assert plan.gap(plan.Need(INFRA, None, "DevClusterTemplate", "x"), apis(older)) is None


def test_only_the_served_versions_needed_are_read():
    needs = [plan.Need(INFRA, None, "DevCluster", "a"), plan.Need(CP, "v1beta2", "KubeadmControlPlane", "b"),
             plan.Need(BOOT, "v1beta2", "KubeadmConfig", "c"), plan.Need(INFRA, "v1beta2", "DevMachine", "d")]
    served = {INFRA: ["v1beta1", "v1beta2"], CP: ["v1beta1"]}
    assert plan.versions_to_read(needs, served) == [(INFRA, "v1beta1"), (INFRA, "v1beta2")]


def test_a_plain_cluster_needs_its_references_only():
    plain = copy.deepcopy(CLUSTER)
    del plain["spec"]["topology"]
    needs = plan.needed_kinds(plain, None, "v1beta2")
    assert [(n.api, n.kind) for n in needs] == [(CORE + "/v1beta2", "Cluster"), (INFRA, "DevCluster"),
                                                (CP, "KubeadmControlPlane")]


def test_a_different_class_of_that_name_on_the_target_is_in_the_way_the_same_one_is_not():
    same = copy.deepcopy(CLASS_V1BETA2)
    same["metadata"]["uid"] = "another"
    assert plan.class_conflict(CLASS_V1BETA2, same) is None
    assert plan.class_conflict(CLASS_V1BETA2, None) is None and plan.class_conflict(None, same) is None
    other = copy.deepcopy(CLASS_V1BETA2)
    other["spec"]["workers"] = {}
    conflict = plan.class_conflict(CLASS_V1BETA2, other)
    assert conflict.startswith("the target already has a different ClusterClass team-a/in-memory")
    assert "spec.workers" in conflict and "spec.infrastructure" not in conflict
    assert plan.blockers([], conflict) == [conflict]
