"""Bring the services up, check them, bring them down."""

from __future__ import annotations

import dataclasses
import fcntl
import json
import shutil
import socket
import sqlite3
import subprocess
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from minicloud.core import clouds
from minicloud.core.paths import StateDir
from minicloud.core.settings import CAPI_VERSIONS, DEFAULT_CAPI_VERSION, EMULATED, HOST, Settings
from minicloud.dataplane import plane as dataplane
from minicloud.runtime import processes
from minicloud.services import all_services
from minicloud.services import keystone as keystone_service
from minicloud.services import neutron as neutron_service
from minicloud.services.base import Service
from minicloud.services.octavia import Octavia
from minicloud.upstream.binaries import UpstreamError
from minicloud.upstream.control_plane import APISERVER, PLANES, UpstreamControlPlane

AGENT = "octavia-driver-agent"
INITIALIZED_MARKER = "initialized"
LOG_TAIL_LINES = 40
PORT_SETTLE_SECONDS = 5.0


class MinicloudError(RuntimeError):
    """A failure with a message meant for the person running minicloud."""


@dataclass
class ProcessStatus:
    name: str
    pid: int | None
    port: int | None  # None for the driver agent, which listens on unix sockets
    endpoint: str
    healthy: bool

    def to_dict(self) -> dict:
        return {"name": self.name, "pid": self.pid, "port": self.port, "endpoint": self.endpoint,
                "healthy": self.healthy}


@dataclass
class CloudStatus:
    state_dir: str
    processes: list[ProcessStatus] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        return bool(self.processes) and all(p.healthy for p in self.processes)

    def to_dict(self) -> dict:
        return {
            "state_dir": self.state_dir,
            "healthy": self.healthy,
            "processes": [p.to_dict() for p in self.processes],
        }


def _http_answers(url: str, timeout: float = 2.0, context=None) -> bool:
    request = urllib.request.Request(url, headers={"User-Agent": clouds.INTERNAL_APP})
    try:
        urllib.request.urlopen(request, timeout=timeout, context=context).close()
    except urllib.error.HTTPError:
        return True  # any HTTP answer means the server is serving
    except (OSError, ValueError):
        return False
    return True


def _port_free(port: int) -> bool:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
    return True


def _socket_listening(path: Path) -> bool:
    """The driver agent's socket exists. (Connecting to probe it would leave a listener
    child spinning: the agent reads a closed connection forever.)"""
    return path.is_socket()


def _log_tail(state: StateDir, name: str) -> str:
    try:
        lines = state.log(name).read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join(lines[-LOG_TAIL_LINES:])


