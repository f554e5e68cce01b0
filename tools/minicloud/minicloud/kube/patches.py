"""PATCH bodies, applied to the served view of an object (pure).

kube-apiserver accepts JSON merge patch (RFC 7386), JSON patch (RFC 6902),
strategic merge patch (core kinds only: custom resources answer 415) and
server-side apply in part: an apply creates a missing object and otherwise merges the
applied configuration like a merge patch (field ownership, ``managedFields`` and apply
conflicts are not emulated, so fields left out of a later apply are kept).
"""

from __future__ import annotations

import copy

import jsonpatch

from minicloud.kube import errors

MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"


def merge_patch(target, patch):
    """RFC 7386: objects merge recursively, ``null`` removes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _patch_error(operation: dict, exc: Exception) -> str:
    """The message evanphx/json-patch (kube-apiserver's JSON patch library) gives for a failed operation."""
    op, path = operation.get("op"), operation.get("path")
    if op == "test":
        return f"testing value {path} failed: test failed"
    if op == "replace":
        return f"replace operation does not apply: doc is missing key: {path}: missing value"
    if op in ("add", "remove", "move", "copy"):
        return f'{op} operation does not apply: doc is missing path: "{path}": missing value'
    return f"Unexpected kind: {op}"


def json_patch(current: dict, operations: list) -> dict:
    """RFC 6902, one operation at a time so that a failure names its operation, answered as kube-apiserver
    answers it: 422 Invalid, the library's message as the cause."""
    result = current
    for operation in operations:
        try:
            result = jsonpatch.JsonPatch([operation]).apply(result)
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError, KeyError) as exc:
            raise errors.ApiError(422, "Invalid", "the server rejected our request due to an error in our request",
                                  {"causes": [{"reason": "UnexpectedServerResponse",
                                               "message": _patch_error(operation, exc)}]}) from None
    return result


def apply(content_type: str, current: dict, body, custom: bool) -> dict:
    """The object after applying ``body`` of ``content_type`` to ``current``."""
    kind = (content_type or "").split(";")[0].strip()
    if kind == MERGE or (kind == STRATEGIC and not custom) or kind == APPLY:
        # Strategic merge of the few core fields served here (no keyed lists) equals a merge patch.
        if not isinstance(body, dict):
            raise errors.bad_request("the body of the request must be a JSON object for a merge patch")
        return merge_patch(current, body)
    if kind == JSON_PATCH:
        if not isinstance(body, list):
            raise errors.bad_request("json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp")
        return json_patch(current, body)
    raise errors.unsupported_media_type(kind)
