"""One load balancer's configuration as the amphora (or OVN) sees it, read from Octavia's database.

Only what HAProxy is given: listeners, pools, members and health monitors with the fields the
amphora's templates use. Objects Octavia has not handed to the amphora yet (PENDING_CREATE, which is
where the lost-member mode leaves a member) or that failed (ERROR) are left out.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

NOT_CONFIGURED = ("PENDING_CREATE", "ERROR", "DELETED")


@dataclass(frozen=True)
class Monitor:
    id: str
    type: str
    delay: int
    timeout: int
    rise: int  # Octavia's max_retries
    fall: int  # Octavia's max_retries_down
    http_method: str | None = None
    url_path: str | None = None
    expected_codes: str | None = None
    enabled: bool = True


@dataclass(frozen=True)
class Member:
    id: str
    address: str
    port: int
    weight: int = 1
    backup: bool = False
    enabled: bool = True
    name: str | None = None
    subnet_id: str | None = None  # the member's subnet (the VIP's when the member names none)


@dataclass(frozen=True)
class Pool:
    id: str
    protocol: str
    algorithm: str
    enabled: bool = True
    members: tuple[Member, ...] = ()
    monitor: Monitor | None = None


@dataclass(frozen=True)
class Listener:
    id: str
    protocol: str
    port: int
    default_pool_id: str | None = None
    connection_limit: int = -1
    enabled: bool = True
    timeout_client_data: int | None = None
    timeout_member_connect: int | None = None
    timeout_member_data: int | None = None


@dataclass(frozen=True)
class LoadBalancer:
    id: str
    vip_address: str | None
    provisioning_status: str
    enabled: bool = True
    listeners: tuple[Listener, ...] = ()
    pools: tuple[Pool, ...] = field(default_factory=tuple)
    provider: str | None = None  # the Octavia provider (``amphora``, ``ovn``...): how the data plane forwards

    def pool(self, pool_id: str | None) -> Pool | None:
        return next((p for p in self.pools if p.id == pool_id), None)


_LB = ("SELECT b.id, v.ip_address, b.provisioning_status, b.enabled, b.provider, v.subnet_id FROM load_balancer b"
       " LEFT JOIN vip v ON v.load_balancer_id = b.id WHERE b.id = ?")
_LISTENERS = ("SELECT id, protocol, protocol_port, default_pool_id, connection_limit, enabled, timeout_client_data,"
              " timeout_member_connect, timeout_member_data FROM listener WHERE load_balancer_id = ?"
              " AND provisioning_status NOT IN (?, ?, ?)")
_POOLS = ("SELECT id, protocol, lb_algorithm, enabled FROM pool WHERE load_balancer_id = ?"
          " AND provisioning_status NOT IN (?, ?, ?)")
_MEMBERS = ("SELECT id, ip_address, protocol_port, weight, backup, enabled, name, subnet_id FROM member WHERE pool_id = ?"
            " AND provisioning_status NOT IN (?, ?, ?) ORDER BY created_at, id")
_MONITOR = ("SELECT id, type, delay, timeout, rise_threshold, fall_threshold, http_method, url_path, expected_codes,"
            " enabled FROM health_monitor WHERE pool_id = ? AND provisioning_status NOT IN (?, ?, ?)")


def read(db_path: Path, lb_id: str) -> LoadBalancer | None:
    """The configuration of load balancer ``lb_id``; None once it is gone (or DELETED)."""
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=30) as db:
        row = db.execute(_LB, (lb_id,)).fetchone()
        if row is None or row[2] == "DELETED":
            return None
        listeners = tuple(_listener(r) for r in db.execute(_LISTENERS, (lb_id, *NOT_CONFIGURED)))
        pools = tuple(_pool(db, r, row[5]) for r in db.execute(_POOLS, (lb_id, *NOT_CONFIGURED)).fetchall())
    return LoadBalancer(id=row[0], vip_address=row[1], provisioning_status=row[2], enabled=bool(row[3]),
                        listeners=listeners, pools=pools, provider=row[4])


def _listener(row) -> Listener:
    return Listener(id=row[0], protocol=row[1], port=row[2], default_pool_id=row[3],
                    connection_limit=row[4] if row[4] is not None else -1, enabled=bool(row[5]),
                    timeout_client_data=row[6], timeout_member_connect=row[7], timeout_member_data=row[8])


def _pool(db: sqlite3.Connection, row, vip_subnet: str | None = None) -> Pool:
    members = tuple(Member(id=m[0], address=m[1], port=m[2], weight=m[3] if m[3] is not None else 1,
                           backup=bool(m[4]), enabled=bool(m[5]), name=m[6], subnet_id=m[7] or vip_subnet)
                    for m in db.execute(_MEMBERS, (row[0], *NOT_CONFIGURED)))
    hm = db.execute(_MONITOR, (row[0], *NOT_CONFIGURED)).fetchone()
    monitor = None
    if hm is not None:
        monitor = Monitor(id=hm[0], type=hm[1], delay=hm[2], timeout=hm[3], rise=hm[4], fall=hm[5],
                          http_method=hm[6], url_path=hm[7], expected_codes=hm[8], enabled=bool(hm[9]))
    return Pool(id=row[0], protocol=row[1], algorithm=row[2], enabled=bool(row[3]), members=members, monitor=monitor)
