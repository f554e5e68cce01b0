# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cluster API objects through the Kubernetes API: discovery, the Cluster, the objects of a cluster.

Every call goes through ``KubernetesClient.call`` (retries, deadline, counting).  Objects come back as
plain dicts (what the API sent), so the decision modules never see client classes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.objects import (
    CLUSTER_GROUPS,
    CLUSTER_NAME_LABEL,
    CONTRACT_VERSIONS,
    CORE_GROUP,
    dig,
    reference,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.client import is_status
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.watch import Feed
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import NotServed, ResolveError
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.retry import IDEMPOTENT, READ

if TYPE_CHECKING:
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline

    from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.client import KubernetesClient

# Resources of the cluster groups that no controller reconciles per cluster, so nothing acknowledges a pause.
NOT_RECONCILED_SUFFIXES = ("templates",)
# The references of a Cluster whose targets are in scope of a pause.
REFERENCE_FIELDS = ("infrastructureRef", "controlPlaneRef")


def choose_version(served: dict[str, list[str]], requested: str | None = None) -> str:
    """The contract version to read CAPI objects in: ``requested`` if served, else v1beta2 if served,
    else v1beta1.  ``served`` maps group -> list of versions."""
    versions = served.get(CORE_GROUP) or []
    if not versions:
        raise NotServed(f"the Kubernetes API does not serve {CORE_GROUP}: Cluster API is not installed there "
                        "(check kubeconfig and context)")
    if requested:
        if requested not in versions:
            raise NotServed(f"api_version {requested} is not served by this Cluster API (served: "
                            f"{', '.join(versions)})")
        return requested
    for candidate in reversed(CONTRACT_VERSIONS):
        if candidate in versions:
            return candidate
    return versions[0]


class CapiService:
    def __init__(self, kube: KubernetesClient) -> None:
        self.kube = kube
        self.served: dict[str, list[str]] | None = None
        self.preferred: dict[str, str] = {}
        self.resources: dict[tuple[str, str], dict[str, str]] = {}

    def _plain(self, value: Any) -> Any:
        return self.kube.api_client.sanitize_for_serialization(value)

    def _served(self) -> dict[str, list[str]]:
        """The groups ``discover`` found (it runs first)."""
        if self.served is None:
            raise RuntimeError("CapiService.discover() must run before the served versions are read")
        return self.served

    def discover(self, deadline: Deadline) -> dict[str, list[str]]:
        """The API groups and versions served (one request)."""
        groups = self._plain(self.kube.call(self.kube.apis.get_api_versions, "discovering API groups", deadline))
        served: dict[str, list[str]] = {}
        self.served = served
        for group in groups.get("groups") or []:
            served[group["name"]] = [v["version"] for v in group.get("versions") or []]
            preferred = dig(group, "preferredVersion", "version")
            if preferred:
                self.preferred[group["name"]] = preferred
        return served

    def version_for(self, group: str, contract: str) -> str | None:
        """The version to read ``group`` in: the contract version for CAPI's own groups when served,
        else the group's preferred version."""
        versions = self._served().get(group) or []
        if contract in versions and group in CLUSTER_GROUPS[:3]:
            return contract
        return self.preferred.get(group) or (versions[0] if versions else None)

    def resource_list(self, group: str, version: str, deadline: Deadline) -> dict[str, str]:
        """Namespaced, listable resources of ``group/version``: kind -> plural (one request, cached)."""
        key = (group, version)
        if key not in self.resources:
            data = self._plain(self.kube.call(lambda: self.kube.custom.get_api_resources(group, version),
                                              f"discovering {group}/{version}", deadline))
            found = {}
            for resource in data.get("resources") or []:
                if "/" in resource["name"] or not resource.get("namespaced"):
                    continue
                if "list" not in (resource.get("verbs") or []):
                    continue
                found[resource["kind"]] = resource["name"]
            self.resources[key] = found
        return self.resources[key]

    def plural(self, group: str, version: str, kind: str, deadline: Deadline) -> str:
        plural = self.resource_list(group, version, deadline).get(kind)
        if plural is None:
            raise NotServed(f"{group}/{version} does not serve kind {kind}")
        return plural

    def get_cluster(self, name: str, namespace: str, version: str, deadline: Deadline) -> dict[str, Any]:
        try:
            return self.kube.call(
                lambda: self.kube.custom.get_namespaced_custom_object(CORE_GROUP, version, namespace, "clusters", name),
                f"reading Cluster {namespace}/{name}", deadline)
        except Exception as exc:  # pylint: disable=broad-except
            if not is_status(exc, 404):
                raise
        elsewhere = self.namespaces_with_cluster(name, version, deadline)
        hint = ""
        if elsewhere:
            hint = f"; a Cluster of that name exists in namespace {', '.join(elsewhere)}"
        raise ResolveError(f"Cluster {namespace}/{name} not found{hint}", cluster=None)

    def namespaces_with_cluster(self, name: str, version: str, deadline: Deadline) -> list[str]:
        try:
            found = self.kube.call(
                lambda: self.kube.custom.list_cluster_custom_object(
                    CORE_GROUP, version, "clusters", field_selector=f"metadata.name={name}"),
                f"looking for Cluster {name} in all namespaces", deadline)
        except Exception as exc:  # pylint: disable=broad-except
            if is_status(exc, 403):
                return []  # may not list across namespaces: no hint then
            raise
        return sorted(set(dig(item, "metadata", "namespace") for item in found.get("items") or []))

    def ref_version(self, target: dict[str, Any], contract: str, field: str | None = None) -> str:
        """The version to read a reference's target in (``target`` as ``objects.reference`` gives it); NotServed,
        naming the reference and its API group, when the API does not serve that group (or the version the
        reference names)."""
        versions = self._served().get(target["group"]) or []
        version = target["version"] or self.version_for(target["group"], contract)
        if version is None or version not in versions:
            what = f"the {field}" if field else "a reference"
            named = f" version {target['version']}" if target["version"] else ""
            served = f"it serves {target['group']} in versions {', '.join(versions)}" if versions else \
                "no such group is served"
            raise NotServed(
                f"{what} names {target['kind']} {target['namespace']}/{target['name']} in API group "
                f"{target['group'] or '(none)'}{named}, which this Kubernetes API does not serve ({served}); is its "
                "provider installed, and is the reference spelt right?")
        return version

    def check_refs(self, cluster: dict[str, Any], contract: str) -> None:
        """NotServed (``ref_version``) when the Cluster's infrastructureRef or controlPlaneRef names an API group
        or version this API does not serve; no request (discovery has the served groups)."""
        metadata = cluster["metadata"]
        for field in REFERENCE_FIELDS:
            target = reference(dig(cluster, "spec", field), metadata["namespace"])
            if target is not None:
                label = f"{field} of Cluster {metadata['namespace']}/{metadata['name']}"
                self.ref_version(target, contract, label)

    def get_ref(self, ref: dict[str, Any] | None, namespace: str, contract: str, deadline: Deadline,
                field: str | None = None) -> dict[str, Any] | None:
        """The object a Cluster reference points to, or None when it does not exist (yet). ``field`` names the
        reference (``infrastructureRef``) in the error when its API group is not served."""
        target = reference(ref, namespace)
        if target is None:
            return None
        version = self.ref_version(target, contract, field)
        plural = self.plural(target["group"], version, target["kind"], deadline)
        try:
            return self.kube.call(
                lambda: self.kube.custom.get_namespaced_custom_object(
                    target["group"], version, target["namespace"], plural, target["name"]),
                f"reading {target['kind']} {target['namespace']}/{target['name']}", deadline)
        except Exception as exc:  # pylint: disable=broad-except
            if is_status(exc, 404):
                return None
            raise

    def list_kind(self, group: str, version: str, kind: str, namespace: str, label_selector: str | None,
                  deadline: Deadline) -> list[dict[str, Any]]:
        plural = self.plural(group, version, kind, deadline)
        found = self.kube.call(
            lambda: self.kube.custom.list_namespaced_custom_object(
                group, version, namespace, plural, label_selector=label_selector),
            f"listing {plural} in {namespace}", deadline)
        return found.get("items") or []

    def list_across(self, group: str, version: str, plural: str, namespaces: Iterable[str] | None,
                    label_selector: str | None, deadline: Deadline) -> list[dict[str, Any]]:
        """Every ``plural`` object of ``group/version``: one cluster-wide list when ``namespaces`` is empty,
        else one list per namespace (never one request per object)."""
        if not namespaces:
            found = self.kube.call(
                lambda: self.kube.custom.list_cluster_custom_object(group, version, plural,
                                                                    label_selector=label_selector),
                f"listing {plural} in all namespaces", deadline)
            return found.get("items") or []
        items: list[dict[str, Any]] = []
        for namespace in namespaces:
            found = self.kube.call(
                lambda where=namespace: self.kube.custom.list_namespaced_custom_object(  # type: ignore[misc]
                    group, version, where, plural, label_selector=label_selector),
                f"listing {plural} in {namespace}", deadline)
            items.extend(found.get("items") or [])
        return items

    def cluster_kinds(self, contract: str, deadline: Deadline) -> list[tuple[str, str, str]]:
        """(group, version, kind) of every reconciled, namespaced kind in the cluster groups."""
        kinds = []
        for group in CLUSTER_GROUPS:
            version = self.version_for(group, contract)
            if version is None:
                continue
            for kind, plural in sorted(self.resource_list(group, version, deadline).items()):
                if plural.endswith(NOT_RECONCILED_SUFFIXES):
                    continue
                kinds.append((group, version, kind))
        return kinds

    def labelled_objects(self, name: str, namespace: str, kinds: list[tuple[str, str, str]],
                         deadline: Deadline) -> list[dict[str, Any]]:
        """Every object of ``kinds`` labelled as belonging to cluster ``name`` (one list per kind)."""
        selector = f"{CLUSTER_NAME_LABEL}={name}"
        objects = []
        for group, version, kind in kinds:
            items = self.list_kind(group, version, kind, namespace, selector, deadline)
            for item in items:
                item.setdefault("apiVersion", f"{group}/{version}")
                item.setdefault("kind", kind)
            objects.extend(items)
        return objects

    def get_object(self, group: str, version: str, namespace: str, plural: str, name: str, what: str,
                   deadline: Deadline) -> dict[str, Any]:
        """One namespaced object of ``group/version`` (``what`` names the read in errors)."""
        return self.kube.call(
            lambda: self.kube.custom.get_namespaced_custom_object(group, version, namespace, plural, name),
            what, deadline)

    def patch_object(self, group: str, version: str, namespace: str, plural: str, name: str, body: Any, what: str,
                     deadline: Deadline) -> dict[str, Any]:
        """Merge-patch one namespaced object with ``body`` (sent again after a lost answer: the same patch twice
        is the patch once); the object as patched."""
        return self.kube.call(
            lambda: self.kube.custom.patch_namespaced_custom_object(group, version, namespace, plural, name, body),
            what, deadline, kind=IDEMPOTENT)

    def patch_cluster(self, cluster: dict[str, Any], body: Any, what: str, deadline: Deadline,
                      dry_run: bool = False) -> dict[str, Any]:
        """Merge-patch the Cluster (in the version it was read in) with ``body``; with ``dry_run`` the API runs
        every stage (schema pruning, webhooks) and persists nothing: its answer is the Cluster as it would be, and
        the call is no write (a read's idempotency class: not in ``writes``, no ``changed``)."""
        metadata = cluster["metadata"]
        group, version = cluster["apiVersion"].rsplit("/", 1)
        extra = {"dry_run": "All"} if dry_run else {}
        return self.kube.call(
            lambda: self.kube.custom.patch_namespaced_custom_object(
                group, version, metadata["namespace"], "clusters", metadata["name"], body, **extra),
            what, deadline, kind=READ if dry_run else IDEMPOTENT)

    def set_paused(self, cluster: dict[str, Any], paused: bool, deadline: Deadline) -> dict[str, Any]:
        """Merge-patch ``spec.paused`` (only that field: a concurrent change elsewhere is kept)."""
        metadata = cluster["metadata"]
        group, version = cluster["apiVersion"].rsplit("/", 1)
        body = {"spec": {"paused": paused}}
        return self.kube.call(
            lambda: self.kube.custom.patch_namespaced_custom_object(
                group, version, metadata["namespace"], "clusters", metadata["name"], body),
            f"setting spec.paused={str(paused).lower()} on Cluster {metadata['namespace']}/{metadata['name']}",
            deadline, kind=IDEMPOTENT)

    def scope_objects(self, cluster: dict[str, Any], scope: str, contract: str, kinds: list[tuple[str, str, str]],
                      deadline: Deadline) -> list[dict[str, Any]]:
        """The Cluster and the objects in ``scope``: ``cluster`` (its infrastructure and control-plane
        references) or ``move`` (every reconciled object labelled with the cluster's name, as
        ``clusterctl move`` would take them, plus the references, read only when not labelled)."""
        metadata = cluster["metadata"]
        objects = [cluster]
        if scope == "move":
            objects.extend(self.labelled_objects(metadata["name"], metadata["namespace"], kinds, deadline))
        have = set((o.get("kind"), dig(o, "metadata", "namespace"), dig(o, "metadata", "name")) for o in objects)
        for field in REFERENCE_FIELDS:
            target = reference(dig(cluster, "spec", field), metadata["namespace"])
            if target is None or (target["kind"], target["namespace"], target["name"]) in have:
                continue
            found = self.get_ref(dig(cluster, "spec", field), metadata["namespace"], contract, deadline,
                                 f"{field} of Cluster {metadata['namespace']}/{metadata['name']}")
            if found is not None:
                objects.append(found)
        unique = []
        seen = set()
        for obj in objects:
            key = dig(obj, "metadata", "uid") or (obj.get("kind"), dig(obj, "metadata", "name"))
            if key not in seen:
                seen.add(key)
                unique.append(obj)
        return unique

    def scope_feeds(self, cluster: dict[str, Any], scope: str, contract: str, kinds: list[tuple[str, str, str]],
                    deadline: Deadline) -> list[Feed]:
        """The same objects as ``scope_objects``, as watch feeds: the Cluster by name, in ``move`` one feed
        per kind with the cluster-name label, and each reference by name (the object is held once even
        when a label feed holds it too)."""
        metadata = cluster["metadata"]
        name, namespace = metadata["name"], metadata["namespace"]
        group, version = cluster["apiVersion"].rsplit("/", 1)
        feeds = [Feed(group, version, "clusters", "Cluster", namespace, field_selector=f"metadata.name={name}")]
        if scope == "move":
            selector = f"{CLUSTER_NAME_LABEL}={name}"
            for kind_group, kind_version, kind in kinds:
                feeds.append(Feed(kind_group, kind_version, self.plural(kind_group, kind_version, kind, deadline),
                                  kind, namespace, label_selector=selector))
        for field in REFERENCE_FIELDS:
            target = reference(dig(cluster, "spec", field), namespace)
            if target is None:
                continue
            ref_version = self.ref_version(target, contract, f"{field} of Cluster {namespace}/{name}")
            plural = self.plural(target["group"], ref_version, target["kind"], deadline)
            feeds.append(Feed(target["group"], ref_version, plural, target["kind"], target["namespace"],
                              field_selector=f"metadata.name={target['name']}"))
        return feeds
