# -*- coding: utf-8 -*-
"""cluster_lease's words when a renewal cannot go on: the Lease lost (deleted, released, another actor's), or the
API not answering; each names the Lease and its cluster and says what the actor does now."""

from ansible_collections.flightcontrol.openstack.plugins.module_utils.cluster_lease.plan import (
    ABSENT,
    held_body,
    Holder,
    lost_message,
    micro_time,
    read_lease,
    released_body,
    unreachable_message,
)
from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils.fakes import FakeClock

ME = Holder(id="run-a", host="ctl-1")
OTHER = Holder(id="run-b", job_id="41", host="awx-ee")
LEASE = "Lease ns/flightcontrol-c1 of cluster ns/c1"


def view_of(holder, now, duration=60):
    obj = held_body("c1", "ns", holder, ABSENT, now, duration)
    obj["metadata"]["resourceVersion"] = "7"
    return read_lease(obj)


def test_a_lost_lease_is_named_with_how_it_was_lost():
    now = FakeClock().time()
    deleted = lost_message("c1", "ns", ABSENT, ME.id, now)
    assert deleted.startswith(LEASE + " is no longer held by this run (holder run-a): it was deleted;"), deleted
    assert deleted.endswith("rather than take it again, as another actor may have changed the cluster since it was "
                            "last renewed; nothing was changed"), deleted
    released = read_lease(dict(released_body("c1", "ns", view_of(OTHER, now), now), metadata=dict(name="x")))
    assert "it was released (by an actor that took it over" in lost_message("c1", "ns", released, ME.id, now)
    taken = lost_message("c1", "ns", view_of(OTHER, now, duration=60), ME.id, now + 10)
    assert ("AWX job 41 (host awx-ee, holder run-b) holds it now, until %s unless renewed" % micro_time(now + 60)
            in taken), taken
    expired = lost_message("c1", "ns", view_of(OTHER, now, duration=60), ME.id, now + 61)
    assert "holder run-b) holds it now;" in expired, expired


def test_an_unreachable_api_names_the_lease_and_what_the_actor_does():
    now = FakeClock().time()
    cause = "update Lease ns/flightcontrol-c1 failed with a transient fault (connection error) until the deadline."
    mine = view_of(ME, now, duration=300)
    renewal = unreachable_message("c1", "ns", "held", True, cause, mine, ME.id, now + 100)
    assert renewal == (LEASE + " could not be renewed: " + cause.rstrip(".") + "; it is this run's until %s (in 200 s)"
                       " unless renewed; this run stops here rather than change the cluster without its Lease"
                       % micro_time(now + 300)), renewal
    take = unreachable_message("c1", "ns", "held", False, cause, None, ME.id, now)
    assert take.startswith(LEASE + " could not be taken or renewed: ") and take.endswith(
        "; do not change the cluster without it"), take
    release = unreachable_message("c1", "ns", "released", False, cause, mine, ME.id, now + 400)
    assert release == LEASE + " could not be released: " + cause.rstrip(".") + "; it is left to expire", release
    others = unreachable_message("c1", "ns", "held", True, cause, view_of(OTHER, now), ME.id, now)
    assert "this run's until" not in others, others
