"""The stand-in's requests to one Kubernetes API, through the official client and a kubeconfig
(an ordinary client: counted and faultable like any other).

Each kind is read and written at the version :meth:`KubeApi.use` gives it (the move's: the source's storage
versions, :mod:`minicloud.clusterctl.versions`); until then at minicloud's newest (``Kind.hub``). An object is
created at the version it was read at, its own ``apiVersion``, as clusterctl creates it."""

from __future__ import annotations

from kubernetes import client, config

from minicloud.clusterctl.sequence import MOVE_KINDS, MoveError
from minicloud.clusterctl.versions import PlaneCrds, plane_crds
from minicloud.kube.admin import KubeAdmin, rest_call
from minicloud.kube.capo_crds import ENDPOINT as CAPO_CRDS
from minicloud.kube.resources import Kind, by_kind

USER_AGENT = "clusterctl-standin/minicloud"


class KubeApi:
    def __init__(self, kubeconfig: str, context: str | None = None):
        self.where = kubeconfig + (f" (context {context})" if context else "")
        self.api = config.new_client_from_config(config_file=kubeconfig, context=context or None)
        self.api.user_agent = USER_AGENT
        self.versions: dict[str, str] = {}

    def use(self, versions: dict[str, str]) -> None:
        """Read and write each kind (by name) at ``versions[kind]`` from now on."""
        self.versions = dict(versions)

    def crds(self) -> PlaneCrds:
        """What this plane's CRDs say of the move's kinds (minicloud's ``/minicloud/capo-crds`` for CAPO's)."""
        try:
            capo = self.call("GET", CAPO_CRDS)
        except client.ApiException as exc:
            if exc.status == 404:
                raise MoveError(f"{self.where} does not say which CAPO CRDs it has ({CAPO_CRDS} answered 404): "
                                "the stand-in moves between minicloud's emulated planes only") from None
            raise
        return plane_crds(capo)

    def call(self, method: str, path: str, body=None, content_type: str = "application/json", query=None):
        return rest_call(self.api, method, path, body, query, content_type)

    def path(self, kind: Kind, namespace: str | None = None, name: str | None = None,
             subresource: str | None = None, version: str | None = None):
        return KubeAdmin.path(kind, version or self.version(kind), namespace, name, subresource)

    def version(self, kind: Kind) -> str:
        return self.versions.get(kind.kind) or kind.hub

    def list_namespace(self, namespace: str) -> list[dict]:
        """Every object of the kinds a move takes in ``namespace``, each at its kind's version (:meth:`use`)."""
        found = []
        for kind_name in MOVE_KINDS:
            kind = by_kind(kind_name)
            for obj in self.call("GET", self.path(kind, namespace))["items"]:
                obj.setdefault("kind", kind.kind)
                obj.setdefault("apiVersion", kind.api_version(self.version(kind)))
                found.append(obj)
        return found

    def get(self, kind_name: str, namespace: str, name: str) -> dict | None:
        try:
            return self.call("GET", self.path(by_kind(kind_name), namespace, name))
        except client.ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def merge_patch(self, kind_name: str, namespace: str, name: str, patch: dict) -> dict:
        return self.call("PATCH", self.path(by_kind(kind_name), namespace, name), patch,
                         content_type="application/merge-patch+json")

    def ensure_namespace(self, namespace: str) -> None:
        try:
            self.call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                     "metadata": {"name": namespace}})
        except client.ApiException as exc:
            if exc.status != 409:
                raise

    def create(self, body: dict, status: dict | None) -> dict:
        """Create ``body`` at its own ``apiVersion`` (as it was read), then its ``status`` at that version."""
        kind = by_kind(body["kind"])
        namespace = body["metadata"]["namespace"]
        version = (body.get("apiVersion") or "").rpartition("/")[2] or None
        created = self.call("POST", self.path(kind, namespace, version=version), body)
        if status and kind.status_subresource:
            # A merge patch: the target's controllers may have written the object meanwhile.
            created = self.call("PATCH", self.path(kind, namespace, created["metadata"]["name"], "status",
                                                   version=version),
                                {"status": status}, content_type="application/merge-patch+json")
        return created

    def delete(self, kind_name: str, namespace: str, name: str) -> None:
        try:
            self.call("DELETE", self.path(by_kind(kind_name), namespace, name))
        except client.ApiException as exc:
            if exc.status != 404:
                raise
