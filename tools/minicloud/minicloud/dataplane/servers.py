"""Endpoints that live and die with the control-plane servers of the seeded clusters.

Each control-plane server whose OpenStackMachine reports an instance and an address serves an HTTPS
endpoint answering like its kube-apiserver (:class:`minicloud.dataplane.apiserver.Endpoint`), registered
for ``<address>:6443`` so the load balancer's member for it reaches it. When KCP removes the Machine's etcd
member (it takes its ``kcp-cleanup`` hook off a Machine being deleted, before the Machine controller deletes the
infrastructure) the endpoint fails every request that needs etcd while it still takes connections
(:meth:`~minicloud.dataplane.apiserver.Endpoint.lose_etcd`): the window in which the load balancer still sends
to a member whose apiserver no longer serves. When CAPO deletes the server (the OpenStackMachine loses its
instance, after the member's deletion, as CAPO orders it) the endpoint stops: from then on nothing answers
there, as on a deleted VM. Runs in the process of the CAPI controllers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from minicloud.dataplane.apiserver import Endpoint, certificate
from minicloud.dataplane.endpoints import FOLDER, Registry

LOG = logging.getLogger(__name__)
API_PORT = 6443


class ServerEndpoints:
    """``servers()`` lists the running servers: key (namespace/machine/instance) -> address; ``without_etcd()``
    the keys of those whose etcd member is removed."""

    def __init__(self, state_root: Path, servers: Callable[[], dict[str, str]],
                 revision: Callable[[], object] = lambda: None,
                 without_etcd: Callable[[], set[str]] = set):
        self.revision = revision
        self.without_etcd = without_etcd
        self._seen: object = ()
        self.registry = Registry(state_root)
        self.tls = certificate(Path(state_root) / FOLDER / "tls")
        self.servers = servers
        self._running: dict[str, tuple[str, Endpoint]] = {}

    def tick(self) -> None:
        revision = self.revision()
        if revision is not None and revision == self._seen:
            return  # nothing changed in the store
        self._seen = revision
        wanted = self.servers()
        for key, address in wanted.items():
            if key not in self._running:
                endpoint = Endpoint(self.tls)
                self._running[key] = (address, endpoint)
                self.registry.register_member(address, API_PORT, endpoint.address, owner=key)
                LOG.info("server %s serves its API at %s (for %s:%s)", key, endpoint.address, address, API_PORT)
        for key in self.without_etcd() & set(self._running):
            if not self._running[key][1].etcd_gone.is_set():
                self._running[key][1].lose_etcd()
                LOG.info("server %s lost its etcd member: its API fails requests", key)
        for key in [k for k in self._running if k not in wanted]:
            address, endpoint = self._running.pop(key)
            endpoint.stop()
            self.registry.stop_member(address, API_PORT)
            LOG.info("server %s is gone: %s:%s answers no more", key, address, API_PORT)

    def stop(self) -> None:
        for address, endpoint in self._running.values():
            endpoint.close()
            self.registry.forget_member(address, API_PORT)
        self._running.clear()

