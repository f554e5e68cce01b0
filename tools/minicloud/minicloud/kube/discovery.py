"""Discovery documents (``/api``, ``/apis``, ``/apis/GROUP/VERSION``) built from the kind registry (pure)."""

from __future__ import annotations

from minicloud.kube import resources
from minicloud.kube.resources import Kind

SERVER_VERSION = {
    "major": "1", "minor": "33", "gitVersion": "v1.33.0-minicloud", "gitCommit": "", "gitTreeState": "clean",
    "buildDate": "2025-04-23T00:00:00Z", "goVersion": "go1.24.2", "compiler": "gc", "platform": "linux/amd64",
}


def api_versions() -> dict:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}]}


def _group_version(group: str, version: str) -> dict:
    return {"groupVersion": f"{group}/{version}", "version": version}


def api_group(group: str, kinds: tuple[Kind, ...] = resources.KINDS) -> dict | None:
    versions = resources.groups(kinds).get(group)
    if not versions:
        return None
    newest_first = sorted(versions, reverse=True)
    return {"kind": "APIGroup", "apiVersion": "v1", "name": group,
            "versions": [_group_version(group, v) for v in newest_first],
            "preferredVersion": _group_version(group, newest_first[0])}


def api_group_list(kinds: tuple[Kind, ...] = resources.KINDS) -> dict:
    return {"kind": "APIGroupList", "apiVersion": "v1",
            "groups": [api_group(group, kinds) for group in sorted(resources.groups(kinds))]}


def _resource(kind: Kind) -> dict:
    entry = {"name": kind.plural, "singularName": kind.singular, "namespaced": kind.namespaced, "kind": kind.kind,
             "verbs": list(resources.VERBS)}
    if kind.short_names:
        entry["shortNames"] = list(kind.short_names)
    if kind.categories:
        entry["categories"] = list(kind.categories)
    return entry


def resource_list(group: str, version: str, served: tuple[Kind, ...] = resources.KINDS) -> dict | None:
    kinds = resources.in_group_version(group, version, served)
    if not kinds:
        return None
    entries = []
    for kind in kinds:
        entries.append(_resource(kind))
        if kind.status_subresource:
            entries.append({"name": f"{kind.plural}/status", "singularName": "", "namespaced": kind.namespaced,
                            "kind": kind.kind, "verbs": ["get", "patch", "update"]})
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": f"{group}/{version}" if group else version,
            "resources": entries}
