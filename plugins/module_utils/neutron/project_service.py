# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Neutron reads of a whole project (ports, security groups, floating IPs, networks, routers) and the deletion of
one object, each one API request under the retry policy. Every list names the project: an admin's list would
otherwise hold every project's objects, while Nova lists only the project's servers. Plain dicts out."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.http import http_status
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.rest import ServiceBase, deleted

if TYPE_CHECKING:
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline

#: kind -> (path, the answer's list key, the answer's object key)
KINDS = {
    "ports": ("/ports", "ports", "port"),
    "security_groups": ("/security-groups", "security_groups", "security_group"),
    "floating_ips": ("/floatingips", "floatingips", "floatingip"),
    "networks": ("/networks", "networks", "network"),
    "routers": ("/routers", "routers", "router"),
}
FIELDS = {
    "ports": ["id", "name", "description", "tags", "device_id", "device_owner", "network_id", "fixed_ips",
              "security_groups", "created_at", "status"],
    "security_groups": ["id", "name", "description", "tags", "created_at"],
    "floating_ips": ["id", "floating_ip_address", "description", "tags", "port_id", "created_at", "status"],
    "networks": ["id", "name", "tags"],
    "routers": ["id", "name", "tags"],
}


class ProjectNetworkService(ServiceBase):
    proxy = "network"

    def project_id(self, deadline: Deadline) -> str:
        """The id of the project the connection is scoped to (authenticates when not done yet)."""
        return self.client.call(lambda: self.client.conn.current_project_id, "read the project id", deadline)

    def list_kind(self, kind: str, project_id: str, deadline: Deadline) -> list[dict[str, Any]]:
        """Every object of ``kind`` (a key of KINDS) of the project, with the FIELDS of that kind; one request."""
        path, key, _one = KINDS[kind]
        return self._get(path, f"list {kind.replace('_', ' ')} of project {project_id}", deadline,
                         params={"project_id": project_id, "fields": FIELDS[kind]})[key]

    def get_object(self, kind: str, object_id: str, deadline: Deadline) -> dict[str, Any] | None:
        """The object, or None when it is gone (404)."""
        path, _key, one = KINDS[kind]
        try:
            return self._get(f"{path}/{object_id}", f"GET {one} {object_id}", deadline)[one]
        except Exception as exc:  # pylint: disable=broad-except
            if http_status(exc) == 404:
                return None
            raise

    def delete_object(self, kind: str, object_id: str, deadline: Deadline) -> bool:
        """Delete it: True when this call deleted it, False when it was already gone."""
        path, _key, one = KINDS[kind]
        return deleted(self.client, lambda: self.api.delete(f"{path}/{object_id}", raise_exc=True),
                       f"delete {one} {object_id}", deadline)
