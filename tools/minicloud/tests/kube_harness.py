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
from minicloud.kube.workloads import INITIAL_NAMESPACES
from minicloud.runtime.wsgi import bind


class KubeServer:
    def __init__(self, folder: Path, controllers: bool = False, lag: float = 0.3, store: Store | None = None):
        self.folder = folder
        self.credentials = Credentials(folder / "pki")
        self.credentials.generate()
        self.store = store or Store()
        for namespace in INITIAL_NAMESPACES:
            self.store.create(by_kind("Namespace"), {"metadata": {"name": namespace}})
        self.server = bind("127.0.0.1", 0, self.credentials.server_context())
        self.server.set_app(create_app(self.store, self.credentials.token))
        self.url = f"https://127.0.0.1:{self.server.server_port}"
        self.kubeconfig = folder / "kubeconfig"
        self.credentials.write_kubeconfig(self.kubeconfig, self.url)
        self.controllers = ControllerLoop(self.store, folder, lag=lag) if controllers else None

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
