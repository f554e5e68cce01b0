# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Octavia reads of a whole project (load balancers, pools, each pool's members), one API request each under the
retry policy, and the deletion of one member. Plain dicts with Octavia's own field names."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Union

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.retry import IDEMPOTENT, WriteTrace
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.http import http_status
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.rest import ServiceBase

if TYPE_CHECKING:
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline

BUSY = "busy"


class LoadBalancerListing(ServiceBase):
    proxy = "load_balancer"

    def list_loadbalancers(self, project_id: str, deadline: Deadline) -> list[dict[str, Any]]:
        return self._get("/lbaas/loadbalancers", f"list load balancers of project {project_id}", deadline,
                         params={"project_id": project_id})["loadbalancers"]

    def list_pools(self, project_id: str, deadline: Deadline) -> list[dict[str, Any]]:
        return self._get("/lbaas/pools", f"list pools of project {project_id}", deadline,
                         params={"project_id": project_id})["pools"]

    def list_members(self, pool_id: str, deadline: Deadline) -> list[dict[str, Any]]:
        return self._get(f"/lbaas/pools/{pool_id}/members", f"list members of pool {pool_id}", deadline)["members"]

    def delete_member(self, pool_id: str, member_id: str, deadline: Deadline) -> Union[bool, str]:
        """True when this call deleted the member, False when it was gone already, BUSY when Octavia refused
        with 409 (the load balancer is PENDING_*: a later run deletes it)."""
        trace = WriteTrace()
        try:
            self.client.call(lambda: self.api.delete(f"/lbaas/pools/{pool_id}/members/{member_id}",
                                                     raise_exc=True),
                             f"DELETE member {member_id}", deadline, kind=IDEMPOTENT, trace=trace)
        except Exception as exc:  # pylint: disable=broad-except
            if http_status(exc) == 404:
                return trace.maybe_committed
            if http_status(exc) == 409:
                return BUSY
            raise
        return True
