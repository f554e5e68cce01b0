# -*- coding: utf-8 -*-
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The OpenStack connection: options compatible with openstack.cloud, request counting, retries.

Option names and semantics follow openstack.cloud so a user's ``module_defaults`` and variables carry
over.  Every HTTP request the SDK sends (token requests included) is counted at the transport, and
every API call a module makes goes through ``OpenStackClient.call`` so the one retry policy applies.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import traceback

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.clock import Clock
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.retry import (
    Fault,
    RetryPolicy,
    parse_retry_after,
)

SDK_IMPORT_ERROR = None
try:
    import openstack
    from openstack import exceptions as sdk_exceptions
    from keystoneauth1 import exceptions as ksa_exceptions
    import requests
except ImportError:
    openstack = None
    sdk_exceptions = None
    ksa_exceptions = None
    requests = None
    SDK_IMPORT_ERROR = traceback.format_exc()

from importlib import metadata as importlib_metadata

MINIMUM_SDK_VERSION = "1.0.0"
COLLECTION_NAME = "flightcontrol.openstack"
COLLECTION_VERSION = "0.1.0"
DEFAULT_REQUEST_TIMEOUT = 30
# A request started at (or just before) the deadline still gets this long to answer.
LAST_REQUEST_TIMEOUT = 1.0
# Options that only apply when ``cloud`` names a cloud; a ``cloud`` dict carries its own.
CONNECTION_OPTIONS = ("auth", "auth_type", "region_name", "validate_certs", "ca_cert", "client_cert", "client_key",
                      "api_timeout")
SECRET_KEY_WORDS = ("password", "secret", "token", "key", "credential")


class ResolveError(Exception):
    """A named object does not exist or is ambiguous: terminal, with a message a person can act on."""


def openstack_argument_spec():
    """The connection options shared by every OpenStack module (doc fragment ``openstack_auth``)."""
    return dict(
        cloud=dict(type="raw"),
        auth_type=dict(type="str"),
        auth=dict(type="dict", no_log=True),
        region_name=dict(type="str"),
        validate_certs=dict(type="bool", aliases=["verify"]),
        ca_cert=dict(type="str", aliases=["cacert"]),
        client_cert=dict(type="str", aliases=["cert"]),
        client_key=dict(type="str", no_log=True, aliases=["key"]),
        api_timeout=dict(type="int"),
        interface=dict(type="str", default="public", choices=["public", "internal", "admin"],
                       aliases=["endpoint_type"]),
    )


def cloud_dict_problem(params):
    """Why the options cannot be used together, or None.  A ``cloud`` dict is a complete cloud
    configuration, so the other connection options would be silently ignored (openstack.cloud refuses
    this combination too)."""
    cloud = params.get("cloud")
    if cloud is not None and not isinstance(cloud, (str, dict)):
        return ("cloud must be the name of a cloud in clouds.yaml or a dict of connection settings, got a %s"
                % type(cloud).__name__)
    if not isinstance(cloud, dict):
        return None
    wrong = sorted(key for key in ("auth", "region_name", "auth_type") if key in cloud and not isinstance(
        cloud[key], dict if key == "auth" else str))
    if wrong:
        return "cloud: %s of the cloud dict has the wrong type (auth is a dict, auth_type and region_name strings)" % (
            ", ".join(wrong))
    clashing = [name for name in CONNECTION_OPTIONS if params.get(name) is not None]
    if clashing:
        return ("cloud is a complete cloud configuration (a dict), so %s would be ignored: put them inside the "
                "cloud dict, or name a cloud from clouds.yaml instead" % ", ".join(clashing))
    return None


def secret_values(value, key=""):
    """The values under secret-looking keys of a (nested) ``cloud`` dict, to be masked in output."""
    found = set()
    if isinstance(value, dict):
        for name, item in value.items():
            found |= secret_values(item, str(name))
    elif isinstance(value, (list, tuple)):
        for item in value:
            found |= secret_values(item, key)
    elif value not in (None, "") and any(word in key.lower() for word in SECRET_KEY_WORDS):
        found.add(str(value))
    return found


def sdk_version():
    """The installed openstacksdk version string, read from package metadata (never a submodule)."""
    try:
        return importlib_metadata.version("openstacksdk")
    except importlib_metadata.PackageNotFoundError:
        return None


def _version_tuple(text):
    parts = []
    for piece in str(text).split("."):
        digits = ""
        for char in piece:
            if not char.isdigit():
                break
            digits += char
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def sdk_version_error():
    """A message when openstacksdk is missing or too old for this collection, else None."""
    version = sdk_version()
    if version is None:
        return None
    if _version_tuple(version) < _version_tuple(MINIMUM_SDK_VERSION):
        return "openstacksdk %s is installed; %s needs %s or newer" % (
            version, COLLECTION_NAME, MINIMUM_SDK_VERSION)
    return None


