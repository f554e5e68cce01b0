# -*- coding: utf-8 -*-
"""The capi_events source with a queue and canned watch streams: no cluster."""

import asyncio
import copy
import json
import threading

import pytest

from ansible_collections.flightcontrol.openstack.extensions.eda.plugins.event_source import capi_events as source
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi_events import event_feed
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.client import ApiException
from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils.capi_events import test_events as samples


class FakeResponse:
    def __init__(self, events):
        self.events = events

    def stream(self, amt=None, decode_content=False):
        for event in self.events:
            if isinstance(event, BaseException):
                raise event
            yield (json.dumps(event) + "\n").encode()

    def release_conn(self):
        pass


class FakeCustom:
    """Lists answer what ``objects`` holds; each watch answers the next canned stream of its plural (then
    blocks until the test ends)."""

    def __init__(self, objects, streams, list_error=None):
        self.objects = objects
        self.streams = streams
        self.list_error = list_error
        self.calls = []
        self.patches = []
        self.done = threading.Event()

    def patch_namespaced_custom_object(self, group, version, namespace, plural, name, body):
        self.patches.append((plural, namespace, name, body))
        return {}

    def list_namespaced_custom_object(self, group, version, namespace, plural, watch=False, **kwargs):
        self.calls.append((plural, watch, kwargs.get("resource_version")))
        if not watch:
            if self.list_error is not None:
                raise self.list_error
            return {"metadata": {"resourceVersion": "10"}, "items": copy.deepcopy(self.objects.get(plural, []))}
        queued = self.streams.get(plural) or []
        if not queued:
            self.done.wait(5)
            return FakeResponse([])
        answer = queued.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return FakeResponse(answer)


class FakeKube:
    def __init__(self, custom):
        self.custom = custom
        self.clock = self
        self.host = "https://api.example"

    def monotonic(self):
        return 0.0

    def call(self, func, what, deadline, kind=None):
        return func()


def feeds_for(kube):
    kinds = [("cluster.x-k8s.io", "clusters", "Cluster"),
             ("controlplane.cluster.x-k8s.io", "kubeadmcontrolplanes", "KubeadmControlPlane"),
             ("cluster.x-k8s.io", "machines", "Machine")]
    return [event_feed.EventFeed(kube, group, "v1beta2", plural, kind, "default") for group, plural, kind in kinds]


def objects():
    return {"clusters": [samples.cluster()], "kubeadmcontrolplanes": [samples.kcp()],
            "machines": [samples.machine("cp-%d" % i) for i in range(3)]}


def strip(obj):
    obj = copy.deepcopy(obj)
    obj["metadata"]["resourceVersion"] = "11"
    return obj


async def collect(custom, count, timeout=10.0, **args):
    queue = asyncio.Queue()
    options = source.parse_args(dict({"namespaces": ["default"], "tick_seconds": 0.05}, **args))
    runner = source.Runner(queue, options, feeds_for(FakeKube(custom)), clock=lambda: samples.T0 + 10)
    task = asyncio.ensure_future(runner.run())
    got = []
    try:
        while len(got) < count:
            done, _pending = await asyncio.wait([task, asyncio.ensure_future(queue.get())], timeout=timeout,
                                                return_when=asyncio.FIRST_COMPLETED)
            if not done:
                break
            for finished in done:
                if finished is task:
                    return got, task
                got.append(finished.result())
        await asyncio.sleep(0.3)  # anything more would arrive now
        while not queue.empty():
            got.append(queue.get_nowait())
        return got, task
    finally:
        runner.close()
        custom.done.set()
        task.cancel()


def run(coro):
    return asyncio.run(coro)


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch):
    monkeypatch.setattr(event_feed, "backoff", lambda failures, rand=None: 0.01)


def test_a_patched_control_plane_is_one_rollout_across_a_cut_and_a_410():
    patched = strip(samples.kcp(generation=2, after="2026-01-01T00:00:01Z"))
    gone = {"type": "ERROR", "object": {"kind": "Status", "code": 410, "message": "too old resource version"}}
    custom = FakeCustom(objects(), {"kubeadmcontrolplanes": [
        [{"type": "MODIFIED", "object": patched}, OSError("connection reset")],  # a cut
        [{"type": "MODIFIED", "object": patched}, gone],                          # again, then 410: relist
    ]})
    custom.objects["kubeadmcontrolplanes"] = [patched]  # what the fresh list shows
    got, _task = run(collect(custom, 1))
    assert [(e["type"], e["reason"], e["meta"]["hosts"]) for e in got] == [
        ("rollout_started", "rolloutAfter", "default/alpha")]
    watches = [c for c in custom.calls if c[0] == "kubeadmcontrolplanes" and c[1]]
    assert watches[0][2] == "10" and watches[1][2] == "11"  # the second watch goes on from the last event
    lists = [c for c in custom.calls if c[0] == "kubeadmcontrolplanes" and not c[1]]
    assert len(lists) == 2  # the first list and the one after 410


