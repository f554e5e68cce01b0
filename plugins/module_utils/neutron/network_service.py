# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Neutron requests of secgroup_ensure (security groups, rules, ports), each one API request under the retry policy.

Plain REST through the connection's service proxies (so the request count and the bodies are exactly
what is written here), returning plain dicts with the services' own field names. The proxies do not
raise on an HTTP error by default: every call passes ``raise_exc=True`` so faults reach the retry policy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import ResolveError
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.retry import WriteTrace
from ansible_collections.flightcontrol.openstack.plugins.module_utils.neutron.revisions import if_match_put
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.http import error_type, http_status
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.rest import ServiceBase, deleted

if TYPE_CHECKING:
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline

# Ports are listed for this many servers a request (device_id=...&device_id=...): about 7 KB of query,
# under the 8 KB request-line limit of common proxies.
DEVICE_IDS_PER_LIST = 150
PORT_FIELDS = ("id", "name", "device_id", "security_groups", "port_security_enabled", "revision_number")


class NetworkService(ServiceBase):
    proxy = "network"

    # -- security groups -----------------------------------------------------------------

    def find_group(self, name_or_id: str, deadline: Deadline, is_id: bool) -> dict[str, Any] | None:
        """The group (with its rules) by id or by name; None when there is none. One request."""
        if is_id:
            try:
                return self._get(f"/security-groups/{name_or_id}", f"GET security group {name_or_id}",
                                 deadline)["security_group"]
            except Exception as exc:  # pylint: disable=broad-except
                if http_status(exc) == 404:
                    return None
                raise
        found = self._get("/security-groups", f"list security groups named {name_or_id}", deadline,
                          params={"name": name_or_id})["security_groups"]
        if len(found) > 1:
            raise ResolveError(f"security group name {name_or_id!r} is ambiguous: {len(found)} groups have it "
                               f"({', '.join(g['id'] for g in found)}); use the id")
        return found[0] if found else None

    def groups_named(self, name: str, deadline: Deadline) -> list[dict[str, Any]]:
        """Every group of this name (with its rules), however many; one request."""
        return self._get("/security-groups", f"list security groups named {name}", deadline,
                         params={"name": name})["security_groups"]

    def delete_group(self, group_id: str, deadline: Deadline) -> bool:
        """Delete a group: True when this call deleted it, False when it was already gone."""
        return deleted(self.client, lambda: self.api.delete(f"/security-groups/{group_id}", raise_exc=True),
                       f"delete security group {group_id}", deadline)

    def group_ids_by_name(self, names: list[str], deadline: Deadline) -> dict[str, str]:
        """name -> id for the remote groups named in rules; one request for all names."""
        if not names:
            return {}
        found = self._get("/security-groups", "list security groups by name", deadline,
                          params={"name": sorted(names), "fields": ["id", "name"]})["security_groups"]
        result = {}
        for group in found:
            if group["name"] in result:
                raise ResolveError(f"security group name {group['name']!r} (a remote_group) is ambiguous; use the id")
            result[group["name"]] = group["id"]
        return result

    def existing_group_ids(self, ids: list[str], deadline: Deadline) -> set[str]:
        """The ids among ``ids`` that are security groups this project sees; one request for all."""
        if not ids:
            return set()
        found = self._get("/security-groups", "list security groups by id", deadline,
                          params={"id": sorted(ids), "fields": ["id"]})["security_groups"]
        return set(g["id"] for g in found)

    def create_group(self, name: str, description: str | None, deadline: Deadline) -> dict[str, Any]:
        """Create the group; after a lost answer the group of this name is looked for and adopted (never a
        second group of the name). Returns the group."""
        body = {"security_group": {"name": name, "description": description or ""}}
        return self.client.create(
            lambda: self.api.post("/security-groups", json=body, raise_exc=True).json()["security_group"],
            lambda: self.find_group(name, deadline, is_id=False), f"create security group {name}", deadline).value

    def create_rule(self, body: dict[str, Any], deadline: Deadline,
                    matches: Callable[[dict[str, Any]], bool]) -> tuple[dict[str, Any] | None, bool]:
        """Create a rule; after a lost answer the group's rule that ``matches`` (the planned rule's tuple) is
        looked for and adopted. Returns (rule, True) when this call made it (the rule is None when Neutron
        said it exists after our own lost answer and it could not be read), or (None, False) when Neutron
        says somebody else's rule exists (409)."""
        group_id = body["security_group_id"]

        def find():
            rules = self._get("/security-group-rules", f"list rules of security group {group_id}", deadline,
                              params={"security_group_id": group_id})["security_group_rules"]
            return next((r for r in rules if matches(r)), None)

        trace = WriteTrace()
        try:
            created = self.client.create(
                lambda: self.api.post("/security-group-rules", json={"security_group_rule": body},
                                      raise_exc=True).json()["security_group_rule"],
                find, "create security group rule", deadline, trace)
        except Exception as exc:  # pylint: disable=broad-except
            if http_status(exc) == 409 and error_type(exc) == "SecurityGroupRuleExists":
                if trace.maybe_committed:  # ours: our first attempt made it, its answer was lost
                    return find(), True
                return None, False
            raise
        return created.value, True

    def delete_rule(self, rule_id: str, deadline: Deadline) -> bool:
        """Delete a rule: True when this call deleted it (a 404 after our own lost answer included), False
        when it was already gone."""
        return deleted(self.client, lambda: self.api.delete(f"/security-group-rules/{rule_id}", raise_exc=True),
                       f"delete security group rule {rule_id}", deadline)

    # -- servers and ports ---------------------------------------------------------------

    def list_ports(self, device_ids: list[str], deadline: Deadline) -> list[dict[str, Any]]:
        """The ports of these servers: one request per DEVICE_IDS_PER_LIST servers."""
        ports = []
        ids = sorted(set(device_ids))
        for start in range(0, len(ids), DEVICE_IDS_PER_LIST):
            chunk = ids[start:start + DEVICE_IDS_PER_LIST]
            ports += self._get("/ports", f"list ports of {len(chunk)} servers", deadline,
                               params={"device_id": chunk, "fields": list(PORT_FIELDS)})["ports"]
        return ports

    def get_port(self, port_id: str, deadline: Deadline) -> dict[str, Any]:
        return self._get(f"/ports/{port_id}", f"GET port {port_id}", deadline,
                         params={"fields": list(PORT_FIELDS)})["port"]

    def update_port_groups(self, port_id: str, groups: list[str], revision: int | None, deadline: Deadline) -> Any:
        """Set the port's security groups only if its revision is still ``revision`` (If-Match).
        Returns the updated port, or None when the port changed meanwhile (412), or ``LOST_ANSWER`` when the
        412 came after an attempt whose answer was lost (the change may be ours: read the port to know)."""
        headers = {"If-Match": f"revision_number={revision}"}
        body = {"port": {"security_groups": list(groups)}}
        return if_match_put(self.client, lambda: self.api.put(
            f"/ports/{port_id}", json=body, headers=headers, raise_exc=True).json()["port"],
            f"update security groups of port {port_id}", deadline)
