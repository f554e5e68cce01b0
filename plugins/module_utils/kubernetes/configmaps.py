# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Namespaced ConfigMaps through the one Kubernetes client: requests only, plain dicts out.

The collection keeps its fleet records in ConfigMaps on the management cluster (the halt of the fleet, the
progress of a fleet run: docs/fleet.md). As with Leases, the API's concurrency control is the lock: a create of a
name that exists is answered 409 AlreadyExists, a replace carrying a stale ``metadata.resourceVersion`` 409
Conflict; both come back as ``RecordConflict`` so that the caller reads again and decides again."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import FlightcontrolError
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.retry import CREATE, IDEMPOTENT
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.client import is_status

if TYPE_CHECKING:
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.client import KubernetesClient


class RecordConflict(FlightcontrolError):
    """A write of the ConfigMap lost to another writer (409): read it again."""


class ConfigMapService:
    """Get, create, replace and delete one namespaced ConfigMap; ``kube`` is a ``KubernetesClient``."""

    def __init__(self, kube: KubernetesClient) -> None:
        self.kube = kube

    def _plain(self, obj: Any) -> Any:
        return self.kube.api_client.sanitize_for_serialization(obj)

    def get(self, name: str, namespace: str, deadline: Deadline) -> dict[str, Any] | None:
        """The ConfigMap as a dict, None when there is none."""
        try:
            return self._plain(self.kube.call(
                lambda: self.kube.core.read_namespaced_config_map(name, namespace),
                f"read ConfigMap {namespace}/{name}", deadline))
        except Exception as exc:  # pylint: disable=broad-except
            if is_status(exc, 404):
                return None
            raise

    def create(self, body: dict[str, Any], deadline: Deadline) -> dict[str, Any]:
        """Create ``body``; RecordConflict when one of its name exists. Never sent twice (``CREATE``)."""
        meta = body["metadata"]
        return self._write(lambda: self.kube.core.create_namespaced_config_map(meta["namespace"], body),
                           f'create ConfigMap {meta["namespace"]}/{meta["name"]}', deadline, CREATE)

    def replace(self, body: dict[str, Any], deadline: Deadline) -> dict[str, Any]:
        """Replace the ConfigMap with ``body``, on the resourceVersion it carries; RecordConflict when stale."""
        meta = body["metadata"]
        return self._write(lambda: self.kube.core.replace_namespaced_config_map(meta["name"], meta["namespace"], body),
                           f'update ConfigMap {meta["namespace"]}/{meta["name"]}', deadline, IDEMPOTENT)

    def delete(self, name: str, namespace: str, deadline: Deadline) -> bool:
        """Delete the ConfigMap; False when there was none (a replay after a lost answer finds it gone)."""
        try:
            self.kube.call(lambda: self.kube.core.delete_namespaced_config_map(name, namespace),
                           f"delete ConfigMap {namespace}/{name}", deadline, kind=IDEMPOTENT)
        except Exception as exc:  # pylint: disable=broad-except
            if is_status(exc, 404):
                return False
            raise
        return True

    def _write(self, send: Callable[[], Any], what: str, deadline: Deadline, kind: str) -> Any:
        try:
            return self._plain(self.kube.call(send, what, deadline, kind=kind))
        except Exception as exc:  # pylint: disable=broad-except
            if is_status(exc, 409):
                raise RecordConflict(f"{what} lost to another writer (HTTP 409)")
            raise
