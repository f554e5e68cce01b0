# -*- coding: utf-8 -*-
"""The small shared helpers: the clock's wall time, address normalising, the error classes' data."""

import datetime
import time

import pytest

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.clock import Clock
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import (
    FlightcontrolError,
    ModuleFailure,
    PlanError,
    ResolveError,
    RuleError,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.identifiers import normalize_address


def test_clock_wall_time_is_aware_utc_and_epoch():
    clock = Clock()
    before = time.time()
    now = clock.utc_now()
    assert now.tzinfo is not None and now.utcoffset() == datetime.timedelta(0)
    assert before - 1 <= now.timestamp() <= time.time() + 1
    assert before - 1 <= clock.time() <= time.time() + 1


@pytest.mark.parametrize("written, canonical", [
    ("2001:DB8:0::1", "2001:db8::1"),
    ("10.0.0.5", "10.0.0.5"),
    ("fd00:180::0006", "fd00:180::6"),
    ("not-an-address", "not-an-address"),
    (None, None),
])
def test_normalize_address(written, canonical):
    assert normalize_address(written) == canonical


def test_errors_carry_result_data_and_plan_errors_stay_value_errors():
    failure = ModuleFailure("stuck", cluster=None, polls=3)
    assert str(failure) == "stuck" and failure.data == {"cluster": None, "polls": 3}
    assert ResolveError("gone").data == {}
    assert issubclass(RuleError, PlanError) and issubclass(PlanError, ValueError)
    for cls in (ModuleFailure, ResolveError, PlanError):
        assert issubclass(cls, FlightcontrolError)
