"""``/openapi/v2`` and ``/openapi/v3[/...]`` on a Flask app (authentication is the app's own).

kubectl asks ``/openapi/v2`` for protobuf only (``application/com.github.proto-openapi.spec.v2@v1.0+protobuf``)
and has no fallback to JSON: a JSON answer would fail its protobuf decoding, so a request that accepts
no JSON is answered 406 NotAcceptable. kubectl 1.32 needs v2 only for what v3 does not give it
(``kubectl explain --output plaintext-openapiv2``, client-side validation against servers without
server-side validation); ``apply``, ``create`` and ``explain`` use v3.
"""

from __future__ import annotations

import json
from functools import cache

from flask import Flask, Response, request

from minicloud.kube import errors, resources
from minicloud.kube.openapi import documents

PROTOBUF_V2 = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"


def accepts_json(accept: str | None) -> bool:
    """Whether an Accept header allows a JSON answer (no header: yes)."""
    if not accept or not accept.strip():
        return True
    for entry in accept.split(","):
        media = entry.split(";")[0].strip().lower()
        if media in ("application/json", "application/*", "*/*"):
            return True
    return False


@cache
def _v2_text(kinds: tuple) -> str:
    return json.dumps(documents.v2())


@cache
def _v3_index(kinds: tuple) -> str:
    return json.dumps(documents.v3_index())


@cache
def _v3_text(kinds: tuple, key: str) -> tuple[str, str] | None:
    doc = documents.v3(key)
    return None if doc is None else (json.dumps(doc), documents.digest(doc))


def _status(error: errors.ApiError) -> Response:
    return Response(json.dumps(error.status()), status=error.code, mimetype="application/json")


def register(app: Flask) -> None:
    """Add the OpenAPI routes to ``app``."""

    @app.get("/openapi/v2")
    def openapi_v2():
        if not accepts_json(request.headers.get("Accept")):
            return _status(errors.ApiError(406, "NotAcceptable", "only the following media types are accepted: "
                                           "application/json", {}))
        return Response(_v2_text(resources.KINDS), mimetype="application/json")

    @app.get("/openapi/v3")
    def openapi_v3_index():
        return Response(_v3_index(resources.KINDS), mimetype="application/json")

    @app.get("/openapi/v3/<path:key>")
    def openapi_v3(key):
        found = _v3_text(resources.KINDS, key.strip("/"))
        if found is None:
            return _status(errors.not_found_path(request.path))
        text, digest = found
        answer = Response(text, mimetype="application/json")
        answer.headers["ETag"] = f'"{digest}"'
        if request.args.get("hash") == digest:
            answer.headers["Cache-Control"] = "public, immutable"
        else:
            answer.headers["Cache-Control"] = "no-cache, private"
        return answer
