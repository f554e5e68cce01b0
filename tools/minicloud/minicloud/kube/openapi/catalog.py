"""Every schema in one place: the shared definitions, the kinds' own and their ``<Kind>List``.

A served kind without a schema here (one added to :mod:`minicloud.kube.resources` later) gets a
free-form one, so the documents stay complete and strict validation reports nothing for it.
"""

from __future__ import annotations

from functools import cache

from minicloud.kube.openapi import capi, capo, core, meta
from minicloud.kube.openapi.builders import free, kind, list_kind

GroupVersionKind = tuple[str, str, str]
_KINDS = core.KINDS + capi.KINDS + capo.KINDS


@cache
def _by_gvk() -> dict[GroupVersionKind, tuple[str, dict]]:
    return {gvk: (name, schema) for gvk, name, schema in _KINDS}


def parse_api_version(api_version: str) -> tuple[str, str]:
    """``group/version`` (or ``v1``) as (group, version)."""
    group, _, version = (api_version or "").rpartition("/")
    return group, version


def definition_name(group: str, version: str, kind_name: str) -> str:
    """The name the kind's definition has (also for kinds without a schema of their own)."""
    found = _by_gvk().get((group, version, kind_name))
    if found:
        return found[0]
    if not group:
        return f"io.k8s.api.core.v1.{kind_name}"
    return capi.definition_name(group, version, kind_name)


def schema(group: str, version: str, kind_name: str) -> dict | None:
    """The kind's own schema, or None when there is none."""
    found = _by_gvk().get((group, version, kind_name))
    return found[1] if found else None


def schema_or_free(group: str, version: str, kind_name: str) -> dict:
    return schema(group, version, kind_name) or kind(f"{kind_name} (no schema: any field is kept).", group, version,
                                                     kind_name, spec=free("Free-form."), status=free("Free-form."))


def definitions_for(gvks: list[GroupVersionKind]) -> dict[str, dict]:
    """The shared definitions plus, for each (group, version, kind), its schema and its list's."""
    result = dict(meta.DEFINITIONS)
    for group, version, kind_name in gvks:
        name = definition_name(group, version, kind_name)
        result[name] = schema_or_free(group, version, kind_name)
        result[name + "List"] = list_kind(name, group, version, kind_name + "List")
    return dict(sorted(result.items()))


def shared(name: str) -> dict | None:
    """A shared definition (ObjectMeta, ...) by name."""
    return meta.DEFINITIONS.get(name)
