# -*- coding: utf-8 -*-
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The parsing route_audit's plan does again and again, done once per text: the performance plumbing kept
out of ``plan.py``, which calls the functions here as it would call ``ipaddress``.

Neutron returns routes as strings, and an audit and every step of a repair parse the same routes, node
addresses and pod CIDRs again (thousands of them at a few thousand nodes). ``ipaddress`` objects are
immutable, so the parse of a string is kept: in dicts and ``lru_cache`` entries bounded by ``PARSED`` entries
each, for the life of the process (one module run). Only strings are kept: ``1`` and ``True`` would share an
entry. Networks are of classes that compute their hash once (``ipaddress`` computes it in Python at every
lookup in a dict or a set).
"""

import functools
import ipaddress

#: How many parses of each kind are kept (past it the addresses and destinations are forgotten at once, the
#: routes least recently used first).
PARSED = 1 << 16


class _IPv4Network(ipaddress.IPv4Network):
    """An IPv4Network that computes its hash once."""

    def __hash__(self):
        value = self.__dict__.get("_hash")
        if value is None:
            value = self.__dict__["_hash"] = ipaddress.IPv4Network.__hash__(self)
        return value


class _IPv6Network(ipaddress.IPv6Network):
    """An IPv6Network that computes its hash once."""

    def __hash__(self):
        value = self.__dict__.get("_hash")
        if value is None:
            value = self.__dict__["_hash"] = ipaddress.IPv6Network.__hash__(self)
        return value


def network(text, strict=True):
    """``ipaddress.ip_network``, of the classes above (not kept: see ``destination`` and ``shared``)."""
    for kind in (_IPv4Network, _IPv6Network):
        try:
            return kind(text, strict)
        except (ipaddress.AddressValueError, ipaddress.NetmaskValueError):
            pass
    return ipaddress.ip_network(text, strict)  # raises ipaddress's own ValueError


class _Kept(dict):
    """text -> parse, forgotten all at once past PARSED entries."""

    def keep(self, text, value):
        if len(self) >= PARSED:
            self.clear()
        self[text] = value
        return value


_ADDRESSES = _Kept()  # address text -> address (None: not one)
_DESTINATIONS = _Kept()  # destination text -> network (None: not one)


def address(text):
    """The address of ``text``, None when it is none (a node's address is every route's nexthop to it)."""
    if isinstance(text, str) and text in _ADDRESSES:
        return _ADDRESSES[text]
    try:
        value = ipaddress.ip_address(text)
    except (ValueError, TypeError):
        value = None
    return _ADDRESSES.keep(text, value) if isinstance(text, str) else value


def destination(text):
    """The network of a route destination (host bits dropped), None when it is none."""
    if isinstance(text, str) and text in _DESTINATIONS:
        return _DESTINATIONS[text]
    try:
        value = network(text, strict=False)
    except (ValueError, TypeError):
        value = None
    return _DESTINATIONS.keep(text, value) if isinstance(text, str) else value


def shared(text, parsed):
    """The network kept for ``text`` if there is one, else ``parsed`` (then kept): a pod CIDR and the route to
    it get the same object, so lookups between them are identity checks."""
    return _DESTINATIONS.setdefault(text, parsed)


def _parse_route(dest, nexthop):
    parsed = destination(dest)
    if parsed is None:
        return None
    hop = address(nexthop)
    return None if hop is None else (parsed, hop)


_kept_route = functools.lru_cache(maxsize=PARSED)(_parse_route)


def route_key(dest, nexthop):
    """(network, nexthop address) of a route's two strings, None if either is unparsable."""
    if isinstance(dest, str) and isinstance(nexthop, str):
        return _kept_route(dest, nexthop)
    return _parse_route(dest, nexthop)


def _canonical(dest):
    parsed = destination(dest)
    return parsed is not None and str(parsed) == dest


_kept_canonical = functools.lru_cache(maxsize=PARSED)(_canonical)


def is_canonical(dest):
    """Whether a destination is in network form (no host bits)."""
    return _kept_canonical(dest) if isinstance(dest, str) else _canonical(dest)


def inside(net, cidrs):
    """Whether ``net`` lies inside one of ``cidrs``."""
    return any(net.version == c.version and net.subnet_of(c) for c in cidrs)


class ClusterCidrs(tuple):
    """The cluster CIDRs as a cache key: equal and hashed by their text (hashing networks is slow)."""

    def __new__(cls, cidrs):
        return super(ClusterCidrs, cls).__new__(cls, cidrs)

    def __init__(self, cidrs):
        super(ClusterCidrs, self).__init__()
        self.key = tuple(str(c) for c in self)

    def __eq__(self, other):
        return isinstance(other, ClusterCidrs) and self.key == other.key

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(self.key)


@functools.lru_cache(maxsize=PARSED)
def _kept_in_cluster(dest, nexthop, cidrs):
    key = _kept_route(dest, nexthop)
    return key is not None and inside(key[0], cidrs)


def in_cluster(dest, nexthop, cidrs):
    """Whether the route ``dest -> nexthop`` (strings) lies inside ``cidrs`` (a ClusterCidrs): once per route
    and run."""
    return _kept_in_cluster(dest, nexthop, cidrs)
