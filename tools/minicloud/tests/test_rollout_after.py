"""KCP's rollout time (v1beta1 ``spec.rolloutAfter``, v1beta2 ``spec.rollout.after``) outdates older Machines, and is
acted on when it comes."""

from __future__ import annotations

import datetime

from minicloud.kube import seed
from minicloud.kube.controllers import kcp
from minicloud.kube.controllers.kcp import machine_view
from minicloud.kube.controllers.paused import CLUSTER_NAME_LABEL
from minicloud.kube.controllers.rollout import outdated_by_time, rollout_after, rollout_after_due

NOW = datetime.datetime(2025, 6, 1, 12, 0, 0, tzinfo=datetime.timezone.utc)


def test_rollout_time_in_both_contracts():
    assert rollout_after({"rolloutAfter": "2025-06-01T11:00:00Z"}) == "2025-06-01T11:00:00Z"
    assert rollout_after({"rollout": {"after": "2025-06-01T11:00:00Z"}}) == "2025-06-01T11:00:00Z"
    assert rollout_after({}) is None and rollout_after(None) is None


def test_a_passed_rollout_time_outdates_machines_created_before_it():
    after = "2025-06-01T11:00:00Z"
    assert rollout_after_due(after, NOW)
    assert outdated_by_time("2025-06-01T10:59:59Z", after, NOW)
    assert not outdated_by_time("2025-06-01T11:00:00Z", after, NOW)
    assert not outdated_by_time("2025-06-01T11:30:00Z", after, NOW)


def test_a_future_or_missing_rollout_time_outdates_nothing():
    assert not rollout_after_due("2025-06-01T13:00:00Z", NOW)
    assert not outdated_by_time("2025-01-01T00:00:00Z", "2025-06-01T13:00:00Z", NOW)
    assert not outdated_by_time("2025-01-01T00:00:00Z", None, NOW)
    assert not outdated_by_time("2025-01-01T00:00:00Z", "not a time", NOW)


def test_offsets_and_fractions_are_read():
    assert outdated_by_time("2025-06-01T10:59:59.5Z", "2025-06-01T13:00:00+02:00", NOW)


def test_machine_view_combines_annotation_and_rollout_time():
    old = {"metadata": {"name": "cp-a", "creationTimestamp": "2020-01-01T00:00:00Z"}}
    past = "2021-01-01T00:00:00Z"
    assert machine_view(old, 0).up_to_date
    assert not machine_view(old, 0, past).up_to_date
    newer = {"metadata": {"name": "cp-b", "creationTimestamp": "2022-01-01T00:00:00Z"}}
    assert machine_view(newer, 0, past).up_to_date
    assert not machine_view(newer, 1, past).up_to_date  # the annotation still counts


class OneClusterStore:
    """A store holding one CAPO cluster's KCP (rollout time ``after``), OpenStackCluster and its one ready
    control-plane Machine, never changing."""

    revision = 7

    def __init__(self, after):
        self.kcp = {"metadata": {"name": "c-cp", "namespace": "default", "labels": {CLUSTER_NAME_LABEL: "c"}},
                    "spec": {"replicas": 1, "rollout": {"after": after}}}
        self.osc = {"metadata": {"name": "c", "namespace": "default", "annotations": {
            seed.OPENSTACK_ANNOTATION: "yes", seed.POOL_ANNOTATION: "pool-1"}},
            "status": {"apiServerLoadBalancer": {"id": "lb-1", "name": "lb"},
                       "network": {"name": "net", "subnets": [{"id": "subnet-1"}]}}}
        self.machine = {"metadata": {"name": "c-cp-a", "namespace": "default",
                                     "creationTimestamp": "2025-01-01T00:00:00Z"},
                        "status": {"nodeRef": {"name": "c-cp-a"}}}
        self.reads = 0

    def list(self, resource, namespace=None, label_selector=None):
        self.reads += 1
        return {kcp.KCP: [self.kcp], kcp.MACHINE: [self.machine]}.get(resource, []), None

    def find(self, resource, namespace, name):
        return self.osc


def test_a_rollout_time_ahead_is_acted_on_when_it_comes_without_any_other_change(monkeypatch, tmp_path):
    """The real KCP requeues itself for a rollout time ahead; an idle controller must not sleep past it."""
    now = {"t": NOW}
    monkeypatch.setattr(kcp, "utc_now", lambda: now["t"])
    store = OneClusterStore("2025-06-01T12:00:02Z")
    controller = kcp.RolloutController(store, tmp_path, openstack=None, clock=lambda: now["t"].timestamp())
    rolled = []
    monkeypatch.setattr(controller, "_reconcile", lambda ctx, waiting: rolled.append(ctx.number))
    monkeypatch.setattr(controller, "_report", lambda ctx, waiting, error: None)
    controller.tick()  # the time is ahead: nothing to do
    reads = store.reads
    now["t"] = NOW + datetime.timedelta(seconds=1)
    controller.tick()
    assert store.reads == reads and rolled == [], "an idle pass before the rollout time reads nothing"
    now["t"] = NOW + datetime.timedelta(seconds=2)
    controller.tick()
    assert rolled == [1], "the rollout starts when its time comes"
