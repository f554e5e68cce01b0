# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""HTTP faults of OpenStack requests: the status, the service's own words, and the retry policy's view.

The one place that reads an HTTP status from an exception of openstacksdk, keystoneauth or requests."""

from __future__ import annotations

from typing import Any

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.retry import Fault, parse_retry_after
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.transport import failed_before_sending
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.sdk import (
    ksa_exceptions,
    requests,
    sdk_exceptions,
)


def http_status(exc: BaseException) -> int | None:
    """The HTTP status of an SDK or keystoneauth error, else None: the one place that reads it."""
    if sdk_exceptions is not None and isinstance(exc, sdk_exceptions.HttpException):
        return exc.status_code
    if ksa_exceptions is not None and isinstance(exc, ksa_exceptions.HttpError):
        return exc.http_status
    return None


def is_connection_error(exc: BaseException) -> bool:
    """A connection that failed or dropped (no answer at all), from keystoneauth or requests."""
    if ksa_exceptions is not None:
        if isinstance(exc, ksa_exceptions.SSLError):
            return False
        if isinstance(exc, (ksa_exceptions.ConnectionError, ksa_exceptions.RetriableConnectionFailure)):
            return True
    return requests is not None and isinstance(exc, requests.exceptions.ConnectionError)


def describe_fault(exc: BaseException) -> Fault | None:
    """Turn an SDK, keystoneauth or requests exception into a ``Fault``; None if it is no API fault."""
    if ksa_exceptions is not None and isinstance(exc, ksa_exceptions.SSLError):
        return None
    if is_connection_error(exc):
        return Fault(connection_error=True, description=f"connection error: {exc}",
                     before_sending=failed_before_sending(exc))
    status = http_status(exc)
    if status is None:
        return None
    response = getattr(exc, "response", None)
    retry_after = None
    if response is not None:
        retry_after = parse_retry_after(response.headers.get("Retry-After"))
    return Fault(status=status, retry_after=retry_after,
                 description=f"HTTP {status}{f' (Retry-After {retry_after} s)' if retry_after is not None else ''}")


def _error_body(exc: BaseException) -> tuple[str | None, str | None]:
    """(type, message) from the JSON error body of a failed request, as each service writes it:
    Neutron ``{"NeutronError": {"type", "message"}}``, Nova ``{"itemNotFound": {"message"}}``, Keystone
    ``{"error": {"title", "message"}}``, Octavia ``{"faultcode", "faultstring"}``; (None, None) without one."""
    response = getattr(exc, "response", None)
    if response is None:
        return None, None
    try:
        body = response.json()
    except (ValueError, AttributeError):
        return None, None
    if not isinstance(body, dict):
        return None, None
    if body.get("faultstring"):
        return None, str(body["faultstring"])
    for key, value in body.items():
        if isinstance(value, dict) and value.get("message"):
            kind = value.get("type") or value.get("title") or (key if key not in ("error", "NeutronError") else None)
            return kind, str(value["message"])
    return None, None


def error_type(exc: BaseException) -> Any:
    """Neutron's error type (``NeutronError.type``) of a failed request, else None."""
    response = getattr(exc, "response", None)
    try:
        body = response.json() if response is not None else None
    except ValueError:
        return None
    if isinstance(body, dict) and isinstance(body.get("NeutronError"), dict):
        return body["NeutronError"].get("type")
    return None


def error_message(exc: BaseException) -> str:
    """The service's own message of a failed request, else the exception's text."""
    return _error_body(exc)[1] or str(exc)


def service_message(exc: BaseException) -> str:
    """A failed request in the service's own words: ``HTTP 404 SecurityGroupNotFound: Security group ... does
    not exist``. The SDK's text when the answer carries no error body (or for errors without a status)."""
    status = http_status(exc)
    kind, message = _error_body(exc)
    if status is None or not message:
        return str(exc)
    hint = (" (keystoneauth had already fetched a new token once: check the credentials, and the user's role in "
            "the project)" if status == 401 else "")
    return f"HTTP {status}{f' {kind}' if kind else ''}: {message}{hint}"


def is_not_found(exc: BaseException) -> bool:
    return sdk_exceptions is not None and isinstance(exc, sdk_exceptions.NotFoundException)


def is_sdk_error(exc: BaseException) -> bool:
    """Errors from openstacksdk or keystoneauth (configuration, catalog, auth) that deserve a plain message."""
    known = tuple(c for c in (getattr(sdk_exceptions, "SDKException", None),
                              getattr(ksa_exceptions, "ClientException", None)) if c is not None)
    return bool(known) and isinstance(exc, known)
