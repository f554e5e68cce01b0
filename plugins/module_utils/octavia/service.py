# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Octavia reads used by the modules, each one API request under the retry policy.

Everything returned is a plain dict with Octavia's own field names, so decisions stay pure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.rest import ServiceBase
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.identifiers import is_uuid, normalize_uuid
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import ResolveError
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.retry import IDEMPOTENT, WriteTrace
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.members import label
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.status_tree import (
    pool_in_tree,
    status_path,
    TreeLacks,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.http import (
    http_status,
    is_not_found,
    service_message,
)

if TYPE_CHECKING:
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline

#: Answers to the status tree that mean "read the pool another way": a policy that does not allow it (403), an
#: API in front of Octavia that does not route it (405, 501). A 404 is the load balancer gone, as for its GET.
TREE_REFUSED = (403, 405, 501)


def _plain(resource: Any) -> dict[str, Any]:
    return resource.to_dict(original_names=True, computed=False)


class OctaviaService(ServiceBase):
    proxy = "load_balancer"
    #: Why polls read the member list instead of the status tree; None while the status tree serves.
    tree_fallback: Optional[str] = None

    def _by_name_or_id(self, kind: str, name_or_id: str, get: str, list_by_name: Callable[[str], Any],
                       deadline: Deadline, scope: str = "") -> dict[str, Any]:
        """``get`` names the proxy's getter; ``list_by_name(name)`` lists the objects with that name."""
        if is_uuid(name_or_id):
            try:
                return _plain(self.client.call(lambda: getattr(self.api, get)(normalize_uuid(name_or_id)),
                                               f"GET {kind} {name_or_id}", deadline))
            except Exception as exc:  # pylint: disable=broad-except
                if not is_not_found(exc):
                    raise
        found = self.client.call(lambda: [_plain(r) for r in list_by_name(name_or_id)],
                                 f"list {kind}s named {name_or_id}", deadline)
        if not found:
            raise ResolveError(f"{kind} {name_or_id!r} not found{scope} (looked up by id and by name as the user of "
                               "this connection)")
        if len(found) > 1:
            raise ResolveError(f"{kind} name {name_or_id!r} is ambiguous{scope}: {len(found)} {kind}s have it "
                               f"({', '.join(f['id'] for f in found)}); use the id")
        return found[0]

    def find_loadbalancer(self, name_or_id: str, deadline: Deadline) -> dict[str, Any]:
        return self._by_name_or_id(
            "load balancer", name_or_id, "get_load_balancer",
            lambda name: self.api.load_balancers(name=name), deadline)

    def find_pool(self, name_or_id: str, deadline: Deadline, loadbalancer: dict[str, Any] | None = None) -> dict[str, Any]:
        scope = ""
        query = {}
        if loadbalancer:
            scope = f" on load balancer {loadbalancer.get('name') or loadbalancer['id']}"
            query["loadbalancer_id"] = loadbalancer["id"]
        pool = self._by_name_or_id(
            "pool", name_or_id, "get_pool",
            lambda name: self.api.pools(name=name, **query), deadline, scope)
        if loadbalancer and loadbalancer["id"] not in pool_loadbalancer_ids(pool):
            raise ResolveError(f"pool {name_or_id} does not belong to load balancer "
                               f"{loadbalancer.get('name') or loadbalancer['id']} (it belongs to "
                               f"{', '.join(pool_loadbalancer_ids(pool)) or 'none'})")
        return pool

    def resolve_pool(self, pool_name_or_id: str, lb_name_or_id: str | None,
                     deadline: Deadline) -> tuple[dict[str, Any], str]:
        """(pool, load balancer id): the pool, on the load balancer when one is named; ResolveError when the
        pool belongs to no load balancer."""
        loadbalancer = self.find_loadbalancer(lb_name_or_id, deadline) if lb_name_or_id else None
        pool = self.find_pool(pool_name_or_id, deadline, loadbalancer)
        lb_ids = pool_loadbalancer_ids(pool)
        if not lb_ids:
            raise ResolveError(f"pool {label(pool)} belongs to no load balancer")
        return pool, (loadbalancer["id"] if loadbalancer else lb_ids[0])

    def get_loadbalancer(self, lb_id: str, deadline: Deadline) -> dict[str, Any]:
        return _plain(self.client.call(lambda: self.api.get_load_balancer(lb_id),
                                       f"GET load balancer {lb_id}", deadline))

    def list_members(self, pool_id: str, deadline: Deadline) -> list[dict[str, Any]]:
        """All members of a pool in one list request (the SDK follows pagination links if any)."""
        return self.client.call(lambda: [_plain(m) for m in self.api.members(pool_id)],
                                f"list members of pool {pool_id}", deadline)

    def pool_state(self, pool_id: str, lb_id: str, deadline: Deadline) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """(members, load balancer) of a pool for one poll, with the fields of ``status_tree.MEMBER_FIELDS`` and
        ``LOADBALANCER_FIELDS`` at least: one status-tree request. Where the tree is refused or lacks the pool, the
        member list and the load balancer's GET (two requests), from then on; ``tree_fallback`` says why."""
        if self.tree_fallback is None:
            try:
                answer = self.client.call(lambda: self.api.get(status_path(lb_id), raise_exc=True).json(),
                                          f"GET status tree of load balancer {lb_id}", deadline)
                loadbalancer, members = pool_in_tree(answer, pool_id)
                return members, loadbalancer
            except TreeLacks as exc:
                self.tree_fallback = str(exc)
            except Exception as exc:  # pylint: disable=broad-except
                if http_status(exc) not in TREE_REFUSED:
                    raise
                self.tree_fallback = f"the status tree was refused ({service_message(exc)})"
        return self.list_members(pool_id, deadline), self.get_loadbalancer(lb_id, deadline)

    @property
    def polled_with(self) -> dict[str, Any]:
        """How the polls read the pool, for the module's result."""
        return dict(method="member list" if self.tree_fallback else "status tree", fallback_reason=self.tree_fallback)

    def delete_members(self, pool_id: str, members: list[dict[str, Any]], deadline: Deadline,
                       on_deleted: Optional[Callable[[dict[str, Any]], None]] = None) -> bool:
        """Delete the members, one request each (a member already gone is fine); ``on_deleted(member)`` is told
        of each as it is done, so a later failure loses no record. False when the load balancer refused a
        deletion with 409 (it is busy: PENDING_*), True when all are deleted. A 409 after our own attempt's
        lost answer is our deletion when the member, read again, is gone or PENDING_DELETE."""
        for member in members:
            trace = WriteTrace()
            try:
                self.client.call(lambda m=member: self.api.delete_member(m["id"], pool_id),  # type: ignore[misc]
                                 f"DELETE member {member.get('name')}", deadline, kind=IDEMPOTENT, trace=trace)
            except Exception as exc:  # pylint: disable=broad-except
                if http_status(exc) == 409 and not (trace.maybe_committed
                                                    and self._being_deleted(pool_id, member, deadline)):
                    return False
                if http_status(exc) not in (404, 409):
                    raise
            if on_deleted is not None:
                on_deleted(member)
        return True

    def _being_deleted(self, pool_id: str, member: dict[str, Any], deadline: Deadline) -> bool:
        try:
            now = _plain(self.client.call(lambda: self.api.get_member(member["id"], pool_id),
                                          f"GET member {member.get('name')}", deadline))
        except Exception as exc:  # pylint: disable=broad-except
            if is_not_found(exc):
                return True
            raise
        return now.get("provisioning_status") in ("PENDING_DELETE", "DELETED")

    def get_health_monitor(self, monitor_id: str, deadline: Deadline) -> dict[str, Any] | None:
        """The health monitor (its delay, timeout, max_retries, max_retries_down...), or None when it is gone."""
        try:
            return _plain(self.client.call(lambda: self.api.get_health_monitor(monitor_id),
                                           f"GET health monitor {monitor_id}", deadline))
        except Exception as exc:  # pylint: disable=broad-except
            if is_not_found(exc):
                return None
            raise

    def get_member(self, pool_id: str, member_id: str, deadline: Deadline) -> dict[str, Any] | None:
        """The member (all its fields), or None when it is gone."""
        try:
            return _plain(self.client.call(lambda: self.api.get_member(member_id, pool_id),
                                           f"GET member {member_id}", deadline))
        except Exception as exc:  # pylint: disable=broad-except
            if is_not_found(exc):
                return None
            raise

    def set_member_weight(self, pool_id: str, member_id: str, weight: int, deadline: Deadline) -> bool:
        """PUT the member's weight (idempotent: the same weight again changes nothing). False when the load
        balancer refused with 409 (busy: PENDING_*), or the member is gone."""
        return self._put_member(pool_id, member_id, deadline, weight=weight)

    def set_member_admin_state(self, pool_id: str, member_id: str, admin_state_up: bool, deadline: Deadline) -> bool:
        """PUT the member's admin_state_up (the drain of providers that ignore weight, such as ``ovn``); False on
        409 or when the member is gone, as :meth:`set_member_weight`."""
        return self._put_member(pool_id, member_id, deadline, admin_state_up=bool(admin_state_up))

    def _put_member(self, pool_id: str, member_id: str, deadline: Deadline, **fields: Any) -> bool:
        what = ", ".join(f"{name} {value}" for name, value in sorted(fields.items()))
        try:
            self.client.call(lambda: self.api.update_member(member_id, pool_id, **fields),
                             f"PUT {what} on member {member_id}", deadline, kind=IDEMPOTENT)
        except Exception as exc:  # pylint: disable=broad-except
            if http_status(exc) in (404, 409):
                return False
            raise
        return True

    def listener_connections(self, listener_ids: list[str], deadline: Deadline) -> int | None:
        """The active connections of these listeners together (Octavia counts per listener, not per member);
        None when a listener's statistics cannot be read."""
        total = 0
        for listener_id in listener_ids:
            try:
                stats = self.client.call(lambda i=listener_id: self.api.get_listener_statistics(i),  # type: ignore[misc]
                                         f"GET statistics of listener {listener_id}", deadline)
            except Exception as exc:  # pylint: disable=broad-except
                if http_status(exc) in (403, 404, 405, 501):
                    return None
                raise
            total += int(getattr(stats, "active_connections", 0) or 0)
        return total


def pool_loadbalancer_ids(pool: dict[str, Any]) -> list[str]:
    return [lb["id"] if isinstance(lb, dict) else lb for lb in pool.get("loadbalancers") or []]
