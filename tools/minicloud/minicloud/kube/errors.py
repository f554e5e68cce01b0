"""API errors and the ``Status`` bodies kube-apiserver answers them with.

The messages follow apimachinery's ``k8s.io/apimachinery/pkg/api/errors``
(``NewNotFound``, ``NewAlreadyExists``, ``NewConflict``...), so clients and the
people reading their failures see what a real cluster would say.
"""

from __future__ import annotations

OPTIMISTIC_LOCK_MESSAGE = "the object has been modified; please apply your changes to the latest version and try again"


class ApiError(Exception):
    """An error answered as a ``Status`` with ``code``, ``reason`` and ``details``."""

    def __init__(self, code: int, reason: str, message: str, details: dict | None = None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details

    def status(self) -> dict:
        body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": self.message, "reason": self.reason}
        if self.details is not None:
            body["details"] = self.details
        body["code"] = self.code
        return body


def _details(name: str, group: str, plural: str, **extra) -> dict:
    details = {"name": name} if name else {}
    if group:
        details["group"] = group
    details["kind"] = plural
    details.update(extra)
    return details


def _qualified(group: str, plural: str) -> str:
    return f"{plural}.{group}" if group else plural


def not_found(group: str, plural: str, name: str) -> ApiError:
    return ApiError(404, "NotFound", f'{_qualified(group, plural)} "{name}" not found', _details(name, group, plural))


def already_exists(group: str, plural: str, name: str) -> ApiError:
    return ApiError(409, "AlreadyExists", f'{_qualified(group, plural)} "{name}" already exists',
                    _details(name, group, plural))


def conflict(group: str, plural: str, name: str, why: str = OPTIMISTIC_LOCK_MESSAGE) -> ApiError:
    return ApiError(409, "Conflict", f'Operation cannot be fulfilled on {_qualified(group, plural)} "{name}": {why}',
                    _details(name, group, plural))


def invalid(group: str, plural: str, kind: str, name: str, causes: list[tuple[str, str, str]]) -> ApiError:
    """``causes``: (field, reason such as FieldValueRequired, message)."""
    text = "; ".join(f"{f}: {m}" for f, _, m in causes)
    details = {"name": name} if name else {}
    if group:
        details["group"] = group
    details["kind"] = kind
    details["causes"] = [{"reason": r, "message": m, "field": f} for f, r, m in causes]
    return ApiError(422, "Invalid", f'{kind}.{group or "core"} "{name}" is invalid: {text}'
                    if group else f'{kind} "{name}" is invalid: {text}', details)


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def unauthorized() -> ApiError:
    return ApiError(401, "Unauthorized", "Unauthorized")


def method_not_allowed(message: str = "the server does not allow this method on the requested resource") -> ApiError:
    return ApiError(405, "MethodNotAllowed", message, {})


PATCH_MEDIA_TYPES = ("application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml")


def unsupported_media_type(content_type: str, accepted: tuple[str, ...] = PATCH_MEDIA_TYPES) -> ApiError:
    return ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted media "
                    f"types include: {', '.join(accepted)}", {})


def not_found_path(path: str) -> ApiError:
    return ApiError(404, "NotFound", "the server could not find the requested resource", {})
