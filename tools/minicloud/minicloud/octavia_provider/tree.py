"""A snapshot of one load balancer's object tree, and reading it from Octavia's database.

The emulator reads (never writes) Octavia's sqlite database, while holding the
service lock, so it sees what the API committed. All writes go through the
driver agent.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

LOADBALANCER = "loadbalancer"
LISTENER = "listener"
POOL = "pool"
MEMBER = "member"
HEALTHMONITOR = "healthmonitor"
L7POLICY = "l7policy"
L7RULE = "l7rule"

# Object kind -> key of the status update understood by the driver agent.
STATUS_KEYS = {
    LOADBALANCER: "loadbalancers",
    LISTENER: "listeners",
    POOL: "pools",
    MEMBER: "members",
    HEALTHMONITOR: "healthmonitors",
    L7POLICY: "l7policies",
    L7RULE: "l7rules",
}


@dataclass(frozen=True)
class Node:
    """One Octavia object. ``parent_id``: listener/pool -> LB, member/monitor -> pool,
    l7policy -> listener, l7rule -> l7policy."""

    kind: str
    id: str
    provisioning_status: str
    operating_status: str
    admin_state_up: bool = True
    parent_id: str | None = None
    name: str | None = None
    address: str | None = None  # members
    delay: int = 0  # health monitors
    default_pool_id: str | None = None  # listeners
    redirect_pool_id: str | None = None  # l7policies
    provider: str | None = None  # load balancers: the provider that runs it (``amphora``, ``ovn``...)


class LbTree:
    """All objects of one load balancer."""

    def __init__(self, nodes: list[Node]):
        self.nodes = {n.id: n for n in nodes}
        lbs = [n for n in nodes if n.kind == LOADBALANCER]
        if len(lbs) != 1:
            raise ValueError("a tree holds exactly one load balancer")
        self.lb = lbs[0]

    def get(self, object_id: str) -> Node | None:
        return self.nodes.get(object_id)

    def of_kind(self, kind: str) -> list[Node]:
        return [n for n in self.nodes.values() if n.kind == kind]

    def children(self, node: Node, kind: str) -> list[Node]:
        return [n for n in self.nodes.values() if n.kind == kind and n.parent_id == node.id]

    def monitor_of(self, pool_id: str) -> Node | None:
        return next((n for n in self.nodes.values() if n.kind == HEALTHMONITOR and n.parent_id == pool_id), None)

    def listeners_of_pool(self, pool_id: str) -> list[Node]:
        via_policy = {p.parent_id for p in self.of_kind(L7POLICY) if p.redirect_pool_id == pool_id}
        return [n for n in self.of_kind(LISTENER) if n.default_pool_id == pool_id or n.id in via_policy]

    def ancestors(self, node: Node) -> list[Node]:
        """The objects Octavia locks (PENDING_UPDATE) while ``node`` changes, nearest first."""
        if node.kind == LOADBALANCER:
            return []
        if node.kind == LISTENER:
            return [self.lb]
        if node.kind == POOL:
            return [*self.listeners_of_pool(node.id), self.lb]
        if node.kind in (MEMBER, HEALTHMONITOR, L7RULE):
            parent = self.get(node.parent_id)
            return [parent, *self.ancestors(parent)] if parent else [self.lb]
        if node.kind == L7POLICY:
            listener = self.get(node.parent_id)
            return [listener, self.lb] if listener else [self.lb]
        raise ValueError(f"unknown kind {node.kind!r}")

    def descendants(self, node: Node) -> list[Node]:
        """Objects that go away with ``node``, deepest first."""
        if node.kind == LOADBALANCER:
            kids = self.of_kind(LISTENER) + self.of_kind(POOL)
        elif node.kind == LISTENER:
            kids = self.children(node, L7POLICY)
        elif node.kind == POOL:
            kids = self.children(node, MEMBER) + self.children(node, HEALTHMONITOR)
        elif node.kind == L7POLICY:
            kids = self.children(node, L7RULE)
        else:
            kids = []
        result = []
        for kid in kids:
            result += self.descendants(kid) + [kid]
        return result


# -- reading Octavia's database --------------------------------------------------------

_PARENT_LB_QUERIES = {
    LOADBALANCER: "SELECT id FROM load_balancer WHERE id = ?",
    LISTENER: "SELECT load_balancer_id FROM listener WHERE id = ?",
    POOL: "SELECT load_balancer_id FROM pool WHERE id = ?",
    MEMBER: "SELECT p.load_balancer_id FROM member m JOIN pool p ON p.id = m.pool_id WHERE m.id = ?",
    HEALTHMONITOR: "SELECT p.load_balancer_id FROM health_monitor h JOIN pool p ON p.id = h.pool_id WHERE h.id = ?",
    L7POLICY: "SELECT l.load_balancer_id FROM l7policy p JOIN listener l ON l.id = p.listener_id WHERE p.id = ?",
    L7RULE: "SELECT l.load_balancer_id FROM l7rule r JOIN l7policy p ON p.id = r.l7policy_id"
    " JOIN listener l ON l.id = p.listener_id WHERE r.id = ?",
}


def _columns(alias: str) -> str:
    return f"{alias}.id, {alias}.provisioning_status, {alias}.operating_status, {alias}.enabled"


# Each row: id, provisioning, operating, enabled, parent id, name[, kind-specific column].
_TREE_QUERIES = {
    LOADBALANCER: f"SELECT {_columns('b')}, NULL, b.name, b.provider FROM load_balancer b WHERE b.id = :lb",
    LISTENER: f"SELECT {_columns('l')}, l.load_balancer_id, l.name, l.default_pool_id FROM listener l"
    " WHERE l.load_balancer_id = :lb",
    POOL: f"SELECT {_columns('p')}, p.load_balancer_id, p.name FROM pool p WHERE p.load_balancer_id = :lb",
    MEMBER: f"SELECT {_columns('m')}, m.pool_id, m.name, m.ip_address FROM member m"
    " JOIN pool p ON p.id = m.pool_id WHERE p.load_balancer_id = :lb",
    HEALTHMONITOR: f"SELECT {_columns('h')}, h.pool_id, h.name, h.delay FROM health_monitor h"
    " JOIN pool p ON p.id = h.pool_id WHERE p.load_balancer_id = :lb",
    L7POLICY: f"SELECT {_columns('p')}, p.listener_id, p.name, p.redirect_pool_id"
    " FROM l7policy p JOIN listener l ON l.id = p.listener_id WHERE l.load_balancer_id = :lb",
    L7RULE: f"SELECT {_columns('r')}, r.l7policy_id, NULL FROM l7rule r"
    " JOIN l7policy p ON p.id = r.l7policy_id JOIN listener l ON l.id = p.listener_id"
    " WHERE l.load_balancer_id = :lb",
}


class OctaviaDb:
    """Read-only access to Octavia's sqlite database."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._version_db: sqlite3.Connection | None = None
        self._version_lock = threading.Lock()

    def _connect(self, check_same_thread: bool = True) -> sqlite3.Connection:
        return sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=30, check_same_thread=check_same_thread)

    def version(self) -> int | None:
        """sqlite's ``data_version`` on a connection kept for it: it changes whenever another connection (the
        API, the driver agent) has committed since the last call, so the same value means the same database.
        None when the database cannot be read (then nothing may be taken as unchanged)."""
        with self._version_lock:
            try:
                if self._version_db is None:
                    self._version_db = self._connect(check_same_thread=False)
                return self._version_db.execute("PRAGMA data_version").fetchone()[0]
            except sqlite3.Error:
                self._version_db = None
                return None

    def loadbalancer_of(self, kind: str, object_id: str) -> str | None:
        with self._connect() as db:
            row = db.execute(_PARENT_LB_QUERIES[kind], (object_id,)).fetchone()
        return row[0] if row else None

    def tree(self, lb_id: str) -> LbTree | None:
        nodes = []
        with self._connect() as db:
            for kind, query in _TREE_QUERIES.items():
                for row in db.execute(query, {"lb": lb_id}):
                    nodes.append(_node(kind, row))
        if not any(n.kind == LOADBALANCER for n in nodes):
            return None
        return LbTree(nodes)

    def vip_of_pool(self, pool_id: str) -> tuple[str | None, str | None] | None:
        """``(vip address, vip subnet id)`` of the load balancer that holds pool ``pool_id``; None without one."""
        with self._connect() as db:
            row = db.execute("SELECT v.ip_address, v.subnet_id FROM pool p JOIN vip v"
                             " ON v.load_balancer_id = p.load_balancer_id WHERE p.id = ?", (pool_id,)).fetchone()
        return (row[0], row[1]) if row else None

    def live_loadbalancers(self) -> list[str]:
        with self._connect() as db:
            return [r[0] for r in db.execute("SELECT id FROM load_balancer WHERE provisioning_status != 'DELETED'")]


def _node(kind: str, row) -> Node:
    object_id, prov, oper, enabled, parent, name, *extra = row
    node = Node(kind=kind, id=object_id, provisioning_status=prov, operating_status=oper,
                admin_state_up=bool(enabled), parent_id=parent, name=name)
    if not extra:
        return node
    field = {LOADBALANCER: "provider", LISTENER: "default_pool_id", MEMBER: "address", HEALTHMONITOR: "delay",
             L7POLICY: "redirect_pool_id"}[kind]
    return Node(**{**node.__dict__, field: extra[0]})
