# -*- coding: utf-8 -*-

import json
import threading

import pytest

kubernetes = pytest.importorskip("kubernetes")

from kubernetes.client.exceptions import ApiException  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.clock import Clock  # noqa: E402
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline  # noqa: E402
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.watch import (  # noqa: E402
    BOOKMARK,
    DELETE,
    event_effect,
    Feed,
    ObjectWatch,
    RELIST,
    UPSERT,
    WatchNotServed,
)


def obj(name, version, uid=None):
    return {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
            "metadata": {"name": name, "uid": uid or "uid-" + name, "resourceVersion": str(version)}}


def event(kind, value):
    return {"type": kind, "object": value}


class Stream:
    """A watch answer: its events as lines, then (``hold``) an open, quiet connection until shut down."""

    def __init__(self, events, hold=False):
        self.lines = [json.dumps(e).encode() + b"\n" for e in events]
        self.hold = hold
        self.shut = threading.Event()

    def stream(self, amt=None, decode_content=False):
        yield from self.lines
        if self.hold:
            self.shut.wait(10)
            raise OSError("shut down")

    def shutdown(self):
        self.shut.set()

    def release_conn(self):
        pass


class FakeKube:
    """``custom.list_namespaced_custom_object`` answering from a script: lists and watches in order."""

    def __init__(self, lists, watches):
        self.lists = list(lists)
        self.watches = list(watches)
        self.watch_versions = []
        self.custom = self

    def call(self, func, what, deadline, kind=None):
        return func()

    def list_namespaced_custom_object(self, group, version, namespace, plural, watch=False, resource_version=None,
                                      **_kwargs):
        if not watch:
            items, list_version = self.lists.pop(0)
            return {"items": items, "metadata": {"resourceVersion": str(list_version)}}
        self.watch_versions.append(resource_version)
        answer = self.watches.pop(0) if self.watches else Stream([], hold=True)
        if isinstance(answer, Exception):
            raise answer
        return answer


def follow(kube, until, seconds=5.0):
    changes = []
    clock = Clock()
    watch = ObjectWatch(kube, [Feed("cluster.x-k8s.io", "v1beta2", "machines", "Machine", "default")], clock,
                        lambda o, now: changes.append((o["metadata"]["name"], o["metadata"]["resourceVersion"])))
    deadline = Deadline.after(clock, seconds)
    watch.start(deadline)
    while not until(watch) and not deadline.expired():
        watch.wait_for_change(0.05)
    watch.stop()
    return watch, changes


def test_what_each_event_asks_of_the_cache():
    assert event_effect(event("ADDED", obj("a", 1))) == (UPSERT, obj("a", 1))
    assert event_effect(event("MODIFIED", obj("a", 2))) == (UPSERT, obj("a", 2))
    assert event_effect(event("DELETED", obj("a", 3))) == (DELETE, obj("a", 3))
    assert event_effect(event("BOOKMARK", {"metadata": {"resourceVersion": "9"}})) == (BOOKMARK, "9")
    assert event_effect(event("ERROR", {"code": 410, "message": "too old resource version: 1 (5)"})) == (
        RELIST, "too old resource version: 1 (5)")
    with pytest.raises(WatchNotServed):
        event_effect(event("ERROR", {"code": 500, "message": "etcd down"}))


def test_events_keep_the_cache_and_every_change_is_reported_as_it_arrives():
    kube = FakeKube([([obj("a", 1)], 1)], [Stream([
        event("MODIFIED", obj("a", 2)), event("ADDED", obj("b", 3)), event("DELETED", obj("a", 4)),
        event("BOOKMARK", {"metadata": {"resourceVersion": "5"}})], hold=True)])
    watch, changes = follow(kube, lambda w: w.events >= 4)
    assert [o["metadata"]["name"] for o in watch.objects()] == ["b"]
    assert changes == [("a", "1"), ("a", "2"), ("b", "3")]
    assert watch.versions == ["5"] and kube.watch_versions == ["1"]
    assert watch.failure is None and watch.summary() == dict(watches=1, relists=0, events=4)


def test_a_watch_that_ends_is_opened_again_from_the_last_version_seen():
    kube = FakeKube([([], 1)], [Stream([event("ADDED", obj("a", 7))]), Stream([event("MODIFIED", obj("a", 8))])])
    watch, changes = follow(kube, lambda w: w.events >= 2)
    assert kube.watch_versions[:2] == ["1", "7"]
    assert changes == [("a", "7"), ("a", "8")]


@pytest.mark.parametrize("cut", ["event", "http"])
def test_a_410_is_answered_with_a_fresh_list(cut):
    gone = (Stream([event("ERROR", {"code": 410, "message": "too old resource version: 1 (40)"})])
            if cut == "event" else ApiException(status=410, reason="Gone"))
    kube = FakeKube([([obj("a", 1)], 1), ([obj("a", 41), obj("c", 42)], 42)], [gone])
    watch, changes = follow(kube, lambda w: w.relists >= 1 and len(kube.watch_versions) >= 2)
    assert [o["metadata"]["name"] for o in watch.objects()] == ["a", "c"]
    assert changes == [("a", "1"), ("a", "41"), ("c", "42")]
    assert kube.watch_versions[:2] == ["1", "42"] and watch.failure is None


def test_an_api_that_refuses_watch_is_reported_for_polling_to_take_over():
    kube = FakeKube([([obj("a", 1)], 1)], [ApiException(status=405, reason="Method Not Allowed")])
    watch, changes = follow(kube, lambda w: w.failure is not None)
    assert changes == [("a", "1")]
    assert "does not serve watch" in watch.failure and "405" in watch.failure
    assert [o["metadata"]["name"] for o in watch.objects()] == ["a"], "the listed objects stay for the takeover"


def test_the_callers_own_write_is_read_before_its_event_and_never_over_a_newer_one():
    kube = FakeKube([([obj("a", 5)], 5)], [])
    watch, changes = follow(kube, lambda w: w.watches >= 1)
    watch.offer(0, obj("a", 6))  # our patch's answer: newer than the cache
    watch.offer(0, obj("a", 4))  # an older answer (a retried write, say): the cache keeps the newer one
    assert [o["metadata"]["resourceVersion"] for o in watch.objects()] == ["6"]
    assert changes == [("a", "5"), ("a", "6")]
