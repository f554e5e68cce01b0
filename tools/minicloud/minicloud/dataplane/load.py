"""A load generator through a load balancer's VIP, recording every failure, for three kinds of client.

- ``new`` (kind ``request``): ``clients`` threads send ``rate`` requests a second in all (``GET /readyz`` and
  ``/version``), each on a new HTTPS connection, as kubectl and probes do;
- ``keepalive``: ``keepalive`` clients each send ``keepalive_rate`` requests a second on one HTTP/1.1 connection
  they keep, as client-go does (controllers, kubelets, operators): a connection found closed when a request goes
  out is opened again and the request sent once more (client-go's transport retries an idempotent request on a
  connection the server closed); that closed connection is recorded (kind ``keepalive-closed``) but the request
  fails only if the retry fails; after any other error the client connects again for its next request;
- ``watch``: ``watches`` threads each hold a watch open (``timeoutSeconds`` 10-20 s, ended cleanly by the
  apiserver, then opened again, as client-go's reflectors do).

HTTP/2 is not among them: the endpoints standing for API servers (:mod:`.apiserver`, Python's http.server)
speak HTTP/1.1 only (no ALPN ``h2``). Every request and every watch end is one line of JSON in the record file:
``{"t", "kind", "ok", "error", "ms"}`` with ``error`` one of ``refused``, ``reset``, ``timeout``, ``http-5xx``,
``tls``, ``other`` (a watch: ``interrupted`` reasons likewise). :func:`summarise` turns a record into the figures
(pure), each kind of client apart, their failures split into 5xx, timeouts and closed connections.
"""

from __future__ import annotations

import http.client
import json
import random
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from pathlib import Path

REQUEST_TIMEOUT = 5.0
WATCH_READ_TIMEOUT = 5.0  # bookmarks come every second: five without a byte is a dead watch
PATHS = ("/readyz", "/version")
KEEPALIVE_CLIENTS = 4
KEEPALIVE_RATE = 5.0  # requests a second, each keep-alive client
CLOSED = "reset"  # the connection closed under the request


def classify(exc: BaseException) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "refused"
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return "timeout"
    if isinstance(exc, (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected,
                        http.client.IncompleteRead, ssl.SSLEOFError, ConnectionAbortedError)):
        return "reset"
    if isinstance(exc, ssl.SSLError):
        return "tls"
    return "other"


@dataclass(frozen=True)
class Target:
    host: str
    port: int


class Recorder:
    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        self._file = open(path, "a", buffering=1)

    def write(self, kind: str, ok: bool, error: str | None, started: float, **extra) -> None:
        line = {"t": round(time.time(), 3), "kind": kind, "ok": ok, "error": error,
                "ms": round((time.monotonic() - started) * 1000, 1), **extra}
        with self._lock:
            self._file.write(json.dumps(line) + "\n")

    def close(self) -> None:
        with self._lock:
            self._file.close()


class LoadGenerator:
    def __init__(self, target: Target, record: Path, rate: float = 20.0, clients: int = 4, watches: int = 2,
                 keepalive: int = KEEPALIVE_CLIENTS, keepalive_rate: float = KEEPALIVE_RATE):
        self.target = target
        self.rate = rate
        self.clients = max(1, clients)
        self.watches = watches
        self.keepalive_rate = keepalive_rate
        self.recorder = Recorder(record)
        self.stopped = threading.Event()
        self._context = ssl._create_unverified_context()  # the endpoints' certificates are self-signed
        self._threads = [threading.Thread(target=self._client, args=(i,), daemon=True) for i in range(self.clients)]
        self._threads += [threading.Thread(target=self._watch, daemon=True) for _ in range(watches)]
        self._threads += [threading.Thread(target=self._keepalive, args=(i, keepalive), daemon=True)
                          for i in range(keepalive)]

    def start(self) -> LoadGenerator:
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        self.stopped.set()
        for thread in self._threads:
            thread.join(timeout=REQUEST_TIMEOUT + WATCH_READ_TIMEOUT + 1)
        self.recorder.close()

    def _connection(self, timeout: float) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection(self.target.host, self.target.port, timeout=timeout, context=self._context)

    def _client(self, index: int) -> None:
        period = self.clients / self.rate
        due = time.monotonic() + period * index / self.clients
        count = 0
        while not self.stopped.is_set():
            self.stopped.wait(max(0.0, due - time.monotonic()))
            due += period
            self._request(PATHS[count % len(PATHS)])
            count += 1

    def _request(self, path: str) -> None:
        started = time.monotonic()
        connection = self._connection(REQUEST_TIMEOUT)
        try:
            connection.request("GET", path)
            answer = connection.getresponse()
            answer.read()
            error = "http-5xx" if answer.status >= 500 else None if answer.status < 400 else "http-4xx"
            self.recorder.write("request", error is None, error, started, path=path)
        except Exception as exc:  # every failure is a finding
            self.recorder.write("request", False, classify(exc), started, path=path)
        finally:
            connection.close()

    def _keepalive(self, index: int, count: int) -> None:
        period = 1.0 / self.keepalive_rate
        due = time.monotonic() + period * index / count
        connection, sent = None, 0
        while not self.stopped.is_set():
            self.stopped.wait(max(0.0, due - time.monotonic()))
            due += period
            connection = self._keepalive_request(connection, PATHS[sent % len(PATHS)])
            sent += 1
        if connection is not None:
            connection.close()

    def _keepalive_request(self, connection, path: str):
        """One request on the kept connection (a new one if there is none); the connection to keep, or None."""
        started = time.monotonic()
        reused = connection is not None
        connection = connection or self._connection(REQUEST_TIMEOUT)
        try:
            try:
                status = _get(connection, path)
            except Exception as exc:
                if not reused or classify(exc) != CLOSED:
                    raise
                self.recorder.write("keepalive-closed", True, CLOSED, started, path=path)
                connection.close()
                connection = self._connection(REQUEST_TIMEOUT)
                status = _get(connection, path)
        except Exception as exc:  # every failure is a finding
            self.recorder.write("keepalive", False, classify(exc), started, path=path)
            connection.close()
            return None
        error = "http-5xx" if status >= 500 else None if status < 400 else "http-4xx"
        self.recorder.write("keepalive", error is None, error, started, path=path)
        return connection

    def _watch(self) -> None:
        while not self.stopped.is_set():
            started = time.monotonic()
            seconds = random.randint(10, 20)
            connection = self._connection(WATCH_READ_TIMEOUT)
            try:
                connection.request("GET", f"/api/v1/configmaps?watch=1&timeoutSeconds={seconds}")
                answer = connection.getresponse()
                if answer.status >= 400:
                    self.recorder.write("watch", False, f"http-{answer.status // 100}xx", started)
                    continue
                events = 0
                while not self.stopped.is_set() and answer.readline():
                    events += 1
                self.recorder.write("watch", True, None, started, events=events)
            except Exception as exc:
                self.recorder.write("watch", False, classify(exc), started)
                self.stopped.wait(0.2)
            finally:
                connection.close()


