"""The OpenAPI documents of the served kinds, as kube-apiserver publishes them (pure).

- :func:`v2`: one Swagger 2.0 document (``/openapi/v2``): every path, ``definitions``.
- :func:`v3_index`: ``/openapi/v3``, one entry per group-version with a ``serverRelativeURL``
  that carries the document's hash (clients cache by it).
- :func:`v3`: the OpenAPI 3.0 document of one group-version (``components.schemas``).

Each write operation lists the query parameters ``dryRun``, ``fieldManager`` and
``fieldValidation``: kubectl looks for ``fieldValidation`` on a kind's PATCH operation to decide
that the server validates fields itself. PATCH operations list the patch types this server
accepts (strategic merge patch for the built-in kinds only; no server-side apply).
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass

from minicloud.kube import discovery, patches, resources
from minicloud.kube.openapi import catalog
from minicloud.kube.openapi.builders import DEFINITIONS, META
from minicloud.kube.resources import Kind

COMPONENTS = "#/components/schemas/"
TITLE = "Kubernetes"


@dataclass(frozen=True)
class Param:
    name: str
    where: str  # query, path, body
    type: str
    description: str
    required: bool = False


_QUERY = {p.name: p for p in (
    Param("pretty", "query", "string", "If 'true', the output is pretty printed."),
    Param("dryRun", "query", "string", "All: process the request fully but persist nothing."),
    Param("fieldManager", "query", "string", "Name of the actor making the change, for managed fields."),
    Param("fieldValidation", "query", "string", "What to do with fields the schema does not know: Ignore (drop "
          "them), Warn (drop them and answer a Warning header per field) or Strict (refuse the request)."),
    Param("force", "query", "boolean", "Force an apply patch over conflicts (not supported here)."),
    Param("labelSelector", "query", "string", "Only objects whose labels match this selector."),
    Param("fieldSelector", "query", "string", "Only objects whose fields match this selector."),
    Param("limit", "query", "integer", "At most this many objects; continue with the token the list returns."),
    Param("continue", "query", "string", "The token of the next page, from the previous list."),
    Param("resourceVersion", "query", "string", "Which version of the data may be served."),
    Param("resourceVersionMatch", "query", "string", "How resourceVersion is applied: Exact or NotOlderThan."),
    Param("watch", "query", "boolean", "Watch changes instead of listing."),
    Param("allowWatchBookmarks", "query", "boolean", "Ask for BOOKMARK events in a watch."),
    Param("sendInitialEvents", "query", "boolean", "Start a watch with the current objects."),
    Param("timeoutSeconds", "query", "integer", "Time limit of the list or watch call."),
    Param("gracePeriodSeconds", "query", "integer", "Seconds before the object is deleted."),
    Param("propagationPolicy", "query", "string", "Orphan, Background or Foreground."),
    Param("orphanDependents", "query", "boolean", "Deprecated: use propagationPolicy."),
)}
_LIST = ("allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit", "resourceVersion",
         "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds", "watch")
_WRITE = ("dryRun", "fieldManager", "fieldValidation")
_DELETE = ("dryRun", "gracePeriodSeconds", "orphanDependents", "propagationPolicy")


@dataclass(frozen=True)
class Operation:
    method: str
    action: str  # x-kubernetes-action
    verb: str  # operationId prefix
    description: str
    query: tuple[str, ...]
    body: str | None  # definition of the request body
    consumes: tuple[str, ...]
    response: str  # definition of the 200 answer


def _camel(text: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in text.replace("-", ".").split(".") if part)


def _group_prefix(kind: Kind) -> str:
    return "core" if not kind.group else _camel(kind.group)[0].lower() + _camel(kind.group)[1:]


def _base(kind: Kind, version: str) -> str:
    return f"/api/{version}" if not kind.group else f"/apis/{kind.group}/{version}"


def _patch_types(kind: Kind) -> tuple[str, ...]:
    types = (patches.JSON_PATCH, patches.MERGE, patches.APPLY)
    return types if kind.custom else types + (patches.STRATEGIC,)


def paths(kind: Kind, version: str) -> dict[str, tuple[list[Param], list[Operation]]]:
    """Each path of the kind at ``version``: its path parameters and operations."""
    name = catalog.definition_name(kind.group, version, kind.kind)
    status = META + "Status"
    ns = [Param("namespace", "path", "string", "Object name and auth scope, such as for teams and projects", True)]
    named = [Param("name", "path", "string", f"name of the {kind.kind}", True)]
    pretty = [_QUERY["pretty"]]
    base = _base(kind, version)
    collection = f"{base}/namespaces/{{namespace}}/{kind.plural}" if kind.namespaced else f"{base}/{kind.plural}"
    deleted = status if not kind.custom else name
    result = {
        collection: (ns + pretty if kind.namespaced else pretty, [
            Operation("get", "list", "list", f"list or watch objects of kind {kind.kind}", _LIST, None, (),
                      name + "List"),
            Operation("post", "post", "create", f"create a {kind.kind}", _WRITE, name, ("*/*",), name),
            Operation("delete", "deletecollection", "deletecollection", f"delete collection of {kind.kind}",
                      _DELETE + _LIST, META + "DeleteOptions", ("*/*",), status),
        ]),
        f"{collection}/{{name}}": ((ns if kind.namespaced else []) + named + pretty, [
            Operation("get", "get", "read", f"read the specified {kind.kind}", (), None, (), name),
            Operation("put", "put", "replace", f"replace the specified {kind.kind}", _WRITE, name, ("*/*",), name),
            Operation("patch", "patch", "patch", f"partially update the specified {kind.kind}", _WRITE + ("force",),
                      META + "Patch", _patch_types(kind), name),
            Operation("delete", "delete", "delete", f"delete a {kind.kind}", _DELETE, META + "DeleteOptions",
                      ("*/*",), deleted),
        ]),
    }
    if kind.namespaced:
        result[f"{base}/{kind.plural}"] = (pretty, [Operation(
            "get", "list", "list", f"list or watch objects of kind {kind.kind} in all namespaces", _LIST, None, (),
            name + "List")])
    if kind.status_subresource:
        result[f"{collection}/{{name}}/status"] = ((ns if kind.namespaced else []) + named + pretty, [
            Operation("get", "get", "read", f"read status of the specified {kind.kind}", (), None, (), name),
            Operation("put", "put", "replace", f"replace status of the specified {kind.kind}", _WRITE, name,
                      ("*/*",), name),
            Operation("patch", "patch", "patch", f"partially update status of the specified {kind.kind}",
                      _WRITE + ("force",), META + "Patch", _patch_types(kind), name),
        ])
    return result


def _operation_id(op: Operation, kind: Kind, version: str, path: str) -> str:
    scope = "Namespaced" if "{namespace}" in path else ""
    everywhere = "ForAllNamespaces" if kind.namespaced and not scope else ""
    tail = "Status" if path.endswith("/status") else ""
    return f"{op.verb}{_camel(_group_prefix(kind))}{_camel(version)}{scope}{kind.kind}{tail}{everywhere}"


def _gvk(kind: Kind, version: str) -> dict:
    return {"group": kind.group, "kind": kind.kind, "version": version}


def _served() -> list[tuple[Kind, str]]:
    return [(kind, version) for kind in resources.KINDS for version in kind.versions]


# -- schema dialects -------------------------------------------------------------------------------------------

def to_v2(schema):
    """OpenAPI v2 has no anyOf: int-or-string keeps only its marker."""
    if isinstance(schema, dict):
        return {k: to_v2(v) for k, v in schema.items() if not (k == "anyOf" and "x-kubernetes-int-or-string"
                                                                in schema)}
    if isinstance(schema, list):
        return [to_v2(v) for v in schema]
    return schema


def to_v3(schema):
    """References point into ``components.schemas``; a reference with a description becomes ``allOf``."""
    if isinstance(schema, list):
        return [to_v3(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema and isinstance(schema["$ref"], str) and schema["$ref"].startswith(DEFINITIONS):
        target = {"$ref": COMPONENTS + schema["$ref"][len(DEFINITIONS):]}
        others = {k: to_v3(v) for k, v in schema.items() if k != "$ref"}
        return {"allOf": [target], **others} if others else target
    return {k: to_v3(v) for k, v in schema.items()}


# -- v2 ---------------------------------------------------------------------------------------------------------

def _v2_param(p: Param) -> dict:
    result = {"name": p.name, "in": p.where, "description": p.description, "type": p.type, "uniqueItems": True}
    if p.required:
        result["required"] = True
    return result


def _v2_operation(op: Operation, kind: Kind, version: str, path: str) -> dict:
    params = [_v2_param(_QUERY[q]) for q in op.query]
    if op.body:
        params.insert(0, {"name": "body", "in": "body", "required": op.method != "delete",
                          "schema": {"$ref": DEFINITIONS + op.body}})
    result = {"description": op.description, "tags": [f"{_group_prefix(kind)}_{version}"],
              "operationId": _operation_id(op, kind, version, path),
              "produces": ["application/json", "application/yaml"], "schemes": ["https"],
              "responses": {"200": {"description": "OK", "schema": {"$ref": DEFINITIONS + op.response}},
                            "401": {"description": "Unauthorized"}},
              "x-kubernetes-action": op.action, "x-kubernetes-group-version-kind": _gvk(kind, version)}
    if op.consumes:
        result["consumes"] = list(op.consumes)
    if params:
        result["parameters"] = params
    return result


def v2() -> dict:
    """The Swagger 2.0 document of everything served."""
    served = _served()
    doc_paths: dict[str, dict] = {}
    for kind, version in served:
        for path, (path_params, operations) in paths(kind, version).items():
            item = {op.method: _v2_operation(op, kind, version, path) for op in operations}
            item["parameters"] = [_v2_param(p) for p in path_params]
            doc_paths[path] = item
    definitions = catalog.definitions_for([(k.group, v, k.kind) for k, v in served])
    return {"swagger": "2.0", "info": {"title": TITLE, "version": discovery.SERVER_VERSION["gitVersion"]},
            "paths": dict(sorted(doc_paths.items())), "definitions": to_v2(definitions),
            "securityDefinitions": {"BearerToken": {"type": "apiKey", "name": "authorization", "in": "header",
                                                    "description": "Bearer Token authentication"}},
            "security": [{"BearerToken": []}]}


# -- v3 ---------------------------------------------------------------------------------------------------------

def group_versions() -> list[str]:
    """The index keys: ``api/v1``, ``apis/GROUP/VERSION``."""
    keys = {(f"api/{version}" if not kind.group else f"apis/{kind.group}/{version}") for kind, version in _served()}
    return sorted(keys)


def _v3_param(p: Param) -> dict:
    result = {"name": p.name, "in": p.where, "description": p.description,
              "schema": {"type": p.type, "uniqueItems": True}}
    if p.required:
        result["required"] = True
    return result


def _v3_operation(op: Operation, kind: Kind, version: str, path: str) -> dict:
    answer = {"schema": {"$ref": COMPONENTS + op.response}}
    result = {"description": op.description, "tags": [f"{_group_prefix(kind)}_{version}"],
              "operationId": _operation_id(op, kind, version, path),
              "responses": {"200": {"description": "OK", "content": {"application/json": answer,
                                                                     "application/yaml": answer}},
                            "401": {"description": "Unauthorized"}},
              "x-kubernetes-action": op.action, "x-kubernetes-group-version-kind": _gvk(kind, version)}
    if op.query:
        result["parameters"] = [_v3_param(_QUERY[q]) for q in op.query]
    if op.body:
        body = {"schema": {"$ref": COMPONENTS + op.body}}
        result["requestBody"] = {"content": {media: body for media in op.consumes}}
        if op.method != "delete":
            result["requestBody"]["required"] = True
    return result


def v3(key: str) -> dict | None:
    """The OpenAPI 3.0 document of one group-version (``api/v1``, ``apis/GROUP/VERSION``), or None."""
    wanted = [(kind, version) for kind, version in _served()
              if key == (f"api/{version}" if not kind.group else f"apis/{kind.group}/{version}")]
    if not wanted:
        return None
    doc_paths: dict[str, dict] = {}
    for kind, version in wanted:
        for path, (path_params, operations) in paths(kind, version).items():
            item = {op.method: _v3_operation(op, kind, version, path) for op in operations}
            item["parameters"] = [_v3_param(p) for p in path_params]
            doc_paths[path] = item
    schemas = catalog.definitions_for([(k.group, v, k.kind) for k, v in wanted])
    return {"openapi": "3.0.0", "info": {"title": TITLE, "version": discovery.SERVER_VERSION["gitVersion"]},
            "paths": dict(sorted(doc_paths.items())),
            "components": {"schemas": to_v3(copy.deepcopy(schemas)),
                           "securitySchemes": {"BearerToken": {"type": "apiKey", "name": "authorization",
                                                               "in": "header",
                                                               "description": "Bearer Token authentication"}}}}


def digest(doc: dict) -> str:
    """The hash clients find in the index's URLs (upper-case hex SHA-512 of the document, as kube-apiserver)."""
    return hashlib.sha512(json.dumps(doc, sort_keys=True).encode()).hexdigest().upper()


def v3_index() -> dict:
    result = {}
    for key in group_versions():
        result[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={digest(v3(key))}"}
    return {"paths": result}
