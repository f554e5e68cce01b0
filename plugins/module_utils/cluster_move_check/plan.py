# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Can a move target take a cluster, pure: the kinds the cluster and its ClusterClass need there, which of them
the target's API does not serve, and whether the target holds a different ClusterClass of the same name.

``clusterctl move`` creates every object of the namespace on the target, the ClusterClass and its templates
with the cluster, and overwrites an object of the same name that is already there. Each kind comes from a
provider (the templates and what the topology controller makes from them: CAPD or CAPO, KubeadmControlPlane,
the kubeadm bootstrap provider), so a target without one of them cannot take the cluster: clusterctl would stop
halfway, or the objects would land where no controller reconciles them. The runner reads the target's discovery
(``/apis``, then ``/apis/<group>/<version>`` of each group needed) and hands it here as plain data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi import topology
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.objects import CORE_GROUP, dig, reference

#: The Cluster's references whose objects move with it (made by the topology controller for a class cluster).
CLUSTER_REF_FIELDS = ("infrastructureRef", "controlPlaneRef")


@dataclass(frozen=True)
class Need:
    """A kind the target must serve: ``version`` None when any served version will do (a v1beta2 reference
    names the API group only); ``needed_by`` says what in the source needs it."""

    group: str
    version: Optional[str]
    kind: str
    needed_by: str

    @property
    def api(self) -> str:
        return f"{self.group}/{self.version}" if self.version else self.group


@dataclass(frozen=True)
class TargetApis:
    """What the target serves: ``served`` maps an API group to its versions (``/apis``), ``kinds`` a
    (group, version) read to the kinds it serves (``/apis/<group>/<version>``)."""

    served: dict[str, list[str]]
    kinds: dict[tuple[str, str], set[str]]


def split_api_version(api_version: str) -> tuple[str, str]:
    """(group, version) of ``apiVersion`` (the core group is ``""``)."""
    return tuple(api_version.rsplit("/", 1)) if "/" in api_version else ("", api_version)  # type: ignore[return-value]


def template_needs(cluster_class: dict[str, Any], class_label: str) -> list[Need]:
    """Each template the class references, and the kind the topology controller makes from it."""
    needs: list[Need] = []
    for ref in topology.class_template_refs(cluster_class):
        group, version = split_api_version(ref["api_version"])
        why = f"{class_label} {ref['field']} ({ref['name']})"
        needs.append(Need(group, version, ref["kind"], why))
        made = topology.created_kind(ref["kind"])
        if made:
            needs.append(Need(group, version, made, "what the topology controller makes from " + why))
    return needs


def needed_kinds(cluster: dict[str, Any], cluster_class: Optional[dict[str, Any]], contract: str) -> list[Need]:
    """Every kind the target must serve to take ``cluster`` (read in ``contract``) and, when it is
    topology-managed, its ``cluster_class``: the Cluster itself, its infrastructure and control plane
    references, the ClusterClass and every template it references with what is made from each."""
    namespace = dig(cluster, "metadata", "namespace")
    label = f"Cluster {namespace}/{dig(cluster, 'metadata', 'name')}"
    needs = [Need(CORE_GROUP, contract, "Cluster", label)]
    for field in CLUSTER_REF_FIELDS:
        target = reference(dig(cluster, "spec", field), namespace)
        if target is not None and target.get("group") and target.get("kind"):
            needs.append(Need(target["group"], target.get("version"), target["kind"],
                              f"{label} spec.{field} ({target['name']})"))
    if cluster_class is not None:
        class_name, class_namespace = topology.class_of(cluster)
        class_label = f"ClusterClass {class_namespace}/{class_name}"
        needs.append(Need(CORE_GROUP, contract, "ClusterClass", f"{label} spec.topology"))
        needs.extend(template_needs(cluster_class, class_label))
    return needs


def versions_to_read(needs: list[Need], served: dict[str, list[str]]) -> list[tuple[str, str]]:
    """The (group, version) pairs whose resources the runner reads on the target: for each need, its version when
    the target serves it, or every served version of its group when the need names none."""
    pairs: list[tuple[str, str]] = []
    for need in needs:
        versions = served.get(need.group) or []
        wanted = [need.version] if need.version else versions
        pairs.extend((need.group, v) for v in wanted if v in versions and (need.group, v) not in pairs)
    return pairs


def gap(need: Need, apis: TargetApis) -> Optional[str]:
    """Why the target cannot take objects of ``need``, or None when it serves them."""
    versions = apis.served.get(need.group) or []
    if not versions:
        return f"API group {need.group} is not served"
    if need.version and need.version not in versions:
        return f"{need.group} is served only as {', '.join(versions)}"
    wanted = [need.version] if need.version else versions
    if any(need.kind in apis.kinds.get((need.group, v), set()) for v in wanted):
        return None
    return f"{need.api} does not serve kind {need.kind}"


def missing_kinds(needs: list[Need], apis: TargetApis) -> list[dict[str, Any]]:
    """The kinds the target lacks, one entry per kind (``api``, ``kind``, ``reason``, every ``needed_by``), in
    the order they were needed."""
    missing: dict[tuple[str, str], dict[str, Any]] = {}  # by (group, kind): a reference and a clone, one entry
    for need in needs:
        reason = gap(need, apis)
        if reason is None:
            continue
        entry = missing.setdefault((need.group, need.kind),
                                   {"api": need.api, "kind": need.kind, "reason": reason, "needed_by": []})
        if need.needed_by not in entry["needed_by"]:
            entry["needed_by"].append(need.needed_by)
    return list(missing.values())


def class_conflict(source_class: Optional[dict[str, Any]], target_class: Optional[dict[str, Any]]) -> Optional[str]:
    """When the target already holds a ClusterClass of the class's name and namespace whose spec differs: the
    sentence saying so (clusterctl would overwrite it, changing every cluster that uses it there); None when the
    target has none, or the same."""
    if source_class is None or target_class is None:
        return None
    source_spec = source_class.get("spec") or {}
    target_spec = target_class.get("spec") or {}
    if source_spec == target_spec:
        return None
    differing = sorted(set(key for key in set(source_spec) | set(target_spec)
                           if source_spec.get(key) != target_spec.get(key)))
    metadata = source_class.get("metadata") or {}
    differing_words = ", ".join("spec." + key for key in differing)
    return (f"the target already has a different ClusterClass {metadata.get('namespace')}/{metadata.get('name')} "
            f"(its spec differs in {differing_words}): clusterctl move would overwrite it, changing every cluster "
            "that uses it there")


def missing_words(entry: dict[str, Any]) -> str:
    return f"{entry['kind']} ({entry['api']}: {entry['reason']}; needed by {'; '.join(entry['needed_by'])})"


def blockers(missing: list[dict[str, Any]], conflict: Optional[str]) -> list[str]:
    """The sentences the role fails with, before any write: every missing kind named, then the class conflict."""
    found = []
    if missing:
        missing_text = ", ".join(missing_words(entry) for entry in missing)
        found.append(f"the target management cluster does not serve {len(missing)} kind(s) the cluster needs there "
                     f"(install their providers on the target first): {missing_text}")
    if conflict:
        found.append(conflict)
    return found