def describe_fault(exc):
    """Turn an SDK, keystoneauth or requests exception into a ``Fault``; None if it is no API fault."""
    if ksa_exceptions is not None:
        if isinstance(exc, ksa_exceptions.SSLError):
            return None
        if isinstance(exc, (ksa_exceptions.ConnectionError, ksa_exceptions.RetriableConnectionFailure)):
            return Fault(connection_error=True, description="connection error: %s" % exc)
    if requests is not None and isinstance(exc, requests.exceptions.ConnectionError):
        return Fault(connection_error=True, description="connection error: %s" % exc)
    status = None
    response = None
    if sdk_exceptions is not None and isinstance(exc, sdk_exceptions.HttpException):
        status = exc.status_code
        response = exc.response
    elif ksa_exceptions is not None and isinstance(exc, ksa_exceptions.HttpError):
        status = exc.http_status
        response = getattr(exc, "response", None)
    if status is None:
        return None
    retry_after = None
    if response is not None:
        retry_after = parse_retry_after(response.headers.get("Retry-After"))
    return Fault(status=status, retry_after=retry_after,
                 description="HTTP %s%s" % (status, " (Retry-After %s s)" % retry_after if retry_after is not None else ""))


def http_status(exc):
    """The HTTP status of an SDK or keystoneauth error, else None."""
    if sdk_exceptions is not None and isinstance(exc, sdk_exceptions.HttpException):
        return exc.status_code
    if ksa_exceptions is not None and isinstance(exc, ksa_exceptions.HttpError):
        return exc.http_status
    return None


def _error_body(exc):
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


def error_type(exc):
    """Neutron's error type (``NeutronError.type``) of a failed request, else None."""
    response = getattr(exc, "response", None)
    try:
        body = response.json() if response is not None else None
    except ValueError:
        return None
    if isinstance(body, dict) and isinstance(body.get("NeutronError"), dict):
        return body["NeutronError"].get("type")
    return None


def error_message(exc):
    """The service's own message of a failed request, else the exception's text."""
    return _error_body(exc)[1] or str(exc)


def service_message(exc):
    """A failed request in the service's own words: ``HTTP 404 SecurityGroupNotFound: Security group ... does
    not exist``. The SDK's text when the answer carries no error body (or for errors without a status)."""
    status = http_status(exc)
    kind, message = _error_body(exc)
    if status is None or not message:
        return str(exc)
    return "HTTP %s%s: %s" % (status, " %s" % kind if kind else "", message)


def is_not_found(exc):
    return sdk_exceptions is not None and isinstance(exc, sdk_exceptions.NotFoundException)


class RequestGuard:
    """Sits at the HTTP transport: counts every request sent, and caps each request's timeout at the
    time left before the caller's deadline, so a hung connection cannot outlive the module's wait."""

    def __init__(self, clock):
        self.clock = clock
        self.total = 0
        self.deadline = None

    def attach(self, http_session):
        for adapter in set(http_session.adapters.values()):
            adapter.send = self._guarded(adapter.send)

    def capped_timeout(self, timeout):
        if self.deadline is None:
            return timeout
        cap = max(LAST_REQUEST_TIMEOUT, self.deadline - self.clock.monotonic())
        if timeout is None:
            return cap
        if isinstance(timeout, tuple):
            return tuple(cap if part is None else min(part, cap) for part in timeout)
        return min(timeout, cap)

    def _guarded(self, send):
        def guarded_send(request, *args, **kwargs):
            self.total += 1
            kwargs["timeout"] = self.capped_timeout(kwargs.get("timeout"))
            return send(request, *args, **kwargs)
        return guarded_send


class OpenStackClient:
    """A connected openstacksdk ``Connection`` with request counting and the retry policy."""

    def __init__(self, params, clock=None, policy=None):
        self.params = params
        self.clock = clock or Clock()
        self.policy = policy or RetryPolicy(clock=self.clock)
        self.guard = RequestGuard(self.clock)
        self.conn = self._connect(params)
        self.guard.attach(self.conn.session.session)

    @staticmethod
    def _connect(params):
        cloud = params.get("cloud")
        api_timeout = params.get("api_timeout") or DEFAULT_REQUEST_TIMEOUT
        app = dict(app_name=COLLECTION_NAME, app_version=COLLECTION_VERSION)
        if isinstance(cloud, dict):
            config = dict(cloud)
            config.setdefault("api_timeout", api_timeout)
            return openstack.connect(**dict(config, **app))
        kwargs = dict(
            cloud=cloud,
            auth_type=params.get("auth_type"),
            auth=params.get("auth"),
            region_name=params.get("region_name"),
            cacert=params.get("ca_cert"),
            cert=params.get("client_cert"),
            key=params.get("client_key"),
            api_timeout=api_timeout,
            interface=params.get("interface"),
        )
        if params.get("validate_certs") is not None:
            kwargs["verify"] = params["validate_certs"]
        return openstack.connect(**dict(((k, v) for k, v in kwargs.items() if v is not None), **app))

    @property
    def api_calls(self):
        return self.guard.total

    def call(self, func, what, deadline):
        """Run one API call under the retry policy, never retrying (or waiting on a request) past ``deadline``.

        No re-auth callback: keystoneauth already renews an expired token once when a request gets 401.
        """
        self.guard.deadline = deadline
        try:
            return self.policy.call(func, describe_fault, deadline, reauth=None, what=what)
        finally:
            self.guard.deadline = None
