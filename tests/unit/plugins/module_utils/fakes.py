# -*- coding: utf-8 -*-
"""Test doubles shared by the unit tests: a clock that only moves when told, a call that follows a script."""


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
