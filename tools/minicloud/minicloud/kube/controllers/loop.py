"""Run the controllers in a background thread, and acknowledge provider-mode changes."""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable
from pathlib import Path

from minicloud.core.paths import StateDir
from minicloud.dataplane.servers import ServerEndpoints
from minicloud.kube.capo_mode import CapoMode, applied_file, mode_file
from minicloud.kube.controllers import capo, history, kcp, rollout
from minicloud.kube.controllers.core import PauseController
from minicloud.kube.controllers.infra import InfraProvider
from minicloud.kube.controllers.machines import OSM
from minicloud.kube.controllers.replicas import ReplicaController
from minicloud.kube.store import Store
from minicloud.octavia_provider import modes

TICK = 0.1


class ModeFile:
    """The provider mode from the state folder, re-read only when the file changes."""

    def __init__(self, root: Path | None):
        self.root = root
        self._stamp = None
        self._mode = CapoMode()

    def __call__(self) -> CapoMode:
        if self.root is None:
            return self._mode
        try:
            stat = mode_file(self.root).stat()
            stamp = (stat.st_mtime_ns, stat.st_size)
        except FileNotFoundError:
            stamp = None
        if stamp != self._stamp:
            self._mode = modes.load(mode_file(self.root), CapoMode)
            self._stamp = stamp
        return self._mode

    def acknowledge(self, mode: CapoMode) -> None:
        if self.root is not None and modes.applied_generation(applied_file(self.root)) < mode.generation:
            modes.acknowledge(applied_file(self.root), mode)


class ControllerLoop:
    """The pause controllers and the replica and Machine controllers of Machines without real servers
    (:mod:`.replicas`), in one pass on every store change; with ``rollouts`` (and a state folder holding
    clouds.yaml) also the controllers of control planes on OpenStack and the history sampler, each in a
    thread of its own, since they wait on OpenStack; ``write_instances`` (Nova's instances, see
    :class:`minicloud.kube.controllers.capo.OpenStack`) is then how their servers boot.

    Their writes (Events too) bump the store's revision, so a pass follows each pass that wrote; it finds
    nothing left to do and writes nothing, and the loop is quiet again."""

    def __init__(self, store: Store, state_root: Path | None = None, lag: float | None = None,
                 rollouts: bool = False, workloads=None, write_instances: Callable[[dict], dict] | None = None):
        self.store = store
        self.workloads = workloads  # the workload clusters' APIs (their Nodes), see minicloud.kube.workloads
        self.mode_file = ModeFile(state_root)
        self._seen = None  # (store revision, provider mode) of the last pass
        self.core = PauseController(store) if lag is None else PauseController(store, lag=lag)
        self.infra = InfraProvider(store, self.mode_file)
        self.replicas = ReplicaController(store, workloads)
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, name="capi-controllers", daemon=True)]
        if rollouts and state_root is not None:
            if write_instances is None:
                raise ValueError("the rollout controllers boot servers: write_instances is needed")
            self._add_rollouts(store, Path(state_root), write_instances)

    def _add_rollouts(self, store: Store, root: Path, write_instances: Callable[[dict], dict]) -> None:
        def connection_factory():
            local = threading.local()

            def get():
                if getattr(local, "conn", None) is None:
                    local.conn = capo.OpenStack(StateDir(root), write_instances)
                return local.conn

            return get

        self.rollouts = kcp.RolloutController(store, root, connection_factory(), workloads=self.workloads)
        self.history = history.HistorySampler(
            root, lambda: [c.summary() for c in kcp.openstack_clusters(store)], connection_factory(),
            revision=lambda: store.revision)
        self._threads.append(threading.Thread(target=self._run_each, args=(self.rollouts.tick, TICK),
                                              name="capi-rollouts", daemon=True))
        self._threads.append(threading.Thread(target=self._run_each, args=(self.history.tick, history.INTERVAL),
                                              name="capi-history", daemon=True))
        self._add_server_endpoints(store, root, kcp.openstack_clusters)

    def _add_server_endpoints(self, store: Store, root: Path, clusters) -> None:
        """The control-plane servers' API endpoints (the load balancers' backends), see minicloud.dataplane."""
        self.server_endpoints = ServerEndpoints(root, lambda: serving_servers(store, clusters(store)),
                                                revision=lambda: store.revision,
                                                without_etcd=lambda: servers_without_etcd(store, clusters(store)))
        self._threads.append(threading.Thread(target=self._run_each, args=(self.server_endpoints.tick, TICK),
                                              name="server-endpoints", daemon=True))

    def start(self) -> ControllerLoop:
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=5)

    def _state(self) -> tuple:
        return self.store.revision, self.workloads.revision() if self.workloads else None, self.mode_file()

    def _nothing_to_do(self, seen: tuple) -> bool:
        return seen == self._seen and not self.core.waiting() and not self.infra.waiting()

    def at_rest(self) -> bool:
        """Whether a pass now would find nothing to do: the last one saw the current store, workload clusters and
        provider mode, and no controller's timer is waiting."""
        return self._nothing_to_do(self._state())

    def tick(self) -> None:
        # A pass only reacts to the store, the provider mode and its own timers: with none of them moved,
        # it would find nothing to do (and costs a read of every CAPI object ten times a second).
        seen = self._state()
        if self._nothing_to_do(seen):
            return
        self._seen = seen
        self.core.tick()
        self.replicas.tick()
        applied = self.infra.tick()
        self.mode_file.acknowledge(applied)

    def _run(self) -> None:
        while not self._stop.wait(TICK):
            try:
                self.tick()
            except Exception:  # a controller bug must not stop the others for good
                traceback.print_exc()

    def _run_each(self, tick, interval: float) -> None:
        while not self._stop.wait(interval):
            try:
                tick()
            except Exception:  # OpenStack unreachable for a moment: try again next time
                traceback.print_exc()


def servers_without_etcd(store, clusters) -> set[str]:
    """Keys (as :func:`serving_servers` gives them) of the control-plane servers whose etcd member KCP removed:
    their Machine is being deleted and no longer carries KCP's own pre-terminate hook."""
    return {key for key, machine, _address in _servers(store, clusters)
            if machine["metadata"].get("deletionTimestamp")
            and rollout.KCP_CLEANUP_HOOK not in (machine["metadata"].get("annotations") or {})}


def serving_servers(store, clusters) -> dict[str, tuple[str, str | None]]:
    """Control-plane servers of the clusters with OpenStack resources: key -> (address, the cluster's subnet), from
    the OpenStackMachines (``clusters``: their contexts, see :func:`.kcp.openstack_clusters`); their endpoints are
    :class:`minicloud.dataplane.servers.ServerEndpoints`. Every cluster's network may have the same CIDR: an
    address is one host only within its subnet."""
    return {key: (address, getattr(ctx, "subnet_id", None))
            for ctx in clusters for key, _machine, address in _servers(store, [ctx])}


def _servers(store, clusters):
    """(key, Machine, address) of each control-plane Machine with a server that has an address."""
    for ctx in clusters:
        for machine in ctx.machines:
            name = machine["metadata"]["name"]
            status = (store.find(OSM, ctx.namespace, name) or {}).get("status", {})
            if status.get("instanceID") and status.get("addresses"):
                yield f"{ctx.namespace}/{name}/{status['instanceID']}", machine, status["addresses"][0]["address"]