def test_deleting_and_pause_events_come_from_the_streams():
    deleting = strip(samples.machine("cp-0", deleting="2026-01-01T00:00:05Z", hooks=["flightcontrol-rollout"]))
    custom = FakeCustom(objects(), {
        "machines": [[{"type": "MODIFIED", "object": deleting}]],
        "clusters": [[{"type": "MODIFIED", "object": strip(samples.cluster(paused=True))}]]})
    got, _task = run(collect(custom, 2))
    assert sorted(e["type"] for e in got) == ["cluster_paused", "machine_deleting"]
    assert [e["hooks"] for e in got if e["type"] == "machine_deleting"] == [["flightcontrol-rollout"]]


def test_a_forbidden_namespace_stops_the_source_with_a_message():
    refused = ApiException(status=403, reason="Forbidden")
    refused.body = json.dumps({"kind": "Status", "message": 'clusters.cluster.x-k8s.io is forbidden: User '
                                                            '"eda" cannot list resource "clusters" in "default"'})
    custom = FakeCustom(objects(), {}, list_error=refused)
    got, task = run(collect(custom, 1))
    assert got == []
    with pytest.raises(event_feed.FeedError, match=r"HTTP 403: .*cannot list.*RBAC"):
        task.result()


def test_a_watch_refused_later_stops_the_source():
    refused = ApiException(status=403, reason="Forbidden")
    custom = FakeCustom(objects(), {"machines": [refused]})
    got, task = run(collect(custom, 1))
    assert got == []
    with pytest.raises(source.SourceError, match="watching machines.* failed: HTTP 403"):
        task.result()


def test_bad_options_are_refused_before_any_request():
    with pytest.raises(source.SourceError, match="unknown option.*namespace\\b"):
        source.parse_args({"namespace": "x"})
    with pytest.raises(source.SourceError, match="stuck_seconds must be more than zero seconds, got 0"):
        source.parse_args({"stuck_seconds": 0})
    with pytest.raises(source.SourceError, match="hostname_format"):
        source.parse_args({"hostname_format": "fixed"})


@pytest.mark.parametrize("name", ["stuck_seconds", "tick_seconds"])
@pytest.mark.parametrize("value, words", [
    (float("nan"), "must be a finite number, got nan"), ("NaN", "must be a finite number"),
    (float("inf"), "must be a finite number, got inf"), ("-inf", "must be a finite number, got -inf"),
    (-1, "must be more than zero seconds, got -1"), (0, "must be more than zero seconds"),
    (0.0, "must be more than zero seconds"), (10 ** 12, "is out of range"), (True, "must be a number of seconds"),
    ("soon", "must be a number of seconds"), ([1], "must be a number of seconds"),
])
def test_a_number_option_that_is_not_a_positive_number_is_refused(name, value, words):
    with pytest.raises(source.SourceError, match="capi_events: %s %s" % (name, words)):
        source.parse_args({name: value})


def test_seconds_options_in_range_are_kept_as_floats():
    options = source.parse_args({"stuck_seconds": "900", "tick_seconds": 0.5})
    assert (options["stuck_seconds"], options["tick_seconds"]) == (900.0, 0.5)


def test_an_api_key_beside_a_kubeconfig_is_the_one_sent(tmp_path):
    path = tmp_path / "kubeconfig"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "Config", "current-context": "c",
                                "clusters": [{"name": "k", "cluster": {"server": "https://k.example:6443"}}],
                                "users": [{"name": "u", "user": {"token": "KUBECONFIG-TOKEN"}}],
                                "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}]}))
    kube = source.connect(source.parse_args({"kubeconfig": str(path), "api_key": "WRONG"}))
    for dummy in range(2):  # the kubeconfig loader sets its token again before each request
        assert kube.configuration.auth_settings()["BearerToken"]["value"] == "Bearer WRONG"
    with pytest.raises(source.SourceError, match="api_key and client_cert are given together"):
        source.connect(source.parse_args({"kubeconfig": str(path), "api_key": "WRONG", "client_cert": "/c.pem"}))


def test_a_kubeconfig_that_does_not_parse_is_refused_without_quoting_it(tmp_path):
    broken = tmp_path / "kubeconfig"
    broken.write_text("apiVersion: v1\nusers:\n- name: x\n  user: {token: s3cr3t-token\n")
    with pytest.raises(source.SourceError) as caught:
        source.connect(source.parse_args({"kubeconfig": str(broken)}))
    assert "cannot be used" in str(caught.value) and "s3cr3t" not in str(caught.value)


def test_a_missing_capi_is_named(monkeypatch):
    class Apis:
        def get_api_versions(self):
            return {"groups": [{"name": "apps", "versions": [{"version": "v1"}]}]}

    class Kube(FakeKube):
        apis = Apis()
        api_client = type("C", (), {"sanitize_for_serialization": staticmethod(lambda v: v)})()

    with pytest.raises(source.SourceError, match="does not serve cluster.x-k8s.io"):
        source.make_feeds(Kube(FakeCustom({}, {})), source.parse_args({}))


def test_the_standing_hook_is_written_on_every_control_plane_machine_once():
    custom = FakeCustom(objects(), {})
    got, _task = run(collect(custom, 0, timeout=1.0, standing_hook="flightcontrol-standing"))
    assert got == []
    hook = "pre-drain.delete.hook.machine.cluster.x-k8s.io/flightcontrol-standing"
    assert sorted(p[2] for p in custom.patches) == ["cp-0", "cp-1", "cp-2"]
    assert all(p[0] == "machines" and p[3] == {"metadata": {"annotations": {hook: ""}}} for p in custom.patches)
