# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A workload cluster's kubeconfig read from its Secret in the management cluster (Cluster API keeps it in
``<cluster>-kubeconfig``, key ``value``), kept in memory.

``read_kubeconfig_secret`` makes the one GET (through ``KubernetesClient.call``: the retry policy, the deadline,
the request count); ``parse_kubeconfig_secret`` is pure: it decodes and checks the kubeconfig and returns a
``WorkloadKubeconfig``. No message made here holds a value of the Secret: errors name the Secret, the key and what
is wrong with it. Certificate and key data never reach a file: on Linux they become anonymous in-memory files
(``memfd``) whose ``/proc/self/fd`` paths the TLS layer reads; elsewhere the kubernetes client's own temporary
files (mode 0600, removed when the process ends) are used.
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
import os
import re
from typing import TYPE_CHECKING, Any, Callable, Mapping
from urllib.parse import urlsplit, urlunsplit

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import FlightcontrolError
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.secrets import secret_values
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.names import name_problem
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.client import (
    is_status,
)

if TYPE_CHECKING:
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.client import KubernetesClient

try:
    import yaml
except ImportError:  # the module's import guard for kubernetes (which needs PyYAML) reports it
    yaml = None  # type: ignore[assignment]

# A Secret's data keys: https://kubernetes.io/docs/concepts/configuration/secret/ (the API's own rule)
_SECRET_KEY = re.compile(r"^[-._a-zA-Z0-9]{1,253}$")
# kubeconfig fields that name a file on the host that runs the module, with the field carrying the data inline
FILE_FIELDS = (("certificate-authority", "certificate-authority-data"), ("client-certificate", "client-certificate-data"),
               ("client-key", "client-key-data"), ("tokenFile", "token"))
# credentials that run a program or a plugin on the host that runs the module
PLUGIN_FIELDS = ("exec", "auth-provider")


def kubeconfig_secret_argument_spec() -> dict[str, Any]:
    """The ``kubeconfig_secret`` suboptions (doc fragment ``kubernetes_dict``) and ``workload_kubeconfig``'s
    ``secret``: a reference, no secret itself."""
    return dict(
        name=dict(type="str", required=True),
        namespace=dict(type="str", default="default"),
        key=dict(type="str", default="value", no_log=False),
    )


class KubeconfigSecretError(FlightcontrolError):
    """The kubeconfig Secret cannot be read or holds no usable kubeconfig (never carries a value of it)."""


class SecretRef:
    """Where the kubeconfig is: Secret ``namespace``/``name``, data key ``key``."""

    def __init__(self, name: str | None, namespace: str | None = "default", key: str | None = "value") -> None:
        self.name = name
        self.namespace: str = namespace or "default"
        self.key: str = key or "value"

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> SecretRef:
        return cls(options.get("name"), options.get("namespace"), options.get("key"))

    def problems(self, option: str = "kubeconfig_secret") -> list[str]:
        """Why the reference can never name a Secret's key (before any request), as sentences."""
        found = [name_problem(f"{option}.name", self.name),
                 name_problem(f"{option}.namespace", self.namespace, "label")]
        if not _SECRET_KEY.match(self.key):
            found.append(f"{option}.key {self.key!r} is no valid Secret key: letters, digits, '-', '_' and '.'")
        return [problem for problem in found if problem]

    def as_dict(self) -> dict[str, str | None]:
        return {"name": self.name, "namespace": self.namespace, "key": self.key}

    def __str__(self) -> str:
        return f"Secret {self.namespace}/{self.name}"


class WorkloadKubeconfig:
    """A kubeconfig from a Secret: ``content`` (the decoded bytes, for a file the user asked for), ``summary``
    (server, context, cluster, user: no credential), ``settings`` for ``KubernetesClient`` (made by
    ``client_settings``) and ``secret_values`` (what output must mask, should it ever show up)."""

    def __init__(self, ref: SecretRef, content: bytes, config: dict[str, Any], context: str, cluster: str,
                 user: str | None, encoded: str) -> None:
        self.ref = ref
        self.content = content
        self.config = config
        self.context_name = context
        self.cluster_name = cluster
        self.user_name = user
        self.secret_values = secret_values(config) | set([encoded, content.decode("utf-8")])

    @property
    def server(self) -> str:
        return _named(self.config, "clusters", self.cluster_name)["cluster"]["server"]

    @property
    def summary(self) -> dict[str, Any]:
        return {"server": without_userinfo(self.server), "context": self.context_name,
                "cluster": self.cluster_name, "user": self.user_name}


