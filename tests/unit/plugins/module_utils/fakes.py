# -*- coding: utf-8 -*-
"""Test doubles shared by the unit tests: a clock that only moves when told, a call that follows a script, the
part of a module base a runner reads."""

from types import SimpleNamespace

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline


class FakeClock:
    def __init__(self, start=1000.0):
        self.now = start
        self.sleeps = []

    def monotonic(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds

    def time(self):
        """Wall-clock seconds: the fake's epoch is its monotonic time."""
        return self.now

    def utc_now(self):
        import datetime
        return datetime.datetime.fromtimestamp(self.now, datetime.timezone.utc)


def scripted(*outcomes):
    """A callable that raises or returns the outcomes in order (exceptions are raised), recording each call in
    ``calls``."""
    calls = []

    def func():
        calls.append(1)
        outcome = outcomes[len(calls) - 1]
        if isinstance(outcome, Exception):
            raise outcome
        return outcome
    func.calls = calls
    return func


def fake_module(clock, timeout=3600, **fields):
    """What a runner reads of its module base (``core.options.ModuleRunner``): the clock, the start time and the
    run's deadline, ``timeout`` seconds after it; ``fields`` add the rest a test needs."""
    started = clock.monotonic()
    return SimpleNamespace(clock=clock, started=started, deadline=Deadline.after(clock, timeout, started), **fields)
