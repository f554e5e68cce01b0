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

Each endpoint is also its server's guest for Nova's stop and start (:mod:`.power`): when the compute side sends
the ACPI shutdown, the guest runs kube-apiserver's graceful termination
(:meth:`~minicloud.dataplane.apiserver.Endpoint.shutdown`), powers off (nothing answers at the address any more)
and says so; a hard power off stops it at once; a start boots a new endpoint for the same address.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from minicloud.dataplane.apiserver import Endpoint, certificate
from minicloud.dataplane.endpoints import FOLDER, Registry
from minicloud.dataplane.power import OFF, RUNNING, SHUTTING_DOWN, PowerFile

LOG = logging.getLogger(__name__)
API_PORT = 6443


def instance_of(key: str) -> str:
    """The instance id in a server's key (``namespace/machine/instance``)."""
    return key.rsplit("/", 1)[-1]


def _where(value: str | tuple[str, str | None]) -> tuple[str, str | None]:
    """``(address, subnet)`` of what ``servers()`` gives for a server: its address, or its address and subnet."""
    return (value, None) if isinstance(value, str) else (value[0], value[1])


class ServerEndpoints:
    """``servers()`` lists the running servers: key (namespace/machine/instance) -> address, or (address,
    subnet): every cluster's network may have the same CIDR, so an address is registered for its subnet;
    ``without_etcd()`` the keys of those whose etcd member is removed."""

    def __init__(self, state_root: Path, servers: Callable[[], dict[str, str]],
                 revision: Callable[[], object] = lambda: None,
                 without_etcd: Callable[[], set[str]] = set):
        self.revision = revision
        self.without_etcd = without_etcd
        self._seen: object = ()
        self.registry = Registry(state_root)
        self.power = PowerFile(state_root)
        self.tls = certificate(Path(state_root) / FOLDER / "tls")
        self.servers = servers
        self._running: dict[str, tuple[str, Endpoint]] = {}
        self._subnets: dict[str, str | None] = {}
        self._shutting: dict[str, threading.Thread] = {}

    def tick(self) -> None:
        seen = (self.revision(), self.power.stamp())
        if seen[0] is not None and seen == self._seen:
            return  # nothing changed in the store nor in the servers' power
        self._seen = seen
        wanted = self.servers()
        for key, value in wanted.items():
            if key not in self._running:
                address, self._subnets[key] = _where(value)
                self._boot(key, address)
        for key in self.without_etcd() & set(self._running):
            if not self._running[key][1].etcd_gone.is_set():
                self._running[key][1].lose_etcd()
                LOG.info("server %s lost its etcd member: its API fails requests", key)
        self._follow_power()
        for key in [k for k in self._running if k not in wanted]:
            address, endpoint = self._running.pop(key)
            endpoint.stop()
            self.registry.stop_member(address, API_PORT, self._subnets.pop(key, None), owner=key)
            self.power.forget(instance_of(key))
            LOG.info("server %s is gone: %s:%s answers no more", key, address, API_PORT)

    def _boot(self, key: str, address: str) -> None:
        endpoint = Endpoint(self.tls)
        self._running[key] = (address, endpoint)
        self.registry.register_member(address, API_PORT, endpoint.address, owner=key, subnet=self._subnets.get(key))
        self.power.set(instance_of(key), RUNNING, expected=(None,))  # a stopped server's stays off
        LOG.info("server %s serves its API at %s (for %s:%s)", key, endpoint.address, address, API_PORT)

    def _follow_power(self) -> None:
        """Do what the compute side asked of each guest: shut down in order, power off at once, or boot again."""
        power = self.power.snapshot()
        for key, (address, endpoint) in list(self._running.items()):
            state = (power.get(instance_of(key)) or {}).get("state")
            if state == SHUTTING_DOWN and key not in self._shutting and not endpoint.stopped.is_set():
                thread = threading.Thread(target=self._shut_down, args=(key, endpoint), daemon=True,
                                          name=f"shutdown-{instance_of(key)}")
                self._shutting[key] = thread
                thread.start()
            elif state == OFF and not endpoint.stopped.is_set():
                endpoint.stop()  # the compute side powered it off hard
                LOG.info("server %s powered off: %s:%s answers no more", key, address, API_PORT)
            elif state == RUNNING and endpoint.stopped.is_set() and not self._shutting_down(key):
                endpoint.close()
                self._boot(key, address)  # started again: a new boot
        for key in [k for k, thread in self._shutting.items() if not thread.is_alive()]:
            del self._shutting[key]

    def _shutting_down(self, key: str) -> bool:
        thread = self._shutting.get(key)
        return thread is not None and thread.is_alive()

    def _shut_down(self, key: str, endpoint: Endpoint) -> None:
        """The guest's orderly shutdown (ACPI): kube-apiserver terminates gracefully, then the machine is off."""
        LOG.info("server %s shuts down: its API server terminates gracefully", key)
        drained = endpoint.shutdown()
        endpoint.stop()
        self.power.set(instance_of(key), OFF, expected=(SHUTTING_DOWN,))
        LOG.info("server %s is off (%s): nothing answers at its address", key,
                 "every connection closed" if drained else f"{endpoint.open_connections} connection(s) cut")

    def stop(self) -> None:
        for key, (address, endpoint) in self._running.items():
            endpoint.close()
            self.registry.forget_member(address, API_PORT, self._subnets.get(key), owner=key)
        self._running.clear()
        self._subnets.clear()
