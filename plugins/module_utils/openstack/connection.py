# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The OpenStack connection: options compatible with openstack.cloud, request counting, retries.

Option names and semantics follow openstack.cloud so a user's ``module_defaults`` and variables carry
over.  Every HTTP request the SDK sends (token requests included) goes through the request guard both
clients share (``core.request_guard``: counted at the transport, its timeout clamped to what remains of the
caller's deadline), and every API call a module makes goes through ``OpenStackClient.call`` so the one retry policy applies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, cast

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.clock import Clock
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.idempotency import create_or_adopt
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.request_guard import RequestGuard
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.retry import (
    CREATE,
    READ,
    Fault,
    MaybeCommitted,
    RetryPolicy,
    WriteTrace,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.http import describe_fault
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.sdk import (
    COLLECTION_NAME,
    openstack,
    reuse_entry_point_cache,
)

if TYPE_CHECKING:
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.idempotency import Created

COLLECTION_VERSION = "0.1.0"
DEFAULT_REQUEST_TIMEOUT = 30
# Options that only apply when ``cloud`` names a cloud; a ``cloud`` dict carries its own.
CONNECTION_OPTIONS = ("auth", "auth_type", "region_name", "validate_certs", "ca_cert", "client_cert", "client_key",
                      "api_timeout")


def openstack_argument_spec() -> dict[str, Any]:
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
        # openstack.cloud's, accepted so that its module_defaults carry over, and ignored with a warning
        # (core.module_base.IGNORED_COMPAT_OPTIONS)
        wait=dict(type="bool"),
        sdk_log_path=dict(type="str"),
        sdk_log_level=dict(type="str", choices=["INFO", "DEBUG"]),
    )


def cloud_dict_problem(params: Mapping[str, Any]) -> str | None:
    """Why the options cannot be used together, or None.  A ``cloud`` dict is a complete cloud
    configuration, so the other connection options would be silently ignored (openstack.cloud refuses
    this combination too)."""
    cloud = params.get("cloud")
    if cloud is not None and not isinstance(cloud, (str, dict)):
        return (f"cloud must be the name of a cloud in clouds.yaml or a dict of connection settings, got a {type(cloud).__name__}")
    if not isinstance(cloud, dict):
        return None
    wrong = sorted(key for key in ("auth", "region_name", "auth_type") if key in cloud and not isinstance(
        cloud[key], dict if key == "auth" else str))
    if wrong:
        return f'cloud: {", ".join(wrong)} of the cloud dict has the wrong type (auth is a dict, auth_type and region_name strings)'
    interface = params.get("interface")
    if cloud.get("interface") not in (None, interface) and interface not in (None, "public"):
        return (f'interface is {interface} but the cloud dict says interface: {cloud["interface"]}; give it in one place')
    clashing = [name for name in CONNECTION_OPTIONS if params.get(name) is not None]
    if clashing:
        return (f'cloud is a complete cloud configuration (a dict), so {", ".join(clashing)} would be ignored: put them inside the '
                "cloud dict, or name a cloud from clouds.yaml instead")
    return None


def guard_session(guard: RequestGuard, http_session: Any) -> None:
    """Send every request of ``http_session`` (requests' adapters, token requests included) through ``guard``
    (``core.request_guard``): counted, its timeout clamped to the deadline of the call being made."""
    def guarded(send: Callable[..., Any]) -> Callable[..., Any]:
        def guarded_send(request: Any, *args: Any, **kwargs: Any) -> Any:
            guard.sent()
            kwargs["timeout"] = guard.timeout(kwargs.get("timeout"))
            return send(request, *args, **kwargs)
        return guarded_send

    for adapter in set(http_session.adapters.values()):
        adapter.send = guarded(adapter.send)


def request_timeout_of(params: Mapping[str, Any]) -> float:
    """How long one request may take: ``api_timeout`` of the ``cloud`` dict, else of the options, else the
    default (what the connection is given, and what the retry policy counts with)."""
    cloud = params.get("cloud")
    given = cloud.get("api_timeout") if isinstance(cloud, dict) else None
    try:
        return float(given or params.get("api_timeout") or DEFAULT_REQUEST_TIMEOUT)
    except (TypeError, ValueError):
        return float(DEFAULT_REQUEST_TIMEOUT)


class OpenStackClient:
    """A connected openstacksdk ``Connection`` with request counting and the retry policy."""

    def __init__(self, params: Mapping[str, Any], clock: Clock | None = None, policy: RetryPolicy | None = None) -> None:
        self.params = params
        self.clock = clock or Clock()
        self.policy = policy or RetryPolicy(clock=self.clock)
        self.request_timeout = request_timeout_of(params)
        self.guard = RequestGuard(self.request_timeout)
        self.conn = self._connect(params, self.request_timeout)
        guard_session(self.guard, self.conn.session.session)

    @staticmethod
    def _connect(params: Mapping[str, Any], api_timeout: float) -> Any:
        cloud = params.get("cloud")
        app = dict(app_name=COLLECTION_NAME, app_version=COLLECTION_VERSION)
        reuse_entry_point_cache()
        if isinstance(cloud, dict):
            config = dict(cloud)
            config.setdefault("api_timeout", api_timeout)
            config.setdefault("interface", params.get("interface") or "public")
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
    def api_calls(self) -> int:
        return self.guard.total

    def call(self, func: Callable[[], Any], what: str, deadline: Deadline, kind: str = READ,
             trace: WriteTrace | None = None) -> Any:
        """Run one API call under the retry policy, never retrying (or waiting on a request) past ``deadline`` (a
        ``core.deadline.Deadline``).

        ``kind`` is the call's idempotency class (``core.retry``: READ, IDEMPOTENT, CREATE) and ``trace`` a
        ``WriteTrace`` that tells the caller whether an attempt's answer was lost. No re-auth callback:
        keystoneauth already renews an expired token once when a request gets 401.
        """
        with self.guard.bound(deadline):
            return self.policy.call(func, describe_fault, deadline, reauth=None, what=what, kind=kind, trace=trace)

    def create(self, send: Callable[[], Any], find: Callable[[], Any], what: str, deadline: Deadline,
               trace: WriteTrace | None = None) -> Created:
        """A create that is never sent twice blindly (``core.idempotency``): after a lost answer ``find()`` looks
        for what it asked for, for as long as one request may take, and adopts it. Returns a ``Created``."""
        def mark_lost(exc: MaybeCommitted) -> None:
            # in the result's retried_faults too: the create met it, and was resolved by looking, not replaying
            fault = cast(Fault, exc.fault)  # the retry policy raises MaybeCommitted with the fault it met
            self.policy.retried.append(fault.status if fault.status is not None else "connection")
            if trace is not None:
                trace.saw(fault)

        return create_or_adopt(lambda: self.call(send, what, deadline, kind=CREATE), lambda: self.call(
            find, f"looking for what '{what}' made", deadline), deadline, self.request_timeout,
            what=what, on_lost=mark_lost)
