"""The Python API of minicloud; the command line is a thin layer over it.

    from minicloud import Minicloud      # or from minicloud.runtime.control import Minicloud
    cloud = Minicloud("/tmp/state")      # or Minicloud() to resolve the state folder
    cloud.up()
    cloud.set_octavia_mode("lost-member", members="*-member-3")
    cloud.add_fault("load-balancer", method="GET", path="/v2/lbaas/pools/*", status=429, retry_after=2, count=1)
    gate = cloud.add_fault("network", method="PUT", path="/v2.0/routers/*", gate=True)["id"]
    ...                                  # start the write, then
    cloud.wait_held(gate, 1)             # it is held: change things concurrently, then
    cloud.release_fault(gate)            # it goes through
    conn = cloud.connect()               # openstacksdk, as the demo user
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path

from minicloud.core import clouds
from minicloud.core.paths import StateDir, resolve_state_dir
from minicloud.core.settings import Settings
from minicloud.dataplane import loadrun, plane
from minicloud.dataplane.endpoints import Registry
from minicloud.kube import capo_mode
from minicloud.kube import seed as kube_seed
from minicloud.kube.controllers import capo, history
from minicloud.kube.controllers import rollout as decisions
from minicloud.octavia_provider import modes
from minicloud.route_controller.controller import RouteControllers
from minicloud.runtime import leftovers, processes
from minicloud.runtime.lifecycle import CloudStatus, Lifecycle, MinicloudError
from minicloud.seeding import cluster_network
from minicloud.seeding import drift as drifts
from minicloud.seeding import neutron_routers as routers
from minicloud.seeding import openstack as seed
from minicloud.traffic import hidden_extensions
from minicloud.traffic.faults import FaultRule
from minicloud.traffic.store import TrafficStore
from minicloud.upstream import classes as upstream_classes
from minicloud.upstream import clusters as upstream_clusters
from minicloud.upstream.control_plane import UpstreamControlPlane

__all__ = ["Minicloud", "MinicloudError"]

MODE_ACK_TIMEOUT = 30.0  # with the data plane, a mode is applied once health checks show it
# service type -> the service whose policy file ``set_policy`` writes
POLICY_SERVICES = {"load-balancer": "octavia"}


@dataclass(frozen=True)
class ClusterPlan:
    """One cluster to seed with OpenStack resources (see :meth:`Minicloud.create_capi_cluster`)."""

    name: str
    namespace: str
    control_plane: int
    workers: int
    api_version: str
    monitor: bool
    load_balancer: bool
    drift: list[str]
    lb_provider: str | None = None  # the load balancer's Octavia provider (None: Octavia's default, amphora)
    capo_api_version: str = "v1beta1"  # CAPO's API its OpenStackCluster and OpenStackMachines are written in

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


CAPO_API_VERSIONS = ("v1beta1", "v1beta2")


def check_capo_api_version(version: str) -> None:
    if version not in CAPO_API_VERSIONS:
        raise MinicloudError(f"capo_api_version must be one of {', '.join(CAPO_API_VERSIONS)}, not {version!r}")


class Minicloud:
    """One minicloud, identified by its state folder."""

    def __init__(self, state_dir: str | Path | None = None):
        self.state = StateDir(resolve_state_dir(state_dir))
        self._lifecycle = Lifecycle(self.state)

    @property
    def state_dir(self) -> Path:
        return self.state.root

    @property
    def clouds_yaml(self) -> Path:
        return self.state.clouds_yaml

    # -- lifecycle ---------------------------------------------------------------------

    def up(self, port_offset: int = 0, fresh: bool = False, timeout: float = 90.0,
           max_routes: int | None = None, kubernetes: str | None = None,
           capi_version: str | None = None) -> tuple[CloudStatus, str]:
        """Start the services (idempotent). ``fresh`` resets the data to the state right
        after the first initialisation. ``max_routes`` sets Neutron's per-router route limit
        (default 30, kept in the state folder). ``kubernetes``: ``emulated`` (default) or ``upstream`` (the real
        control plane, :mod:`minicloud.upstream`), fixed at the first ``up``; ``capi_version``: the Cluster API
        release the upstream plane runs, ``v1.13`` (default) or ``v1.12``, fixed at the first ``up`` too.
        Returns the status and a one-line summary."""
        return self._lifecycle.up(port_offset=port_offset, fresh=fresh, timeout=timeout, max_routes=max_routes,
                                  kubernetes=kubernetes, capi_version=capi_version)

    def down(self, purge: bool = False) -> list[str]:
        """Stop the processes this state folder started (logs stay unless ``purge``)."""
        return self._lifecycle.down(purge=purge)

    def status(self) -> CloudStatus:
        return self._lifecycle.status()

    def listening_ports(self) -> list[int]:
        """The TCP ports this cloud's processes listen on now (its services, load balancers, stand-ins)."""
        return sorted({port for item in leftovers.processes(self.state.root) for port in item.ports})

    def leftovers(self, ports: list[int] | tuple[int, ...] = ()) -> list[str]:
        """What still runs of this cloud (after ``down``): each of its processes, and each of ``ports`` (say, what
        :meth:`listening_ports` gave before ``down``) that something still listens on. Empty when nothing is."""
        return leftovers.report(self.state.root, list(ports))

    def env(self) -> str:
        return f"export OS_CLIENT_CONFIG_FILE={self.state.clouds_yaml}"

    def connect(self, cloud: str = clouds.CLOUD):
        """An openstacksdk connection: ``minicloud`` (demo member) or ``minicloud-admin``."""
        if not self.state.clouds_yaml.exists():
            raise MinicloudError(f"{self.state.clouds_yaml} does not exist: run 'up' first")
        return clouds.connect(self.state, cloud)

    # -- Octavia provider emulator ----------------------------------------------------

    def octavia_mode(self) -> dict:
        mode = modes.load(self.state.octavia_mode).to_dict()
        mode["applied"] = modes.applied_generation(self.state.octavia_mode_applied) >= mode["generation"]
        return mode

    def set_octavia_mode(self, name: str, members: str = "*", delay: float | None = None,
                         wait: bool = True) -> dict:
        """Switch the emulator's behaviour. With ``wait``, return once octavia-api applied it
        (existing objects reconciled), if it is running."""
        mode = modes.Mode.parse(name, members, delay)
        self.state.root.mkdir(parents=True, exist_ok=True)
        written = modes.save(self.state.octavia_mode, mode)
        if wait and self._octavia_running():
            deadline = time.monotonic() + MODE_ACK_TIMEOUT
            while modes.applied_generation(self.state.octavia_mode_applied) < written.generation:
                if time.monotonic() > deadline:
                    raise MinicloudError(f"octavia-api did not apply the mode within {MODE_ACK_TIMEOUT:.0f} s")
                time.sleep(0.1)
        return self.octavia_mode()

    def dataplane_settings(self) -> dict:
        """The load balancers' data plane settings (``check_interval_cap``: seconds, or None for the delay)."""
        return plane.load_settings(self.state)

    def set_dataplane(self, **changes) -> dict:
        """Change data plane settings; octavia-api renders every load balancer again."""
        return plane.save_settings(self.state, **changes)

    def lb_vip(self, lb: str, port: int = 6443) -> str:
        """``host:port`` on loopback where the load balancer ``lb``'s listener on ``port`` takes connections."""
        found = self._internal().load_balancer.find_load_balancer(lb, ignore_missing=True)
        if found is None:
            raise MinicloudError(f"no load balancer {lb!r}")
        address = Registry(self.state.root).vip(found.vip_address, port)
        if address is None:
            raise MinicloudError(f"load balancer {lb!r} has no listener on {port} in the data plane")
        return address

    def load_start(self, name: str, lb: str, rate: float = 20.0, clients: int = 4, watches: int = 2,
                   port: int = 6443, keepalive: int = 4, keepalive_rate: float = 5.0) -> dict:
        """Start a load generator through ``lb``'s VIP (see minicloud.dataplane.load): ``clients`` on a new
        connection per request (``rate`` a second in all), ``keepalive`` clients that keep their connection
        (``keepalive_rate`` a second each), ``watches``."""
        return loadrun.start(self.state.root, name, self.lb_vip(lb, port), lb, rate, clients, watches, keepalive,
                             keepalive_rate)

    def lb_sessions(self, lb: str) -> dict[str, int]:
        """Member id -> the client connections the member's server holds now in load balancer ``lb``'s data plane
        (HAProxy's ``show stat``, scur): how many connections an old server still holds after it left rotation."""
        found = self._internal().load_balancer.find_load_balancer(lb, ignore_missing=True)
        if found is None:
            raise MinicloudError(f"no load balancer {lb!r}")
        deadline = time.monotonic() + 10
        while True:
            try:
                return plane.sessions(self.state, found.id)
            except OSError:  # reloading: the new worker's stats socket is not there yet
                if time.monotonic() > deadline:
                    raise MinicloudError(f"the data plane of {lb!r} does not answer on its stats socket") from None
                time.sleep(0.1)

    def load_stop(self, name: str) -> bool:
        return loadrun.stop(self.state.root, name)

    def load_report(self, name: str, since: float | None = None, until: float | None = None) -> dict:
        """Requests and failures of a load generator (between epoch seconds ``since`` and ``until``)."""
        return loadrun.report(self.state.root, name, since, until)

    def _octavia_running(self) -> bool:
        return any(p.name == "octavia" and p.healthy for p in self.status().processes)

    # -- faults and request counts -----------------------------------------------------

    @property
    def traffic(self) -> TrafficStore:
        return TrafficStore(self.state.traffic_db)

    def add_fault(self, service: str, method: str = "*", path: str = "*", status: int | str | None = None,
                  retry_after: float | None = None, count: int | None = None, delay: float = 0.0,
                  gate: bool = False, after: bool = False, query: str | None = None) -> dict:
        """Add a fault rule; ``status`` is 401/429/500/502/503/504, ``"drop"`` or None (delay only).

        ``after``: the request reaches the service, which handles (commits) it; then, after ``delay``, the
        client gets ``status`` (or a dropped connection) instead of the service's answer, or with no status
        the answer itself, ``delay`` late (slower than a client's timeout: the write is done, the client gave
        up). Without ``after`` the fault comes before the service sees the request.

        ``gate``: hold matching requests (the first ``count`` of them, default all) until
        :meth:`release_fault` (or :meth:`clear_faults`), then let them through to the service; a request
        held longer than ``minicloud.traffic.faults.GATE_TIMEOUT`` (120 s) is answered 503. Returns the
        rule; its ``id`` is what :meth:`wait_held` and :meth:`release_fault` take. ``query``: ``key=value``
        pairs (joined with ``&``) the request's query string must hold, e.g. ``watch=true``."""
        rule = FaultRule(service=service, method=method, path=path, status=FaultRule.parse_status(status),
                         retry_after=retry_after, remaining=count, delay=delay, gate=gate, after=after, query=query)
        return self.traffic.add_rule(rule).to_dict()

    def faults(self) -> list[dict]:
        return [rule.to_dict() for rule in self.traffic.rules()]

    def clear_faults(self) -> int:
        """Remove every rule (gates release what they hold); returns how many there were."""
        return self.traffic.clear_rules()

    def release_fault(self, rule_id: int) -> dict:
        """Remove rule ``rule_id``, letting the requests it holds through; returns the rule as it was
        (``held``: how many requests it released)."""
        rule = self.traffic.release_rule(int(rule_id))
        if rule is None:
            raise MinicloudError(f"no fault rule {rule_id}")
        return rule.to_dict()

    def wait_held(self, rule_id: int, n: int = 1, timeout: float = 30.0) -> dict:
        """Wait until gate rule ``rule_id`` holds at least ``n`` requests; returns the rule."""
        deadline = time.monotonic() + timeout
        while True:
            rule = self.traffic.rule(int(rule_id))
            if rule is None:
                raise MinicloudError(f"no fault rule {rule_id}")
            if not rule.gate:
                raise MinicloudError(f"fault rule {rule_id} is not a gate")
            if rule.held >= n:
                return rule.to_dict()
            if time.monotonic() > deadline:
                raise MinicloudError(f"fault rule {rule_id} holds {rule.held} request(s), not {n}, "
                                     f"after {timeout:g} s")
            time.sleep(0.02)

    def hide_extension(self, alias: str) -> list[str]:
        """Make the service answer as an older one without API extension ``alias`` (see
        ``minicloud.traffic.hidden_extensions``); returns the hidden aliases."""
        self.traffic.hide_extension(hidden_extensions.service_of(alias), alias)
        return self.traffic.hidden_extensions()

    def restore_extensions(self, alias: str | None = None) -> list[str]:
        """Serve ``alias`` (default: every hidden extension) again; returns the aliases still hidden."""
        self.traffic.restore_extensions(alias)
        return self.traffic.hidden_extensions()

    def hidden_extensions(self) -> list[str]:
        return self.traffic.hidden_extensions()

    def policy(self, service: str = "load-balancer") -> dict:
        """The overrides of ``service``'s policy rules now in force (``set_policy``)."""
        return json.loads(self._policy_file(service).read_text() or "{}")

    def set_policy(self, service: str, rules: dict[str, str]) -> dict:
        """Override rules of ``service``'s own policy, which the service enforces from its next request on
        (oslo.policy reads the file again when it changes): ``{"os_load-balancer_api:loadbalancer:get_status":
        "!"}`` makes Octavia refuse its status tree with its own 403. Returns the overrides in force."""
        overrides = dict(self.policy(service), **rules)
        self._policy_file(service).write_text(json.dumps(overrides, indent=1) + "\n")
        return overrides

    def reset_policy(self, service: str = "load-balancer") -> None:
        """The service's default policy again."""
        if self.policy(service):
            self._policy_file(service).write_text("{}\n")

    def _policy_file(self, service: str) -> Path:
        if service not in POLICY_SERVICES:
            raise MinicloudError(f"no policy overrides for {service}: only for {', '.join(POLICY_SERVICES)}")
        return self.state.policy_file(POLICY_SERVICES[service])

    def request_counts(self, service: str | None = None, reset: bool = False) -> dict:
        """Counts by service, method and path template; ``reset`` zeroes them after reading."""
        counts = self.traffic.counts(service)
        if reset:
            self.traffic.reset_counts(service)
        return counts

    def _internal_request_total(self, since: dict | None = None) -> dict:
        """Requests counted so far by service (client and minicloud's own), minus ``since``."""
        counts = self.traffic.counts()
        totals: dict[str, int] = {}
        for section in ("requests", "internal"):
            for service, methods in counts.get(section, {}).items():
                totals[service] = totals.get(service, 0) + sum(n for paths in methods.values() for n in paths.values())
        if since is not None:
            totals = {k: v - since.get(k, 0) for k, v in totals.items() if v - since.get(k, 0)}
        return totals

    # -- seeding -----------------------------------------------------------------------

    def create_lb(self, name: str, members: int = 0, monitor: bool = False, member_port: int = 6443,
                  cidr: str = "10.0.0.0/24", timeout: float = 120.0) -> dict:
        """Create (as the demo user) a load balancer with listener, pool, optional monitor and
        members, wait until ACTIVE, and return the ids, names and addresses."""
        return seed.create_lb(self.connect(), name, members=members, monitor=monitor, member_port=member_port,
                              cidr=cidr, timeout=timeout)

    def delete_lb(self, name: str, timeout: float = 60.0) -> str:
        """Cascade-delete load balancer ``name`` and wait until it is gone; returns its id."""
        return seed.delete_lb(self.connect(), name, timeout=timeout)

    # -- servers -----------------------------------------------------------------------

    def _internal(self):
        """The demo user's connection for minicloud's own calls (not counted as client traffic)."""
        self.connect()  # the clouds.yaml check
        return clouds.connect(self.state, clouds.CLOUD, internal=True)

    def _write_instances(self, payload: dict) -> dict:
        return processes.run_seed(self.state, "nova", payload)

    def create_servers(self, names: list[str], network: str, ports: int = 1, port_security: bool = True,
                       error: bool = False) -> list[dict]:
        """Seed "booted" servers (as the demo user), each with ``ports`` real Neutron ports on
        ``network`` (created with a subnet if missing); ``error``: servers whose boot failed (status
        ERROR). Returns the servers with their ports."""
        return seed.create_servers(self._internal(), names, network, ports=ports, port_security=port_security,
                                   write_instances=self._write_instances, error=error)

    def delete_server(self, name: str) -> str:
        """Delete server ``name`` (name or id) and its ports; returns its id."""
        admin = clouds.connect(self.state, clouds.ADMIN_CLOUD, internal=True)
        return seed.delete_server(self._internal(), admin, name, write_instances=self._write_instances)

    def list_servers(self) -> list[dict]:
        return seed.list_servers(self._internal())

    def server_status(self, server: str) -> dict:
        """Server ``server`` (id) as Nova shows it: ``status`` (``ACTIVE``, ``SHUTOFF``...), ``vm_state``,
        ``task_state`` (``powering-off`` while Nova's stop waits for the guest) and ``power_state`` (1 running,
        4 shut down); read as the admin, who sees the extended attributes."""
        admin = clouds.connect(self.state, clouds.ADMIN_CLOUD, internal=True)
        found = admin.compute.get_server(server)
        return {"id": found.id, "status": found.status, "vm_state": found.vm_state, "task_state": found.task_state,
                "power_state": found.power_state}

    # -- routers (cluster routing) -------------------------------------------------------

    def create_router(self, name: str, network: str, cidr: str = routers.NODE_CIDR) -> dict:
        """Router ``name`` with an interface on ``network`` (created with a subnet for ``cidr`` if missing)."""
        return routers.create_router(self._internal(), name, network, cidr)

    def router(self, name: str) -> dict:
        return routers.show_router(self._internal(), name)

    def set_routes(self, name: str, replace: list[dict] | None = None, add: list[dict] | None = None,
                   remove: list[dict] | None = None) -> dict:
        """Replace (``[]`` clears), add or remove the router's routes as a client would."""
        return routers.set_routes(self._internal(), name, replace=replace, add=add, remove=remove)

    def create_nodes(self, router: str, count: int, **options) -> list[dict]:
        """Node ports with fixed addresses and pod CIDRs (see ``routers.create_nodes``)."""
        return routers.create_nodes(self._internal(), router, count, **options)

    def delete_router(self, name: str) -> str:
        return routers.delete_router(self._internal(), name)

    def route_controllers(self):
        """The emulated cloud route controllers (``minicloud.route_controller``): start, step, stop, periods."""

        return RouteControllers(self.state.root, self._internal, self._kube_admin)

    # -- Kubernetes and CAPI -----------------------------------------------------------

    @property
    def kubeconfig(self) -> Path:
        """The kubeconfig of the emulated Kubernetes API (context ``minicloud``)."""
        return self.state.root / "kubeconfig"

    def kube_client(self):
        """An official ``kubernetes`` client ApiClient for the emulated API."""
        from kubernetes import config

        self._kube_admin()  # the kubeconfig check
        return config.new_client_from_config(config_file=str(self.kubeconfig))

    def _kube_admin(self, target: bool = False):
        from minicloud.kube.admin import KubeAdmin  # needs the optional kubernetes client

        kubeconfig = self.target_kubeconfig if target else self.kubeconfig
        if not kubeconfig.exists():
            raise MinicloudError(f"{kubeconfig} does not exist: run 'up' first")
        return KubeAdmin(kubeconfig)

    @property
    def target_kubeconfig(self) -> Path:
        """The kubeconfig of the move target API (``kubernetes-target``, context ``minicloud``)."""
        return self.state.root / "kubeconfig-target"

    def _kube_call(self, action, *args, target: bool = False, **kwargs):
        """Run a KubeAdmin action (on the move target API with ``target``); its API and lookup errors
        become MinicloudError."""
        from kubernetes.client import ApiException

        try:
            return action(self._kube_admin(target), *args, **kwargs)
        except LookupError as exc:
            raise MinicloudError(str(exc)) from None
        except ApiException as exc:
            raise MinicloudError(f"Kubernetes API: {exc.status} {exc.reason}: {exc.body}") from None

    def seed_capi_providers(self, remove: bool = False, **versions) -> list[str]:
        """clusterctl's inventory and the providers' controller Deployments (``kube.providers.seed_providers``);
        with ``remove``, take away what was seeded."""
        from minicloud.kube import providers  # needs the optional kubernetes client

        return self._kube_call(providers.delete_providers if remove else providers.seed_providers, **versions)

    def capi_provider_mode(self) -> dict:
        mode = modes.load(capo_mode.mode_file(self.state.root), capo_mode.CapoMode).to_dict()
        mode["applied"] = modes.applied_generation(capo_mode.applied_file(self.state.root)) >= mode["generation"]
        return mode

    def set_capi_provider_mode(self, name: str, delay: float | None = None, wait: bool = True) -> dict:
        """Choose how the infrastructure provider reacts to a pause (block-move, silent, stuck). With
        ``wait``, return once the controllers applied it, if the Kubernetes API is running."""
        mode = capo_mode.CapoMode(name, capo_mode.DEFAULT_DELAY if delay is None else float(delay))
        self.state.root.mkdir(parents=True, exist_ok=True)
        written = modes.save(capo_mode.mode_file(self.state.root), mode)
        if wait and any(p.name == "kubernetes" and p.healthy for p in self.status().processes):
            deadline = time.monotonic() + MODE_ACK_TIMEOUT
            while modes.applied_generation(capo_mode.applied_file(self.state.root)) < written.generation:
                if time.monotonic() > deadline:
                    raise MinicloudError(f"the CAPI controllers did not apply the mode within {MODE_ACK_TIMEOUT:.0f} s")
                time.sleep(0.05)
        return self.capi_provider_mode()

    def create_capi_cluster(self, name: str, control_plane: int = 1, workers: int = 0, api_version: str = "v1beta2",
                            namespace: str = "default", openstack: bool = False, monitor: bool = False,
                            load_balancer: bool = True, drift: list[str] | None = None,
                            lb_provider: str | None = None, capo_api_version: str = "v1beta1",
                            class_name: str | None = None) -> dict:
        """Seed a provisioned CAPI cluster on OpenStack (Cluster, KCP, MachineDeployment, Machines,
        KubeadmConfigs, OpenStackCluster/Machines, Secrets, Nodes), CAPI kinds written at ``api_version``.

        ``openstack``: also create, as the demo user, what CAPO would have (see ``capo.seed_networks``):
        network and subnet, router, both managed security groups, one server (with a real port) per
        Machine, the API load balancer (listener 6443, pool, a TCP health monitor if ``monitor``, one
        ACTIVE member per control-plane Machine; none with ``load_balancer=False``), and a healthy pod
        network (pod CIDR rules, one route per Node). The controllers can then roll the control plane
        (:meth:`capi_rollout`; not without a load balancer). ``drift``: kinds of drift to leave on it
        (``minicloud.seeding.drift.KINDS``); the result's ``openstack.drift`` says what was drifted.
        ``lb_provider``: ``amphora`` or ``ovn``, the load balancer's provider as CAPO's
        ``spec.apiServerLoadBalancer.provider`` names it (None: Octavia's default, amphora).
        ``capo_api_version``: ``v1beta1`` (CAPO v0.14's shapes) or ``v1beta2``: the OpenStackCluster and
        OpenStackMachines as CAPO v0.15 writes them, after installing v0.15's CRDs on the plane (v1beta2 stored and
        served, v1beta1 served through conversion; :meth:`install_capo_crds`).
        ``class_name``: a ClusterClass cluster (the class and its templates, a Cluster with ``spec.topology``,
        reconciled by the real topology controller): the upstream plane only."""
        capo.check_provider(lb_provider)
        check_capo_api_version(capo_api_version)
        if class_name is not None and not self._upstream():
            raise MinicloudError("--class: ClusterClass clusters run on the real control plane only (start the cloud "
                                 "with 'up --kubernetes upstream'); the emulated plane has no topology controller")
        if self._upstream():
            if capo_api_version != "v1beta1":
                raise MinicloudError(
                    "--capo-api-version v1beta2 is for the emulated plane: a cluster on the upstream control plane "
                    "has no OpenStackCluster (CAPD's in-memory DevCluster is its infrastructure, the OpenStack side "
                    "an annotation), so there is no CAPO object to write in v1beta2")
            return self._create_upstream_cluster(name, namespace, control_plane, workers, api_version, openstack,
                                                 monitor, load_balancer, drift, lb_provider, class_name)
        kinds = drifts.check_kinds(drift or [])
        if kinds and not openstack:
            raise MinicloudError("drift needs openstack: there is nothing to drift without OpenStack resources")
        if not openstack:
            return self._kube_call(lambda admin: admin.create_cluster(name, namespace, control_plane, workers,
                                                                      api_version,
                                                                      capo_api_version=capo_api_version))
        plan = ClusterPlan(name, namespace, control_plane, workers, api_version, monitor, load_balancer, kinds,
                           lb_provider, capo_api_version)
        return self._seed_capi_clusters([plan])[0]

    def capo_crds(self, target: bool = False) -> dict:
        """The CAPO CRDs the (emulated) management cluster has (with ``target``: the move target API):
        ``apiVersion`` (v1beta1: CAPO v0.14's, v1beta2: v0.15's), ``release``, ``served`` and ``storage``."""
        return self._kube_call(lambda admin: admin.capo_crds(), target=target)

    def install_capo_crds(self, api_version: str, target: bool = False) -> dict:
        """Install CAPO's CRDs of ``api_version`` on the emulated management cluster (with ``target``: on the move
        target API): ``v1beta2`` (v0.15: v1beta2 and v1beta1 served, discovery prefers v1beta2) or back to
        ``v1beta1`` (v0.14; refused while an OpenStackCluster or OpenStackMachine is kept at v1beta2).
        ``create_capi_cluster(capo_api_version="v1beta2")`` installs v0.15's itself (on the main API)."""
        check_capo_api_version(api_version)
        if self._upstream():
            raise MinicloudError("the upstream control plane has no CAPO CRDs (its clusters run on CAPD's in-memory "
                                 "infrastructure); CAPO's API versions are the emulated plane's")
        return self._kube_call(lambda admin: admin.install_capo_crds(api_version), target=target)

    def _upstream(self) -> UpstreamControlPlane | None:
        """The real control plane, when this cloud runs one (``up --kubernetes upstream``)."""
        settings = Settings.load(self.state)
        return UpstreamControlPlane(self.state, settings) if settings is not None and settings.upstream else None

    def _create_upstream_cluster(self, name, namespace, control_plane, workers, api_version, openstack, monitor,
                                 load_balancer, drift, lb_provider=None, class_name=None) -> dict:
        unsupported = {"workers": workers, "drift": drift, "api_version other than v1beta2": api_version != "v1beta2",
                       "no openstack": not openstack, "no load balancer": not load_balancer}
        refused = [what for what, value in unsupported.items() if value]
        if refused:
            raise MinicloudError(f"a cluster on the upstream control plane is created with its OpenStack side and "
                                 f"a load balancer, control-plane Machines only, in v1beta2; not with "
                                 f"{', '.join(refused)}")
        if class_name is not None:
            try:
                upstream_classes.check_class_name(class_name)
            except ValueError as exc:
                raise MinicloudError(str(exc)) from None
        return upstream_clusters.create(self._upstream(), self._internal(), self._write_instances, name, namespace,
                                        control_plane, monitor, provider=lb_provider, class_name=class_name)

    def _seed_capi_clusters(self, plans: list[ClusterPlan], timeout: float = 300.0,
                            phases: dict | None = None) -> list[dict]:
        """Seed clusters with OpenStack resources: every network first, then every load balancer at once
        (one wait for all), then the Kubernetes objects, routes and drift. ``phases`` gets the seconds of
        each phase (``network``, ``load_balancers``, ``kubernetes``, ``routes_and_drift``)."""
        phases = {} if phases is None else phases
        clock = [time.monotonic()]

        def lap(phase: str) -> None:
            now = time.monotonic()
            phases[phase] = round(phases.get(phase, 0.0) + now - clock[0], 2)
            clock[0] = now

        conn = self._internal()
        external = cluster_network.external_network(conn)
        clusters = [{"namespace": plan.namespace, "cluster": plan.name,
                     "machines": kube_seed.control_plane_machine_names(plan.name, plan.namespace, plan.control_plane),
                     "workers": kube_seed.worker_machine_names(plan.name, plan.namespace, plan.workers)}
                    for plan in plans]
        resources = dict(zip((plan.key for plan in plans),
                             capo.seed_networks(conn, clusters, self._write_instances, external), strict=True))
        steps = {plan.key: capo.load_balancer_steps(conn, plan.namespace, plan.name, resources[plan.key],
                                                    cluster["machines"], plan.monitor, plan.lb_provider)
                 for plan, cluster in zip(plans, clusters, strict=True) if plan.load_balancer}
        lap("network")
        for key, found in capo.run_load_balancer_steps(conn, steps, timeout).items():
            resources[key].update(found)
        lap("load_balancers")
        results = []
        for plan in plans:
            found = resources[plan.key]
            created = self._kube_call(lambda admin, plan=plan, found=found: admin.create_cluster(
                plan.name, plan.namespace, plan.control_plane, plan.workers, plan.api_version, openstack=found,
                capo_api_version=plan.capo_api_version))
            lap("kubernetes")
            nodes = created.get("nodes") or []
            found["routes"] = capo.seed_routes(conn, found, nodes)
            found["drift"] = drifts.apply_drift(conn, found, nodes, plan.drift, kube_seed.kcp_name_of(plan.name),
                                               self._write_instances)
            lap("routes_and_drift")
            created["openstack"] = found
            results.append(created)
        return results

    def create_capi_fleet(self, count: int, prefix: str = "fleet", namespaces: list[str] | None = None,
                          api_versions: list[str] | None = None, control_plane: int = 1, workers: int = 0,
                          load_balancer: bool = True, drift_every: int = 0, drift: list[str] | None = None) -> dict:
        """``count`` clusters ``PREFIX-<i>`` (i from 1) seeded with OpenStack resources, spread round-robin
        over ``namespaces`` (default ``default``) and ``api_versions`` (default v1beta2); every
        ``drift_every``-th cluster (0: none) gets the ``drift`` kinds (default: all kinds). Returns
        ``{"clusters": [{name, namespace, apiVersion, drift}], "seconds", "phases", "requests"}``: the time
        taken (and by phase) and the API requests minicloud made for it, by service."""
        namespaces, api_versions = namespaces or ["default"], api_versions or ["v1beta2"]
        kinds = drifts.check_kinds(drifts.KINDS if drift is None else drift)
        plans = [ClusterPlan(f"{prefix}-{i}", namespaces[(i - 1) % len(namespaces)], control_plane, workers,
                             api_versions[(i - 1) % len(api_versions)], False, load_balancer,
                             kinds if drift_every and i % drift_every == 0 else [])
                 for i in range(1, count + 1)]
        before = self._internal_request_total()
        started = time.monotonic()
        phases: dict[str, float] = {}
        created = self._seed_capi_clusters(plans, phases=phases)
        seconds = time.monotonic() - started
        return {"clusters": [{"name": c["name"], "namespace": c["namespace"], "apiVersion": c["apiVersion"],
                              "drift": c["openstack"]["drift"]} for c in created],
                "seconds": round(seconds, 2), "phases": phases,
                "requests": self._internal_request_total(since=before)}

    def delete_capi_fleet(self, prefix: str = "fleet", namespaces: list[str] | None = None) -> list[str]:
        """Delete every cluster named ``PREFIX-<number>`` (in ``namespaces``; default all) with its OpenStack
        resources; ``namespace/name`` of each."""
        pattern = re.compile(rf"{re.escape(prefix)}-\d+")
        found = [(c["namespace"], c["name"]) for c in self.list_capi_clusters()
                 if pattern.fullmatch(c["name"]) and (not namespaces or c["namespace"] in namespaces)]
        for namespace, name in found:
            self.delete_capi_cluster(name, namespace)
        admin = clouds.connect(self.state, clouds.ADMIN_CLOUD, internal=True)
        capo.delete_openstack_many(self._internal(), admin, found, self._write_instances)
        return [f"{namespace}/{name}" for namespace, name in found]

    def delete_capi_openstack(self, name: str, namespace: str = "default") -> list[str]:
        """Remove the OpenStack resources of a cluster seeded with ``openstack`` (load balancer, servers,
        router, network, security groups); ``kind/id`` of each."""
        admin = clouds.connect(self.state, clouds.ADMIN_CLOUD, internal=True)
        return capo.delete_openstack(self._internal(), admin, namespace, name, self._write_instances)

    def capi_rollout(self, name: str, namespace: str = "default", capo_wait: str = "member") -> dict:
        """Start a rollout of the cluster's control plane (returns at once). ``capo_wait``: ``member``
        (CAPO v0.14 on: wait for the new member to be ACTIVE) or ``lb`` (older CAPO: only the LB)."""
        return self._kube_call(lambda admin: admin.start_rollout(name, namespace, capo_wait))

    def capi_rollout_status(self, name: str, namespace: str = "default") -> dict:
        """The controllers' view: phase (Idle, RollingOut, Completed), rollout number, capoWait,
        machines old/new/deleting, what it waits for, the last error."""
        status = history.read_status(self.state.root, namespace, name)
        if status is None:
            raise MinicloudError(f"no rollout status for cluster {name!r} in namespace {namespace!r} "
                                 "(not created with --openstack, or the controllers have not seen it yet)")
        return status

    def capi_history(self, name: str, namespace: str = "default", rollout: int | None = None) -> list[dict]:
        """The samples recorded during rollout ``rollout`` (default: the latest)."""
        return history.read_history(self.state.root, namespace, name, rollout)

    def capi_history_summary(self, name: str, namespace: str = "default", rollout: int | None = None) -> dict:
        """samples, minServing (and when), minActive, maxMembers, first/last time, final counts."""
        return decisions.summarize(self.capi_history(name, namespace, rollout))

    def delete_capi_cluster(self, name: str, namespace: str = "default", target: bool = False) -> list[str]:
        """Remove every object of cluster ``name`` (finalizers too) and its own API; returns ``Kind/name`` of
        each object. With ``target`` (a cluster moved there), the objects on the move target API, and the
        cluster's own API, which the main service serves."""
        if self._upstream() and not target:
            admin = clouds.connect(self.state, clouds.ADMIN_CLOUD, internal=True)
            return upstream_clusters.delete(self._upstream(), self._internal(), admin, self._write_instances, name,
                                            namespace)
        removed = self._kube_call(lambda admin: admin.delete_cluster(name, namespace), target=target)
        if target:
            self._kube_call(lambda admin: admin.remove_workload_api(name, namespace))
        return removed

    def list_capi_clusters(self, namespace: str | None = None, target: bool = False) -> list[dict]:
        return self._kube_call(lambda admin: admin.list_clusters(namespace), target=target)

    def workload_kubeconfig(self, name: str, namespace: str = "default") -> str:
        """The kubeconfig (YAML) of seeded cluster ``name``'s own API, the one its ``NAME-kubeconfig``
        Secret holds (server ``https://127.0.0.1:PORT/clusters/NAMESPACE/NAME``, this cloud's CA)."""
        return self._kube_call(lambda admin: admin.workload_kubeconfig(name, namespace))

    # Nodes: ``cluster`` names a seeded cluster whose own API holds them (in ``namespace``); None: the
    # management API's.

    def create_node(self, name: str, pod_cidr: str | None, address: str | None, labels: dict | None = None,
                    cluster: str | None = None, namespace: str = "default") -> dict:
        """A Ready Node with ``spec.podCIDR(s)`` and an InternalIP (None: without)."""
        return self._kube_call(lambda admin: admin.create_node(name, pod_cidr, address, labels, cluster=cluster,
                                                               namespace=namespace))

    def delete_node(self, name: str, cluster: str | None = None, namespace: str = "default") -> None:
        self._kube_call(lambda admin: admin.delete_node(name, cluster=cluster, namespace=namespace))

    def list_nodes(self, cluster: str | None = None, namespace: str = "default") -> list[dict]:
        return self._kube_call(lambda admin: admin.list_nodes(cluster=cluster, namespace=namespace))
