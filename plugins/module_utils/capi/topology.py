# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ClusterClass (managed topology) clusters, pure: is a Cluster topology-managed, by which class, and how a
control-plane rollout starts on it.

A Cluster with ``spec.topology`` is reconciled by Cluster API's topology controller, which owns the spec of the
control plane it made from the class (server-side apply, field manager ``capi-topology``): a change written to
the KubeadmControlPlane is not the way to start anything there. Cluster API's source (``api/core/v1beta2/
cluster_types.go``, ``ControlPlaneTopology``):

=========================================  =======================  =======================
                                           v1.12                    v1.13 and later
=========================================  =======================  =======================
``spec.topology.controlPlane.rollout.after``  absent                 present (v1beta2, and
(the topology controller copies it to the                            v1beta1 through conversion)
KCP's ``spec.rollout.after``)
``spec.topology.version`` (an upgrade)     present                  present
``spec.topology.rolloutAfter`` (v1beta1)   "has no function"        "has no function"
=========================================  =======================  =======================

The class is ``spec.topology.classRef.name``/``.namespace`` in v1beta2, ``spec.topology.class``/
``.classNamespace`` in v1beta1. Whether the running Cluster API has the rollout field is read from the API
itself: a server-side dry-run of the patch, whose answer keeps the field only where the Cluster's schema has it
(an unknown field is pruned), see ``rollout_field_kept``.
"""

import copy
from typing import Any, Collection, Optional

from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.objects import (
    bare_version,
    dig,
    meta,
    parse_kube_time,
    rollout_after,
)

ROLLOUT_AFTER_PATH = ("spec", "topology", "controlPlane", "rollout", "after")
ROLLOUT_AFTER_FIELD = ".".join(ROLLOUT_AFTER_PATH)
#: The first Cluster API release whose Cluster has ``spec.topology.controlPlane.rollout.after``.
ROLLOUT_AFTER_SINCE = "v1.13"


def is_managed(cluster: Optional[dict[str, Any]]) -> bool:
    """Whether the Cluster is managed through a ClusterClass (has ``spec.topology``)."""
    return isinstance(dig(cluster or {}, "spec", "topology"), dict)


def class_of(cluster: Optional[dict[str, Any]]) -> tuple[Optional[str], Optional[str]]:
    """(class name, class namespace) in either contract; the namespace defaults to the Cluster's."""
    found = dig(cluster or {}, "spec", "topology")
    topology: dict[str, Any] = found if isinstance(found, dict) else {}
    ref: dict[str, Any] = topology["classRef"] if isinstance(topology.get("classRef"), dict) else {}
    name = ref.get("name") or topology.get("class")
    namespace = ref.get("namespace") or topology.get("classNamespace") or meta(cluster or {}).get("namespace")
    return name or None, (namespace or None) if name else None


def topology_view(cluster: Optional[dict[str, Any]], control_plane: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    """What cluster_info and cluster_readiness say of it: ``managed``, ``class``, ``class_namespace``,
    ``version`` (the Cluster's), ``control_plane_version`` (the control plane's, when read), ``upgrading`` (the
    two differ), ``control_plane_replicas`` and ``rollout_after``."""
    if not is_managed(cluster):
        return {"managed": False, "class": None, "class_namespace": None, "version": None,
                "control_plane_version": None, "upgrading": False, "control_plane_replicas": None,
                "rollout_after": None}
    name, namespace = class_of(cluster)
    version = dig(cluster, "spec", "topology", "version")
    cp_version = dig(control_plane or {}, "spec", "version")
    return {"managed": True, "class": name, "class_namespace": namespace, "version": version,
            "control_plane_version": cp_version,
            "upgrading": bool(version and cp_version and version != cp_version),
            "control_plane_replicas": dig(cluster, "spec", "topology", "controlPlane", "replicas"),
            "rollout_after": dig(cluster, *ROLLOUT_AFTER_PATH)}


def control_plane_as_wanted(cluster: Optional[dict[str, Any]], control_plane: Optional[dict[str, Any]],
                            machine_versions: Collection[Optional[str]] = ()) -> Optional[dict[str, Any]]:
    """The control plane as the topology controller is about to write it: on a topology-managed Cluster, a copy of
    ``control_plane`` whose rollout time is the later of its own and the Cluster's
    ``spec.topology.controlPlane.rollout.after``, and whose ``spec.version`` is the Cluster's
    ``spec.topology.version`` unless the control plane is rolling to a version of its own (``machine_versions``, the
    versions of its Machines: one of them differs from the control plane's). Otherwise ``control_plane`` as it is.

    A change written to the Cluster (an upgrade, a rollout) reaches the control plane a pass of the topology
    controller later, and its Machines' UpToDate conditions a pass of KCP after that: from the Cluster's change the
    Machines are judged against it. An upgrade in steps (the topology controller writes an intermediate version
    onto the control plane, or the Cluster's version was raised again during a rollout) is judged step by step:
    while the control plane rolls to its version, its Machines of that version are the new ones; once every Machine
    has it, they are old again if the Cluster wants another."""
    if not is_managed(cluster) or control_plane is None:
        return control_plane
    wanted = copy.deepcopy(control_plane)
    spec = wanted.setdefault("spec", {})
    version, own = dig(cluster, "spec", "topology", "version"), spec.get("version")
    rolling_own = bool(own) and any(v and bare_version(v) != bare_version(own) for v in machine_versions)
    if version and not rolling_own:
        spec["version"] = version
    asked = dig(cluster, *ROLLOUT_AFTER_PATH)
    asked_at, own_at = parse_kube_time(asked), parse_kube_time(rollout_after(control_plane))
    if asked_at is not None and (own_at is None or asked_at > own_at):
        if str(wanted.get("apiVersion", "")).endswith("/v1beta1"):
            spec["rolloutAfter"] = asked
        else:
            spec.setdefault("rollout", {})["after"] = asked
    return wanted


def rollout_after_patch(text: str) -> dict[str, Any]:
    """The merge patch of the Cluster that asks the topology controller to roll the control plane's Machines
    created before ``text`` (RFC 3339); the same path in v1beta1 and v1beta2."""
    return {"spec": {"topology": {"controlPlane": {"rollout": {"after": text}}}}}


def rollout_field_kept(answer: Optional[dict[str, Any]], text: str) -> bool:
    """Whether the API kept ``rollout.after`` in its answer to the dry-run of ``rollout_after_patch(text)``: a
    Cluster API without the field prunes it (structural schema), one with it answers the value (the API server
    writes times as whole seconds, ``text`` is one)."""
    kept = dig(answer or {}, *ROLLOUT_AFTER_PATH)
    return bool(kept) and str(kept).rstrip("Z").split(".", maxsplit=1)[0] == str(text).rstrip("Z").split(".", maxsplit=1)[0]


def class_words(cluster: dict[str, Any]) -> str:
    name, namespace = class_of(cluster)
    return f"ClusterClass {namespace}/{name}"


def no_rollout_field(cluster: dict[str, Any]) -> str:
    """The refusal where the running Cluster API has no topology rollout field: what to do instead."""
    meta_data = meta(cluster)
    return (f"Cluster {meta_data.get('namespace')}/{meta_data.get('name')} is managed by {class_words(cluster)}, "
            "whose topology controller owns the KubeadmControlPlane's spec, and "
            f"this Cluster API has no {ROLLOUT_AFTER_FIELD} (added in Cluster API {ROLLOUT_AFTER_SINCE}): a rollout "
            "cannot be started here without writing a field the topology controller owns. "
            f"Upgrade Cluster API to {ROLLOUT_AFTER_SINCE} or later, or roll the control "
            "plane with a Kubernetes upgrade (change spec.topology.version, then guard it with start=false, "
            "control_plane_rollout_follow=true); nothing was changed")


#: The keys under which a ClusterClass references a template: ``templateRef`` (v1beta2), ``ref`` and a health
#: check's ``remediationTemplate`` (v1beta1).
TEMPLATE_REF_KEYS = ("templateRef", "ref", "remediationTemplate")
TEMPLATE_SUFFIX = "Template"


def _list_item_label(item: Any, index: int) -> str:
    """A worker class by its ``class`` name (``[default-worker]``), anything else by its index."""
    name = item.get("class") if isinstance(item, dict) else None
    return f"[{name}]" if name else f"[{index}]"


def _walk_refs(node: Any, path: str, found: list[dict[str, Any]]) -> None:
    if isinstance(node, list):
        for index, item in enumerate(node):
            _walk_refs(item, path + _list_item_label(item, index), found)
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        where = f"{path}.{key}" if path else key
        if key in TEMPLATE_REF_KEYS and isinstance(value, dict) and value.get("kind") and value.get("apiVersion"):
            found.append({"api_version": value["apiVersion"], "kind": value["kind"], "name": value.get("name"),
                          "field": where})
        else:
            _walk_refs(value, where, found)


def class_template_refs(cluster_class: Optional[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every template a ClusterClass references, in either contract, as ``api_version``, ``kind``, ``name`` and
    ``field`` (where in the class, such as ``spec.workers.machineDeployments[default-worker].infrastructure.
    templateRef``): the infrastructure cluster template, the control plane's template and its machine
    infrastructure template, each worker class's bootstrap and infrastructure templates, and any remediation
    template. ``clusterctl move`` takes them along with the class."""
    found: list[dict[str, Any]] = []
    _walk_refs(dig(cluster_class or {}, "spec") or {}, "spec", found)
    return found


def created_kind(template_kind: str) -> Optional[str]:
    """The kind the topology controller makes from a template of ``template_kind``: Cluster API's contract names
    a template ``<Kind>Template`` and clones it into a ``<Kind>`` of the same API (DevMachineTemplate ->
    DevMachine); None for a kind without the suffix."""
    if template_kind.endswith(TEMPLATE_SUFFIX) and len(template_kind) > len(TEMPLATE_SUFFIX):
        return template_kind[:-len(TEMPLATE_SUFFIX)]
    return None
