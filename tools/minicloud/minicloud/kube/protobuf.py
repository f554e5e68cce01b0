"""Request bodies in Kubernetes' protobuf encoding, for the built-in kinds kubectl sends that way.

kubectl (client-go) sends built-in kinds as ``application/vnd.kubernetes.protobuf`` and reads
answers in JSON when the server gives JSON. A body is the magic ``k8s\\0`` and a
``runtime.Unknown`` message (typeMeta 1 {apiVersion 1, kind 2}, raw 2) whose ``raw`` is the
object in the field numbers of ``k8s.io/api/core/v1/generated.proto``. This module decodes
the kinds and fields written below into the JSON shape (fields not listed are skipped) and
refuses other kinds with 415, as a server without their protobuf codec does.
"""

from __future__ import annotations

import base64

from minicloud.kube import errors

CONTENT_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"

# A field: (name, type); types: "string", "bytes" (base64 in JSON), "bool", "int", a message schema
# (dict), ("repeated", type), ("map", value type). Field numbers from generated.proto.
OWNER_REFERENCE = {1: ("kind", "string"), 3: ("name", "string"), 4: ("uid", "string"), 5: ("apiVersion", "string"),
                   6: ("controller", "bool"), 7: ("blockOwnerDeletion", "bool")}
OBJECT_META = {1: ("name", "string"), 2: ("generateName", "string"), 3: ("namespace", "string"),
               5: ("uid", "string"), 6: ("resourceVersion", "string"), 7: ("generation", "int"),
               11: ("labels", ("map", "string")), 12: ("annotations", ("map", "string")),
               13: ("ownerReferences", ("repeated", OWNER_REFERENCE)), 14: ("finalizers", ("repeated", "string"))}
TAINT = {1: ("key", "string"), 2: ("value", "string"), 3: ("effect", "string")}
SCHEMAS = {
    ("v1", "Secret"): {1: ("metadata", OBJECT_META), 2: ("data", ("map", "bytes")), 3: ("type", "string"),
                       4: ("stringData", ("map", "string")), 5: ("immutable", "bool")},
    ("v1", "ConfigMap"): {1: ("metadata", OBJECT_META), 2: ("data", ("map", "string")),
                          3: ("binaryData", ("map", "bytes")), 4: ("immutable", "bool")},
    ("v1", "Namespace"): {1: ("metadata", OBJECT_META), 2: ("spec", {1: ("finalizers", ("repeated", "string"))})},
    ("v1", "Node"): {1: ("metadata", OBJECT_META),
                     2: ("spec", {1: ("podCIDR", "string"), 3: ("providerID", "string"), 4: ("unschedulable", "bool"),
                                  5: ("taints", ("repeated", TAINT)), 7: ("podCIDRs", ("repeated", "string"))})},
}
UNKNOWN = {1: ("typeMeta", {1: ("apiVersion", "string"), 2: ("kind", "string")}), 2: ("raw", "raw")}


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _fields(data: bytes):
    """(field number, wire type, value) of each field: ints for varints, bytes for length-delimited."""
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 2:
            length, pos = _varint(data, pos)
            value, pos = data[pos:pos + length], pos + length
            if pos > len(data):
                raise ValueError("truncated field")
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            value, pos = data[pos:pos + size], pos + size
        else:
            raise ValueError(f"unsupported wire type {wire}")
        yield number, wire, value


def _scalar(kind, value):
    if kind == "string":
        return value.decode()
    if kind == "bytes":
        return base64.b64encode(value).decode()
    if kind == "bool":
        return bool(value)
    if kind == "int":
        return value
    if kind == "raw":
        return value
    return decode_message(value, kind)


def decode_message(data: bytes, schema: dict) -> dict:
    result: dict = {}
    for number, _wire, value in _fields(data):
        if number not in schema:
            continue
        name, kind = schema[number]
        if isinstance(kind, tuple) and kind[0] == "map":
            entry = {n: v for n, _, v in _fields(value)}
            result.setdefault(name, {})[entry.get(1, b"").decode()] = _scalar(kind[1], entry.get(2, b""))
        elif isinstance(kind, tuple) and kind[0] == "repeated":
            result.setdefault(name, []).append(_scalar(kind[1], value))
        else:
            result[name] = _scalar(kind, value)
    return result


def decode(body: bytes) -> dict:
    """The object a protobuf request body carries, in its JSON shape."""
    if not body.startswith(MAGIC):
        raise errors.bad_request("provided data does not appear to be a protobuf message, expected prefix "
                                 "[107 56 115 0]")
    try:
        unknown = decode_message(body[len(MAGIC):], UNKNOWN)
        type_meta = unknown.get("typeMeta", {})
        key = (type_meta.get("apiVersion", ""), type_meta.get("kind", ""))
        if key not in SCHEMAS:
            raise errors.unsupported_media_type(CONTENT_TYPE, ("application/json", "application/yaml"))
        obj = decode_message(unknown.get("raw", b""), SCHEMAS[key])
    except (ValueError, UnicodeDecodeError) as exc:
        raise errors.bad_request(f"error decoding the request body: {exc}") from None
    obj["apiVersion"], obj["kind"] = key
    return obj
