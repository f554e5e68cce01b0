"""Kubernetes: minicloud's emulated API server (:mod:`minicloud.kube`) with the CAPI controllers.

Objects live in the serving process's memory: a restart (``down``/``up``) empties the
cluster, as if it were a new one (``default``, ``kube-system`` and ``kube-public`` exist).
The CA, serving certificate and token are kept in the service's folder, so the kubeconfig
stays valid across restarts.

The same socket serves one API per seeded workload cluster under ``/clusters/<namespace>/<name>``
(:mod:`minicloud.kube.workloads`), each with its own objects and token, and this service's CA and
certificate. They live in memory too: a restart forgets them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from minicloud.core.settings import HOST
from minicloud.kube.app import create_app
from minicloud.kube.controllers.loop import ControllerLoop
from minicloud.kube.credentials import Credentials
from minicloud.kube.workloads import WorkloadDispatch, WorkloadRegistry, initial_store
from minicloud.services.base import Service

KUBECONFIG = "kubeconfig"


class Kubernetes(Service):
    name = "kubernetes"
    service_type = "kubernetes"
    serialized = False  # the store is thread-safe: requests are served concurrently

    @property
    def url(self) -> str:
        return f"https://{HOST}:{self.port}"

    @property
    def credentials(self) -> Credentials:
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
        self.store = initial_store()
        self.workloads = WorkloadRegistry(create_app)
        credentials = self.credentials
        return WorkloadDispatch(create_app(self.store, credentials.token), self.workloads, credentials.token,
                                lambda cluster: credentials.workload_kubeconfig(self.url + cluster.path, cluster.name,
                                                                                cluster.token))

    def started(self, write_instances: Callable[[dict], dict]) -> None:
        self.controllers = ControllerLoop(self.store, self.state.root, rollouts=True, workloads=self.workloads,
                                          write_instances=write_instances).start()
