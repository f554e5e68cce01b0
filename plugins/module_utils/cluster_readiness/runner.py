# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The runner of cluster_readiness: read what each view needs (a part that cannot be read becomes
``plan.Unknown``), judge it with ``plan``, mark the findings the user named as blocking, and fail only on those.
The module file gives the argument spec."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, List, Mapping, Optional

from ansible_collections.flightcontrol.openstack.plugins.module_utils.cluster_readiness import plan
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.objects import (
    CLUSTER_NAME_LABEL,
    CORE_GROUP,
    dig,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.service import CapiService, choose_version
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.client import status_message
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.deployments import list_deployments
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.health_monitor import (
    monitor_fields,
    window_check,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.service import (
    OctaviaService,
    pool_loadbalancer_ids,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.http import http_status
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import (
    ModuleFailure,
    NotServed,
    ResolveError,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.names import check_cluster
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.options import ModuleOptions, ModuleRunner
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.openstack_module_base import (
    OpenStackKubernetesModule,
)

INVENTORY_GROUP = "clusterctl.cluster.x-k8s.io"
INVENTORY_VERSION = "v1alpha3"
#: Answers that make a view unknown rather than the run failed: not allowed, not there.
UNREADABLE = (403, 404)
#: A step of the run: (the Cluster's objects read, or None without a Cluster; views, findings and the result's data
#: it adds to).
Step = Callable[[Any, plan.Views, list[plan.Finding], dict[str, Any]], None]


@dataclass(frozen=True)
class ClusterReadinessOptions(ModuleOptions):
    """What cluster_readiness was asked: the runner reads nothing else."""

    name: Optional[str]
    namespace: str
    pool: Optional[str]
    monitor_max_window: int
    fail_on: List[str]
    fail_on_severity: Optional[str]
    timeout: int
    openstack: bool


def openstack_given(params: Mapping[str, Any], environ: Optional[Mapping[str, str]] = None) -> bool:
    """Whether an OpenStack connection was asked for: ``cloud`` or ``auth``, OS_CLOUD, or a ``pool``."""
    environ = os.environ if environ is None else environ
    return bool(params.get("cloud") or params.get("auth") or params.get("pool") or environ.get("OS_CLOUD"))


def unreadable(exc: BaseException) -> Optional[str]:
    """Why a read is a view's unknown (a refusal or a missing kind), or None when it is a failure of the run."""
    if isinstance(exc, (NotServed, ResolveError)):
        return str(exc)
    if getattr(exc, "status", None) in UNREADABLE and hasattr(exc, "body"):
        return f"HTTP {getattr(exc, 'status')}: {status_message(exc)}"
    if http_status(exc) in UNREADABLE:
        return f"HTTP {http_status(exc)}: {exc}"
    return None


class ClusterReadinessRunner(ModuleRunner):
    """cluster_readiness' work. ``module`` is the module base it runs in (an ``OpenStackKubernetesModule``);
    ``options`` what was asked."""

    module: OpenStackKubernetesModule
    options: ClusterReadinessOptions

    def __init__(self, module: OpenStackKubernetesModule, options: ClusterReadinessOptions) -> None:
        super().__init__(module, options)
        self.capi: Any = None  # the CapiService, set by read_cluster()

    def read(self, what: str, func: Callable[[], Any]) -> plan.Read:
        """``func()``, or ``plan.Unknown`` naming ``what`` when the API refuses it or does not serve it."""
        try:
            return func()
        except Exception as exc:  # pylint: disable=broad-except
            reason = unreadable(exc)
            if reason is None:
                raise
            return plan.Unknown(f"{what}: {reason}")

    def run(self) -> None:
        options = self.options
        refused = plan.unknown_codes(options.fail_on)
        if refused:
            raise ModuleFailure(f"fail_on names no finding code: {', '.join(refused)} "
                                f"(codes: {', '.join(plan.CODES)})")
        check_cluster(options.name, options.namespace)
        objects = self.read_cluster() if options.name else None
        views: plan.Views = {}
        findings: list[plan.Finding] = []
        data: dict[str, Any] = {}
        if not options.name:
            views.update((view, {"status": plan.SKIPPED, "reason": "no Cluster (name) given"})
                         for view in plan.VIEWS if view not in plan.OPENSTACK_VIEWS)
        steps: list[Step] = [self.versions_views, self.cluster_views] if options.name else []
        for step in steps + [self.openstack_views]:
            step(objects, views, findings, data)
        blocking = plan.mark_blocking(findings, options.fail_on, options.fail_on_severity)
        what = f"Cluster {options.namespace}/{options.name}" if options.name else f"pool {options.pool}"
        title = f"Readiness of {what}"
        result = dict(data, changed=False, findings=findings, views=views, blocking=blocking, ready=not blocking,
                      support=plan.SUPPORT, summary=plan.summary(title, findings, views))
        if blocking:
            messages = "; ".join(f["message"] for f in findings if f["blocking"])
            raise ModuleFailure(f"{title} is not ready: blocking finding(s) {messages}", **result)
        self.module.exit(**result)

    def read_cluster(self) -> dict[str, Any]:
        """The Cluster, its control plane (or Unknown), infrastructure summary and Machines (or Unknown)."""
        options, deadline = self.options, self.deadline
        name = options.name or ""  # run() reads the Cluster only when it is named
        self.capi = capi = CapiService(self.module.connect_kubernetes())
        contract = choose_version(capi.discover(deadline))
        cluster = capi.get_cluster(name, options.namespace, contract, deadline)
        where = f"of Cluster {options.namespace}/{options.name}"
        control_plane = self.read("the controlPlaneRef " + where, lambda: capi.get_ref(
            dig(cluster, "spec", "controlPlaneRef"), options.namespace, contract, deadline, "controlPlaneRef " + where))
        infrastructure = self.read("the infrastructureRef " + where, lambda: capi.get_ref(
            dig(cluster, "spec", "infrastructureRef"), options.namespace, contract, deadline,
            "infrastructureRef " + where))
        machines = self.read("Machines " + where, lambda: capi.list_kind(
            CORE_GROUP, contract, "Machine", options.namespace, f"{CLUSTER_NAME_LABEL}={name}",
            deadline))
        health_checks = self.read("MachineHealthChecks in namespace " + options.namespace, lambda: capi.list_kind(
            CORE_GROUP, contract, "MachineHealthCheck", options.namespace, None, deadline))
        return dict(cluster=cluster, contract=contract, control_plane=control_plane, machines=machines,
                    infrastructure=infrastructure, health_checks=health_checks)

    def read_providers(self) -> plan.Read:
        capi = self.capi
        if INVENTORY_VERSION not in (capi.served.get(INVENTORY_GROUP) or []):
            return plan.Unknown(f"clusterctl's inventory (providers.{INVENTORY_GROUP}/{INVENTORY_VERSION}) is not "
                                "served: providers not installed by clusterctl, or not visible")
        return self.read("listing clusterctl's Provider objects", lambda: capi.list_across(
            INVENTORY_GROUP, INVENTORY_VERSION, "providers", [], None, self.deadline))

    def read_deployments(self, providers: plan.Read) -> plan.Read:
        """Every Deployment; where listing all namespaces is refused, those of the providers' namespaces."""
        kube = self.capi.kube
        found = self.read("listing Deployments in all namespaces", lambda: list_deployments(kube, self.deadline))
        if not plan.is_unknown(found) or plan.is_unknown(providers):
            return found
        records: list[dict[str, Any]] = []
        for namespace in sorted(set(dig(p, "metadata", "namespace") for p in providers if dig(p, "metadata",
                                                                                              "namespace"))):
            part = self.read("listing Deployments in " + namespace, partial(list_deployments, kube, self.deadline, namespace))
            if plan.is_unknown(part):
                return part
            records.extend(part)
        return records

    def versions_views(self, objects: Optional[dict[str, Any]], views: plan.Views,
                       findings: list[plan.Finding], data: dict[str, Any]) -> None:
        providers = self.read_providers()
        deployments = self.read_deployments(providers)
        rows, found, status = plan.judge_versions(providers, deployments)
        self.add(views, findings, "versions", found, status)
        orc, found, orc_status = plan.judge_orc(rows, deployments, self.capi.served, status)
        self.add(views, findings, "orc", found, orc_status)
        data.update(providers=rows, orc=orc)

    def cluster_views(self, objects: dict[str, Any], views: plan.Views, findings: list[plan.Finding],
                      data: dict[str, Any]) -> None:
        rollout, found, status = plan.judge_control_plane(objects["control_plane"])
        topology, managed = plan.judge_topology(objects["cluster"], objects["control_plane"])
        self.add(views, findings, "control_plane", found + managed,
                 plan.FINDINGS if managed and status == plan.OK else status)
        rows, found, status = plan.judge_health_checks(objects["health_checks"], objects["machines"],
                                                       self.options.name or "")
        self.add(views, findings, "health_checks", found, status)
        written = [objects["cluster"]] + [o for o in (objects["control_plane"], objects["machines"],
                                                      objects["health_checks"]) if not plan.is_unknown(o) and o]
        flat: list[Any] = []
        for item in written:
            flat.extend(item if isinstance(item, list) else [item])
        writers, found, status = plan.judge_writers(flat)
        self.add(views, findings, "v1beta1_writers", found, status)
        data.update(control_plane=rollout, machine_health_checks=rows, v1beta1_writers=writers, topology=topology)

    def pool_name(self, objects: Optional[dict[str, Any]]) -> tuple[Optional[str], Optional[str]]:
        """(the pool to judge, why there is none): ``pool``, else CAPO's API pool of the infrastructure cluster."""
        if self.options.pool or not objects:
            return self.options.pool, "no pool given"
        return plan.api_pool(None, objects["infrastructure"])

    def read_pool(self, pool_name: str) -> tuple[OctaviaService, dict[str, Any]]:
        """(the Octavia service, the pool): one request (by id or name)."""
        octavia = OctaviaService(self.module.connect())
        return octavia, octavia.find_pool(pool_name, self.deadline)

    def read_monitor(self, octavia: OctaviaService, pool: dict[str, Any], pool_name: str) -> dict[str, Any]:
        monitor_id = pool.get("healthmonitor_id")
        monitor = octavia.get_health_monitor(monitor_id, self.deadline) if monitor_id else None
        return window_check(pool.get("name") or pool_name, monitor_fields(monitor), self.options.monitor_max_window)

    def read_load_balancer(self, octavia: OctaviaService, pool: dict[str, Any], pool_name: str) -> plan.Read:
        """The pool's load balancer as ``id``, ``name``, ``provider`` (one request), or Unknown without one."""
        ids = pool_loadbalancer_ids(pool)
        if not ids:
            return plan.Unknown(f"pool {pool_name} belongs to no load balancer")
        found = octavia.get_loadbalancer(ids[0], self.deadline)
        return dict((key, found.get(key)) for key in ("id", "name", "provider"))

    def openstack_reads(self, objects: Optional[dict[str, Any]]) -> tuple[plan.Read, plan.Read, Optional[str]]:
        """(monitor check, load balancer, pool name): the API pool read once, then its monitor and its load
        balancer; each part that cannot be read is ``plan.Unknown``."""
        pool_name, why_none = self.pool_name(objects)
        if not self.options.openstack:
            why_none = "no OpenStack connection given (cloud, auth or OS_CLOUD)"
        if not self.options.openstack or not pool_name:
            return plan.Unknown(str(why_none)), plan.Unknown(str(why_none)), pool_name  # a reason whenever no pool
        found = self.read(f"the pool {pool_name}", lambda: self.read_pool(pool_name))
        if plan.is_unknown(found):
            return found, found, pool_name
        octavia, pool = found
        check = self.read(f"the health monitor of pool {pool_name}",
                          lambda: self.read_monitor(octavia, pool, pool_name))
        loadbalancer = self.read(f"the load balancer of pool {pool_name}",
                                 lambda: self.read_load_balancer(octavia, pool, pool_name))
        return check, loadbalancer, pool_name

    def openstack_views(self, objects: Optional[dict[str, Any]], views: plan.Views,
                        findings: list[plan.Finding], data: dict[str, Any]) -> None:
        """The ``monitor`` view (its words on the provider read) and the ``load_balancer`` view."""
        check, loadbalancer, pool_name = self.openstack_reads(objects)
        asked = self.options.openstack
        provider = None if plan.is_unknown(loadbalancer) else loadbalancer.get("provider")
        check, found, status = plan.judge_monitor(check, asked=asked, provider=provider)
        self.add(views, findings, "monitor", found, status)
        row, found, status = plan.judge_load_balancer(loadbalancer, asked=asked)
        self.add(views, findings, "load_balancer", found, status)
        data.update(monitor=dict(check, pool=pool_name) if check else None,
                    load_balancer=dict(row, pool=pool_name) if row else None)

    @staticmethod
    def add(views: plan.Views, findings: list[plan.Finding], name: str, found: list[plan.Finding],
            status: str) -> None:
        unknown = [f["message"] for f in found if f["code"].endswith("_unknown") and f["view"] == name]
        views[name] = {"status": status, "reason": unknown[0] if unknown and status == plan.UNKNOWN else None}
        findings.extend(found)
