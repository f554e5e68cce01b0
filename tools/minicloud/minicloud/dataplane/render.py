"""An HAProxy configuration from a load balancer, as Octavia's amphora renders it (pure).

Follows the amphora's combined-listeners template: one ``frontend`` per listener (named after the
listener), one ``backend`` per pool and listener (``<pool>:<listener>``), one ``server`` per member (named
after the member) with ``weight``, ``disabled`` when admin_state_up is false, ``backup``, and, under a
health monitor, ``check inter <delay> fall <max_retries_down> rise <max_retries>`` with ``timeout check``.
Servers keep their health across reloads (``server-state-file``, written before each reload). The
frontend binds a loopback port standing for the VIP's address and listener port.

A load balancer of the ``ovn`` provider is forwarded as OVN forwards it (ovn-octavia-provider's
``helper.py`` ``_refresh_lb_vips`` puts every enabled member in the VIP's backends, with no weight; a disabled
member is left out; ``common/constants.py`` ``LB_SELECTION_FIELDS_MAP`` hashes SOURCE_IP_PORT on source and
destination addresses and ports, SOURCE_IP on the addresses): every server ``weight 1`` whatever the member's
weight, no ``backup`` (OVN has none), an admin-down member ``disabled`` (out of rotation), SOURCE_IP_PORT as a
hash of the source port (on loopback only the ports differ) and SOURCE_IP as ``source``. OVN's service monitor
checks like HAProxy's (interval, timeout, success and failure counts), so checks render the same.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from minicloud.dataplane.model import Listener, LoadBalancer, Member, Monitor, Pool

MODES = {"TCP": "tcp", "HTTP": "http", "HTTPS": "tcp", "TERMINATED_HTTPS": "http", "PROXY": "tcp",
         "PROXYV2": "tcp"}
ALGORITHMS = {"ROUND_ROBIN": "roundrobin", "LEAST_CONNECTIONS": "leastconn", "SOURCE_IP": "source",
              "SOURCE_IP_PORT": "source"}
OVN = "ovn"
OVN_ALGORITHMS = {"SOURCE_IP_PORT": "hash src_port", "SOURCE_IP": "source"}
DEFAULT_TIMEOUT_MS = 50000
DEFAULT_CONNECT_MS = 5000
# Octavia renders 50000; loopback on a shared machine gets a file-descriptor limit that fits.
MAX_CONN = 4096
# Old workers left by a reload keep their established connections at most this long.
HARD_STOP_AFTER = "120s"


@dataclass(frozen=True)
class Paths:
    stats_socket: str
    state_file: str


@dataclass(frozen=True)
class Addresses:
    """Where things are on loopback: ``frontend(listener)`` the VIP's bind address, ``member(pool, member)``
    the endpoint standing for the member's address."""

    frontend: Callable[[Listener], str]
    member: Callable[[Pool, Member], str]


def render(lb: LoadBalancer, paths: Paths, addresses: Addresses, check_cap: float | None = None) -> str:
    lines = _global(paths)
    for listener in lb.listeners:
        pool = lb.pool(listener.default_pool_id)
        lines += _frontend(listener, pool, addresses)
        if pool is not None:
            lines += _backend(listener, pool, addresses, check_cap, lb.provider)
    return "\n".join(lines) + "\n"


def _global(paths: Paths) -> list[str]:
    return [
        "global",
        f"    maxconn {MAX_CONN}",
        f"    stats socket {paths.stats_socket} mode 600 level admin expose-fd listeners",
        "    stats timeout 30s",
        f"    server-state-file {paths.state_file}",
        f"    hard-stop-after {HARD_STOP_AFTER}",
        "",
        "defaults",
        "    retries 3",
        "    option redispatch",
        "    option splice-request",
        "    option splice-response",
        "    option http-keep-alive",
        f"    timeout connect {DEFAULT_CONNECT_MS}",
        f"    timeout client {DEFAULT_TIMEOUT_MS}",
        f"    timeout server {DEFAULT_TIMEOUT_MS}",
        "",
    ]


