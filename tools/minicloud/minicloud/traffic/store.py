"""The shared store of fault rules, request counts and hidden API extensions: one sqlite file (WAL).

The command line writes rules; every service process reads them and bumps the
counts on each request, so each operation here is a single short statement.

Gates: a request held by a gate rule waits on a named pipe of that rule (``<db>-gates/<id>``), opened
without blocking and polled: no CPU is used while it waits. Releasing a rule deletes it, then opens
and closes the pipe for writing, which wakes every reader at once (POLLHUP), in any process. A reader
checks, after opening the pipe, that its rule still exists, so a release between its match and its
wait is not missed.
"""

from __future__ import annotations

import errno
import os
import select
import sqlite3
import threading
from pathlib import Path

from minicloud.traffic.faults import FaultRule

RULE_COLUMNS = ("id, service, method, path, status, retry_after, remaining, delay, fired, gate, held, after_commit, "
                "query")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS rules (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    service TEXT NOT NULL,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    status TEXT,
    retry_after REAL,
    remaining INTEGER,
    delay REAL NOT NULL DEFAULT 0,
    fired INTEGER NOT NULL DEFAULT 0,
    gate INTEGER NOT NULL DEFAULT 0,
    held INTEGER NOT NULL DEFAULT 0,
    after_commit INTEGER NOT NULL DEFAULT 0,
    query TEXT
);
CREATE TABLE IF NOT EXISTS requests (
    service TEXT NOT NULL,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    internal INTEGER NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (service, method, path, internal)
);
CREATE TABLE IF NOT EXISTS hidden_extensions (
    service TEXT NOT NULL,
    alias TEXT NOT NULL,
    PRIMARY KEY (service, alias)
);
"""


class TrafficStore:
    """Fault rules and request counters, shared by all processes of one minicloud."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.gates = self.path.with_name(self.path.name + "-gates")
        self._local = threading.local()

    def _db(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=OFF")
            conn.executescript(_SCHEMA)
            columns = {row[1] for row in conn.execute("PRAGMA table_info(rules)")}
            for column in ("gate", "held", "after_commit"):  # a state folder of an older minicloud
                if column not in columns:
                    conn.execute(f"ALTER TABLE rules ADD COLUMN {column} INTEGER NOT NULL DEFAULT 0")
            if "query" not in columns:
                conn.execute("ALTER TABLE rules ADD COLUMN query TEXT")
            self._local.conn = conn
        return conn

    # -- rules -------------------------------------------------------------------------

    def add_rule(self, rule: FaultRule) -> FaultRule:
        if rule.remaining is not None and rule.remaining < 1:
            raise ValueError("count must be at least 1")
        status = None if rule.status is None else str(rule.status)
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            cur = db.execute(
                "INSERT INTO rules (service, method, path, status, retry_after, remaining, delay, gate, after_commit,"
                " query) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (rule.service, rule.method.upper(), rule.path, status, rule.retry_after, rule.remaining, rule.delay,
                 int(rule.gate), int(rule.after), rule.query),
            )
            if rule.gate:  # the pipe exists before any request can match the rule
                self.gates.mkdir(parents=True, exist_ok=True)
                self._gate(cur.lastrowid).unlink(missing_ok=True)
                os.mkfifo(self._gate(cur.lastrowid))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return self.rule(cur.lastrowid)

    def rule(self, rule_id: int) -> FaultRule | None:
        row = self._db().execute(f"SELECT {RULE_COLUMNS} FROM rules WHERE id = ?", (rule_id,)).fetchone()
        return None if row is None else self._rule(row)

    def rules(self) -> list[FaultRule]:
        return [self._rule(row) for row in self._db().execute(f"SELECT {RULE_COLUMNS} FROM rules ORDER BY id")]

    def clear_rules(self) -> int:
        """Remove every rule, releasing the requests held by gates."""
        removed = self._db().execute("DELETE FROM rules").rowcount
        for gate in sorted(self.gates.glob("*")) if self.gates.is_dir() else ():
            self._open_gate(gate)
        return removed

    def release_rule(self, rule_id: int) -> FaultRule | None:
        """Remove rule ``rule_id`` and let the requests it holds through; returns the rule as it was
        (``held``: how many it released), None if there is no such rule."""
        rule = self.rule(rule_id)
        if rule is None or not self._db().execute("DELETE FROM rules WHERE id = ?", (rule_id,)).rowcount:
            return None
        self._open_gate(self._gate(rule_id))
        return rule

    # -- gates -------------------------------------------------------------------------

    def _gate(self, rule_id: int) -> Path:
        return self.gates / str(rule_id)

    @staticmethod
    def _open_gate(gate: Path) -> None:
        """Wake every request waiting on ``gate`` (after its rule is deleted), then remove it."""
        try:
            os.close(os.open(gate, os.O_WRONLY | os.O_NONBLOCK))
        except OSError as exc:  # ENXIO: nobody waits; ENOENT: released already
            if exc.errno not in (errno.ENXIO, errno.ENOENT):
                raise
        gate.unlink(missing_ok=True)

    def hold(self, rule_id: int, timeout: float) -> bool:
        """Wait until gate rule ``rule_id`` is released (True) or ``timeout`` seconds pass (False),
        counted in the rule's ``held`` meanwhile."""
        try:
            fd = os.open(self._gate(rule_id), os.O_RDONLY | os.O_NONBLOCK)
        except FileNotFoundError:
            return True
        try:
            self._db().execute("UPDATE rules SET held = held + 1 WHERE id = ?", (rule_id,))
            try:
                if self.rule(rule_id) is None:
                    return True
                poller = select.poll()
                poller.register(fd, select.POLLIN | select.POLLHUP)
                return bool(poller.poll(max(0, int(timeout * 1000))))
            finally:
                self._db().execute("UPDATE rules SET held = held - 1 WHERE id = ?", (rule_id,))
        finally:
            os.close(fd)

    def take_rule(self, service: str, method: str, path: str, query: str = "") -> FaultRule | None:
        """The first live rule matching the request, with one firing consumed."""
        db = self._db()
        rows = db.execute(
            f"SELECT {RULE_COLUMNS} FROM rules WHERE service = ? AND (remaining IS NULL OR remaining > 0) ORDER BY id",
            (service,),
        ).fetchall()
        for row in rows:
            rule = self._rule(row)
            if not rule.matches(service, method, path, query):
                continue
            taken = db.execute(
                "UPDATE rules SET fired = fired + 1,"
                " remaining = CASE WHEN remaining IS NULL THEN NULL ELSE remaining - 1 END"
                " WHERE id = ? AND (remaining IS NULL OR remaining > 0)",
                (rule.id,),
            ).rowcount
            if taken:
                return rule
        return None

    @staticmethod
    def _rule(row) -> FaultRule:
        rule_id, service, method, path, status, retry_after, remaining, delay, fired, gate, held, after, query = row
        return FaultRule(
            service=service,
            method=method,
            path=path,
            status=FaultRule.parse_status(status),
            retry_after=retry_after,
            remaining=remaining,
            delay=delay,
            id=rule_id,
            fired=fired,
            gate=bool(gate),
            held=held,
            after=bool(after),
            query=query,
        )

    # -- request counts ----------------------------------------------------------------

    def count(self, service: str, method: str, path: str, internal: bool) -> None:
        self._db().execute(
            "INSERT INTO requests VALUES (?, ?, ?, ?, 1)"
            " ON CONFLICT (service, method, path, internal) DO UPDATE SET count = count + 1",
            (service, method, path, int(internal)),
        )

    def counts(self, service: str | None = None) -> dict:
        """Counts as ``{"requests": {service: {method: {path: n}}}, "internal": {...}, "totals": {...}}``.

        ``internal`` holds requests made by one service to another (keystonemiddleware
        validating tokens), so ``requests`` is what clients did.
        """
        query = "SELECT service, method, path, internal, count FROM requests"
        args: tuple = ()
        if service:
            query += " WHERE service = ?"
            args = (service,)
        result: dict = {"requests": {}, "internal": {}}
        totals: dict = {"all": 0, "internal": 0, "by_service": {}}
        for svc, method, path, internal, n in self._db().execute(query + " ORDER BY 1, 2, 3", args):
            bucket = result["internal" if internal else "requests"]
            bucket.setdefault(svc, {}).setdefault(method, {})[path] = n
            if internal:
                totals["internal"] += n
            else:
                totals["all"] += n
                totals["by_service"][svc] = totals["by_service"].get(svc, 0) + n
        result["totals"] = totals
        return result

    def reset_counts(self, service: str | None = None) -> None:
        if service:
            self._db().execute("DELETE FROM requests WHERE service = ?", (service,))
        else:
            self._db().execute("DELETE FROM requests")

    # -- hidden extensions (an older API, see minicloud.traffic.hidden_extensions) ---------------------------

    def hide_extension(self, service: str, alias: str) -> None:
        self._db().execute("INSERT OR IGNORE INTO hidden_extensions VALUES (?, ?)", (service, alias))

    def restore_extensions(self, alias: str | None = None) -> int:
        if alias:
            return self._db().execute("DELETE FROM hidden_extensions WHERE alias = ?", (alias,)).rowcount
        return self._db().execute("DELETE FROM hidden_extensions").rowcount

    def hidden_extensions(self, service: str | None = None) -> list[str]:
        if service:
            rows = self._db().execute("SELECT alias FROM hidden_extensions WHERE service = ? ORDER BY alias",
                                      (service,))
        else:
            rows = self._db().execute("SELECT alias FROM hidden_extensions ORDER BY alias")
        return [alias for (alias,) in rows]
