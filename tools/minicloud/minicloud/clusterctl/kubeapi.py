"""The stand-in's requests to one Kubernetes API, through the official client and a kubeconfig
(an ordinary client: counted and faultable like any other)."""

from __future__ import annotations

from kubernetes import client, config

from minicloud.clusterctl.sequence import MOVE_KINDS
from minicloud.kube.admin import KubeAdmin, rest_call
from minicloud.kube.resources import Kind, by_kind

USER_AGENT = "clusterctl-standin/minicloud"


class KubeApi:
    def __init__(self, kubeconfig: str, context: str | None = None):
        self.where = kubeconfig + (f" (context {context})" if context else "")
        self.api = config.new_client_from_config(config_file=kubeconfig, context=context or None)
        self.api.user_agent = USER_AGENT

    def call(self, method: str, path: str, body=None, content_type: str = "application/json", query=None):
        return rest_call(self.api, method, path, body, query, content_type)

    @staticmethod
    def path(kind: Kind, namespace: str | None = None, name: str | None = None, subresource: str | None = None):
        return KubeAdmin.path(kind, kind.hub, namespace, name, subresource)

    def list_namespace(self, namespace: str) -> list[dict]:
        """Every object of the kinds a move takes in ``namespace``, in stored (hub) form."""
        found = []
        for kind_name in MOVE_KINDS:
            kind = by_kind(kind_name)
            for obj in self.call("GET", self.path(kind, namespace))["items"]:
                obj.setdefault("kind", kind.kind)
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
        kind = by_kind(body["kind"])
        namespace = body["metadata"]["namespace"]
        created = self.call("POST", self.path(kind, namespace), body)
        if status and kind.status_subresource:
            # A merge patch: the target's controllers may have written the object meanwhile.
            created = self.call("PATCH", self.path(kind, namespace, created["metadata"]["name"], "status"),
                                {"status": status}, content_type="application/merge-patch+json")
        return created

    def delete(self, kind_name: str, namespace: str, name: str) -> None:
        try:
            self.call("DELETE", self.path(by_kind(kind_name), namespace, name))
        except client.ApiException as exc:
            if exc.status != 404:
                raise
