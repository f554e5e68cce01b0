"""Strict field validation: which fields of an object its kind's schema does not know.

kube-apiserver decodes a create, update or patch strictly when asked (``fieldValidation=Strict``,
what ``kubectl apply`` and ``kubectl create`` send by default) and answers 400 with the unknown
fields; with ``fieldValidation=Warn`` it drops them and says so in ``Warning`` headers. The
function and the builders here make those decisions and answers, without HTTP.
"""

from __future__ import annotations

import json

from minicloud.kube.errors import ApiError, bad_request
from minicloud.kube.openapi import catalog
from minicloud.kube.openapi.builders import PRESERVE, ref_name

STRICT, WARN, IGNORE = "Strict", "Warn", "Ignore"


def unknown_fields(kind_name: str, api_version: str, obj) -> list[str]:
    """Dotted paths (``spec.foo``, ``spec.items[0].bar``) of the fields of ``obj`` that the schema of
    ``kind_name`` at ``api_version`` does not define, sorted. Nothing for kinds without a schema."""
    group, version = catalog.parse_api_version(api_version)
    schema = catalog.schema(group, version, kind_name)
    if schema is None:
        return []
    found: list[str] = []
    _walk(schema, obj, "", found)
    return sorted(found)


def _resolve(schema: dict) -> dict:
    name = ref_name(schema)
    while name is not None:
        schema = catalog.shared(name) or {PRESERVE: True}
        name = ref_name(schema)
    return schema


def _walk(schema: dict, value, path: str, found: list[str]) -> None:
    schema = _resolve(schema)
    if schema.get(PRESERVE):
        return
    if isinstance(value, dict):
        properties = schema.get("properties")
        additional = schema.get("additionalProperties")
        for key, item in value.items():
            where = f"{path}.{key}" if path else key
            if properties is not None and key in properties:
                _walk(properties[key], item, where, found)
            elif isinstance(additional, dict):
                _walk(additional, item, where, found)
            elif properties is not None:
                found.append(where)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            _walk(schema["items"], item, f"{path}[{index}]", found)


def directive(value: str | None) -> str:
    """The query's ``fieldValidation`` as Strict, Warn or Ignore. kube-apiserver takes an absent one as
    Warn; here it is Ignore, so that clients which ask nothing (the Python client, the emulator's own
    writes) see the same answers as before strict validation existed."""
    for known in (STRICT, WARN, IGNORE):
        if (value or "").lower() == known.lower():
            return known
    if value:
        raise bad_request(f'fieldValidation parameter unsupported: "{value}"')
    return IGNORE


def _messages(fields: list[str]) -> list[str]:
    return [f'unknown field "{field}"' for field in fields]


def strict_error(kind_name: str, version: str, fields: list[str], on_patch: bool = False) -> ApiError:
    """The 400 of a strict decode: create and update name the kind and version; a patch does not."""
    text = "strict decoding error: " + ", ".join(_messages(fields))
    if not on_patch:
        text = f'{kind_name} in version "{version}" cannot be handled as a {kind_name}: {text}'
    return bad_request(text)


def warning_headers(fields: list[str]) -> list[str]:
    """``Warning`` header values (RFC 7234 code 299) for ``fieldValidation=Warn``."""
    return [f"299 - {json.dumps(message)}" for message in _messages(fields)]


def check_fields(kind_name: str, api_version: str, obj, asked: str | None, before=None) -> list[str]:
    """Apply ``fieldValidation=asked`` to ``obj`` sent at ``api_version``: raise the Strict 400, or return the
    Warning header values of Warn (none for Ignore). ``before``: for a patch, the object the patch applied to;
    fields it already had unknown (a write that did not validate) are not counted against the patch."""
    mode = directive(asked)
    if mode == IGNORE:
        return []
    already = set(unknown_fields(kind_name, api_version, before)) if before is not None else set()
    fields = [field for field in unknown_fields(kind_name, api_version, obj) if field not in already]
    if fields and mode == STRICT:
        raise strict_error(kind_name, catalog.parse_api_version(api_version)[1], fields, on_patch=before is not None)
    return warning_headers(fields)
