# -*- coding: utf-8 -*-
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The runner of cluster_readiness: read what each view needs (a part that cannot be read becomes
``plan.Unknown``), judge it with ``plan``, mark the findings the user named as blocking, and fail only on those.
The module file gives the argument spec."""

import os
from dataclasses import dataclass
from typing import List, Optional

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

INVENTORY_GROUP = "clusterctl.cluster.x-k8s.io"
INVENTORY_VERSION = "v1alpha3"
#: Answers that make a view unknown rather than the run failed: not allowed, not there.
UNREADABLE = (403, 404)


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


def openstack_given(params, environ=None):
    """Whether an OpenStack connection was asked for: ``cloud`` or ``auth``, OS_CLOUD, or a ``pool``."""
    environ = os.environ if environ is None else environ
    return bool(params.get("cloud") or params.get("auth") or params.get("pool") or environ.get("OS_CLOUD"))


def unreadable(exc):
    """Why a read is a view's unknown (a refusal or a missing kind), or None when it is a failure of the run."""
    if isinstance(exc, (NotServed, ResolveError)):
        return str(exc)
    if getattr(exc, "status", None) in UNREADABLE and hasattr(exc, "body"):
        return "HTTP %s: %s" % (exc.status, status_message(exc))
    if http_status(exc) in UNREADABLE:
        return "HTTP %s: %s" % (http_status(exc), exc)
    return None


