"""The data plane inside octavia-api: renders and (re)loads each load balancer's HAProxy, reads its health.

The provider emulator calls :meth:`DataPlane.sync` after each status step it reports (the amphora
gets its configuration as the change is applied), after a mode change and when the endpoint registry
or the data plane's settings change, and :meth:`DataPlane.observe` every poll to read each HAProxy's
``show stat`` (outside the service lock); :func:`health.health_update` turns that into status reports.
"""

from __future__ import annotations

import json
import logging
import shutil
import socket
import time
from pathlib import Path

from minicloud.core import proctable
from minicloud.core.paths import StateDir
from minicloud.dataplane import health, loadrun, model
from minicloud.dataplane.apiserver import Endpoint, certificate
from minicloud.dataplane.endpoints import FOLDER, LOOPBACK, Registry, member_entry
from minicloud.dataplane.haproxy import BINARY, HaproxyMissing, Instance, binary
from minicloud.dataplane.render import Addresses, Paths, render
from minicloud.octavia_provider.modes import BACKEND_DOWN, Mode
from minicloud.octavia_provider.tree import LbTree

LOG = logging.getLogger(__name__)
POLL_SECONDS = 0.25
# Health checks run every monitor delay, but never less often than this (seconds); ``None``: the delay.
DEFAULT_CHECK_INTERVAL_CAP = 2.0
PLAIN_PROTOCOLS = ("HTTP",)


def settings_file(state: StateDir) -> Path:
    return state.root / FOLDER / "settings.json"


def load_settings(state: StateDir) -> dict:
    try:
        data = json.loads(settings_file(state).read_text())
    except (FileNotFoundError, ValueError):
        data = {}
    return {"check_interval_cap": data.get("check_interval_cap", DEFAULT_CHECK_INTERVAL_CAP)}


def save_settings(state: StateDir, **changes) -> dict:
    data = {**load_settings(state), **changes}
    path = settings_file(state)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data) + "\n")
    tmp.replace(path)
    return data


def instance(state: StateDir, lb_id: str) -> Instance:
    return Instance(state.root / FOLDER / lb_id, state.sockets / f"lb-{lb_id[:13]}.sock")


def running(state: StateDir) -> list[str]:
    """Load balancers whose HAProxy runs."""
    folder = state.root / FOLDER
    if not folder.is_dir():
        return []
    return [p.name for p in folder.iterdir() if p.is_dir() and instance(state, p.name).master_pid() is not None]


def stop_all(state: StateDir) -> list[str]:
    """Stop every load balancer's HAProxy and every load generator of this state folder (``down``), and any HAProxy
    still running a configuration of the folder that no load balancer's folder names any more; each name says how
    many processes it stopped."""
    stopped = [f"load/{name}" for name in loadrun.stop_all(state.root)]
    folder = state.root / FOLDER
    for lb_folder in sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []:
        pids = instance(state, lb_folder.name).stop()
        if pids:
            stopped.append(f"haproxy/{lb_folder.name} ({_processes(len(pids))})")
    strays = [proc for proc in proctable.naming(f"{folder}/") if proc.comm == BINARY]
    if strays:
        ended = proctable.end_groups({proc.pgid for proc in strays}, 5.0)
        stopped.append(f"haproxy of removed load balancers ({_processes(len(ended))})")
    return stopped


def _processes(count: int) -> str:
    return f"{count} process" + ("" if count == 1 else "es")


def sessions(state: StateDir, lb_id: str) -> dict[str, int]:
    """Member id -> the client connections its server holds now in ``lb_id``'s HAProxy (``show stat``'s scur,
    summed over the listeners): what an old server still holds after it left rotation. Empty when no HAProxy
    runs it; an OSError while it reloads (its new worker's socket is not there yet)."""
    if instance(state, lb_id).master_pid() is None:
        return {}
    found: dict[str, int] = {}
    for row in health.parse_stat(instance(state, lb_id).command("show stat")):
        found[row.server] = found.get(row.server, 0) + (row.current_sessions or 0)
    return found


class StandIns:
    """What answers for addresses nobody registered (plain and TLS), and a port that refuses."""

    def __init__(self, tls_folder: Path):
        self.plain = Endpoint()
        self.tls = Endpoint(certificate(tls_folder))
        self._refusing = socket.socket()
        self._refusing.bind((LOOPBACK, 0))  # bound, never listening: connections are refused
        self.refuse = f"{LOOPBACK}:{self._refusing.getsockname()[1]}"

    def ports(self) -> dict:
        return {"plain": self.plain.port, "tls": self.tls.port, "refuse": self.refuse}


