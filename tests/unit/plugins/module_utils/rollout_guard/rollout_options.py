# -*- coding: utf-8 -*-
"""rollout_guard's options as the module builds them, with its defaults: a test names what it changes."""

from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.runner import RolloutOptions

DEFAULTS = dict(mode="capi", cluster="c1", namespace="default", api_version=None, pool=None, loadbalancer=None,
                min_healthy_members=None, hook_name="flightcontrol-rollout", start=False, replace=None, drain=False,
                drain_timeout=30, drain_stop_server=True, drain_stop_timeout=180, drain_stop_timeout_action="release",
                member_timeout=600, timeout=3600, poll_interval=5, use_watch=True)


def rollout_options(check_mode=False, **given):
    return RolloutOptions.from_params(dict(DEFAULTS, **given), check_mode=check_mode)
