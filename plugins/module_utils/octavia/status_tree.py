# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Octavia's status tree read as one pool: pure, plain dicts in and out.

``GET /v2/lbaas/loadbalancers/{id}/status`` answers the load balancer with its listeners, their pools and
every member's id, name, address, protocol_port and both statuses in one request (the load-balancer read rule
allows it). A pool appears under each listener that uses it, and not at all when no listener does: then the
pool has to be read with the member list.
"""

from __future__ import annotations

from typing import Any

#: What a poll needs of each member; the status tree carries these and nothing else.
MEMBER_FIELDS = ("id", "name", "address", "protocol_port", "provisioning_status", "operating_status")
LOADBALANCER_FIELDS = ("id", "name", "provisioning_status", "operating_status")


class TreeLacks(Exception):
    """The status tree does not carry what a poll needs (the text says what); read the member list instead."""


def status_path(lb_id: str) -> str:
    """The status tree's path, relative to the load-balancer endpoint's /v2."""
    return f"/lbaas/loadbalancers/{lb_id}/status"


def _complete(obj: dict[str, Any], fields: tuple[str, ...], what: str) -> dict[str, Any]:
    missing = [f for f in fields if obj.get(f) is None and f != "name"]
    if missing:
        raise TreeLacks(f"the status tree gives no {', '.join(missing)} for {what}")
    view = dict((f, obj.get(f)) for f in fields)
    view["name"] = view["name"] or None
    return view


def pool_in_tree(answer: dict[str, Any], pool_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(load balancer, members) of pool ``pool_id`` in a status-tree answer, with MEMBER_FIELDS and
    LOADBALANCER_FIELDS; raises TreeLacks when the pool is on no listener or a field is missing. An empty name
    (how the tree shows an unnamed object) is None, as in the member list."""
    loadbalancer = ((answer or {}).get("statuses") or {}).get("loadbalancer")
    if not isinstance(loadbalancer, dict):
        raise TreeLacks("the status tree has no load balancer")
    for listener in loadbalancer.get("listeners") or []:
        for pool in listener.get("pools") or []:
            if pool.get("id") == pool_id:
                members = [_complete(m, MEMBER_FIELDS, f"member {m.get('id')}") for m in pool.get("members") or []]
                return _complete(loadbalancer, LOADBALANCER_FIELDS, "the load balancer"), members
    raise TreeLacks("the pool is on no listener of the load balancer (the status tree shows pools under listeners)")
