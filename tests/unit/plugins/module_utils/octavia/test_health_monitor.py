# -*- coding: utf-8 -*-
"""The one computation of a health monitor's window (control_plane_rollout's preflight reads it)."""

from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.health_monitor import (
    monitor_fields,
    monitor_window,
    window_check,
)


def test_window_is_delay_times_max_retries_down():
    assert monitor_window({"delay": 10, "max_retries_down": 3}) == 30
    assert monitor_window(None) is None


def test_within_the_limit_there_is_no_finding_and_over_it_the_numbers():
    monitor = monitor_fields({"id": "x", "name": "hm", "delay": 10, "max_retries_down": 3, "timeout": 5, "extra": 1})
    assert "extra" not in monitor
    assert window_check("p", monitor, 30) == {"health_monitor": monitor, "window": 30, "limit": 30, "finding": ""}
    assert window_check("p", monitor, 29)["finding"] == (
        "health monitor hm lets a dead member take traffic for up to 30 s (delay 10 s x max_retries_down 3, each "
        "check up to timeout 5 s), more than 29 s")
    assert window_check("p", None, 30)["window"] is None
