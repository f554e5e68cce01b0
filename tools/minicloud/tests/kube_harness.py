"""The emulated Kubernetes API server on a free port in this process, for fast tests."""

from __future__ import annotations

import threading
from pathlib import Path

from kubernetes import client, config

from minicloud.kube.app import create_app
from minicloud.kube.controllers.loop import ControllerLoop
from minicloud.kube.credentials import Credentials
from minicloud.kube.resources import by_kind
from minicloud.kube.store import Store
from minicloud.kube.workloads import INITIAL_NAMESPACES, WorkloadDispatch, WorkloadRegistry
from minicloud.core.wsgi import bind


class KubeServer:
    def __init__(self, folder: Path, controllers: bool = False, lag: float = 0.3, store: Store | None = None):
        self.folder = folder
        self.credentials = Credentials(folder / "pki")
        self.credentials.generate()
        self.store = store or Store()
        for namespace in INITIAL_NAMESPACES:
            self.store.create(by_kind("Namespace"), {"metadata": {"name": namespace}})
        self.server = bind("127.0.0.1", 0, self.credentials.server_context())
        self.url = f"https://127.0.0.1:{self.server.server_port}"
        # as the kubernetes service serves it: the workload clusters' APIs beside the management API
        self.workloads = WorkloadRegistry(create_app)
        self.server.set_app(WorkloadDispatch(
            create_app(self.store, self.credentials.token), self.workloads, self.credentials.token,
            lambda c: self.credentials.workload_kubeconfig(self.url + c.path, c.name, c.token)))
        self.kubeconfig = folder / "kubeconfig"
        self.credentials.write_kubeconfig(self.kubeconfig, self.url)
        self.controllers = (ControllerLoop(self.store, folder, lag=lag, workloads=self.workloads) if controllers
                            else None)

    def nodes(self, cluster: str, namespace: str = "default") -> Store:
        """The store holding the Nodes of seeded cluster ``cluster`` (its own API's)."""
        found = self.workloads.get(namespace, cluster)
        assert found is not None, f"no workload API for {namespace}/{cluster}"
        return found.store

    def start(self) -> KubeServer:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        if self.controllers:
            self.controllers.start()
        return self

    def stop(self) -> None:
        if self.controllers:
            self.controllers.stop()
        self.server.shutdown()
        self.server.server_close()

    def api_client(self) -> client.ApiClient:
        return config.new_client_from_config(config_file=str(self.kubeconfig))
