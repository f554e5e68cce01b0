"""The ``ovn`` provider driver: ovn-octavia-provider 11.0.0's checks in front of minicloud's emulator.

Each call refuses what ``ovn_octavia_provider/driver.py`` (``OvnProviderDriver``) refuses, with its words
(:mod:`minicloud.octavia_provider.ovn`), then hands the change to the emulator, which reports it the way
ovn's helper does (at once, no PENDING window: :func:`minicloud.octavia_provider.ovn.plan`). L7 policies and
rules, flavors and availability zones fall through to octavia-lib's ``ProviderDriver``, which refuses them
(not implemented), as ovn's driver does not define them.
"""

from __future__ import annotations

import threading

from octavia_lib.api.drivers import data_models, provider_base
from octavia_lib.api.drivers import exceptions as driver_exceptions

from minicloud.octavia_provider import emulator, ovn, vip
from minicloud.octavia_provider.driver import MinicloudProviderDriver

_CIDRS: dict[str, str] = {}
_CIDRS_LOCK = threading.Lock()


def _value(value):
    """None for octavia-lib's ``Unset``."""
    return None if isinstance(value, data_models.UnsetType) else value


def _refusing(check, *args, **kwargs) -> None:
    try:
        check(*args, **kwargs)
    except ovn.Refused as exc:
        raise driver_exceptions.UnsupportedOptionError(user_fault_string=str(exc),
                                                       operator_fault_string=str(exc)) from exc


def _subnet_cidr(subnet_id: str) -> str | None:
    with _CIDRS_LOCK:
        if subnet_id not in _CIDRS:
            subnet = vip.get().network.find_subnet(subnet_id, ignore_missing=True)
            if subnet is None:
                return None
            _CIDRS[subnet_id] = subnet.cidr
        return _CIDRS[subnet_id]


def _vip_of_pool(pool_id: str) -> tuple[str | None, str | None, str | None]:
    """``(vip address, vip subnet id, its cidr)`` of the pool's load balancer (``helper.py``
    ``_get_subnet_from_pool``)."""
    found = emulator.get().db.vip_of_pool(pool_id)
    if not found:
        return None, None, None
    address, subnet_id = found
    return address, subnet_id, _subnet_cidr(subnet_id) if subnet_id else None


def _check_member(member, action: str = "creation", batch: bool = False) -> None:
    _refusing(ovn.check_member_monitor, _value(member.monitor_address), _value(member.monitor_port), batch)
    address, subnet_id, cidr = _vip_of_pool(member.pool_id)
    if _value(member.address):
        _refusing(ovn.check_ip_version, member.address, address)
        _refusing(ovn.member_subnet, member.address, _value(member.subnet_id), (subnet_id, cidr), action)


def _check_pool(pool) -> None:
    _refusing(ovn.check_protocol, _value(pool.protocol))
    _refusing(ovn.check_algorithm, _value(pool.lb_algorithm))
    _refusing(ovn.check_session_persistence, _value(pool.session_persistence))
    monitor = _value(pool.healthmonitor)
    if monitor is not None:
        _refusing(ovn.check_health_monitor_type, _value(monitor.type))


def _check_listener(listener) -> None:
    _refusing(ovn.check_protocol, _value(listener.protocol))
    _refusing(ovn.check_allowed_cidrs, _value(listener.allowed_cidrs))


def _check_tree(loadbalancer) -> None:
    """``loadbalancer_create`` with children: listeners and pools checked; members take the VIP subnet
    unchecked when they name none, monitor options still refused."""
    for listener in _value(loadbalancer.listeners) or []:
        _check_listener(listener)
        pool = _value(listener.default_pool)
        if pool is not None:
            _check_pool(pool)
    for pool in _value(loadbalancer.pools) or []:
        _check_pool(pool)
        for member in _value(pool.members) or []:
            _refusing(ovn.check_member_monitor, _value(member.monitor_address), _value(member.monitor_port))


class OvnProviderDriver(MinicloudProviderDriver):
    """minicloud's ``ovn`` provider (see the module's doc)."""

    def loadbalancer_create(self, loadbalancer):
        _check_tree(loadbalancer)
        super().loadbalancer_create(loadbalancer)

    def loadbalancer_failover(self, loadbalancer_id):
        raise driver_exceptions.UnsupportedOptionError(user_fault_string=ovn.FAILOVER,
                                                       operator_fault_string=ovn.FAILOVER)

    def listener_create(self, listener):
        _check_listener(listener)
        super().listener_create(listener)

    def listener_update(self, old_listener, new_listener):
        _refusing(ovn.check_allowed_cidrs, _value(new_listener.allowed_cidrs))
        super().listener_update(old_listener, new_listener)

    def pool_create(self, pool):
        _check_pool(pool)
        super().pool_create(pool)

    def pool_update(self, old_pool, new_pool):
        if _value(new_pool.protocol) is not None:
            _refusing(ovn.check_protocol, new_pool.protocol)
        if _value(new_pool.lb_algorithm) is not None:
            _refusing(ovn.check_algorithm, new_pool.lb_algorithm)
        _refusing(ovn.check_session_persistence, _value(new_pool.session_persistence))
        super().pool_update(old_pool, new_pool)

    def member_create(self, member):
        _check_member(member)
        super().member_create(member)

    def member_update(self, old_member, new_member):
        _refusing(ovn.check_member_monitor, _value(new_member.monitor_address), _value(new_member.monitor_port))
        super().member_update(old_member, new_member)

    def member_batch_update(self, pool_id, members):
        for member in members:
            _check_member(member, action="batch update", batch=True)
        super().member_batch_update(pool_id, members)

    def health_monitor_create(self, healthmonitor):
        _refusing(ovn.check_health_monitor_type, _value(healthmonitor.type))
        super().health_monitor_create(healthmonitor)

    l7policy_create = provider_base.ProviderDriver.l7policy_create
    l7policy_update = provider_base.ProviderDriver.l7policy_update
    l7rule_create = provider_base.ProviderDriver.l7rule_create
    l7rule_update = provider_base.ProviderDriver.l7rule_update
    get_supported_flavor_metadata = provider_base.ProviderDriver.get_supported_flavor_metadata
    validate_flavor = provider_base.ProviderDriver.validate_flavor
    get_supported_availability_zone_metadata = provider_base.ProviderDriver.get_supported_availability_zone_metadata
    validate_availability_zone = provider_base.ProviderDriver.validate_availability_zone
