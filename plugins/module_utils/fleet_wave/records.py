# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The records of a fleet run on the management cluster (ConfigMaps, through ``kubernetes.configmaps``): the run's
progress, ``flightcontrol-fleet-run-<run>`` (its plan and each cluster's outcome), and the fleet's halt
(``kubernetes.fleet_halt``). Every write is made on what was just read: a lost race (409) is read again and
applied again, so slices of one run writing at the same moment never lose each other's outcomes."""

from __future__ import annotations

import datetime
import json
import re
from typing import Any, Callable, Optional

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.configmaps import (
    ConfigMapService,
    RecordConflict,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.fleet_halt import (
    halt_body,
    HALT_NAME,
    read_halt,
)

RUN_PREFIX = "flightcontrol-fleet-run-"
RUN_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,200}[a-z0-9])?$")
LABELS = {"app.kubernetes.io/managed-by": "flightcontrol.openstack", "app.kubernetes.io/component": "fleet-run"}
#: Reads and writes after a lost race before the write is given up (other slices kept writing).
RACE_ATTEMPTS = 8


def run_problem(run: Any) -> Optional[str]:
    if not isinstance(run, str) or not RUN_NAME.match(run):
        return (f"run {run!r} must be lower-case letters, digits and '-' (it names the ConfigMap {RUN_PREFIX}<run>), "
                "e.g. awx-42")
    return None


def iso(epoch: float) -> str:
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def read_run(configmap: Optional[dict[str, Any]]) -> Optional[dict[str, Any]]:
    """``{plan, outcomes, resource_version}`` of a run's ConfigMap, None when there is none."""
    if configmap is None:
        return None
    data = configmap.get("data") or {}
    try:
        return dict(plan=json.loads(data.get("plan") or "null"), outcomes=json.loads(data.get("outcomes") or "{}"),
                    resource_version=(configmap.get("metadata") or {}).get("resourceVersion"))
    except ValueError as exc:
        raise ModuleFailure(f"ConfigMap {(configmap.get('metadata') or {}).get('name')} is no fleet run record "
                            f"({exc}): remove it or give another run")


def run_body(name: str, namespace: str, plan: Any, outcomes: dict[str, Any],
             resource_version: Optional[str] = None) -> dict[str, Any]:
    metadata = dict(name=name, namespace=namespace, labels=dict(LABELS))
    if resource_version:
        metadata["resourceVersion"] = resource_version
    return dict(apiVersion="v1", kind="ConfigMap", metadata=metadata,
                data=dict(plan=json.dumps(plan, sort_keys=True), outcomes=json.dumps(outcomes, sort_keys=True)))


class FleetRecords:
    """The run's record and the fleet's halt, in ``namespace``; ``kube`` a ``KubernetesClient``."""

    def __init__(self, kube: Any, namespace: str, run: str) -> None:
        self.maps = ConfigMapService(kube)
        self.namespace = namespace
        self.name = RUN_PREFIX + run
        self.run = run

    def read(self, deadline: Any) -> Optional[dict[str, Any]]:
        return read_run(self.maps.get(self.name, self.namespace, deadline))

    def halt(self, deadline: Any) -> Optional[dict[str, Any]]:
        return read_halt(self.maps.get(HALT_NAME, self.namespace, deadline))

    def start(self, plan: dict[str, Any], deadline: Any, replace: Optional[dict[str, Any]] = None) -> Optional[dict[str, Any]]:
        """Create the run's record with ``plan`` (or replace ``replace``, a finished run of the same name); the
        record that stands afterwards (another slice's, when it created it first)."""
        try:
            if replace is None:
                self.maps.create(run_body(self.name, self.namespace, plan, {}), deadline)
            else:
                self.maps.replace(run_body(self.name, self.namespace, plan, {}, replace["resource_version"]),
                                  deadline)
        except RecordConflict:
            pass
        return self.read(deadline)

    def update(self, change: Callable[[dict[str, Any]], Any], deadline: Any) -> dict[str, Any]:
        """Apply ``change(outcomes)`` (it edits the dict in place) to the record, again after each lost race."""
        for dummy in range(RACE_ATTEMPTS):
            record = self.read(deadline)
            if record is None:
                raise ModuleFailure(f"the fleet run's record ConfigMap {self.namespace}/{self.name} is gone (removed "
                                    "by hand?): nothing more is recorded")
            change(record["outcomes"])
            try:
                self.maps.replace(run_body(self.name, self.namespace, record["plan"], record["outcomes"],
                                           record["resource_version"]), deadline)
            except RecordConflict:
                continue
            return record
        raise ModuleFailure(f"the fleet run's record {self.namespace}/{self.name} kept changing while it was written "
                            f"({RACE_ATTEMPTS} attempts)")

    def write_halt(self, wave: int, reason: str, failed: list[str], now: float, by: Optional[str],
                   deadline: Any) -> Optional[dict[str, Any]]:
        """Halt the fleet; the halt that stands afterwards (another slice's, when it wrote it first)."""
        try:
            self.maps.create(halt_body(self.namespace, self.run, wave, reason, failed, iso(now), by), deadline)
        except RecordConflict:
            pass
        return self.halt(deadline)

    def lift(self, deadline: Any) -> Any:
        return self.maps.delete(HALT_NAME, self.namespace, deadline)
