# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one per-request guard of both API clients (``openstack.connection.OpenStackClient`` wraps requests'
adapters with it, ``kubernetes.client.KubernetesClient`` the kubernetes client's REST layer): it counts every
request sent, and gives each request the timeout it asked for (or the client's ``api_timeout``) clamped to what
remains of the deadline of the call the sending thread is making (``Deadline.clamp``), so a hung connection
cannot outlive the run. Each thread has its own call: a watch thread ending its call leaves the main thread's
request under its own deadline."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline, Timeout


class RequestGuard:
    """Counts requests and clamps their timeouts; ``default_timeout`` is the client's ``api_timeout``."""

    def __init__(self, default_timeout: float | None = None) -> None:
        self.default_timeout = default_timeout
        self.total = 0
        self._counting = threading.Lock()
        self._local = threading.local()

    @property
    def deadline(self) -> Deadline | None:
        """The deadline of the call this thread is making (None outside a call)."""
        return getattr(self._local, "deadline", None)

    @contextmanager
    def bound(self, deadline: Deadline) -> Iterator[None]:
        """Requests this thread sends inside the block keep to ``deadline``."""
        before = self.deadline
        self._local.deadline = deadline
        try:
            yield
        finally:
            self._local.deadline = before

    def timeout(self, requested: Timeout = None) -> Timeout:
        """The timeout one request is sent with: ``requested`` (else the default), clamped to the deadline."""
        timeout = self.default_timeout if requested is None else requested
        deadline = self.deadline
        return timeout if deadline is None else deadline.clamp_timeout(timeout)

    def sent(self) -> None:
        """Count one request (requests of watch threads included)."""
        with self._counting:
            self.total += 1
