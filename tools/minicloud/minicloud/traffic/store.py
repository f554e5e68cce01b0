"""The shared store of fault rules, request counts and hidden API extensions: one sqlite file (WAL).

The command line writes rules; every service process reads them and bumps the
counts on each request, so each operation here is a single short statement.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from minicloud.traffic.faults import FaultRule

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
    fired INTEGER NOT NULL DEFAULT 0
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
        self._local = threading.local()

    def _db(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=OFF")
            conn.executescript(_SCHEMA)
            self._local.conn = conn
        return conn

    # -- rules -------------------------------------------------------------------------

    def add_rule(self, rule: FaultRule) -> FaultRule:
        if rule.remaining is not None and rule.remaining < 1:
            raise ValueError("count must be at least 1")
        status = None if rule.status is None else str(rule.status)
        cur = self._db().execute(
            "INSERT INTO rules (service, method, path, status, retry_after, remaining, delay)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (rule.service, rule.method.upper(), rule.path, status, rule.retry_after, rule.remaining, rule.delay),
        )
        return self._rule(self._db().execute("SELECT * FROM rules WHERE id = ?", (cur.lastrowid,)).fetchone())

    def rules(self) -> list[FaultRule]:
        return [self._rule(row) for row in self._db().execute("SELECT * FROM rules ORDER BY id")]

    def clear_rules(self) -> int:
        return self._db().execute("DELETE FROM rules").rowcount

    def take_rule(self, service: str, method: str, path: str) -> FaultRule | None:
        """The first live rule matching the request, with one firing consumed."""
        db = self._db()
        rows = db.execute(
            "SELECT * FROM rules WHERE service = ? AND (remaining IS NULL OR remaining > 0) ORDER BY id",
            (service,),
        ).fetchall()
        for row in rows:
            rule = self._rule(row)
            if not rule.matches(service, method, path):
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
        rule_id, service, method, path, status, retry_after, remaining, delay, fired = row
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
