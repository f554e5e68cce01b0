# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Nova's servers: list (all pages), read one, stop and delete.

Every request goes through the clients' ``call`` (one retry policy, the deadline, request counting).
Plain dicts out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.retry import IDEMPOTENT
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.http import http_status
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.rest import ServiceBase, deleted
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.pagination import list_all_pages

if TYPE_CHECKING:
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline


def server_record(server: dict[str, Any]) -> dict[str, Any]:
    return dict(id=server["id"], name=server.get("name"), status=server.get("status"), created=server.get("created"),
                metadata=server.get("metadata") or {}, task_state=server.get("OS-EXT-STS:task_state"))


#: what :meth:`ServerService.stop_server` found
STOP_ASKED, STOP_CONFLICT, SERVER_GONE = "asked", "conflict", "gone"


class ServerService(ServiceBase):
    proxy = "compute"

    def _list(self, path: str, deadline: Deadline) -> list[dict[str, Any]]:
        return list_all_pages(lambda params: self._get(path, "list servers", deadline, params=params), "servers")

    def list_servers(self, deadline: Deadline) -> list[dict[str, Any]]:
        """Every server of the project with its status, created time and metadata (Nova's detail list,
        following its pagination)."""
        return [server_record(s) for s in self._list("/servers/detail", deadline)]

    def list_server_names(self, deadline: Deadline) -> list[dict[str, Any]]:
        """Every server of the project, id and name only (following Nova's pagination)."""
        return [dict(id=s["id"], name=s.get("name")) for s in self._list("/servers", deadline)]

    def delete_server(self, server_id: str, deadline: Deadline) -> bool:
        """Ask Nova to delete the server. True when this call asked (a 404 after our own lost answer
        included), False when it was already gone (404)."""
        return deleted(self.client, lambda: self.api.delete(f"/servers/{server_id}", raise_exc=True),
                       f"delete server {server_id}", deadline)

    def get_server(self, server_id: str, deadline: Deadline) -> dict[str, Any] | None:
        """The server (``server_record``), or None when Nova has no such server (404)."""
        try:
            return server_record(self._get(f"/servers/{server_id}", f"read server {server_id}",
                                           deadline)["server"])
        except Exception as exc:  # pylint: disable=broad-except
            if http_status(exc) == 404:
                return None
            raise

    def stop_server(self, server_id: str, deadline: Deadline) -> str:
        """Ask Nova for an orderly shutdown (``os-stop``: ACPI power off, then SHUTOFF). Idempotent: a replay of a
        stop asks nothing new. ``STOP_ASKED``; ``STOP_CONFLICT`` when Nova refused with 409 (the server already
        stopping, stopped, or busy with another task: the caller reads its status); ``SERVER_GONE`` on 404."""
        try:
            self.client.call(lambda: self.api.post(f"/servers/{server_id}/action", json={"os-stop": None},
                                                   raise_exc=True),
                             f"stop server {server_id} (os-stop)", deadline, kind=IDEMPOTENT)
        except Exception as exc:  # pylint: disable=broad-except
            status = http_status(exc)
            if status == 409:
                return STOP_CONFLICT
            if status == 404:
                return SERVER_GONE
            raise
        return STOP_ASKED