class ClusterReadinessRunner(ModuleRunner):
    """cluster_readiness' work. ``module`` is the module base it runs in (an ``OpenStackKubernetesModule``);
    ``options`` what was asked."""

    def __init__(self, module, options):
        super().__init__(module, options)
        self.capi = None

    def read(self, what, func):
        """``func()``, or ``plan.Unknown`` naming ``what`` when the API refuses it or does not serve it."""
        try:
            return func()
        except Exception as exc:  # pylint: disable=broad-except
            reason = unreadable(exc)
            if reason is None:
                raise
            return plan.Unknown("%s: %s" % (what, reason))

    def run(self):
        options = self.options
        refused = plan.unknown_codes(options.fail_on)
        if refused:
            raise ModuleFailure("fail_on names no finding code: %s (codes: %s)" % (
                ", ".join(refused), ", ".join(plan.CODES)))
        check_cluster(options.name, options.namespace)
        objects = self.read_cluster() if options.name else None
        views, findings, data = {}, [], {}
        if not options.name:
            views.update((view, {"status": plan.SKIPPED, "reason": "no Cluster (name) given"})
                         for view in plan.VIEWS if view not in plan.OPENSTACK_VIEWS)
        steps = [self.versions_views, self.cluster_views] if options.name else []
        for step in steps + [self.openstack_views]:
            step(objects, views, findings, data)
        blocking = plan.mark_blocking(findings, options.fail_on, options.fail_on_severity)
        title = "Readiness of %s" % ("Cluster %s/%s" % (options.namespace, options.name) if options.name
                                     else "pool %s" % options.pool)
        result = dict(data, changed=False, findings=findings, views=views, blocking=blocking, ready=not blocking,
                      support=plan.SUPPORT, summary=plan.summary(title, findings, views))
        if blocking:
            raise ModuleFailure("%s is not ready: blocking finding(s) %s" % (title, "; ".join(
                f["message"] for f in findings if f["blocking"])), **result)
        self.module.exit(**result)

    def read_cluster(self):
        """The Cluster, its control plane (or Unknown), infrastructure summary and Machines (or Unknown)."""
        options, deadline = self.options, self.deadline
        self.capi = capi = CapiService(self.module.connect_kubernetes())
        capi.discover(deadline)
        contract = choose_version(capi.served)
        cluster = capi.get_cluster(options.name, options.namespace, contract, deadline)
        where = "of Cluster %s/%s" % (options.namespace, options.name)
        control_plane = self.read("the controlPlaneRef " + where, lambda: capi.get_ref(
            dig(cluster, "spec", "controlPlaneRef"), options.namespace, contract, deadline, "controlPlaneRef " + where))
        infrastructure = self.read("the infrastructureRef " + where, lambda: capi.get_ref(
            dig(cluster, "spec", "infrastructureRef"), options.namespace, contract, deadline,
            "infrastructureRef " + where))
        machines = self.read("Machines " + where, lambda: capi.list_kind(
            CORE_GROUP, contract, "Machine", options.namespace, "%s=%s" % (CLUSTER_NAME_LABEL, options.name),
            deadline))
        health_checks = self.read("MachineHealthChecks in namespace " + options.namespace, lambda: capi.list_kind(
            CORE_GROUP, contract, "MachineHealthCheck", options.namespace, None, deadline))
        return dict(cluster=cluster, contract=contract, control_plane=control_plane, machines=machines,
                    infrastructure=infrastructure, health_checks=health_checks)

    def read_providers(self):
        capi = self.capi
        if INVENTORY_VERSION not in (capi.served.get(INVENTORY_GROUP) or []):
            return plan.Unknown("clusterctl's inventory (providers.%s/%s) is not served: providers not installed "
                                "by clusterctl, or not visible" % (INVENTORY_GROUP, INVENTORY_VERSION))
        return self.read("listing clusterctl's Provider objects", lambda: capi.list_across(
            INVENTORY_GROUP, INVENTORY_VERSION, "providers", [], None, self.deadline))

    def read_deployments(self, providers):
        """Every Deployment; where listing all namespaces is refused, those of the providers' namespaces."""
        kube = self.capi.kube
        found = self.read("listing Deployments in all namespaces", lambda: list_deployments(kube, self.deadline))
        if not plan.is_unknown(found) or plan.is_unknown(providers):
            return found
        records = []
        for namespace in sorted(set(dig(p, "metadata", "namespace") for p in providers if dig(p, "metadata",
                                                                                              "namespace"))):
            part = self.read("listing Deployments in " + namespace,
                             lambda where=namespace: list_deployments(kube, self.deadline, where))
            if plan.is_unknown(part):
                return part
            records.extend(part)
        return records

    def versions_views(self, objects, views, findings, data):
        providers = self.read_providers()
        deployments = self.read_deployments(providers)
        rows, found, status = plan.judge_versions(providers, deployments)
        self.add(views, findings, "versions", found, status)
        orc, found, orc_status = plan.judge_orc(rows, deployments, self.capi.served, status)
        self.add(views, findings, "orc", found, orc_status)
        data.update(providers=rows, orc=orc)

    def cluster_views(self, objects, views, findings, data):
        rollout, found, status = plan.judge_control_plane(objects["control_plane"])
        topology, managed = plan.judge_topology(objects["cluster"], objects["control_plane"])
        self.add(views, findings, "control_plane", found + managed,
                 plan.FINDINGS if managed and status == plan.OK else status)
        rows, found, status = plan.judge_health_checks(objects["health_checks"], objects["machines"],
                                                       self.options.name)
        self.add(views, findings, "health_checks", found, status)
        written = [objects["cluster"]] + [o for o in (objects["control_plane"], objects["machines"],
                                                      objects["health_checks"]) if not plan.is_unknown(o) and o]
        flat = []
        for item in written:
            flat.extend(item if isinstance(item, list) else [item])
        writers, found, status = plan.judge_writers(flat)
        self.add(views, findings, "v1beta1_writers", found, status)
        data.update(control_plane=rollout, machine_health_checks=rows, v1beta1_writers=writers, topology=topology)

    def pool_name(self, objects):
        """(the pool to judge, why there is none): ``pool``, else CAPO's API pool of the infrastructure cluster."""
        if self.options.pool or not objects:
            return self.options.pool, "no pool given"
        return plan.api_pool(None, objects["infrastructure"])

    def read_pool(self, pool_name):
        """(the Octavia service, the pool): one request (by id or name)."""
        octavia = OctaviaService(self.module.connect())
        return octavia, octavia.find_pool(pool_name, self.deadline)

    def read_monitor(self, octavia, pool, pool_name):
        monitor_id = pool.get("healthmonitor_id")
        monitor = octavia.get_health_monitor(monitor_id, self.deadline) if monitor_id else None
        return window_check(pool.get("name") or pool_name, monitor_fields(monitor), self.options.monitor_max_window)

    def read_load_balancer(self, octavia, pool, pool_name):
        """The pool's load balancer as ``id``, ``name``, ``provider`` (one request), or Unknown without one."""
        ids = pool_loadbalancer_ids(pool)
        if not ids:
            return plan.Unknown("pool %s belongs to no load balancer" % pool_name)
        found = octavia.get_loadbalancer(ids[0], self.deadline)
        return dict((key, found.get(key)) for key in ("id", "name", "provider"))

    def openstack_reads(self, objects):
        """(monitor check, load balancer, pool name): the API pool read once, then its monitor and its load
        balancer; each part that cannot be read is ``plan.Unknown``."""
        pool_name, why_none = self.pool_name(objects)
        if not self.options.openstack:
            why_none = "no OpenStack connection given (cloud, auth or OS_CLOUD)"
        if not self.options.openstack or not pool_name:
            return plan.Unknown(why_none), plan.Unknown(why_none), pool_name
        found = self.read("the pool %s" % pool_name, lambda: self.read_pool(pool_name))
        if plan.is_unknown(found):
            return found, found, pool_name
        octavia, pool = found
        check = self.read("the health monitor of pool %s" % pool_name,
                          lambda: self.read_monitor(octavia, pool, pool_name))
        loadbalancer = self.read("the load balancer of pool %s" % pool_name,
                                 lambda: self.read_load_balancer(octavia, pool, pool_name))
        return check, loadbalancer, pool_name

    def openstack_views(self, objects, views, findings, data):
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
    def add(views, findings, name, found, status):
        unknown = [f["message"] for f in found if f["code"].endswith("_unknown") and f["view"] == name]
        views[name] = {"status": status, "reason": unknown[0] if unknown and status == plan.UNKNOWN else None}
        findings.extend(found)
