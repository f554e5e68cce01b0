# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``coordination.k8s.io/v1`` Leases through the one Kubernetes client: requests only, plain dicts out.

The API's own concurrency control is the lock: a create of a name that exists is answered 409 AlreadyExists,
a replace that carries a stale ``metadata.resourceVersion`` 409 Conflict. Both come back as ``LeaseConflict``,
so that the caller reads the Lease again and decides again: of two actors racing, exactly one write succeeds."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import FlightcontrolError
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.retry import CREATE, IDEMPOTENT
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.client import is_status

if TYPE_CHECKING:
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.client import KubernetesClient

GROUP, VERSION, PLURAL = "coordination.k8s.io", "v1", "leases"


class LeaseConflict(FlightcontrolError):
    """A write of the Lease lost to another (409): read it again."""


class LeaseService:
    """Get, create and replace one namespaced Lease; ``kube`` is a ``KubernetesClient``."""

    def __init__(self, kube: KubernetesClient) -> None:
        self.kube = kube

    def get(self, name: str, namespace: str, deadline: Deadline) -> dict[str, Any] | None:
        """The Lease as a dict, None when there is none."""
        try:
            return self.kube.call(
                lambda: self.kube.custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name),
                f"read Lease {namespace}/{name}", deadline)
        except Exception as exc:  # pylint: disable=broad-except
            if is_status(exc, 404):
                return None
            raise

    def create(self, body: dict[str, Any], deadline: Deadline) -> dict[str, Any]:
        """Create the Lease ``body``; LeaseConflict when one of its name exists (409 AlreadyExists). A create is
        never sent twice (``CREATE``): after a lost answer the caller reads the Lease and finds out."""
        meta = body["metadata"]
        return self._write(lambda: self.kube.custom.create_namespaced_custom_object(
            GROUP, VERSION, meta["namespace"], PLURAL, body), f'create Lease {meta["namespace"]}/{meta["name"]}',
            deadline, CREATE)

    def replace(self, body: dict[str, Any], deadline: Deadline) -> dict[str, Any]:
        """Replace the Lease with ``body``, which carries the resourceVersion it was read at; LeaseConflict when
        that is stale (409 Conflict). A replay after a lost answer is refused the same way, never applied twice."""
        meta = body["metadata"]
        return self._write(lambda: self.kube.custom.replace_namespaced_custom_object(
            GROUP, VERSION, meta["namespace"], PLURAL, meta["name"], body),
            f'update Lease {meta["namespace"]}/{meta["name"]}', deadline, IDEMPOTENT)

    def _write(self, send: Callable[[], Any], what: str, deadline: Deadline, kind: str) -> Any:
        try:
            return self.kube.call(send, what, deadline, kind=kind)
        except Exception as exc:  # pylint: disable=broad-except
            if is_status(exc, 409):
                raise LeaseConflict(f"{what} lost to another writer (HTTP 409)")
            raise
