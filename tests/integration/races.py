# -*- coding: utf-8 -*-
"""Races without sleeps: the cloud holds the module's write (a gate fault) until another client has made its
concurrent change, then lets it through."""

import threading

HOLD_TIMEOUT = 120


def with_concurrent_change(cloud, service, method, path, run, change):
    """Call ``run()`` (a module run) in a thread while minicloud holds its first ``method`` request to ``path``;
    once the request is held, call ``change()`` (the other client's write) and release the request. Returns
    (what ``run`` returned, what ``change`` returned)."""
    rule = cloud.api.add_fault(service, method=method, path=path, gate=True, count=1)
    outcome = {}

    def module_run():
        try:
            outcome["run"] = run()
        except BaseException as exc:  # pylint: disable=broad-except
            outcome["error"] = exc

    thread = threading.Thread(target=module_run, daemon=True)
    thread.start()
    try:
        cloud.api.wait_held(rule["id"], 1, timeout=HOLD_TIMEOUT)
        changed = change()
    finally:
        cloud.api.release_fault(rule["id"])
        thread.join(HOLD_TIMEOUT)
    assert not thread.is_alive(), "the module run did not end after the release"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["run"], changed
