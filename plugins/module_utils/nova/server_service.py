# -*- coding: utf-8 -*-
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""node_registration_audit's API access: Nova's servers (list, delete) and the Kubernetes Nodes.

Every request goes through the clients' ``call`` (one retry policy, the deadline, request counting).
Plain dicts out.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes import nodes as k8s_nodes
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.http import http_status

SERVERS_PER_PAGE = 1000


def server_record(server):
    return dict(id=server["id"], name=server.get("name"), status=server.get("status"), created=server.get("created"),
                metadata=server.get("metadata") or {}, task_state=server.get("OS-EXT-STS:task_state"))


class ServerService:
    def __init__(self, client):
        self.client = client

    # Touching a proxy authenticates and reads the catalog: only ever do it inside client.call.
    @property
    def compute(self):
        return self.client.conn.compute

    def list_servers(self, deadline):
        """Every server of the project with its status, created time and metadata (Nova's detail list,
        following its pagination)."""
        servers = []
        params = {"limit": SERVERS_PER_PAGE}
        while True:
            page = self.client.call(
                lambda: self.compute.get("/servers/detail", params=dict(params), raise_exc=True).json(),
                "list servers", deadline)
            batch = page.get("servers") or []
            servers += [server_record(s) for s in batch]
            more = any(link.get("rel") == "next" for link in page.get("servers_links") or [])
            if not more or not batch:
                break
            params = {"limit": SERVERS_PER_PAGE, "marker": batch[-1]["id"]}
        return servers

    def delete_server(self, server_id, deadline):
        """Ask Nova to delete the server. True when asked, False when it was already gone (404)."""
        try:
            self.client.call(lambda: self.compute.delete("/servers/%s" % server_id, raise_exc=True),
                             "delete server %s" % server_id, deadline)
        except Exception as exc:  # pylint: disable=broad-except
            if http_status(exc) == 404:
                return False
            raise
        return True


def list_nodes(kube, deadline, label_selector=None):
    """Every Node (matching ``label_selector``) as ``{"name", "provider_id"}``, sorted by name, one request per page."""
    return [dict(name=record["name"], provider_id=record["provider_id"])
            for record in k8s_nodes.nodes_from_kubernetes(kube, deadline, label_selector=label_selector)]
