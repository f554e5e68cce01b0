# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The base of every OpenStack service class: one proxy of the connection, every request through
``OpenStackClient.call`` (the retry policy, the deadline, request counting)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, cast

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.retry import IDEMPOTENT, WriteTrace
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.http import http_status

if TYPE_CHECKING:
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.connection import OpenStackClient


def deleted(client: OpenStackClient, send: Callable[[], Any], what: str, deadline: Deadline,
            trace: WriteTrace | None = None) -> bool:
    """One DELETE under the retry policy (a replay is harmless). True when this call deleted the object,
    False when it was gone before (404). A 404 after an attempt whose answer was lost is our own deletion:
    True."""
    trace = trace if trace is not None else WriteTrace()
    try:
        client.call(send, what, deadline, kind=IDEMPOTENT, trace=trace)
    except Exception as exc:  # pylint: disable=broad-except
        if http_status(exc) == 404:
            return trace.maybe_committed
        raise
    return True


class ServiceBase:
    """Requests to one service. ``proxy`` names the connection's proxy (``network``, ``compute``,
    ``load_balancer``). Plain REST calls pass ``raise_exc=True``: the proxies do not raise on an HTTP error
    by default, and faults must reach the retry policy."""

    proxy: str | None = None

    def __init__(self, client: OpenStackClient) -> None:
        self.client = client

    @property
    def api(self) -> Any:
        # Touching a proxy authenticates and reads the catalog: only ever do it inside client.call.
        return getattr(self.client.conn, cast(str, self.proxy))  # a service class names its proxy

    def _get(self, path: str, what: str, deadline: Deadline, params: dict[str, Any] | None = None) -> Any:
        """One GET, its JSON answer decoded."""
        return self.client.call(lambda: self.api.get(path, params=params, raise_exc=True).json(), what, deadline)
