"""cluster_lease's wait on a fake clock and a fake API: a timeout during a read of another actor's live Lease is
"held by another actor, nothing was changed"; a timeout during our own write (a take of an expired Lease, which may
have gone through) is not, and is raised as the API's failure."""

import pytest

from ansible_collections.flightcontrol.openstack.plugins.module_utils.cluster_lease.plan import Holder
from ansible_collections.flightcontrol.openstack.plugins.module_utils.cluster_lease.runner import (
    ClusterLeaseOptions,
    ClusterLeaseRunner,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import (
    DeadlineExceeded,
    ModuleFailure,
)
from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils.cluster_lease.test_lease_plan import (
    lease_of,
)
from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils.fakes import FakeClock, fake_module

OTHER = Holder(id="run-b", job_id="41", host="awx-ee", playbook="fleet_rollout.yml")


class Leases:
    """The Lease API: ``get`` answers the other actor's Lease (``renewed_ago`` grows with the clock), a write
    times out after ``write_takes`` seconds."""

    def __init__(self, clock, duration, write_takes=30.0):
        self.clock, self.duration, self.write_takes = clock, duration, write_takes
        self.renewed_at = clock.time()
        self.writes = 0

    def get(self, name, namespace, deadline):
        return lease_of(OTHER, self.clock, duration=self.duration, renewed_ago=self.clock.time() - self.renewed_at)

    def replace(self, body, deadline):
        self.writes += 1
        self.clock.now += self.write_takes
        raise DeadlineExceeded("PUT lease: timed out", attempts=3)

    create = replace


def runner(clock, leases, timeout):
    options = ClusterLeaseOptions(name="c1", namespace="ns", state="held", holder={"id": "run-a"},
                                  lease_duration=60, wait=True, timeout=timeout, poll_interval=5.0)
    run = ClusterLeaseRunner(fake_module(clock, timeout=timeout), options)
    run.leases = leases
    return run


def test_a_live_lease_of_another_actor_waited_for_fails_naming_it_and_nothing_was_changed():
    clock = FakeClock()
    leases = Leases(clock, duration=600)
    with pytest.raises(ModuleFailure) as failed:
        guard = runner(clock, leases, timeout=20)
        guard.hold(guard.deadline)
    assert "run-b" in str(failed.value) or "awx-ee" in str(failed.value)
    assert "nothing was changed" in str(failed.value) and leases.writes == 0


def test_a_timeout_during_the_take_of_an_expired_lease_is_not_reported_as_nothing_changed():
    clock = FakeClock()
    leases = Leases(clock, duration=10)  # expires 10 s in: the wait then takes it over, and the write times out
    # a failure of its own, not a timeout of the wait on the last look (which said: another holder, expired)
    with pytest.raises(ModuleFailure, match="PUT lease: timed out") as raised:
        guard = runner(clock, leases, timeout=40)
        guard.hold(guard.deadline)
    assert isinstance(raised.value.__cause__, DeadlineExceeded)
    assert leases.writes == 1
