# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The start of a rollout on a topology-managed (ClusterClass) Cluster: through the Cluster's
``spec.topology.controlPlane.rollout.after``, never by patching the control plane, whose spec the topology
controller owns. Where the running Cluster API has no such field (v1.12), the run is refused before any write:
a server-side dry-run of the patch tells, as its answer keeps the field only where the Cluster's schema has it.
The decisions are ``capi/topology.py`` and ``machines.rollout_start``."""

from __future__ import annotations

import datetime
from typing import Any, Optional

from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi import topology
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.service import CapiService
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.machines import (
    TOPOLOGY_START,
    format_time,
    rollout_start,
    rollout_time,
)


class TopologyStart:
    """The Cluster's side of the start (``capi``: a ``CapiService``; ``cluster``: the Cluster as read)."""

    def __init__(self, capi: CapiService, cluster: dict[str, Any]) -> None:
        self.capi = capi
        self.cluster = cluster

    @property
    def managed(self) -> bool:
        return topology.is_managed(self.cluster)

    @property
    def label(self) -> str:
        metadata = self.cluster.get("metadata") or {}
        return f"Cluster {metadata.get('namespace')}/{metadata.get('name')}"

    def check(self, now: datetime.datetime, deadline: Deadline) -> None:
        """Before any write, on a topology-managed Cluster: refuse when this Cluster API would drop the rollout
        field (a dry run, which persists nothing and runs the webhooks as the real patch will)."""
        if not self.managed:
            return
        text = format_time(rollout_time(now))
        answer = self.capi.patch_cluster(
            self.cluster, topology.rollout_after_patch(text),
            f"checking that {self.label} takes {topology.ROLLOUT_AFTER_FIELD} (dry run)", deadline, dry_run=True)
        if not topology.rollout_field_kept(answer, text):
            raise ModuleFailure(topology.no_rollout_field(self.cluster), changed=False,
                                topology=topology.topology_view(self.cluster))

    def start(self, kcp: Optional[dict[str, Any]], moment: datetime.datetime,
              deadline: Deadline) -> tuple[str, Optional[dict[str, Any]]]:
        """Write the start where ``machines.rollout_start`` says; returns the target (``cluster`` or
        ``control_plane``) and, for the Cluster, the Cluster as patched (None: the caller patches the control
        plane)."""
        target, patch = rollout_start(self.cluster, kcp, moment)
        if target != TOPOLOGY_START:
            return target, None
        patched = self.capi.patch_cluster(
            self.cluster, patch, f"starting the rollout of {self.label} through {topology.ROLLOUT_AFTER_FIELD}",
            deadline)
        return target, patched
