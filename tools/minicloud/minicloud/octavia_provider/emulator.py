"""The provider emulator's engine: a timed queue worked by one background thread.

It runs inside the octavia-api process. Each job runs while holding the service
lock (:data:`minicloud.core.wsgi.SERVICE_LOCK`), so it sees only committed API
transactions and its status reports (written by the driver agent) never race
an API request for sqlite's single writer. Waiting between steps happens
outside the lock.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from minicloud.core.paths import STATE_DIR_ENV, StateDir
from minicloud.core.wsgi import SERVICE_LOCK
from minicloud.octavia_provider import modes, ovn, planner
from minicloud.octavia_provider.tree import OctaviaDb

LOG = logging.getLogger(__name__)
MODE_POLL_SECONDS = 0.3
# With a data plane, a mode change is acknowledged once health checks show it, or after this long.
MODE_SETTLE_SECONDS = 25.0
STATS_SECONDS = 1.0


class Emulator:
    """Turns provider calls into status reports sent through ``reporter``.

    ``reporter(update)`` sends one status update (the driver agent in production). With a
    ``dataplane`` (:class:`minicloud.dataplane.plane.DataPlane`), each load balancer runs on HAProxy and
    members' operating_status comes from its health checks; without one, it is planned (``settle``).
    """

    def __init__(self, db: OctaviaDb, mode_file: Path, applied_file: Path, reporter: Callable[[dict], None],
                 dataplane=None, stats_reporter: Callable[[dict], None] | None = None):
        self.db = db
        self.dataplane = dataplane
        self.stats_reporter = stats_reporter
        self._stats_sent: dict[str, tuple[float, list]] = {}
        # load balancer id -> (database version, what its checks saw) when its statuses were last found in line
        self._in_line: dict[str, tuple] = {}
        self.mode_file = mode_file
        self.applied_file = applied_file
        self.reporter = reporter
        self._queue: list = []
        self._counter = itertools.count()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._mode = modes.Mode()
        self._mode_stamp: tuple | None = None
        self._applied = modes.applied_generation(applied_file)
        self._applied_mode: modes.Mode | None = modes.load(mode_file)
        self._settling: tuple[modes.Mode, modes.Mode | None, float] | None = None

    # -- public ------------------------------------------------------------------------

    def start(self) -> None:
        with self._wake:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="minicloud-provider", daemon=True)
                self._thread.start()

    def submit(self, event: planner.Event) -> None:
        """Called by the driver, inside an API request: plan when the request has committed."""
        self.start()
        self._schedule(0.0, lambda: self._plan(event))

    # -- queue -------------------------------------------------------------------------

    def _schedule(self, delay: float, job: Callable[[], None]) -> None:
        with self._wake:
            heapq.heappush(self._queue, (time.monotonic() + delay, next(self._counter), job))
            self._wake.notify()

    def _next_due(self) -> Callable[[], None] | None:
        with self._wake:
            timeout = MODE_POLL_SECONDS
            if self._queue:
                timeout = min(timeout, self._queue[0][0] - time.monotonic())
            if timeout > 0:
                self._wake.wait(timeout)
            if self._queue and self._queue[0][0] <= time.monotonic():
                return heapq.heappop(self._queue)[2]
        return None

    def _run(self) -> None:
        self._schedule(0.0, self._resume)
        while True:
            job = self._next_due()
            try:
                if job is not None or self._current_mode().generation > self._applied:
                    with SERVICE_LOCK:
                        self._check_mode()
                        if job:
                            job()
                # the checks are read after the job: an observation from before it would be of the configuration
                # the job has just changed (health.observed_in_line drops what is left of that)
                observed = self._observe_data_plane()
                if observed is not None:
                    with SERVICE_LOCK:
                        self._follow_data_plane(observed)
            except Exception:  # keep the emulator alive whatever one job does
                LOG.exception("provider emulator job failed")

    # -- data plane --------------------------------------------------------------------

    def _observe_data_plane(self) -> dict | None:
        """What HAProxy's checks see, when a poll is due (read outside the service lock)."""
        if self.dataplane is None or not self.dataplane.due():
            return None
        return self.dataplane.observe()

    def _follow_data_plane(self, observed: dict) -> None:
        if self.dataplane.inputs_changed():
            self._sync_all()
        version = self.db.version()
        in_line = {}
        for lb_id, (statuses, listeners) in observed.items():
            seen = (version, tuple(sorted(statuses.items())))
            if version is not None and self._in_line.get(lb_id) == seen:
                in_line[lb_id] = seen  # neither the database nor the checks changed: still in line, nothing to read
            elif not self._report_health(lb_id, statuses):
                in_line[lb_id] = seen
            self._report_statistics(lb_id, listeners)
        self._in_line = in_line
        self._acknowledge_when_settled()

    def _report_health(self, lb_id: str, statuses: dict[str, str]) -> bool:
        """Report the status update that brings load balancer ``lb_id`` in line with what its checks see; False
        when there is none (the database is in line). The update is a pure function of the load balancer's tree
        and ``statuses``: while neither changes, :meth:`_follow_data_plane` does not read the tree again (a
        report, made by the driver agent, changes the database, so the next poll looks again)."""
        tree = self.db.tree(lb_id)
        update = self.dataplane.health_update(tree, statuses) if tree else {}
        if update:
            self._report(update)
        return bool(update)

    def _report_statistics(self, lb_id: str, listeners: list[dict]) -> None:
        """Listener statistics as the amphora sends them, when they changed (at most once a second)."""
        sent_at, sent = self._stats_sent.get(lb_id, (0.0, None))
        if self.stats_reporter is None or listeners == sent or time.monotonic() - sent_at < STATS_SECONDS:
            return
        self._stats_sent[lb_id] = (time.monotonic(), listeners)
        try:
            self.stats_reporter({"listeners": listeners})
        except Exception as exc:  # a listener deleted meanwhile
            LOG.warning("provider emulator: statistics of %s not taken: %s", lb_id, exc)

    def _acknowledge_when_settled(self) -> None:
        if self._settling is None:
            return
        mode, previous, deadline = self._settling
        trees = [self.db.tree(lb_id) for lb_id in self.db.live_loadbalancers()]
        if time.monotonic() < deadline and not all(self.dataplane.mode_settled(t, mode, previous) for t in trees if t):
            return
        modes.acknowledge(self.applied_file, mode)
        self._settling = None

    def _sync(self, lb_id: str) -> None:
        if self.dataplane is not None:
            self.dataplane.sync(lb_id, self._current_mode())

    def _sync_all(self) -> None:
        if self.dataplane is None:
            return
        live = self.db.live_loadbalancers()
        self.dataplane.stop_orphans(live)
        for lb_id in live:
            self._sync(lb_id)

    # -- jobs --------------------------------------------------------------------------

    def _current_mode(self) -> modes.Mode:
        try:
            stat = self.mode_file.stat()
            stamp = (stat.st_ino, stat.st_mtime_ns, stat.st_size)  # saves replace the file: a new inode
        except FileNotFoundError:
            stamp = None
        if stamp != self._mode_stamp:
            self._mode = modes.load(self.mode_file)
            self._mode_stamp = stamp
        return self._mode

    def _check_mode(self) -> None:
        """On a mode change, bring existing objects in line, then acknowledge it."""
        mode = self._current_mode()
        if mode.generation <= self._applied:
            return
        for lb_id in self.db.live_loadbalancers():
            tree = self.db.tree(lb_id)
            update = planner.reconcile(tree, mode, health=self.dataplane is None) if tree else {}
            if update:
                self._report(update)
        self._sync_all()
        self._applied = mode.generation
        previous, self._applied_mode = self._applied_mode, mode
        if self.dataplane is None:
            modes.acknowledge(self.applied_file, mode)
        else:  # acknowledged when the health checks show it (_acknowledge_when_settled)
            self._settling = (mode, previous, time.monotonic() + MODE_SETTLE_SECONDS)

    def _resume(self) -> None:
        """At start: finish what was in flight when octavia-api last stopped."""
        mode = self._current_mode()
        self._sync_all()
        for lb_id in self.db.live_loadbalancers():
            tree = self.db.tree(lb_id)
            self._schedule_steps(lb_id, planner.resume(tree, mode) if tree else [])

    def _plan(self, event: planner.Event) -> None:
        mode = self._current_mode()
        lb_id = self.db.loadbalancer_of(event.kind, event.id)
        tree = self.db.tree(lb_id) if lb_id else None
        if tree is None:
            LOG.warning("provider emulator: %s %s is gone, nothing to report", event.kind, event.id)
            return
        steps = ovn.plan(tree, event) if ovn.is_ovn(tree) else planner.plan(tree, event, mode)
        self._schedule_steps(lb_id, steps)

    def _schedule_steps(self, lb_id: str, steps: list[planner.Step]) -> None:
        due = 0.0
        for step in steps:
            due += step.delay
            self._schedule(due, self._step_job(lb_id, step))

    def _step_job(self, lb_id: str, step: planner.Step) -> Callable[[], None]:
        def run() -> None:
            if step.update:
                self._report(step.update)
                self._sync(lb_id)
            if step.settle and self.dataplane is None:
                tree = self.db.tree(lb_id)
                update = planner.settle_health(tree, step.settle, self._current_mode()) if tree else {}
                if update:
                    self._report(update)
        return run

    def _report(self, update: dict) -> None:
        try:
            self.reporter(update)
        except Exception as exc:  # e.g. the object was deleted meanwhile
            LOG.warning("provider emulator: status update %s failed: %s", update, exc)


