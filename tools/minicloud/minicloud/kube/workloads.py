"""Workload clusters' own Kubernetes APIs, served by the ``kubernetes`` service beside the management API.

In production a workload cluster's Nodes live in its own API, reached only through the kubeconfig in
its ``<name>-kubeconfig`` Secret. minicloud serves one API per seeded workload cluster on the same
socket, under a path prefix (as Rancher's ``/k8s/clusters/<id>`` proxy does)::

    https://HOST:PORT/clusters/<namespace>/<name>/api/v1/nodes

Each has its own :class:`Store` (the usual initial namespaces) and its own random bearer token, and
is served by the same application as the management API (:func:`minicloud.kube.app.create_app`): it
refuses the management token and other clusters' tokens (401). The TLS certificate and CA are the
service's. A prefix naming no registered cluster answers a kube-style 404.

minicloud registers and removes them through an endpoint outside the Kubernetes API space,
authenticated with the management token (``POST``: create, answers the kubeconfig; ``DELETE``: remove)::

    /minicloud/v1/workloadclusters/<namespace>/<name>

The dispatch runs inside the traffic middleware, so request counts and fault rules see the full path.
"""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus

import yaml

from minicloud.kube import errors
from minicloud.kube.errors import ApiError
from minicloud.kube.resources import by_kind
from minicloud.kube.store import Store

PREFIX = "/clusters"
ENDPOINT = "/minicloud/v1/workloadclusters"
INITIAL_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def initial_store() -> Store:
    """A new API's store, holding the namespaces every cluster starts with."""
    store = Store()
    for namespace in INITIAL_NAMESPACES:
        store.create(by_kind("Namespace"), {"metadata": {"name": namespace}})
    return store


@dataclass(frozen=True)
class WorkloadCluster:
    """One workload cluster's API: its objects, the token it accepts and the application serving them."""

    namespace: str
    name: str
    store: Store
    token: str
    app: Callable

    @property
    def path(self) -> str:
        return f"{PREFIX}/{self.namespace}/{self.name}"


class WorkloadRegistry:
    """The workload APIs by (namespace, cluster name); safe to use from any thread."""

    def __init__(self, app_factory: Callable[[Store, str], Callable]):
        self._app_factory = app_factory
        self._lock = threading.Lock()
        self._clusters: dict[tuple[str, str], WorkloadCluster] = {}

    def add(self, namespace: str, name: str) -> WorkloadCluster:
        """A new, empty API for cluster ``name``; raises 409 AlreadyExists if it has one."""
        with self._lock:
            if (namespace, name) in self._clusters:
                raise errors.already_exists("minicloud.test", "workloadclusters", name)
            store, token = initial_store(), secrets.token_urlsafe(32)
            cluster = WorkloadCluster(namespace, name, store, token, self._app_factory(store, token))
            self._clusters[(namespace, name)] = cluster
            return cluster

    def remove(self, namespace: str, name: str) -> WorkloadCluster:
        """Forget cluster ``name``'s API (its objects go with it); raises 404 NotFound if it has none."""
        with self._lock:
            cluster = self._clusters.pop((namespace, name), None)
        if cluster is None:
            raise errors.not_found("minicloud.test", "workloadclusters", name)
        return cluster

    def get(self, namespace: str, name: str) -> WorkloadCluster | None:
        with self._lock:
            return self._clusters.get((namespace, name))

    def node_store(self, namespace: str, cluster: str | None, fallback: Store) -> Store:
        """Where the Nodes of cluster ``cluster`` live: its own API's store, or ``fallback`` (the
        management store) for a cluster without one."""
        found = self.get(namespace, cluster) if cluster else None
        return found.store if found else fallback

    def revision(self) -> tuple:
        """Changes whenever any workload API's objects change or an API comes or goes."""
        with self._lock:
            return tuple(sorted((key, c.store.revision) for key, c in self._clusters.items()))


class WorkloadDispatch:
    """WSGI: ``/clusters/<ns>/<name>/...`` to that cluster's API, the registration endpoint, the rest to
    the management API. ``kubeconfig(cluster)`` is the kubeconfig (a dict) that reaches ``cluster``."""

    def __init__(self, management_app, registry: WorkloadRegistry, management_token: str,
                 kubeconfig: Callable[[WorkloadCluster], dict]):
        self.management_app = management_app
        self.registry = registry
        self.management_token = management_token
        self.kubeconfig = kubeconfig

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO") or "/"
        if path == PREFIX or path.startswith(PREFIX + "/"):
            return self._workload(path, environ, start_response)
        if path == ENDPOINT or path.startswith(ENDPOINT + "/"):
            try:
                return self._endpoint(path, environ, start_response)
            except ApiError as exc:
                return _answer(start_response, exc.code, exc.status())
        return self.management_app(environ, start_response)

    def _workload(self, path: str, environ, start_response):
        namespace, name, rest = _split(path[len(PREFIX):])
        cluster = self.registry.get(namespace, name) if namespace and name else None
        if cluster is None:
            return _answer(start_response, 404, errors.not_found_path(path).status())
        inner = dict(environ, SCRIPT_NAME=environ.get("SCRIPT_NAME", "") + cluster.path, PATH_INFO=rest or "/")
        return cluster.app(inner, start_response)

    def _endpoint(self, path: str, environ, start_response):
        scheme, _, credential = environ.get("HTTP_AUTHORIZATION", "").partition(" ")
        if scheme.lower() != "bearer" or credential.strip() != self.management_token:
            raise errors.unauthorized()
        namespace, name, rest = _split(path[len(ENDPOINT):])
        if not (namespace and name) or rest not in ("", "/"):
            raise errors.not_found_path(path)
        method = environ.get("REQUEST_METHOD")
        if method == "POST":
            cluster = self.registry.add(namespace, name)
            return _answer(start_response, 201, self._description(cluster))
        if method == "GET":
            cluster = self.registry.get(namespace, name)
            if cluster is None:
                raise errors.not_found("minicloud.test", "workloadclusters", name)
            return _answer(start_response, 200, self._description(cluster))
        if method == "DELETE":
            cluster = self.registry.remove(namespace, name)
            return _answer(start_response, 200, {"namespace": namespace, "name": name, "removed": cluster.path})
        raise errors.method_not_allowed()

    def _description(self, cluster: WorkloadCluster) -> dict:
        config = self.kubeconfig(cluster)
        return {"namespace": cluster.namespace, "name": cluster.name,
                "server": config["clusters"][0]["cluster"]["server"],
                "kubeconfig": yaml.safe_dump(config, sort_keys=False)}


def _split(tail: str) -> tuple[str, str, str]:
    """``/<ns>/<name>/rest...`` into (ns, name, ``/rest...``); missing parts are empty."""
    parts = tail.split("/", 3)  # ["", ns, name, rest]
    namespace = parts[1] if len(parts) > 1 else ""
    name = parts[2] if len(parts) > 2 else ""
    rest = "/" + parts[3] if len(parts) > 3 else ""
    return namespace, name, rest


def _answer(start_response, code: int, body: dict) -> list[bytes]:
    data = json.dumps(body).encode()
    start_response(f"{code} {HTTPStatus(code).phrase}", [("Content-Type", "application/json"),
                                                        ("Content-Length", str(len(data)))])
    return [data]
