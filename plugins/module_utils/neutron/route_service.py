# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Neutron requests of route_audit, each one API request under the retry policy.

Plain REST through the connection's network proxy (so the request count and the bodies are exactly
what is written here), returning plain dicts with Neutron's field names. Reading a router for an audit
is a constant number of requests however many nodes: the router, the extensions, the router's ports,
their subnets, the ports of those networks, and the project's quota.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Collection

from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.rest import ServiceBase
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import (
    FlightcontrolError,
    ResolveError,
    RouteLimitReached,
    RouteRejected,
    RouterChanged,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.retry import IDEMPOTENT, WriteTrace
from ansible_collections.flightcontrol.openstack.plugins.module_utils.neutron.revisions import if_match_put
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.http import (
    error_message,
    error_type,
    http_status,
)

if TYPE_CHECKING:
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline

PORT_FIELDS = ("id", "name", "network_id", "device_id", "device_owner", "fixed_ips", "mac_address",
               "allowed_address_pairs", "port_security_enabled", "revision_number")
# Errors that say the router has no room for more routes: Neutron before 2026.2 (max_routes) and since
# (the router_route quota).
LIMIT_ERRORS = ("RoutesExhausted", "OverQuota")


def classify_write_error(exc: BaseException) -> FlightcontrolError | None:
    """Turn a failed route write into RouteLimitReached / RouteRejected / RouterChanged, else None."""
    status = http_status(exc)
    kind = error_type(exc)
    if kind in LIMIT_ERRORS or (status == 409 and kind is None):
        return RouteLimitReached(f"{error_message(exc)} (HTTP {status} {kind or ''})")
    if status == 412:
        return RouterChanged(error_message(exc))
    if status == 400:
        return RouteRejected(error_message(exc), status=status, kind=kind)
    return None


class RouterService(ServiceBase):
    proxy = "network"

    # -- reads ---------------------------------------------------------------------------

    def find_router(self, name_or_id: str, deadline: Deadline, is_id: bool) -> dict[str, Any]:
        """The router by id or by name (one request); ResolveError when there is none or several."""
        if is_id:
            try:
                return self._get(f"/routers/{name_or_id}", f"GET router {name_or_id}", deadline)["router"]
            except Exception as exc:  # pylint: disable=broad-except
                if http_status(exc) != 404:
                    raise
                raise ResolveError(f"router {name_or_id} not found")
        found = self._get("/routers", f"list routers named {name_or_id}", deadline,
                          params={"name": name_or_id})["routers"]
        if not found:
            raise ResolveError(f"router {name_or_id} not found (no router of this project has that name)")
        if len(found) > 1:
            raise ResolveError(f"router name {name_or_id!r} is ambiguous: {len(found)} routers have it "
                               f"({', '.join(r['id'] for r in found)}); use the id")
        return found[0]

    def get_router(self, router_id: str, deadline: Deadline) -> dict[str, Any]:
        return self._get(f"/routers/{router_id}", f"GET router {router_id}", deadline)["router"]

    def extension_aliases(self, deadline: Deadline) -> set[str]:
        return set(e["alias"] for e in self._get("/extensions", "list network extensions", deadline)["extensions"])

    def router_ports(self, router_id: str, deadline: Deadline) -> list[dict[str, Any]]:
        return self._get("/ports", f"list ports of router {router_id}", deadline,
                         params={"device_id": router_id, "fields": ["id", "fixed_ips", "network_id"]})["ports"]

    def subnets(self, subnet_ids: Collection[str], deadline: Deadline) -> list[dict[str, Any]]:
        if not subnet_ids:
            return []
        return self._get("/subnets", "list the router's subnets", deadline,
                         params={"id": sorted(subnet_ids), "fields": ["id", "cidr", "network_id", "ip_version"]}
                         )["subnets"]

    def network_ports(self, network_ids: Collection[str], deadline: Deadline) -> list[dict[str, Any]]:
        """Every port on these networks (the nodes' ports are among them), one request."""
        if not network_ids:
            return []
        return self._get("/ports", "list ports of the router's networks", deadline,
                         params={"network_id": sorted(network_ids), "fields": list(PORT_FIELDS)})["ports"]

    def route_quota(self, project_id: str | None, deadline: Deadline) -> int | None:
        """The project's router_route quota (Neutron 2026.2+): an int (-1 unlimited), or None when the
        cloud has no such quota or does not let this user read it."""
        try:
            quota = self._get(f"/quotas/{project_id}", f"GET quota of project {project_id}", deadline)["quota"]
        except Exception as exc:  # pylint: disable=broad-except
            if http_status(exc) in (403, 404):
                return None
            raise
        value = quota.get("router_route")
        return value if isinstance(value, int) else None

    def get_port(self, port_id: str, deadline: Deadline) -> dict[str, Any]:
        return self._get(f"/ports/{port_id}", f"GET port {port_id}", deadline,
                         params={"fields": list(PORT_FIELDS)})["port"]

    # -- writes --------------------------------------------------------------------------

    def _put(self, path: str, body: dict[str, Any], what: str, deadline: Deadline,
             headers: dict[str, str] | None = None) -> dict[str, Any]:
        """One PUT (extraroute add/remove, a router update with If-Match: a replay is harmless)."""
        trace = WriteTrace()
        try:
            return self.client.call(lambda: self.api.put(path, json=body, headers=headers, raise_exc=True).json(),
                                    what, deadline, kind=IDEMPOTENT, trace=trace)
        except Exception as exc:  # pylint: disable=broad-except
            known = classify_write_error(exc)
            if known is None:
                raise
            if isinstance(known, RouterChanged):
                known.after_lost_answer = trace.maybe_committed
            raise known

    def add_routes(self, router_id: str, routes: list[dict[str, str]], deadline: Deadline) -> list[dict[str, str]]:
        """extraroute-atomic add; returns the router's routes afterwards."""
        return self._put(f"/routers/{router_id}/add_extraroutes", {"router": {"routes": routes}},
                         f"add {len(routes)} route(s) to router {router_id}", deadline)["router"]["routes"]

    def remove_routes(self, router_id: str, routes: list[dict[str, str]], deadline: Deadline) -> list[dict[str, str]]:
        """extraroute-atomic remove (a route already gone is no error); returns the routes afterwards."""
        return self._put(f"/routers/{router_id}/remove_extraroutes", {"router": {"routes": routes}},
                         f"remove {len(routes)} route(s) from router {router_id}", deadline)["router"]["routes"]

    def replace_routes(self, router_id: str, routes: list[dict[str, str]], revision: int | None,
                       deadline: Deadline) -> tuple[list[dict[str, str]], int | None]:
        """Plain router update of the whole list, only if the router is still at ``revision`` (when
        given); RouterChanged on 412. Returns (routes, revision) afterwards."""
        headers = {"If-Match": f"revision_number={revision}"} if revision is not None else None
        router = self._put(f"/routers/{router_id}", {"router": {"routes": routes}},
                           f"update the routes of router {router_id}", deadline, headers=headers)["router"]
        return router["routes"], router.get("revision_number")

    def update_address_pairs(self, port_id: str, pairs: list[dict[str, Any]], revision: int | None,
                             deadline: Deadline) -> Any:
        """Set the port's allowed_address_pairs if its revision is still ``revision``; None on 412
        (``LOST_ANSWER`` when the 412 came after our own attempt's lost answer)."""
        headers = {"If-Match": f"revision_number={revision}"} if revision is not None else None
        return if_match_put(self.client, lambda: self.api.put(
            f"/ports/{port_id}", json={"port": {"allowed_address_pairs": pairs}}, headers=headers,
            raise_exc=True).json()["port"], f"update allowed_address_pairs of port {port_id}", deadline)