_EMULATOR: Emulator | None = None
_EMULATOR_LOCK = threading.Lock()


def get(data_plane: Callable[[StateDir, Path], object] | None = None) -> Emulator:
    """The process-wide emulator, configured from Octavia's config and the state folder. The first call (the
    service's start, :mod:`minicloud.services.octavia`) hands in ``data_plane(state, octavia_db)``, what makes
    the data plane (:func:`minicloud.dataplane.plane.data_plane_or_none`), if any."""
    global _EMULATOR
    with _EMULATOR_LOCK:
        if _EMULATOR is None:
            _EMULATOR = _from_octavia_config(data_plane)
        return _EMULATOR


def _from_octavia_config(data_plane: Callable[[StateDir, Path], object] | None) -> Emulator:
    from octavia_lib.api.drivers import driver_lib
    from oslo_config import cfg

    conf = cfg.CONF
    state = StateDir(os.environ[STATE_DIR_ENV])
    library: list = []

    def connected():
        if not library:  # connecting checks the agent's sockets exist
            library.append(driver_lib.DriverLibrary(
                status_socket=conf.driver_agent.status_socket_path,
                stats_socket=conf.driver_agent.stats_socket_path,
                get_socket=conf.driver_agent.get_socket_path,
            ))
        return library[0]

    def report(update: dict) -> None:
        connected().update_loadbalancer_status(update)

    def report_statistics(statistics: dict) -> None:
        connected().update_listener_statistics(statistics)

    db_path = Path(conf.database.connection.removeprefix("sqlite:///"))
    return Emulator(OctaviaDb(db_path), state.octavia_mode, state.octavia_mode_applied, report,
                    dataplane=data_plane(state, db_path) if data_plane else None, stats_reporter=report_statistics)