def without_userinfo(url: str) -> str:
    """``url`` without a ``user:password@`` part (a server URL may carry one; a result never does)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def _named(config: dict[str, Any], section: str, name: object) -> Any:
    """The entry ``name`` of a kubeconfig list (``clusters``, ``users``, ``contexts``), or None."""
    for entry in config.get(section) or []:
        if isinstance(entry, dict) and entry.get("name") == name:
            return entry
    return None


def _names(config: dict[str, Any], section: str) -> str:
    names = [str(entry.get("name")) for entry in config.get(section) or [] if isinstance(entry, dict)]
    return ", ".join(names) if names else "none"


def _decode_base64(text: str | bytes) -> bytes:
    if isinstance(text, str):
        text = text.encode("ascii")  # a non-ASCII character raises UnicodeEncodeError, a ValueError
    return base64.b64decode(text, validate=True)


def parse_kubeconfig_secret(secret: dict[str, Any] | None, ref: SecretRef) -> WorkloadKubeconfig:
    """The ``WorkloadKubeconfig`` in ``secret`` (the Secret as the API sends it, a dict) under ``ref.key``;
    raises ``KubeconfigSecretError`` saying what is wrong without quoting the Secret."""
    data = (secret or {}).get("data") or {}
    if ref.key not in data:
        raise KubeconfigSecretError(f'{ref} has no key {ref.key!r} (its keys: {", ".join(sorted(data)) or "none"}); the kubeconfig of a Cluster API cluster is '
                                    "under 'value'")
    encoded = data[ref.key]
    where = f"key {ref.key!r} of {ref}"
    try:
        content = _decode_base64(encoded or "")
    except (binascii.Error, ValueError, TypeError):
        raise KubeconfigSecretError(f"{where} is not base64 (a Secret's data is base64: was it written to data instead "
                                    "of stringData?)")
    if not content.strip():
        raise KubeconfigSecretError(f"{where} is empty: no kubeconfig")
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        raise KubeconfigSecretError(f"{where} is not a kubeconfig: not UTF-8 text")
    try:
        config = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        raise KubeconfigSecretError(f"{where} is not a kubeconfig: not valid YAML{at}")
    context, cluster, user = check_kubeconfig(config, where)
    return WorkloadKubeconfig(ref, content, config, context, cluster, user, encoded)


def check_kubeconfig(config: Any, where: str) -> tuple[str, str, str | None]:
    """``(context, cluster, user)`` of the current context of ``config`` (a parsed kubeconfig), after checking
    that a client can use it from a Secret; ``user`` is None for a context without one. Raises
    ``KubeconfigSecretError``."""
    if not isinstance(config, dict):
        raise KubeconfigSecretError(f"{where} is not a kubeconfig: YAML {type(config).__name__}, not a mapping")
    if not isinstance(config.get("clusters"), list) or not config["clusters"]:
        raise KubeconfigSecretError(f"{where} is not a kubeconfig: it has no clusters")
    current = config.get("current-context")
    if not current:
        raise KubeconfigSecretError(f"{where} has no current-context: the kubeconfig must name the context to use "
                                    f'(its contexts: {_names(config, "contexts")})')
    context = _named(config, "contexts", current)
    if context is None or not isinstance(context.get("context"), dict):
        raise KubeconfigSecretError(f'{where} names current-context {current!r}, which is not among its contexts ({_names(config, "contexts")})')
    cluster_name = context["context"].get("cluster")
    cluster = _named(config, "clusters", cluster_name)
    if cluster is None or not isinstance(cluster.get("cluster"), dict):
        raise KubeconfigSecretError(f"{where}: context {current!r} names cluster {cluster_name!r}, which is not among "
                                    f"its clusters ({_names(config, 'clusters')})")
    server = cluster["cluster"].get("server")
    if not isinstance(server, str) or not server.startswith(("https://", "http://")):
        raise KubeconfigSecretError(f"{where}: cluster {cluster_name!r} has no server URL (https://...)")
    user_name = context["context"].get("user")
    user: dict[str, Any] = {}
    if user_name:
        entry = _named(config, "users", user_name)
        if entry is None or not isinstance(entry.get("user") or {}, dict):
            raise KubeconfigSecretError(f'{where}: context {current!r} names user {user_name!r}, which is not among its users ({_names(config, "users")})')
        user = entry.get("user") or {}
    for field in PLUGIN_FIELDS:
        if user.get(field):
            raise KubeconfigSecretError(
                f"{where}: user {user_name!r} has {field} credentials, which would run a program on this host; a kubeconfig from a "
                "Secret may only carry certificates, a token or a user name and password")
    for owner, entry in ((f"cluster {cluster_name!r}", cluster["cluster"]), (f"user {user_name!r}", user)):
        for field, inline in FILE_FIELDS:
            if entry.get(field) and not entry.get(inline):
                raise KubeconfigSecretError(f"{where}: {owner} names a file ({field}) on the host that reads it; a kubeconfig from a "
                                            f"Secret must carry it inline ({inline})")
        for _field, inline in FILE_FIELDS[:3]:
            if entry.get(inline):
                try:
                    _decode_base64(entry[inline])
                except (binascii.Error, ValueError, TypeError):
                    raise KubeconfigSecretError(f"{where}: {owner}'s {inline} is not base64")
    return current, cluster_name, user_name or None


def client_settings(workload: WorkloadKubeconfig,
                    memory_file: Callable[[str, bytes], str] | None = None) -> dict[str, Any]:
    """``KubernetesClient`` settings for the current context of ``workload`` alone: a kubeconfig dict holding
    that context, its cluster and its user, their certificate and key data moved into in-memory files
    (``memory_file(label, content) -> path``, ``in_memory_file`` by default; None where the system has none: the
    kubernetes client then writes its own temporary files)."""
    memory_file = in_memory_file if memory_file is None and hasattr(os, "memfd_create") else memory_file
    config = workload.config
    context = copy.deepcopy(_named(config, "contexts", workload.context_name))
    cluster = copy.deepcopy(_named(config, "clusters", workload.cluster_name))
    kubeconfig: dict[str, Any] = {"apiVersion": "v1", "kind": "Config", "current-context": workload.context_name,
                                  "contexts": [context], "clusters": [cluster], "users": []}
    entries = [cluster["cluster"]]
    if workload.user_name:
        user = copy.deepcopy(_named(config, "users", workload.user_name))
        user["user"] = user.get("user") or {}
        kubeconfig["users"].append(user)
        entries.append(user["user"])
    if memory_file is not None:
        for entry in entries:
            for field, inline in FILE_FIELDS[:3]:
                if entry.get(inline):
                    entry[field] = memory_file(field, _decode_base64(entry.pop(inline)))
    return {"kubeconfig": kubeconfig}


def in_memory_file(label: str, content: bytes) -> str:
    """A path to ``content`` that lives in memory only (Linux ``memfd``), readable by this process as long as it
    runs."""
    fd = os.memfd_create(f"flightcontrol-{label}", getattr(os, "MFD_CLOEXEC", 0))
    view = memoryview(content)
    while view:
        view = view[os.write(fd, view):]
    return f"/proc/self/fd/{fd}"


def read_kubeconfig_secret(kube: KubernetesClient, ref: SecretRef, deadline: Deadline) -> WorkloadKubeconfig:
    """The ``WorkloadKubeconfig`` of Secret ``ref``, read with ``kube`` (the management cluster's client) in one
    GET under the retry policy. 404, 403 and 401 become ``KubeconfigSecretError`` naming the Secret."""
    def read() -> Any:
        response = kube.core.read_namespaced_secret(ref.name, ref.namespace, _preload_content=False)
        return json.loads(response.data)

    try:
        secret = kube.call(read, f"reading {ref}", deadline)
    except Exception as exc:  # pylint: disable=broad-except
        error = secret_read_error(exc, ref, kube.host)
        if error is None:
            raise
        raise error
    return parse_kubeconfig_secret(secret, ref)


def secret_read_error(exc: BaseException, ref: SecretRef, host: str) -> KubeconfigSecretError | None:
    """The ``KubeconfigSecretError`` for an API's refusal to read Secret ``ref``, or None."""
    if is_status(exc, 404):
        return KubeconfigSecretError(f"{ref} does not exist in the cluster at {host} (the kubeconfig Secret of a Cluster API "
                                     "cluster is <cluster>-kubeconfig in the Cluster's namespace)")
    if is_status(exc, 403):
        return KubeconfigSecretError(f"reading {ref} was refused (HTTP 403): the credentials for {host} need get on secrets "
                                     f"in namespace {ref.namespace}")
    if is_status(exc, 401):
        return KubeconfigSecretError(f"reading {ref}: the cluster at {host} refused the credentials (HTTP 401)")
    return None
