# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Kubernetes connection: options compatible with kubernetes.core, request counting, retries.

Option names, their ``K8S_AUTH_*`` environment variables and the order in which credentials are looked
for follow kubernetes.core, so a user's ``module_defaults`` and variables carry over.  Every HTTP
request the official ``kubernetes`` client sends goes through the request guard both clients share
(``core.request_guard``: counted, its timeout clamped to what remains of the caller's deadline), and every API call a module makes goes through
``KubernetesClient.call`` so the one retry policy applies.  urllib3's own retries are switched off:
one policy, and honest request counts.
"""

from __future__ import annotations

import json
import os
import ssl
import traceback
from typing import TYPE_CHECKING, Any, Callable, Mapping

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import UnreachableError
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.clock import Clock
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.request_guard import RequestGuard
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.transport import failed_before_sending
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.retry import (
    Fault,
    parse_retry_after,
    READ,
    RetryPolicy,
)

if TYPE_CHECKING:
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline

K8S_IMPORT_ERROR = None
try:
    import kubernetes
    from kubernetes.client.exceptions import ApiException
    from kubernetes.config.config_exception import ConfigException
    import urllib3
    import yaml
    CONFIG_ERRORS: tuple[type[BaseException], ...] = (ConfigException, yaml.YAMLError, OSError, ValueError, TypeError,
                                                      KeyError)
except ImportError:
    kubernetes = None
    urllib3 = None  # type: ignore[assignment]
    ApiException = None
    ConfigException = None
    CONFIG_ERRORS = ()
    K8S_IMPORT_ERROR = traceback.format_exc()

DEFAULT_REQUEST_TIMEOUT = 30
# An API that never answered gets this long (connection refused, unknown host) before the module
# says it is unreachable: a wrong host or port should not cost the whole wait timeout.
FIRST_CONTACT_SECONDS = 10.0

# option name -> attribute of kubernetes.client.Configuration (kubernetes.core's AUTH_ARG_MAP)
AUTH_OPTIONS = (
    ("kubeconfig", "kubeconfig"),
    ("context", "context"),
    ("host", "host"),
    ("api_key", "api_key"),
    ("username", "username"),
    ("password", "password"),
    ("validate_certs", "verify_ssl"),
    ("ca_cert", "ssl_ca_cert"),
    ("client_cert", "cert_file"),
    ("client_key", "key_file"),
    ("proxy", "proxy"),
    ("no_proxy", "no_proxy"),
)
BOOL_OPTIONS = ("validate_certs",)


def kubernetes_argument_spec() -> dict[str, Any]:
    """The connection options shared by every Kubernetes module (doc fragment ``kubernetes_auth``)."""
    return dict(
        kubeconfig=dict(type="raw"),
        context=dict(type="str"),
        host=dict(type="str"),
        api_key=dict(type="str", no_log=True),
        username=dict(type="str"),
        password=dict(type="str", no_log=True),
        validate_certs=dict(type="bool", aliases=["verify_ssl"]),
        ca_cert=dict(type="path", aliases=["ssl_ca_cert"]),
        client_cert=dict(type="path", aliases=["cert_file"]),
        client_key=dict(type="path", aliases=["key_file"], no_log=False),
        proxy=dict(type="str"),
        no_proxy=dict(type="str"),
        api_timeout=dict(type="int"),
        impersonate_user=dict(type="str"),
        impersonate_groups=dict(type="list", elements="str"),
        proxy_headers=dict(type="dict", options=dict(
            proxy_basic_auth=dict(type="str", no_log=True),
            basic_auth=dict(type="str", no_log=True),
            user_agent=dict(type="str"),
        )),
        # kubernetes.core's, accepted so that its module_defaults carry over, and ignored with a warning
        # (core.module_base.IGNORED_COMPAT_OPTIONS)
        persist_config=dict(type="bool"),
    )


def auth_settings(params: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The connection settings from the options, each missing one from ``K8S_AUTH_<OPTION>`` (or the
    kubernetes client's attribute name, ``K8S_AUTH_VERIFY_SSL`` say), as kubernetes.core does."""
    environ = os.environ if environ is None else environ
    settings: dict[str, Any] = {}
    for option, attribute in AUTH_OPTIONS:
        value = params.get(option)
        if value is None:
            value = environ.get(f"K8S_AUTH_{option.upper()}") or environ.get(f"K8S_AUTH_{attribute.upper()}")
            if value is not None and option in BOOL_OPTIONS:
                value = value.lower() not in ("0", "false", "no")
        if value is not None and value != "":
            settings[option] = value
    settings.update(impersonation(params, environ))
    proxy_headers = dict((k, v) for k, v in (params.get("proxy_headers") or {}).items() if v)
    if proxy_headers:
        settings["proxy_headers"] = proxy_headers
    return settings


def impersonation(params: Mapping[str, Any], environ: Mapping[str, str]) -> dict[str, Any]:
    """``impersonate_user`` and ``impersonate_groups`` from the options, else from ``K8S_AUTH_IMPERSONATE_USER``
    and ``K8S_AUTH_IMPERSONATE_GROUPS`` (comma-separated), as kubernetes.core reads them; only those set."""
    user = params.get("impersonate_user") or environ.get("K8S_AUTH_IMPERSONATE_USER")
    groups = params.get("impersonate_groups")
    if groups is None and environ.get("K8S_AUTH_IMPERSONATE_GROUPS"):
        groups = [group.strip() for group in environ["K8S_AUTH_IMPERSONATE_GROUPS"].split(",") if group.strip()]
    found: dict[str, Any] = {}
    if user:
        found["impersonate_user"] = user
    if groups:
        found["impersonate_groups"] = list(groups)
    return found


def impersonation_headers(settings: Mapping[str, Any], headers: Any) -> Any:
    """``headers`` (a request's) with the ``Impersonate-User`` header and one ``Impersonate-Group`` header per
    group of ``settings``; ``headers`` itself when there is nothing to impersonate."""
    if not settings.get("impersonate_user") and not settings.get("impersonate_groups"):
        return headers
    merged = urllib3._collections.HTTPHeaderDict(headers or {})  # pylint: disable=protected-access
    if settings.get("impersonate_user"):
        merged["Impersonate-User"] = settings["impersonate_user"]
    for group in settings.get("impersonate_groups") or ():
        merged.add("Impersonate-Group", group)
    return merged


#: The kinds of credentials the options give (kind, its options): a request carries one kind.
CREDENTIAL_KINDS = (
    ("api_key", ("api_key",)),
    ("username/password", ("username", "password")),
    ("client_cert", ("client_cert", "client_key")),
)
#: (option, the option it needs): alone, the other half would silently come from the kubeconfig.
CREDENTIAL_PAIRS = (("username", "password"), ("password", "username"), ("client_key", "client_cert"))


def explicit_credentials(settings: Mapping[str, Any]) -> list[str]:
    """The kinds of credentials (``CREDENTIAL_KINDS``) the options or their ``K8S_AUTH_*`` variables give."""
    return [kind for kind, options in CREDENTIAL_KINDS if any(settings.get(option) for option in options)]


def connection_problem(settings: Mapping[str, Any]) -> str | None:
    """Why ``settings`` cannot be used as asked, or None: half a pair of credentials (the other half would come
    from the kubeconfig), or credentials of two kinds (the API would take whichever it accepts, and a wrong one
    would go unnoticed). Names options only, never a value."""
    for option, needed in CREDENTIAL_PAIRS:
        if settings.get(option) and not settings.get(needed):
            return (f"{option} is given without {needed}: give both (the kubeconfig's credentials are never mixed with the "
                    "options')")
    kinds = explicit_credentials(settings)
    if len(kinds) > 1:
        return (f'{" and ".join(kinds)} are given together: give one kind of credentials (a request carries one, and the API would '
                "take whichever it accepts)")
    return None


def credential_source(settings: Mapping[str, Any]) -> str:
    """Where the rest of the connection comes from, as in kubernetes.core: ``options`` (host with api_key,
    username/password or client_cert/client_key: no kubeconfig is read), ``kubeconfig`` (a file, a dict, or a
    context given), or ``default`` (in-cluster, else ~/.kube/config)."""
    if settings.get("host") and (settings.get("api_key") or (settings.get("username") and settings.get("password"))
                                 or (settings.get("client_cert") and settings.get("client_key"))):
        return "options"
    if settings.get("kubeconfig") or settings.get("context"):
        return "kubeconfig"
    return "default"


def build_configuration(settings: Mapping[str, Any]) -> Any:
    """A ``kubernetes.client.Configuration`` for ``settings`` (raises ConfigException, OSError). Each option
    given wins over the kubeconfig (kubernetes.core's rule), on every request: credentials given replace the
    kubeconfig's user as a whole, and the loader's hook, which sets a kubeconfig file's token, server and
    certificates again before each request, is followed by the options again (and kept as the hook)."""
    problem = connection_problem(settings)
    if problem:
        raise ConfigException(problem)
    configuration = kubernetes.client.Configuration()
    source = credential_source(settings)
    if source == "kubeconfig":
        _load_kubeconfig(settings, configuration)
    elif source == "default":
        try:
            kubernetes.config.load_incluster_config(client_configuration=configuration)
        except ConfigException:
            _load_kubeconfig(settings, configuration)
    if explicit_credentials(settings):
        configuration.api_key, configuration.api_key_prefix = {}, {}
        configuration.cert_file = configuration.key_file = configuration.refresh_api_key_hook = None
    apply_options(settings, configuration)
    loaded_hook = configuration.refresh_api_key_hook
    if loaded_hook is not None:
        def refresh(config: Any) -> None:
            loaded_hook(config)  # which also puts itself back as the hook
            apply_options(settings, config)
            config.refresh_api_key_hook = refresh
        configuration.refresh_api_key_hook = refresh
    configuration.retries = False  # the retry policy is the only one
    return configuration


def apply_options(settings: Mapping[str, Any], configuration: Any) -> None:
    """Set the options of ``settings`` over ``configuration`` (what a kubeconfig or the in-cluster account
    gave)."""
    for option, attribute in AUTH_OPTIONS:
        if option in ("kubeconfig", "context") or option not in settings:
            continue
        value = settings[option]
        if option == "host":
            value = value.rstrip("/")
        if option == "api_key":
            configuration.api_key = {"authorization": f"Bearer {value}"}
            continue
        setattr(configuration, attribute, value)
    if settings.get("username") and settings.get("password") and "api_key" not in settings:
        configuration.api_key = {"authorization": configuration.get_basic_auth_token()}
    if settings.get("proxy_headers"):  # kubernetes.core's way: the headers urllib3 makes of them, to the proxy
        configuration.proxy_headers = urllib3.util.make_headers(**settings["proxy_headers"])


def _load_kubeconfig(settings: Mapping[str, Any], configuration: Any) -> None:
    kubeconfig = settings.get("kubeconfig")
    context = settings.get("context")
    if isinstance(kubeconfig, dict):
        kubernetes.config.load_kube_config_from_dict(kubeconfig, context=context,
                                                     client_configuration=configuration)
        return
    if kubeconfig is not None and not isinstance(kubeconfig, str):
        raise ConfigException(f"kubeconfig must be the path of a kubeconfig file or a kubeconfig as a dict, got a {type(kubeconfig).__name__}")
    path = os.path.expanduser(kubeconfig) if kubeconfig else None
    if path and not os.path.isfile(path):
        raise ConfigException(f"kubeconfig file {path} does not exist")
    kubernetes.config.load_kube_config(config_file=path, context=context, client_configuration=configuration)


def status_message(exc: BaseException) -> str:
    """The message of a Kubernetes ``Status`` error body, else the HTTP reason."""
    body = getattr(exc, "body", None)
    if body:
        try:
            data = json.loads(body)
        except (TypeError, ValueError):
            data = None
        if isinstance(data, dict) and data.get("message"):
            return data["message"]
    return f'{getattr(exc, "status", "")} {getattr(exc, "reason", "") or ""}'


def failure_text(exc: BaseException) -> str:
    """A failed request in one line: ``HTTP <status>: <message>`` for an API answer, else the error's words."""
    if getattr(exc, "status", None):
        return f'HTTP {getattr(exc, "status")}: {status_message(exc)}'
    return str(exc) or type(exc).__name__


def tls_error(exc: BaseException | None) -> BaseException | None:
    """The TLS failure (certificate not trusted, wrong host name, handshake refused) behind ``exc``, or
    None. urllib3 wraps it (``MaxRetryError.reason``, exception chaining); it never heals by retrying."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, ssl.SSLError) or (urllib3 is not None and isinstance(exc, urllib3.exceptions.SSLError)):
            return exc
        exc = getattr(exc, "reason", None) if isinstance(getattr(exc, "reason", None), BaseException) \
            else (exc.__cause__ or exc.__context__)
    return None


def describe_fault(exc: BaseException) -> Fault | None:
    """Turn a kubernetes client or urllib3 exception into a ``Fault``; None if it is no API fault."""
    if tls_error(exc) is not None:
        return None  # a certificate problem does not heal by retrying
    if ApiException is not None and isinstance(exc, ApiException):
        if not exc.status:
            return Fault(connection_error=True, description=f"connection error: {exc.reason}",
                         before_sending=failed_before_sending(exc))
        headers = exc.headers or {}
        retry_after = parse_retry_after(headers.get("Retry-After"))
        after = f" (Retry-After {retry_after} s)" if retry_after is not None else ""
        return Fault(status=exc.status, retry_after=retry_after, description=f"HTTP {exc.status}{after}")
    if (urllib3 is not None and isinstance(exc, urllib3.exceptions.HTTPError)) or isinstance(
            exc, (ConnectionError, TimeoutError)):
        return Fault(connection_error=True, description=f"connection error: {exc}",
                     before_sending=failed_before_sending(exc))
    return None


def is_status(exc: BaseException, status: int) -> bool:
    return ApiException is not None and isinstance(exc, ApiException) and exc.status == status


class KubernetesClient:
    """The official client's ``ApiClient`` with request counting, deadline-capped timeouts and the retry policy."""

    def __init__(self, settings: Mapping[str, Any], clock: Clock | None = None, policy: RetryPolicy | None = None,
                 request_timeout: float | None = None) -> None:
        self.clock = clock or Clock()
        self.request_timeout = float(request_timeout or DEFAULT_REQUEST_TIMEOUT)
        self.policy = policy or RetryPolicy(clock=self.clock)
        self.configuration = build_configuration(settings)
        self.impersonation = dict((key, settings[key]) for key in ("impersonate_user", "impersonate_groups")
                                  if key in settings)
        self.api_client = kubernetes.client.ApiClient(self.configuration)
        self.api_client.user_agent = "flightcontrol.openstack"
        self.guard = RequestGuard(self.request_timeout)  # watches run in threads of their own: a deadline per thread
        self.contacted = False
        rest = self.api_client.rest_client
        rest.request = self._guarded(rest.request)
        self.custom = kubernetes.client.CustomObjectsApi(self.api_client)
        self._core: Any = None
        self._apis: Any = None
        self._apps: Any = None

    # The core and discovery APIs are made when first used: importing CoreV1Api (every model of the core group)
    # costs about 1.3 s of CPU, which a module that reads no Node would pay at every start.
    @property
    def core(self) -> Any:
        if self._core is None:
            self._core = kubernetes.client.CoreV1Api(self.api_client)
        return self._core

    @property
    def apps(self) -> Any:
        if self._apps is None:
            self._apps = kubernetes.client.AppsV1Api(self.api_client)
        return self._apps

    @property
    def apis(self) -> Any:
        if self._apis is None:
            self._apis = kubernetes.client.ApisApi(self.api_client)
        return self._apis

    @property
    def host(self) -> str:
        return self.configuration.host

    @property
    def api_calls(self) -> int:
        return self.guard.total

    def _guarded(self, request: Callable[..., Any]) -> Callable[..., Any]:
        def guarded_request(*args: Any, **kwargs: Any) -> Any:
            self.guard.sent()
            kwargs["_request_timeout"] = self.guard.timeout(kwargs.get("_request_timeout") or None)
            if self.impersonation:
                kwargs["headers"] = impersonation_headers(self.impersonation, kwargs.get("headers"))
            response = request(*args, **kwargs)
            self.contacted = True
            return response
        return guarded_request

    def call(self, func: Callable[[], Any], what: str, deadline: Deadline, kind: str = READ) -> Any:
        """Run one API call under the retry policy, within ``deadline`` (a ``core.deadline.Deadline``).  Until the
        API has answered once, connection failures get only FIRST_CONTACT_SECONDS before the API is called
        unreachable. ``kind``: the idempotency class (``core.retry``); the writes here are merge patches of one
        field (``IDEMPOTENT``: a replay sets the same value)."""
        if not self.contacted:
            deadline = deadline.within(FIRST_CONTACT_SECONDS, "until the Kubernetes API first answers")
        try:
            with self.guard.bound(deadline):
                return self.policy.call(func, self._describe, deadline, reauth=None, what=what, kind=kind)
        except Exception as exc:  # pylint: disable=broad-except
            fault = describe_fault(getattr(exc, "last_error", None) or exc)
            if not self.contacted and fault is not None and fault.connection_error:
                raise UnreachableError(f"the Kubernetes API at {self.host} does not answer ({fault.description})")
            raise

    def _describe(self, exc: BaseException) -> Fault | None:
        fault = describe_fault(exc)
        if fault is not None and fault.status is not None:
            self.contacted = True  # it answered, even if with an error
        return fault
