# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The parsing route_audit's plan does again and again, done once per text and run: the performance plumbing
kept out of the plan (``routes``, ``nodes``, ``findings``, ``steps``), which calls the functions here as it would
call ``ipaddress``.

Neutron returns routes as strings, and an audit and every step of a repair parse the same routes, node
addresses and pod CIDRs again (thousands of them at a few thousand nodes). ``ipaddress`` objects are
immutable, so the parse of a string is kept, in a ``Parses`` that lives for one run: the runner makes it
(``one_run``) and it is the current one until the run ends, so two runs in one process share nothing. Outside
a run nothing is kept (the same answers, parsed every time). Each kind of parse is bounded by ``PARSED``
entries. Only strings are kept: ``1`` and ``True`` would share an entry. Networks are of classes that compute
their hash once (``ipaddress`` computes it in Python at every lookup in a dict or a set).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import ipaddress
from typing import Any, Iterable, Iterator, Tuple, Union

#: How many parses of each kind are kept (past it the addresses and destinations are forgotten at once, the
#: routes least recently used first).
PARSED = 1 << 16

IPNetwork = Union[ipaddress.IPv4Network, ipaddress.IPv6Network]
IPAddress = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]
#: (destination network, nexthop address) of a route
RouteKey = Tuple[IPNetwork, IPAddress]


class _IPv4Network(ipaddress.IPv4Network):
    """An IPv4Network that computes its hash once."""

    def __hash__(self) -> int:
        value = self.__dict__.get("_hash")
        if value is None:
            value = self.__dict__["_hash"] = ipaddress.IPv4Network.__hash__(self)
        return value


class _IPv6Network(ipaddress.IPv6Network):
    """An IPv6Network that computes its hash once."""

    def __hash__(self) -> int:
        value = self.__dict__.get("_hash")
        if value is None:
            value = self.__dict__["_hash"] = ipaddress.IPv6Network.__hash__(self)
        return value


def network(text: Any, strict: bool = True) -> IPNetwork:
    """``ipaddress.ip_network``, of the classes above (not kept: see ``destination`` and ``shared``)."""
    kind: type[IPNetwork]
    for kind in (_IPv4Network, _IPv6Network):
        try:
            return kind(text, strict)
        except (ipaddress.AddressValueError, ipaddress.NetmaskValueError):
            pass
    return ipaddress.ip_network(text, strict)  # raises ipaddress's own ValueError


class _Kept(dict):
    """text -> parse, forgotten all at once past PARSED entries."""

    def keep(self, text: str, value: Any) -> Any:
        if len(self) >= PARSED:
            self.clear()
        self[text] = value
        return value


def _parse_address(text: Any) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text)
    except (ValueError, TypeError):
        return None


def _parse_destination(text: Any) -> IPNetwork | None:
    try:
        return network(text, strict=False)
    except (ValueError, TypeError):
        return None


def _parse_route(dest: Any, nexthop: Any) -> RouteKey | None:
    parsed = _parse_destination(dest)
    if parsed is None:
        return None
    hop = _parse_address(nexthop)
    return None if hop is None else (parsed, hop)


def _canonical(dest: Any) -> bool:
    parsed = _parse_destination(dest)
    return parsed is not None and str(parsed) == dest


class Parses:
    """The parses of one run: address and destination texts (dicts), and per route its key, whether its
    destination is canonical and whether it lies inside the cluster CIDRs (``lru_cache``s of this object)."""

    def __init__(self) -> None:
        self.addresses = _Kept()  # address text -> address (None: not one)
        self.destinations = _Kept()  # destination text -> network (None: not one)
        self.route_key = functools.lru_cache(maxsize=PARSED)(self._route_key)
        self.is_canonical = functools.lru_cache(maxsize=PARSED)(self._is_canonical)
        self.in_cluster = functools.lru_cache(maxsize=PARSED)(self._in_cluster)

    def address(self, text: str) -> IPAddress | None:
        if text in self.addresses:
            return self.addresses[text]
        return self.addresses.keep(text, _parse_address(text))

    def destination(self, text: str) -> IPNetwork | None:
        if text in self.destinations:
            return self.destinations[text]
        return self.destinations.keep(text, _parse_destination(text))

    def shared(self, text: str, parsed: IPNetwork) -> IPNetwork:
        return self.destinations.setdefault(text, parsed)

    def _route_key(self, dest: str, nexthop: str) -> RouteKey | None:
        parsed = self.destination(dest)
        if parsed is None:
            return None
        hop = self.address(nexthop)
        return None if hop is None else (parsed, hop)

    def _is_canonical(self, dest: str) -> bool:
        parsed = self.destination(dest)
        return parsed is not None and str(parsed) == dest

    def _in_cluster(self, dest: str, nexthop: str, cidrs: ClusterCidrs) -> bool:
        key = self.route_key(dest, nexthop)
        return key is not None and inside(key[0], cidrs)