def _get(connection: http.client.HTTPSConnection, path: str) -> int:
    connection.request("GET", path)
    answer = connection.getresponse()
    answer.read()
    return answer.status


def read_record(path: Path) -> list[dict]:
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in lines if line.strip()]


def percentile(values: list[float], share: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


# the failures of each kind of client, in three groups and the rest
FAILURE_GROUPS = {"http-5xx": "http_5xx", "timeout": "timeouts", CLOSED: "closed"}
CLIENT_KINDS = {"new": "request", "keepalive": "keepalive", "watch": "watch"}


def client_figures(lines: list[dict]) -> dict:
    """Each kind of client apart (``new``, ``keepalive``, ``watch``): requests (a watch: watches ended), failed,
    and the failed ones as ``http_5xx``, ``timeouts``, ``closed`` and ``other``; ``closed_retried``: connections
    found closed whose request went through on a new one (not failures)."""
    figures = {}
    for name, kind in CLIENT_KINDS.items():
        own = [x for x in lines if x["kind"] == kind]
        failed = [x for x in own if not x["ok"]]
        groups = {group: sum(1 for x in failed if x["error"] == error) for error, group in FAILURE_GROUPS.items()}
        figures[name] = {"requests": len(own), "failed": len(failed), **groups,
                         "other": len(failed) - sum(groups.values()),
                         "closed_retried": sum(1 for x in lines if x["kind"] == f"{kind}-closed")}
    return figures


def summarise(lines: list[dict], since: float | None = None, until: float | None = None) -> dict:
    """Requests sent and failed (by kind), the longest streak of failed requests in a row and how long
    it lasted, latency percentiles (ms) of the requests, watches ended and interrupted (the figures of the
    new-connection clients and the watches); ``clients``: every kind of client apart (:func:`client_figures`)."""
    lines = [x for x in lines if (since is None or x["t"] >= since) and (until is None or x["t"] <= until)]
    requests = sorted((x for x in lines if x["kind"] == "request"), key=lambda x: x["t"])
    watches = [x for x in lines if x["kind"] == "watch"]
    failures: dict[str, int] = {}
    streak, longest, streak_start, longest_seconds = 0, 0, None, 0.0
    for line in requests:
        if line["ok"]:
            streak = 0
            continue
        failures[line["error"]] = failures.get(line["error"], 0) + 1
        streak += 1
        streak_start = line["t"] if streak == 1 else streak_start
        if streak > longest:
            longest, longest_seconds = streak, line["t"] - streak_start
    latencies = [x["ms"] for x in requests if x["ok"]]
    interrupted: dict[str, int] = {}
    for line in watches:
        if not line["ok"]:
            interrupted[line["error"]] = interrupted.get(line["error"], 0) + 1
    return {"requests": len(requests), "failed": sum(failures.values()), "failures": failures,
            "longest_error_streak": longest, "longest_error_streak_seconds": round(longest_seconds, 1),
            "p50_ms": percentile(latencies, 0.5), "p99_ms": percentile(latencies, 0.99),
            "max_ms": max(latencies) if latencies else None,
            "watches_ended": len(watches), "watches_interrupted": sum(interrupted.values()),
            "watch_interruptions": interrupted, "clients": client_figures(lines)}


def failed_of(figures):
    """"failed of sent" of one kind of client, its failures split (5xx, timeouts, closed connections, other) and
    the closed connections its clients retried."""
    text = "%d of %d" % (figures["failed"], figures["requests"])
    split = ["%s %d" % (name, figures[key]) for key, name in (("http_5xx", "5xx"), ("timeouts", "timeout"),
                                                             ("closed", "closed"), ("other", "other"))
             if figures[key]]
    if split:
        text += " (%s)" % ", ".join(split)
    if figures["closed_retried"]:
        text += "; %d closed, retried" % figures["closed_retried"]
    return text
