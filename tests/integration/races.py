# -*- coding: utf-8 -*-
"""Races without sleeps: the cloud holds one of the module's requests (a gate fault) until another client has made
its change, then lets it through."""

import threading

HOLD_TIMEOUT = 120


class _ModuleThread(threading.Thread):
    """``run()`` (a module run) in a thread, keeping what it returned or raised."""

    def __init__(self, run):
        super().__init__(daemon=True)
        self.run_module = run
        self.outcome = {}
        self.start()

    def run(self):
        try:
            self.outcome["run"] = self.run_module()
        except BaseException as exc:  # pylint: disable=broad-except
            self.outcome["error"] = exc

    def result(self):
        self.join(HOLD_TIMEOUT)
        assert not self.is_alive(), "the module run did not end after the release"
        if "error" in self.outcome:
            raise self.outcome["error"]
        return self.outcome["run"]


def with_concurrent_change(cloud, service, method, path, run, change):
    """Call ``run()`` (a module run) in a thread while minicloud holds its first ``method`` request to ``path``;
    once the request is held, call ``change()`` (the other client's write) and release the request. Returns
    (what ``run`` returned, what ``change`` returned)."""
    rule = cloud.api.add_fault(service, method=method, path=path, gate=True, count=1)
    thread = _ModuleThread(run)
    try:
        cloud.api.wait_held(rule["id"], 1, timeout=HOLD_TIMEOUT)
        changed = change()
    finally:
        cloud.api.release_fault(rule["id"])
    return thread.result(), changed


def with_change_after_first_answer(cloud, service, method, path, run, change):
    """Call ``run()`` in a thread; let its first ``method`` request to ``path`` be answered as the cloud stands, and
    hold its second until ``change()`` is done: the module sees the world before the change on its first poll and
    after it later, however slowly it starts. Returns (what ``run`` returned, what ``change`` returned)."""
    first = cloud.api.add_fault(service, method=method, path=path, gate=True, count=1)
    second = None
    thread = _ModuleThread(run)
    try:
        cloud.api.wait_held(first["id"], 1, timeout=HOLD_TIMEOUT)
        second = cloud.api.add_fault(service, method=method, path=path, gate=True, count=1)
        cloud.api.release_fault(first["id"])
        first = None
        cloud.api.wait_held(second["id"], 1, timeout=HOLD_TIMEOUT)  # the first one has been answered
        changed = change()
    finally:
        for rule in (first, second):
            if rule is not None:
                cloud.api.release_fault(rule["id"])
    return thread.result(), changed


WRITE_METHODS = ("POST", "PUT", "PATCH", "DELETE")


def with_reads_failing_after_first_write(cloud, services, status, run):
    """Call ``run()`` in a thread; hold its first write to any of ``services`` until every later read (GET) of them
    is answered ``status`` (for good: a 503 then lasts past any deadline), then let the write through. A run that
    writes nothing runs undisturbed. Returns (what ``run`` returned, whether a write was held)."""
    gates = [cloud.api.add_fault(service, method=method, path="*", gate=True, count=1)
             for service in services for method in WRITE_METHODS]
    ids = set(rule["id"] for rule in gates)
    faults = []
    thread = _ModuleThread(run)
    held = False
    try:
        while thread.is_alive() and not held:
            held = any(rule["id"] in ids and rule.get("held") for rule in cloud.api.faults())
            if not held:
                thread.join(0.05)
        if held:
            faults = [cloud.api.add_fault(service, method="GET", path="*", status=status) for service in services]
    finally:
        for rule_id in ids:
            _release(cloud, rule_id)
    try:
        return thread.result(), held
    finally:
        for rule in faults:
            _release(cloud, rule["id"])


def _release(cloud, rule_id):
    try:
        cloud.api.release_fault(rule_id)
    except Exception:  # pylint: disable=broad-except  # a rule already spent and gone
        pass