class _Unkept:
    """Outside a run: every parse made again, nothing kept."""

    address = staticmethod(_parse_address)
    destination = staticmethod(_parse_destination)
    route_key = staticmethod(_parse_route)
    is_canonical = staticmethod(_canonical)

    @staticmethod
    def shared(text: str, parsed: IPNetwork) -> IPNetwork:
        return parsed

    @staticmethod
    def in_cluster(dest: str, nexthop: str, cidrs: ClusterCidrs) -> bool:
        key = _parse_route(dest, nexthop)
        return key is not None and inside(key[0], cidrs)


_CURRENT: contextvars.ContextVar[Any] = contextvars.ContextVar("route_audit_parses", default=_Unkept())


def current() -> Parses | _Unkept:
    """The ``Parses`` of the run under way (outside a run: one that keeps nothing)."""
    return _CURRENT.get()


@contextlib.contextmanager
def one_run() -> Iterator[Parses]:
    """The parses of one run: a new ``Parses`` is the current one until the block ends."""
    token = _CURRENT.set(Parses())
    try:
        yield _CURRENT.get()
    finally:
        _CURRENT.reset(token)


def address(text: Any) -> IPAddress | None:
    """The address of ``text``, None when it is none (a node's address is every route's nexthop to it)."""
    return _CURRENT.get().address(text) if isinstance(text, str) else _parse_address(text)


def destination(text: Any) -> IPNetwork | None:
    """The network of a route destination (host bits dropped), None when it is none."""
    return _CURRENT.get().destination(text) if isinstance(text, str) else _parse_destination(text)


def shared(text: str, parsed: IPNetwork) -> IPNetwork:
    """The network kept for ``text`` if there is one, else ``parsed`` (then kept): a pod CIDR and the route to
    it get the same object, so lookups between them are identity checks."""
    return _CURRENT.get().shared(text, parsed)


def route_key(dest: Any, nexthop: Any) -> RouteKey | None:
    """(network, nexthop address) of a route's two strings, None if either is unparsable."""
    if isinstance(dest, str) and isinstance(nexthop, str):
        return _CURRENT.get().route_key(dest, nexthop)
    return _parse_route(dest, nexthop)


def is_canonical(dest: Any) -> bool:
    """Whether a destination is in network form (no host bits)."""
    return _CURRENT.get().is_canonical(dest) if isinstance(dest, str) else _canonical(dest)


def inside(net: IPNetwork, cidrs: Iterable[IPNetwork]) -> bool:
    """Whether ``net`` lies inside one of ``cidrs``."""
    return any(net.version == c.version and net.subnet_of(c) for c in cidrs)  # type: ignore[arg-type]  # one family


class ClusterCidrs(tuple[IPNetwork, ...]):
    """The cluster CIDRs as a cache key: equal and hashed by their text (hashing networks is slow)."""

    def __new__(cls, cidrs: Iterable[IPNetwork]) -> ClusterCidrs:
        return super().__new__(cls, cidrs)

    def __init__(self, cidrs: Iterable[IPNetwork]) -> None:
        super().__init__()
        self.key = tuple(str(c) for c in self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ClusterCidrs) and self.key == other.key

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self.key)


def in_cluster(dest: str, nexthop: str, cidrs: ClusterCidrs) -> bool:
    """Whether the route ``dest -> nexthop`` (strings) lies inside ``cidrs`` (a ClusterCidrs): once per route
    and run."""
    return _CURRENT.get().in_cluster(dest, nexthop, cidrs)
