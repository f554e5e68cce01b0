"""Kubernetes: minicloud's emulated API server (:mod:`minicloud.kube`) with the CAPI controllers.

Objects live in the serving process's memory: a restart (``down``/``up``) empties the
cluster, as if it were a new one (``default``, ``kube-system`` and ``kube-public`` exist).
The CA, serving certificate and token are kept in the service's folder, so the kubeconfig
stays valid across restarts.
"""

from __future__ import annotations

from pathlib import Path

from minicloud.runtime.settings import HOST
from minicloud.services import Service

KUBECONFIG = "kubeconfig"
INITIAL_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


class Kubernetes(Service):
    name = "kubernetes"
    service_type = "kubernetes"
    serialized = False  # the store is thread-safe: requests are served concurrently

    @property
    def url(self) -> str:
        return f"https://{HOST}:{self.port}"

    @property
    def credentials(self):
        from minicloud.kube.credentials import Credentials

        return Credentials(self.folder / "pki")

    @property
    def kubeconfig(self) -> Path:
        return self.state.root / KUBECONFIG

    def write_config(self) -> None:
        if self.credentials.exist():
            self.credentials.write_kubeconfig(self.kubeconfig, self.url)

    def initialize(self) -> None:
        self.credentials.generate()
        self.credentials.write_kubeconfig(self.kubeconfig, self.url)

    def data_paths(self) -> list[Path]:
        return [self.folder]

    def server_ssl_context(self):
        return self.credentials.server_context()

    def client_ssl_context(self):
        return self.credentials.client_context() if self.credentials.exist() else None

    def application(self):
        from minicloud.kube.app import create_app
        from minicloud.kube.resources import by_kind
        from minicloud.kube.store import Store

        self.store = Store()
        for namespace in INITIAL_NAMESPACES:
            self.store.create(by_kind("Namespace"), {"metadata": {"name": namespace}})
        return create_app(self.store, self.credentials.token)

    def started(self) -> None:
        from minicloud.kube.controllers.loop import ControllerLoop

        self.controllers = ControllerLoop(self.store, self.state.root, rollouts=True).start()
