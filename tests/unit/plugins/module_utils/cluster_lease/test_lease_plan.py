# -*- coding: utf-8 -*-
"""cluster_lease's decisions on a fake clock: free, ours, held by another and live, expired; what is written."""

from ansible_collections.flightcontrol.openstack.plugins.module_utils.cluster_lease.plan import (
    ABSENT,
    acquire_step,
    CREATE,
    EXPIRED,
    FREE,
    HELD,
    held_body,
    held_message,
    Holder,
    micro_time,
    OURS,
    read_lease,
    released_body,
    RENEW,
    standing,
    TAKE,
    WAIT,
)
from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils.fakes import FakeClock

ME = Holder(id="run-a", host="ctl-1", playbook="fleet_rollout.yml")
OTHER = Holder(id="run-b", job_id="41", host="awx-ee", playbook="fleet_rollout.yml")


def lease_of(holder, clock, duration=60, renewed_ago=0.0, resource_version="7"):
    """A Lease as the API returns it, written by ``holder`` ``renewed_ago`` seconds before the clock's now."""
    view = read_lease(held_body("c1", "ns", holder, ABSENT, clock.time() - renewed_ago, duration))
    obj = held_body("c1", "ns", holder, ABSENT, clock.time() - renewed_ago, duration)
    obj["metadata"]["resourceVersion"] = resource_version
    assert view.holder == holder
    return obj


def test_no_lease_is_free_and_created():
    clock = FakeClock()
    assert standing(ABSENT, ME.id, clock.time()) == FREE
    assert acquire_step(ABSENT, ME.id, clock.time()) == CREATE


def test_a_released_lease_is_free_and_taken_on_its_resource_version():
    clock = FakeClock()
    ours = read_lease(lease_of(ME, clock))
    released = read_lease(dict(released_body("c1", "ns", ours, clock.time()), metadata=dict(resourceVersion="8")))
    assert released.holder is None and standing(released, OTHER.id, clock.time()) == FREE
    assert acquire_step(released, OTHER.id, clock.time()) == TAKE
    body = held_body("c1", "ns", OTHER, released, clock.time(), 60)
    assert body["metadata"]["resourceVersion"] == "8" and body["spec"]["leaseTransitions"] == 1


def test_our_own_lease_is_renewed_and_keeps_its_acquire_time():
    clock = FakeClock()
    view = read_lease(lease_of(ME, clock, renewed_ago=30))
    clock.sleep(10)
    assert standing(view, ME.id, clock.time()) == OURS and acquire_step(view, ME.id, clock.time()) == RENEW
    body = held_body("c1", "ns", ME, view, clock.time(), 600)
    assert body["spec"]["acquireTime"] == micro_time(clock.time() - 40)
    assert body["spec"]["renewTime"] == micro_time(clock.time())
    assert body["spec"]["leaseDurationSeconds"] == 600 and body["spec"]["leaseTransitions"] == 0
    assert body["metadata"]["resourceVersion"] == "7"


def test_our_own_lease_is_ours_even_once_expired():
    clock = FakeClock()
    view = read_lease(lease_of(ME, clock, duration=10, renewed_ago=100))
    assert standing(view, ME.id, clock.time()) == OURS


def test_another_actors_lease_is_held_until_it_expires_then_taken_over():
    clock = FakeClock()
    view = read_lease(lease_of(OTHER, clock, duration=60))
    clock.sleep(59.9)
    assert standing(view, ME.id, clock.time()) == HELD and acquire_step(view, ME.id, clock.time()) == WAIT
    clock.sleep(0.1)
    assert standing(view, ME.id, clock.time()) == EXPIRED and acquire_step(view, ME.id, clock.time()) == TAKE
    body = held_body("c1", "ns", ME, view, clock.time(), 60)
    assert body["spec"]["holderIdentity"] == ME.id and body["spec"]["leaseTransitions"] == 1
    assert body["spec"]["acquireTime"] == micro_time(clock.time())
    assert body["metadata"]["annotations"] == {"flightcontrol.openstack/host": "ctl-1",
                                               "flightcontrol.openstack/playbook": "fleet_rollout.yml"}


def test_a_held_lease_without_times_is_expired():
    clock = FakeClock()
    view = read_lease({"metadata": {"name": "flightcontrol-c1", "resourceVersion": "3"},
                       "spec": {"holderIdentity": "someone"}})
    assert standing(view, ME.id, clock.time()) == EXPIRED


def test_the_holder_is_read_back_from_the_annotations_and_named():
    clock = FakeClock()
    view = read_lease(lease_of(OTHER, clock, duration=60, renewed_ago=15))
    assert view.holder == OTHER
    message = held_message("c1", "ns", view, clock.time())
    assert "AWX job 41" in message and "host awx-ee" in message and "playbook fleet_rollout.yml" in message
    assert "holder run-b" in message and "Lease ns/flightcontrol-c1" in message and "expires in 45 s" in message
    assert Holder(id="x", rulebook="guard_rollouts.yml").describe() == "holder x (rulebook guard_rollouts.yml)"


def test_a_release_clears_the_holder_on_the_resource_version():
    clock = FakeClock()
    view = read_lease(lease_of(ME, clock))
    body = released_body("c1", "ns", view, clock.time())
    assert "holderIdentity" not in body["spec"] and body["metadata"]["resourceVersion"] == "7"
    assert "annotations" not in body["metadata"]
