"""An Octavia provider driver backed by the emulator.

Registered as ``minicloud`` in the ``octavia.api.drivers`` entry point group, and in-process by
:func:`minicloud.services.octavia.register_driver`.
Octavia loads a new driver object per call, so all state lives in the
process-wide :func:`minicloud.octavia_provider.emulator.get` and :func:`minicloud.octavia_provider.vip.get`.
"""

from __future__ import annotations

import logging

from octavia_lib.api.drivers import provider_base

from minicloud.octavia_provider import emulator, vip
from minicloud.octavia_provider.planner import BATCH, CREATE, DELETE, UPDATE, Event
from minicloud.octavia_provider.tree import HEALTHMONITOR, L7POLICY, L7RULE, LISTENER, LOADBALANCER, MEMBER, POOL

LOG = logging.getLogger(__name__)


def _submit(kind: str, object_id: str, action: str, member_ids: tuple[str, ...] = ()) -> None:
    emulator.get().submit(Event(kind, object_id, action, member_ids))


class MinicloudProviderDriver(provider_base.ProviderDriver):
    """Accepts every change and reports statuses asynchronously, like the amphora provider.

    VIPs are real Neutron ports (:mod:`minicloud.octavia_provider.vip`).
    """

    def create_vip_port(self, loadbalancer_id, project_id, vip_dictionary, additional_vip_dicts):
        return vip.get().create(loadbalancer_id, project_id, vip_dictionary), list(additional_vip_dicts or [])

    def loadbalancer_create(self, loadbalancer):
        _submit(LOADBALANCER, loadbalancer.loadbalancer_id, CREATE)

    def loadbalancer_delete(self, loadbalancer, cascade=False):
        try:
            vip.get().delete(loadbalancer.loadbalancer_id, loadbalancer.vip_port_id)
        except Exception:  # a leaked port must not block the delete
            LOG.exception("minicloud provider: could not delete the VIP port of %s", loadbalancer.loadbalancer_id)
        _submit(LOADBALANCER, loadbalancer.loadbalancer_id, DELETE)

    def loadbalancer_update(self, old_loadbalancer, new_loadbalancer):
        _submit(LOADBALANCER, new_loadbalancer.loadbalancer_id, UPDATE)

    def listener_create(self, listener):
        _submit(LISTENER, listener.listener_id, CREATE)

    def listener_delete(self, listener):
        _submit(LISTENER, listener.listener_id, DELETE)

    def listener_update(self, old_listener, new_listener):
        _submit(LISTENER, new_listener.listener_id, UPDATE)

    def pool_create(self, pool):
        _submit(POOL, pool.pool_id, CREATE)

    def pool_delete(self, pool):
        _submit(POOL, pool.pool_id, DELETE)

    def pool_update(self, old_pool, new_pool):
        _submit(POOL, new_pool.pool_id, UPDATE)

    def member_create(self, member):
        _submit(MEMBER, member.member_id, CREATE)

    def member_delete(self, member):
        _submit(MEMBER, member.member_id, DELETE)

    def member_update(self, old_member, new_member):
        _submit(MEMBER, new_member.member_id, UPDATE)

    def member_batch_update(self, pool_id, members):
        _submit(POOL, pool_id, BATCH, tuple(m.member_id for m in members))

    def health_monitor_create(self, healthmonitor):
        _submit(HEALTHMONITOR, healthmonitor.healthmonitor_id, CREATE)

    def health_monitor_delete(self, healthmonitor):
        _submit(HEALTHMONITOR, healthmonitor.healthmonitor_id, DELETE)

    def health_monitor_update(self, old_healthmonitor, new_healthmonitor):
        _submit(HEALTHMONITOR, new_healthmonitor.healthmonitor_id, UPDATE)

    def l7policy_create(self, l7policy):
        _submit(L7POLICY, l7policy.l7policy_id, CREATE)

    def l7policy_delete(self, l7policy):
        _submit(L7POLICY, l7policy.l7policy_id, DELETE)

    def l7policy_update(self, old_l7policy, new_l7policy):
        _submit(L7POLICY, new_l7policy.l7policy_id, UPDATE)

    def l7rule_create(self, l7rule):
        _submit(L7RULE, l7rule.l7rule_id, CREATE)

    def l7rule_delete(self, l7rule):
        _submit(L7RULE, l7rule.l7rule_id, DELETE)

    def l7rule_update(self, old_l7rule, new_l7rule):
        _submit(L7RULE, new_l7rule.l7rule_id, UPDATE)

    def get_supported_flavor_metadata(self):
        return {}

    def validate_flavor(self, flavor_metadata):
        pass

    def get_supported_availability_zone_metadata(self):
        return {}

    def validate_availability_zone(self, availability_zone_metadata):
        pass
