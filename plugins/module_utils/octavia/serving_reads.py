# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The reads a ``serving.ServingRule`` and its history need, through ``OctaviaService`` (requests only).

The rule needs the load balancer's provider (one GET) and, on ``ovn``, the pool's health monitor (one GET). The
history needs each member's ``created_at``, which the status tree does not carry: one member list whenever a
sample shows a member the run has not seen, on ``ovn`` with a monitor only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.serving import (
    OVN,
    ServingHistory,
    ServingRule,
    provider_name,
)

if TYPE_CHECKING:
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.service import OctaviaService


def read_rule(octavia: OctaviaService, pool: dict[str, Any], lb_id: str, deadline: Deadline,
              provider: Optional[str] = None) -> ServingRule:
    """The pool's rule: ``provider`` when the caller read it already, else the load balancer's; the monitor on ovn."""
    if provider is None:
        provider = octavia.get_loadbalancer(lb_id, deadline).get("provider")
    monitor_id = pool.get("healthmonitor_id")
    monitor = None
    if monitor_id and provider_name(provider) == OVN:
        monitor = octavia.get_health_monitor(monitor_id, deadline)
    return ServingRule(provider, monitor, has_monitor=bool(monitor_id))


def observe(octavia: OctaviaService, history: ServingHistory, pool_id: str, members: list[dict[str, Any]],
            now: float, deadline: Deadline) -> None:
    """One sample of ``members`` into ``history``, with the creation times the sample lacks (one member list)."""
    created = None
    if history.missing_created(members):
        created = dict((m.get("id"), m.get("created_at")) for m in octavia.list_members(pool_id, deadline))
    history.observe(members, now, created)
