# -*- coding: utf-8 -*-
"""The If-Match update with re-read that secgroup_ensure (port groups) and route_audit (address pairs) share."""

import pytest

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import KeptChanging
from ansible_collections.flightcontrol.openstack.plugins.module_utils.neutron.revisions import (
    IF_MATCH_ATTEMPTS,
    update_with_reread,
)


class FakePort:
    """A port on the server side: ``groups`` and ``revision``; ``meddle`` changes it before each update lands."""

    def __init__(self, groups, meddle=()):
        self.groups, self.revision, self.meddle, self.sent = list(groups), 1, list(meddle), []

    def read(self, _obj=None):
        return {"id": "p1", "groups": list(self.groups), "revision_number": self.revision}

    def send(self, obj, groups):
        self.sent.append((obj["revision_number"], groups))
        if self.meddle:
            self.meddle.pop(0)(self)
            self.revision += 1
        if obj["revision_number"] != self.revision:
            return None
        self.groups, self.revision = list(groups), self.revision + 1
        return self.read()


def add(group):
    def compute(obj):
        return None if group in obj["groups"] else obj["groups"] + [group]
    return compute


def test_first_attempt_lands():
    port = FakePort(["default"])
    updated, sent, attempts = update_with_reread(port.read(), add("sg"), port.send, port.read)
    assert (sent, attempts) == (True, 1)
    assert updated["groups"] == ["default", "sg"] and port.sent == [(1, ["default", "sg"])]


def test_a_412_reads_again_and_keeps_the_concurrent_change():
    port = FakePort(["default"], meddle=[lambda p: p.groups.append("other")])
    conflicts = []
    updated, sent, attempts = update_with_reread(port.read(), add("sg"), port.send, port.read, conflicts.append)
    assert (sent, attempts) == (True, 2)
    assert updated["groups"] == ["default", "other", "sg"], "the group someone else added is kept"
    assert [c["groups"] for c in conflicts] == [["default", "other"]]


def test_nothing_left_to_do_after_a_reread_sends_nothing_more():
    port = FakePort(["default"], meddle=[lambda p: p.groups.append("sg")])
    current, sent, _attempts = update_with_reread(port.read(), add("sg"), port.send, port.read)
    assert sent is False and current["groups"] == ["default", "sg"]
    assert len(port.sent) == 1


def test_nothing_to_do_at_all_sends_nothing():
    port = FakePort(["default", "sg"])
    _current, sent, attempts = update_with_reread(port.read(), add("sg"), port.send, port.read)
    assert (sent, attempts, port.sent) == (False, 0, [])


def test_gives_up_after_the_attempts_with_the_last_read():
    port = FakePort(["default"], meddle=[lambda p: None] * 10)
    with pytest.raises(KeptChanging) as caught:
        update_with_reread(port.read(), add("sg"), port.send, port.read)
    assert caught.value.attempts == IF_MATCH_ATTEMPTS == len(port.sent)
    assert caught.value.current["revision_number"] == port.revision


def test_a_412_after_our_own_lost_answer_is_our_update_when_the_reread_needs_nothing_more():
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.neutron.revisions import (
        LOST_ANSWER, update_with_reread)
    conflicts = []
    port = {"id": "p", "revision_number": 1, "groups": ["a"]}
    done = {"id": "p", "revision_number": 2, "groups": ["a", "b"]}
    result = update_with_reread(port, lambda p: None if "b" in p["groups"] else p["groups"] + ["b"],
                                lambda p, v: LOST_ANSWER, lambda p: done, conflicts.append)
    assert result == (done, True, 1) and conflicts == []


def test_a_412_after_a_lost_answer_is_somebody_elses_when_the_reread_still_needs_the_update():
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.neutron.revisions import (
        LOST_ANSWER, update_with_reread)
    conflicts = []
    port = {"id": "p", "revision_number": 1, "groups": ["a"]}
    other = {"id": "p", "revision_number": 2, "groups": ["a", "c"]}
    sent = []

    def send(p, value):
        sent.append(value)
        return LOST_ANSWER if len(sent) == 1 else dict(p, groups=value, revision_number=3)
    updated, was_sent, attempts = update_with_reread(
        port, lambda p: None if "b" in p["groups"] else p["groups"] + ["b"], send, lambda p: other, conflicts.append)
    assert was_sent and attempts == 2 and updated["groups"] == ["a", "c", "b"] and conflicts == [other]
