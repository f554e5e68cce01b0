# -*- coding: utf-8 -*-
"""lb_member_wait's health monitor read after a successful wait keeps to the module's deadline."""

from types import SimpleNamespace

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import DeadlineExceeded
from ansible_collections.flightcontrol.openstack.plugins.module_utils.lb_member_wait.runner import (
    MemberWaitOptions,
    MemberWaitRunner,
)
from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils.fakes import FakeClock, fake_module


class Octavia:
    def __init__(self, answer):
        self.answer = answer
        self.deadlines = []

    def get_health_monitor(self, monitor_id, deadline):
        self.deadlines.append(deadline)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def runner(answer, timeout=60):
    clock = FakeClock()
    module = fake_module(clock, timeout, warnings=[], client=SimpleNamespace(request_timeout=30))
    module.warn = module.warnings.append
    options = MemberWaitOptions(pool="p", loadbalancer=None, members=None, state="present", operating_status=None,
                                wait_for_loadbalancer=True, report_health_monitor=True, timeout=timeout,
                                poll_interval=1)
    run = MemberWaitRunner(module, options)
    run.octavia, run.pool = Octavia(answer), {"id": "p", "healthmonitor_id": "hm"}
    return run, module


def test_the_monitor_is_read_within_the_modules_deadline():
    run, _module = runner({"id": "hm", "type": "TCP", "delay": 10, "timeout": 5, "max_retries": 5,
                           "max_retries_down": 3})
    data = run.monitor_data()
    assert data["health_monitor"]["delay"] == 10
    assert run.octavia.deadlines == [run.deadline] and run.deadline.at == run.started + 60  # the module's deadline, not one request timeout from now


def test_a_monitor_that_does_not_answer_in_time_leaves_the_success_standing_with_a_warning():
    run, module = runner(DeadlineExceeded("deadline reached"))
    assert run.monitor_data() == {"health_monitor": None}
    assert module.warnings and "health monitor did not answer before the timeout" in module.warnings[0]