class Lifecycle:
    """up / down / status of one state folder."""

    def __init__(self, state: StateDir):
        self.state = state

    # -- status ------------------------------------------------------------------------

    def status(self) -> CloudStatus:
        settings = Settings.load(self.state)
        result = CloudStatus(state_dir=str(self.state.root))
        if settings is None:
            return result
        for service in all_services(self.state, settings):
            record = processes.find(self.state, service.name)
            healthy = record is not None and _http_answers(service.url + "/", context=service.client_ssl_context())
            result.processes.append(
                ProcessStatus(service.name, record and record.pid, service.port, service.url, healthy))
        octavia = Octavia(self.state, settings)
        record = processes.find(self.state, AGENT)
        healthy = record is not None and _socket_listening(octavia.sockets["status"])
        result.processes.append(
            ProcessStatus(AGENT, record and record.pid, None, str(octavia.sockets["status"]), healthy))
        if settings.upstream:
            for plane in PLANES:
                result.processes += self._upstream_status(UpstreamControlPlane(self.state, settings, plane))
        return result

    def _upstream_status(self, plane: UpstreamControlPlane) -> list[ProcessStatus]:
        """The real control plane's processes, each with its pinned version in the name."""
        answers = plane.ready()
        found = []
        for component in plane.components():
            record = processes.find(self.state, component.name)
            healthy = record is not None and (answers or not component.name.startswith(APISERVER))
            found.append(ProcessStatus(f"{component.name} {component.version}", record and record.pid, None,
                                       component.endpoint, healthy))
        return found

    # -- up ----------------------------------------------------------------------------

    def up(self, port_offset: int = 0, fresh: bool = False, timeout: float = 90.0,
           max_routes: int | None = None, kubernetes: str | None = None,
           capi_version: str | None = None) -> tuple[CloudStatus, str]:
        """Start whatever is not running. Returns the status and a one-line summary.

        The first ``up`` of a state folder initialises the data (cold start) and keeps a
        template of it; ``fresh`` throws the data away and restores that template.
        ``max_routes`` (kept in the settings) is Neutron's per-router route limit; changing it
        restarts Neutron. ``kubernetes`` (``emulated``, the default, or ``upstream``) and ``capi_version``
        (the upstream plane's Cluster API release, ``v1.13`` by default) are fixed when the state folder is
        first set up.
        """
        self.state.root.mkdir(parents=True, exist_ok=True)
        with self._lock():
            started = time.monotonic()
            deadline = started + timeout
            settings = self._settings(port_offset, kubernetes, capi_version)
            if max_routes is not None and max_routes != settings.max_routes:
                settings = self._change_max_routes(settings, max_routes)
            current = self.status()
            if current.healthy and not fresh:
                return current, "minicloud is already up; nothing to do"
            kind = "warm"
            if fresh:
                self._stop_all()
                if self.state.template.exists():
                    self._restore_template()
                    kind = "fresh"
                else:
                    (self.state.root / INITIALIZED_MARKER).unlink(missing_ok=True)
            services = all_services(self.state, settings)
            for service in services:
                service.write_config()
            clouds.write_clouds_yaml(self.state, settings)
            cold = self._initialized_services() != sorted(s.name for s in services)
            if cold:
                kind = "cold"
                self._stop_all()
                self._initialize(services, deadline)
            self._start_missing(services)
            try:
                self._wait_ready(services, settings, deadline, bootstrap=cold)
                if settings.upstream:
                    self._upstream_up([UpstreamControlPlane(self.state, settings, p) for p in PLANES], fresh, deadline)
            except UpstreamError as exc:
                self._stop_all()
                raise MinicloudError(str(exc)) from None
            except BaseException:
                self._stop_all()  # a cloud that could not come up is stopped whole; the logs stay
                raise
            status = self._settled_status(deadline)
            elapsed = time.monotonic() - started
            self._write_status_file(status, up_seconds=round(elapsed, 1), start=kind)
            return status, f"minicloud is up ({kind} start, {elapsed:.1f} s); state in {self.state.root}"

    def _settled_status(self, deadline: float) -> CloudStatus:
        """The status once every process that answered during the start answers its probe again: on a busy
        machine a probe of 2 s can miss a service that is serving. A process that is gone, or one still not
        answering after 30 s (or at the deadline), is shown as it is."""
        end = min(deadline, time.monotonic() + 30)
        while True:
            status = self.status()
            gone = any(p.pid is None for p in status.processes)
            if status.healthy or gone or time.monotonic() >= end:
                return status
            time.sleep(0.5)

    def _upstream_up(self, planes: list[UpstreamControlPlane], fresh: bool, deadline: float) -> None:
        """The main plane, then the move target's (on the main plane's etcd)."""
        if fresh:  # the real API servers keep their objects in etcd: a fresh cloud starts with an empty one
            for plane in reversed(planes):
                plane.stop()
            _remove(planes[0].folder / "etcd")
        for plane in planes:
            if not plane.credentials.exist():
                plane.initialize()
            plane.write_config()
            plane.up(deadline)

    def _start_missing(self, services: list[Service]) -> None:
        missing = [s for s in services if processes.find(self.state, s.name) is None]
        # Right after a down, the kernel may hold a port for a moment longer: give it a few seconds.
        settle = time.monotonic() + PORT_SETTLE_SECONDS
        while any(not _port_free(s.port) for s in missing) and time.monotonic() < settle:
            time.sleep(0.2)
        taken = [f"{s.port} ({s.name})" for s in missing if not _port_free(s.port)]
        if taken:
            raise MinicloudError(
                f"port(s) {', '.join(taken)} in use by another process (another minicloud? "
                "stop it, or use a fresh state folder with --port-offset)"
            )
        for service in missing:
            processes.spawn(self.state, service.name, "serve", service.name)
        if processes.find(self.state, AGENT) is None:
            processes.spawn(self.state, AGENT, "agent", "octavia")

    def _wait_ready(self, services: list[Service], settings: Settings, deadline: float, bootstrap: bool) -> None:
        """Wait for every process; on a cold start also register users, catalog and seed data."""
        keystone, neutron, octavia, nova, glance, *kubernetes = services  # no Kubernetes service: upstream
        self._wait_http(keystone, deadline)
        if bootstrap:
            admin = clouds.connect(self.state, clouds.ADMIN_CLOUD, internal=True, fresh=True)
            catalog = {s.service_type: (s.name, s.name, s.catalog_url) for s in (neutron, octavia, nova, glance)}
            keystone_service.register(admin, settings, catalog)
        self._wait_http(neutron, deadline)
        self._wait_http(octavia, deadline)
        self._wait_http(nova, deadline)
        self._wait_http(glance, deadline)
        for kube in kubernetes:  # the move target too
            self._wait_http(kube, deadline)
        self._wait_socket(AGENT, octavia.sockets["status"], deadline)
        if bootstrap:  # a new connection: the first one's token predates the catalog entries
            neutron_service.seed(clouds.connect(self.state, clouds.ADMIN_CLOUD, internal=True, fresh=True))
            self._save_template(services)
            self._mark_initialized(services)

    def _initialized_services(self) -> list[str] | None:
        """The services whose data this state folder holds (a folder from before a service joined
        minicloud lacks it, and gets a cold start)."""
        try:
            return sorted((self.state.root / INITIALIZED_MARKER).read_text().split())
        except FileNotFoundError:
            return None

    def _mark_initialized(self, services: list[Service], folder: Path | None = None) -> None:
        marker = (folder or self.state.root) / INITIALIZED_MARKER
        marker.write_text("\n".join(sorted(s.name for s in services)) + "\n")

    def _settings(self, port_offset: int, kubernetes: str | None = None, capi_version: str | None = None) -> Settings:
        if capi_version is not None and capi_version not in CAPI_VERSIONS:
            raise MinicloudError(f"capi_version {capi_version!r}: the upstream plane runs Cluster API "
                                 f"{' or '.join(CAPI_VERSIONS)}")
        existing = Settings.load(self.state)
        if existing is None:
            settings = Settings(port_offset=port_offset, kubernetes=kubernetes or EMULATED,
                                capi_version=capi_version or DEFAULT_CAPI_VERSION)
            settings.save(self.state)
            return settings
        if kubernetes and existing.kubernetes != kubernetes:
            raise MinicloudError(
                f"{self.state.root} was set up with the {existing.kubernetes} Kubernetes control plane; "
                "run 'down --purge' to start over with another"
            )
        if capi_version and existing.capi_version != capi_version:
            raise MinicloudError(
                f"{self.state.root} was set up with Cluster API {existing.capi_version}; "
                "run 'down --purge' to start over with another"
            )
        if port_offset and existing.port_offset != port_offset:
            raise MinicloudError(
                f"{self.state.root} was set up with port offset {existing.port_offset}; "
                "run 'down --purge' to start over with another"
            )
        return existing

    def _change_max_routes(self, settings: Settings, max_routes: int) -> Settings:
        """Keep the new route limit in the settings; a running Neutron is stopped to start again with it."""
        if max_routes < 1:
            raise MinicloudError(f"max_routes must be 1 or more, got {max_routes}")
        settings = dataclasses.replace(settings, max_routes=max_routes)
        settings.save(self.state)
        processes.stop(self.state, neutron_service.Neutron.name)
        return settings

    @contextmanager
    def _lock(self):
        self.state.run.mkdir(parents=True, exist_ok=True)
        with open(self.state.run / "lifecycle.lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield

    def _initialize(self, services: list[Service], deadline: float) -> None:
        """Run each service's offline initialisation in parallel processes, all within ``deadline``;
        none is left running when one fails or time runs out."""
        for service in services:
            for path in service.data_paths():
                _remove(path)
        tasks = {s.name: processes.run_to_completion(self.state, f"{s.name}-init", "init", s.name) for s in services}
        try:
            for name, proc in tasks.items():
                try:
                    code = proc.wait(timeout=max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    raise MinicloudError(
                        f"initialising {name} did not finish in time; end of {self.state.log(name + '-init')}:\n"
                        + _log_tail(self.state, f"{name}-init")
                    ) from None
                if code != 0:
                    raise MinicloudError(
                        f"initialising {name} failed; end of {self.state.log(name + '-init')}:\n"
                        + _log_tail(self.state, f"{name}-init")
                    )
        finally:
            for proc in tasks.values():
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()

    def _wait_http(self, service: Service, deadline: float) -> None:
        context = service.client_ssl_context()
        self._wait(service.name, lambda: _http_answers(service.url + "/", timeout=1, context=context), deadline)

    def _wait_socket(self, name: str, path: Path, deadline: float) -> None:
        self._wait(name, lambda: _socket_listening(path), deadline)

    def _wait(self, name: str, ready, deadline: float) -> None:
        while not ready():
            if processes.find(self.state, name) is None:
                raise MinicloudError(f"{name} exited; end of {self.state.log(name)}:\n{_log_tail(self.state, name)}")
            if time.monotonic() > deadline:
                raise MinicloudError(
                    f"{name} did not come up in time; end of {self.state.log(name)}:\n{_log_tail(self.state, name)}"
                )
            time.sleep(0.2)

    # -- template ----------------------------------------------------------------------

    def _save_template(self, services: list[Service]) -> None:
        """Snapshot the freshly initialised data (sqlite backup API: safe while serving)."""
        template = self.state.template
        _remove(template)
        for service in services:
            for path in service.data_paths():
                target = template / path.relative_to(self.state.root)
                target.parent.mkdir(parents=True, exist_ok=True)
                if path.is_dir():
                    shutil.copytree(path, target)
                else:
                    with sqlite3.connect(path) as src, sqlite3.connect(target) as dst:
                        src.backup(dst)
        self._mark_initialized(services, template)

    def _restore_template(self) -> None:
        template = self.state.template
        for source in sorted(p for p in template.rglob("*") if p.is_file()):
            relative = source.relative_to(template)
            target = self.state.root / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)  # the template's own marker too: it says which services it holds
        self.state.traffic_db.unlink(missing_ok=True)
        for suffix in ("-wal", "-shm"):
            Path(str(self.state.traffic_db) + suffix).unlink(missing_ok=True)
        self.state.octavia_mode.unlink(missing_ok=True)

    def _write_status_file(self, status: CloudStatus, **facts) -> None:
        """The JSON ``status`` file: the last known status plus facts about the last change."""
        data = status.to_dict()
        data.update(facts, updated_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
        self.state.status_file.write_text(json.dumps(data, indent=2) + "\n")

    # -- down --------------------------------------------------------------------------

    def down(self, purge: bool = False) -> list[str]:
        """Stop the processes this state folder started. Returns the names stopped."""
        if not self.state.root.exists():
            return []
        with self._lock():
            stopped = self._stop_all()
            if purge:
                _remove(self.state.root)
            elif self.state.status_file.exists():
                self._write_status_file(self.status(), stopped=stopped)
        return stopped

    def _stop_all(self) -> list[str]:
        stopped = []
        settings = Settings.load(self.state)
        names = [AGENT]
        if settings is not None:
            if settings.upstream:
                for plane in reversed(PLANES):
                    stopped += UpstreamControlPlane(self.state, settings, plane).stop()
            names += [s.name for s in reversed(all_services(self.state, settings))]
        for name in names:
            if processes.stop(self.state, name):
                stopped.append(name)
        stopped += dataplane.stop_all(self.state)
        if settings is not None:
            shutil.rmtree(self.state.sockets, ignore_errors=True)
        return stopped


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()
