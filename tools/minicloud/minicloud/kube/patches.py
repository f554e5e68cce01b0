"""PATCH bodies, applied to the served view of an object (pure).

kube-apiserver accepts JSON merge patch (RFC 7386), JSON patch (RFC 6902),
strategic merge patch (core kinds only: custom resources answer 415) and
server-side apply (not emulated: 415 here too).
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


def apply(content_type: str, current: dict, body, custom: bool) -> dict:
    """The object after applying ``body`` of ``content_type`` to ``current``."""
    kind = (content_type or "").split(";")[0].strip()
    if kind == MERGE or (kind == STRATEGIC and not custom):
        # Strategic merge of the few core fields served here (no keyed lists) equals a merge patch.
        if not isinstance(body, dict):
            raise errors.bad_request("the body of the request must be a JSON object for a merge patch")
        return merge_patch(current, body)
    if kind == JSON_PATCH:
        if not isinstance(body, list):
            raise errors.bad_request("json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp")
        try:
            return jsonpatch.JsonPatch(body).apply(current)
        except jsonpatch.JsonPatchTestFailed as exc:
            raise errors.ApiError(422, "Invalid", f"the server rejected our request due to an error in our "
                                  f"request: {exc}", {}) from None
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
            raise errors.ApiError(422, "Invalid", str(exc), {}) from None
    raise errors.unsupported_media_type(kind)