def _frontend(listener: Listener, pool: Pool | None, addresses: Addresses) -> list[str]:
    maxconn = listener.connection_limit if listener.connection_limit and listener.connection_limit > 0 else MAX_CONN
    lines = [
        f"frontend {listener.id}",
        f"    maxconn {maxconn}",
        f"    bind {addresses.frontend(listener)}",
        f"    mode {MODES.get(listener.protocol, 'tcp')}",
        f"    timeout client {listener.timeout_client_data or DEFAULT_TIMEOUT_MS}",
    ]
    if not listener.enabled:
        lines.append("    disabled")
    if pool is not None:
        lines.append(f"    default_backend {pool.id}:{listener.id}")
    return lines + [""]


def _balance(pool: Pool, provider: str | None) -> str:
    if provider == OVN:
        return OVN_ALGORITHMS.get(pool.algorithm, OVN_ALGORITHMS["SOURCE_IP_PORT"])
    return ALGORITHMS.get(pool.algorithm, "roundrobin")


def _backend(listener: Listener, pool: Pool, addresses: Addresses, check_cap: float | None,
             provider: str | None = None) -> list[str]:
    monitor = pool.monitor if pool.monitor is not None and pool.monitor.enabled else None
    lines = [
        f"backend {pool.id}:{listener.id}",
        f"    mode {MODES.get(pool.protocol, 'tcp')}",
        f"    balance {_balance(pool, provider)}",
        "    load-server-state-from-file global",
        f"    fullconn {MAX_CONN}",
        "    option allbackups",
        f"    timeout connect {listener.timeout_member_connect or DEFAULT_CONNECT_MS}",
        f"    timeout server {listener.timeout_member_data or DEFAULT_TIMEOUT_MS}",
    ]
    if monitor is not None:
        lines.append(f"    timeout check {_ms(min(monitor.timeout, _interval(monitor, check_cap)))}")
        lines += _check_options(monitor)
    if not pool.enabled:
        lines.append("    disabled")
    for member in pool.members:
        lines.append(_server(pool, member, monitor, addresses, check_cap, provider == OVN))
    return lines + [""]


def _check_options(monitor: Monitor) -> list[str]:
    if monitor.type in ("HTTP", "HTTPS"):
        lines = [f"    option httpchk {monitor.http_method or 'GET'} {monitor.url_path or '/'}"]
        return lines + [f"    http-check expect rstatus {expected_codes(monitor.expected_codes or '200')}"]
    if monitor.type == "TLS-HELLO":
        return ["    option ssl-hello-chk"]
    return []  # TCP (and PING, which on loopback is a connect): a TCP connect


def _server(pool: Pool, member: Member, monitor: Monitor | None, addresses: Addresses,
            check_cap: float | None, ovn: bool = False) -> str:
    weight = 1 if ovn else member.weight  # OVN reads no weight: every enabled member takes its share
    parts = [f"    server {member.id} {addresses.member(pool, member)} weight {weight}"]
    if monitor is not None:
        parts.append(f"check inter {_ms(_interval(monitor, check_cap))} fall {monitor.fall} rise {monitor.rise}")
        if monitor.type == "HTTPS":
            parts.append("check-ssl verify none")
    if member.backup and not ovn:
        parts.append("backup")
    if not member.enabled:
        parts.append("disabled")
    return " ".join(parts)


def _interval(monitor: Monitor, check_cap: float | None) -> float:
    return float(monitor.delay) if check_cap is None else min(float(monitor.delay), check_cap)


def _ms(seconds: float) -> str:
    return f"{max(1, int(round(seconds * 1000)))}ms"


def expected_codes(codes: str) -> str:
    """Octavia's expected_codes (``200``, ``200,202``, ``200-204``) as HAProxy's ``rstatus`` regex."""
    values: list[str] = []
    for part in codes.replace(" ", "").split(","):
        if "-" in part:
            low, high = (int(x) for x in part.split("-", 1))
            values += [str(code) for code in range(low, high + 1)]
        elif part:
            values.append(part)
    return "|".join(values)