class DataPlane:
    def __init__(self, state: StateDir, db_path: Path):
        binary()  # fail early, with the words of HaproxyMissing
        self.state = state
        self.db_path = db_path
        self.registry = Registry(state.root)
        self.standins = StandIns(state.root / FOLDER / "tls")
        self.registry.set_standins(self.standins.ports())
        self._stamp = self._inputs_stamp()
        self._next_poll = 0.0

    # -- configuration -----------------------------------------------------------------

    def sync(self, lb_id: str, mode: Mode) -> None:
        """Bring ``lb_id``'s HAProxy in line with the database (start, reload, or stop it)."""
        lb = model.read(self.db_path, lb_id)
        proc = instance(self.state, lb_id)
        if lb is None or not lb.listeners:
            proc.stop()
            self.registry.prune_frontends(lb_id, set())
            if lb is None:
                shutil.rmtree(proc.folder, ignore_errors=True)
            return
        self.registry.prune_frontends(lb_id, {listener.id for listener in lb.listeners})
        snapshot = self.registry.snapshot()
        addresses = Addresses(
            frontend=lambda listener: self.registry.frontend(listener.id, lb.id, lb.vip_address, listener.port),
            member=lambda pool, member: self._member_address(snapshot, pool, member, mode),
        )
        paths = Paths(stats_socket=str(proc.stats_socket), state_file=str(proc.state_file))
        cap = load_settings(self.state)["check_interval_cap"]
        if proc.apply(render(lb, paths, addresses, cap)):
            LOG.info("data plane: load balancer %s configured", lb_id)

    def _member_address(self, snapshot: dict, pool: model.Pool, member: model.Member, mode: Mode) -> str:
        if mode.name == BACKEND_DOWN and mode.matches(member.name, member.address):
            return self.standins.refuse
        entry = member_entry(snapshot["members"], member.address, member.port, member.subnet_id)
        if entry is not None:
            return entry["loopback"]
        monitor_type = pool.monitor.type if pool.monitor else None
        plain = pool.protocol in PLAIN_PROTOCOLS or monitor_type == "HTTP"
        return self.standins.plain.address if plain else self.standins.tls.address

    def stop_orphans(self, live: list[str]) -> None:
        for lb_id in running(self.state):
            if lb_id not in live:
                instance(self.state, lb_id).stop()

    def _inputs_stamp(self) -> tuple:
        stamps = []
        for path in (self.registry.path, settings_file(self.state)):
            try:
                stat = path.stat()
                stamps.append((stat.st_ino, stat.st_mtime_ns))
            except FileNotFoundError:
                stamps.append(None)
        return tuple(stamps)

    def inputs_changed(self) -> bool:
        """True once after the endpoint registry or the settings changed."""
        stamp = self._inputs_stamp()
        changed, self._stamp = stamp != self._stamp, stamp
        return changed

    # -- health ------------------------------------------------------------------------

    def due(self) -> bool:
        return time.monotonic() >= self._next_poll

    def observe(self) -> dict[str, tuple[dict[str, str], list[dict]]]:
        """Load balancer id -> (member id -> operating status as its HAProxy's checks see them, its listeners'
        statistics)."""
        self._next_poll = time.monotonic() + POLL_SECONDS
        observed = {}
        for lb_id in running(self.state):
            try:
                text = instance(self.state, lb_id).command("show stat")
            except OSError:
                continue  # reloading: the new worker's socket is not there yet
            observed[lb_id] = (health.member_statuses(health.parse_stat(text)), health.listener_statistics(text))
        return observed

    def health_update(self, tree: LbTree, observed: dict[str, str]) -> dict:
        """The status update HAProxy's checks call for (:func:`.health.health_update`)."""
        return health.health_update(tree, observed)

    def mode_settled(self, tree: LbTree, mode: Mode, previous: Mode | None) -> bool:
        """Whether the checks show a mode change yet (:func:`.health.mode_settled`)."""
        return health.mode_settled(tree, mode, previous)


def data_plane_or_none(state: StateDir, db_path: Path) -> DataPlane | None:
    """The data plane of the provider emulator (:mod:`minicloud.octavia_provider.emulator`), or None without
    HAProxy: operating statuses are planned then."""
    try:
        return DataPlane(state, db_path)
    except HaproxyMissing as exc:
        LOG.error("provider emulator: no data plane, operating statuses are planned: %s", exc)
        return None
