"""Watch as kube-apiserver serves it: events in order, selectors, bookmarks, timeouts and 410 Expired."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time

import pytest
from kube_harness import KubeServer
from kubernetes import client, watch

from minicloud.kube.resources import by_kind
from minicloud.kube.selectors import FieldSelector, LabelSelector
from minicloud.kube.store import ADDED, DELETED, MODIFIED, Change, Store
from minicloud.kube.watch import BOOKMARK_INTERVAL, POLL, WatchRequest, filtered, quiet_wait, stream

NODE = by_kind("Node")
CLUSTER = by_kind("Cluster")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = KubeServer(tmp_path_factory.mktemp("kube"), store=Store(history=50)).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def core(server):
    return client.CoreV1Api(server.api_client())


def node(name, **labels):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


def later(delay, action):
    """Run ``action`` after ``delay`` seconds in a thread (a write while a watch is open)."""
    timer = threading.Timer(delay, action)
    timer.start()
    return timer


# -- the pure part --------------------------------------------------------------------------------------------

def request(labels=None):
    return WatchRequest(None, LabelSelector.parse(labels), FieldSelector(), None, False, False, False, 5)


def test_an_object_leaving_or_entering_the_selector_is_deleted_or_added_for_the_watcher():
    red, blue = node("n", pool="red"), node("n", pool="blue")
    key = ("Node", "", "n")
    assert filtered(Change(2, MODIFIED, key, red, blue), request("pool=red")) == (DELETED, blue)
    assert filtered(Change(3, MODIFIED, key, blue, red), request("pool=red")) == (ADDED, red)
    assert filtered(Change(4, MODIFIED, key, red, red), request("pool=red")) == (MODIFIED, red)
    assert filtered(Change(5, MODIFIED, key, blue, blue), request("pool=red")) is None
    assert filtered(Change(6, DELETED, key, red, red), request("pool=red")) == (DELETED, red)
    assert filtered(Change(7, DELETED, key, blue, blue), request("pool=red")) is None


class ClockedStore(Store):
    """A store whose waits for a write record their timeout and let ``step`` seconds of a fake clock pass."""

    def __init__(self, step: float):
        super().__init__()
        self.now, self.step, self.waits = 0.0, step, []

    def wait_for_write(self, after, timeout):
        self.waits.append(timeout)
        self.now += self.step
        return self.revision


@pytest.mark.parametrize("bookmarks", [False, True])
def test_a_quiet_watch_waits_for_a_write_past_its_bookmark_interval(bookmarks):
    """A quiet watch, with or without bookmarks, waits up to POLL for a write each time it looked at its
    client, however long it has been open: never 0 (a watch without bookmarks once spun past its first
    BOOKMARK_INTERVAL, re-reading the history as fast as it could)."""
    store = ClockedStore(step=BOOKMARK_INTERVAL * 1.5)
    watch_request = WatchRequest(None, LabelSelector.parse(None), FieldSelector(), None, False, False, bookmarks,
                                 BOOKMARK_INTERVAL * 6)
    lines = list(stream(store, NODE, watch_request, serve=lambda obj: obj,
                        bookmark=lambda revision, notes: {"kind": "Node"}, clock=lambda: store.now))
    assert store.waits == [POLL] * 4
    assert sum(b"BOOKMARK" in line for line in lines) == (4 if bookmarks else 0)  # each look past one due, the last at the end


def test_the_wait_of_a_quiet_watch_is_its_poll_its_end_or_its_due_bookmark():
    assert quiet_wait(False, now=100.0, end=1000.0, next_bookmark=10.0) == POLL  # no bookmarks: none is due
    assert quiet_wait(True, now=100.0, end=1000.0, next_bookmark=100.25) == 0.25
    assert quiet_wait(True, now=100.0, end=1000.0, next_bookmark=90.0) == 0.0  # overdue: sent at once
    assert quiet_wait(False, now=100.0, end=100.5, next_bookmark=10.0) == 0.5


# -- through HTTP, with the official client and kubectl ---------------------------------------------------------

def test_events_in_order_from_a_resource_version(server, core):
    start = server.store.revision
    server.store.create(NODE, node("w-1", role="watched"))
    server.store.update(NODE, None, "w-1", lambda n: {**n, "spec": {"unschedulable": True}})
    server.store.delete(NODE, None, "w-1")
    seen = [(e["type"], e["object"].metadata.name, e["object"].metadata.resource_version)
            for e in watch.Watch().stream(core.list_node, resource_version=str(start), timeout_seconds=1,
                                          label_selector="role=watched")]
    assert seen == [(ADDED, "w-1", str(start + 1)), (MODIFIED, "w-1", str(start + 2)), (DELETED, "w-1", str(start + 3))]


def test_without_a_resource_version_the_watch_starts_with_what_exists_then_follows(server, core):
    server.store.create(NODE, node("w-2", role="follow"))
    later(0.3, lambda: server.store.update(NODE, None, "w-2", lambda n: {**n, "spec": {"unschedulable": True}}))
    seen = []
    started = time.monotonic()
    for event in watch.Watch().stream(core.list_node, label_selector="role=follow", timeout_seconds=5):
        seen.append((event["type"], (event["object"].spec or client.V1NodeSpec()).unschedulable))
        if len(seen) == 2:
            break
    assert seen == [(ADDED, None), (MODIFIED, True)]
    assert time.monotonic() - started < 3  # the change arrives as it happens, not at the timeout


def test_the_watch_ends_at_its_timeout_with_a_bookmark(server, core):
    started = time.monotonic()
    events = list(watch.Watch().stream(core.list_node, label_selector="role=nobody", timeout_seconds=1,
                                       allow_watch_bookmarks=True, resource_version=str(server.store.revision)))
    assert 0.9 < time.monotonic() - started < 3
    assert [e["type"] for e in events] == ["BOOKMARK"]


def test_send_initial_events_ends_with_the_annotated_bookmark(server, core):
    server.store.create(NODE, node("w-3", role="initial"))
    answer = core.list_node(watch=True, label_selector="role=initial", send_initial_events=True,
                            resource_version_match="NotOlderThan", allow_watch_bookmarks=True, timeout_seconds=1,
                            _preload_content=False)
    lines = [json.loads(line) for line in answer.data.decode().splitlines()]
    assert [e["type"] for e in lines[:2]] == [ADDED, "BOOKMARK"]
    assert lines[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


def test_a_resource_version_older_than_the_history_is_410_expired(server, core):
    old = server.store.revision
    for i in range(60):  # more writes than the server keeps (50)
        server.store.create(NODE, node(f"churn-{i}", role="churn"))
    events = watch.Watch().stream(core.list_node, resource_version=str(old), timeout_seconds=1)
    with pytest.raises(client.ApiException) as caught:
        list(events)
    assert caught.value.status == 410 and "too old resource version" in caught.value.reason


def test_versions_are_served_as_asked(server):
    server.store.create(CLUSTER, {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
                                  "metadata": {"name": "w-cluster"}, "spec": {"paused": False}}, "default")
    custom = client.CustomObjectsApi(server.api_client())
    events = list(watch.Watch().stream(custom.list_namespaced_custom_object, "cluster.x-k8s.io", "v1beta1",
                                       "default", "clusters", timeout_seconds=1))
    assert [(e["type"], e["object"]["apiVersion"]) for e in events] == [(ADDED, "cluster.x-k8s.io/v1beta1")]


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")
def test_kubectl_get_watch_and_wait_follow_changes(server):
    server.store.create(NODE, node("w-kubectl", role="kubectl"))
    kubectl = ["kubectl", "--kubeconfig", str(server.kubeconfig)]
    waiting = subprocess.Popen([*kubectl, "wait", "node/w-kubectl", "--for=jsonpath={.spec.unschedulable}=true",
                                "--timeout=20s", "-v=6"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    watching = subprocess.Popen([*kubectl, "get", "nodes", "-l", "role=kubectl", "--watch",
                                 "--request-timeout=20s"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while server.store.open_watches < 2 and time.monotonic() < deadline:  # both listen; the write comes after
        time.sleep(0.05)
    assert server.store.open_watches >= 2
    server.store.update(NODE, None, "w-kubectl", lambda n: {**n, "spec": {"unschedulable": True}})
    out, err = waiting.communicate(timeout=30)
    assert waiting.returncode == 0, err
    assert "condition met" in out
    assert "watch=true" in err  # it waited by watch, not by polling
    lines = [watching.stdout.readline().split() for _ in range(3)]  # ends by --request-timeout at worst
    watching.terminate()
    watching.communicate(timeout=10)
    # the server's table: a header, the object, then its change (each watch event a one-row Table)
    assert lines[0][:2] == ["NAME", "STATUS"] and [line[:2] for line in lines[1:]] == [
        ["w-kubectl", "Unknown"], ["w-kubectl", "Unknown,SchedulingDisabled"]], lines  # no Ready condition


def test_a_quiet_watch_answers_its_headers_at_once(server, core):
    started = time.monotonic()
    response = core.list_node(watch=True, label_selector="role=nobody-at-all", timeout_seconds=5,
                              resource_version=str(server.store.revision), _preload_content=False)
    try:
        assert response.status == 200 and time.monotonic() - started < 2  # not at the first event, nor at the end
    finally:
        response.close()
