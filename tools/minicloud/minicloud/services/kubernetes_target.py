"""kubernetes-target: a second emulated Kubernetes API, the management cluster a ``clusterctl move``
moves clusters to (see :mod:`minicloud.clusterctl`).

The same server and CAPI pause controllers as the ``kubernetes`` service, with its own port, its own
objects (empty at every start), its own CA and token, and its kubeconfig in ``kubeconfig-target``
in the state folder. The rollout controllers do not run here: they drive OpenStack for clusters
seeded on the main API.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from minicloud.kube.controllers.loop import ControllerLoop
from minicloud.services.kubernetes import Kubernetes

KUBECONFIG = "kubeconfig-target"


class KubernetesTarget(Kubernetes):
    name = "kubernetes-target"
    service_type = "kubernetes-target"

    @property
    def kubeconfig(self) -> Path:
        return self.state.root / KUBECONFIG

    def started(self, write_instances: Callable[[dict], dict]) -> None:
        self.controllers = ControllerLoop(self.store, self.state.root, rollouts=False, workloads=self.workloads).start()
