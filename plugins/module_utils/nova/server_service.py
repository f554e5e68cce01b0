# -*- coding: utf-8 -*-
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Nova's servers: list (all pages) and delete.

Every request goes through the clients' ``call`` (one retry policy, the deadline, request counting).
Plain dicts out.
"""

from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.rest import ServiceBase, deleted
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.pagination import list_all_pages


def server_record(server):
    return dict(id=server["id"], name=server.get("name"), status=server.get("status"), created=server.get("created"),
                metadata=server.get("metadata") or {}, task_state=server.get("OS-EXT-STS:task_state"))


class ServerService(ServiceBase):
    proxy = "compute"

    def _list(self, path, deadline):
        return list_all_pages(lambda params: self._get(path, "list servers", deadline, params=params), "servers")

    def list_servers(self, deadline):
        """Every server of the project with its status, created time and metadata (Nova's detail list,
        following its pagination)."""
        return [server_record(s) for s in self._list("/servers/detail", deadline)]

    def list_server_names(self, deadline):
        """Every server of the project, id and name only (following Nova's pagination)."""
        return [dict(id=s["id"], name=s.get("name")) for s in self._list("/servers", deadline)]

    def delete_server(self, server_id, deadline):
        """Ask Nova to delete the server. True when this call asked (a 404 after our own lost answer
        included), False when it was already gone (404)."""
        return deleted(self.client, lambda: self.api.delete("/servers/%s" % server_id, raise_exc=True),
                       "delete server %s" % server_id, deadline)
