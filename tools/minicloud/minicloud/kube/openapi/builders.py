"""Small constructors for OpenAPI schemas, so the kinds' schemas read as compact Python data.

Schemas are plain dicts in the OpenAPI v2 (Swagger) dialect that kube-apiserver publishes:
references are ``{"$ref": "#/definitions/NAME"}``; :mod:`.documents` rewrites them for
OpenAPI v3. ``x-kubernetes-preserve-unknown-fields`` marks the free-form parts, which strict
field validation does not look into.
"""

from __future__ import annotations

META = "io.k8s.apimachinery.pkg.apis.meta.v1."
CORE = "io.k8s.api.core.v1."
DEFINITIONS = "#/definitions/"
PRESERVE = "x-kubernetes-preserve-unknown-fields"
GVK = "x-kubernetes-group-version-kind"


def _described(schema: dict, description: str) -> dict:
    if description:
        schema["description"] = description
    return schema


def string(description: str = "", fmt: str = "") -> dict:
    schema = {"type": "string"}
    if fmt:
        schema["format"] = fmt
    return _described(schema, description)


def date_time(description: str = "") -> dict:
    return string(description, "date-time")


def integer(description: str = "", fmt: str = "int32") -> dict:
    return _described({"type": "integer", "format": fmt}, description)


def boolean(description: str = "") -> dict:
    return _described({"type": "boolean"}, description)


def int_or_string(description: str = "") -> dict:
    return _described({"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True},
                      description)


def array(items: dict, description: str = "") -> dict:
    return _described({"type": "array", "items": items}, description)


def strings(description: str = "") -> dict:
    return array({"type": "string"}, description)


def string_map(description: str = "", fmt: str = "") -> dict:
    return _described({"type": "object", "additionalProperties": string(fmt=fmt)}, description)


def obj(description: str = "", required: tuple[str, ...] = (), **properties: dict) -> dict:
    """An object with exactly these fields (any other one is unknown)."""
    schema = _described({"type": "object"}, description)
    schema["properties"] = properties
    if required:
        schema["required"] = list(required)
    return schema


def free(description: str = "", **properties: dict) -> dict:
    """An object whose fields are not all listed here: any field is kept, none is unknown."""
    schema = _described({"type": "object"}, description)
    if properties:
        schema["properties"] = properties
    schema[PRESERVE] = True
    return schema


def ref(name: str, description: str = "") -> dict:
    return _described({"$ref": DEFINITIONS + name}, description)


def ref_name(schema: dict) -> str | None:
    """The definition a schema points to, if it is a reference."""
    target = schema.get("$ref", "")
    return target[len(DEFINITIONS):] if target.startswith(DEFINITIONS) else None


def kind(description: str, group: str, version: str, kind_name: str, **fields: dict) -> dict:
    """A top-level kind: apiVersion, kind, metadata (ObjectMeta) and its own fields."""
    schema = obj(description,
                 apiVersion=string("The versioned schema of this object (GROUP/VERSION); the server converts "
                                   "what it serves to the version asked."),
                 kind=string("The REST resource this object represents, in CamelCase."),
                 metadata=ref(META + "ObjectMeta", "Standard object metadata: name, namespace, labels, "
                                                   "annotations, owners, finalizers..."),
                 **fields)
    schema[GVK] = [{"group": group, "kind": kind_name, "version": version}]
    return schema


def list_kind(item: str, group: str, version: str, kind_name: str) -> dict:
    """``<Kind>List``: the answer of a list request."""
    schema = obj(f"A list of {kind_name[:-4]} objects.", ("items",),
                 apiVersion=string("The versioned schema of this list."),
                 items=array(ref(item), "The objects."),
                 kind=string("Always " + kind_name + "."),
                 metadata=ref(META + "ListMeta", "resourceVersion of the list and the continue token of paging."))
    schema[GVK] = [{"group": group, "kind": kind_name, "version": version}]
    return schema
