"""The power fault of a guest that ignores ACPI (no cloud): Nova's clean stop sends the shutdown until its
shutdown_timeout and then powers the guest off hard; lifted, the guest takes the next one and shuts down in order;
the fault survives the guest's own power writes."""

from __future__ import annotations

import threading

import pytest

from minicloud.dataplane.power import IGNORES_ACPI, OFF, RUNNING, SHUTTING_DOWN, PowerFile

pytest.importorskip("oslo_messaging")
from minicloud.services.nova_compute import ComputeEndpoint  # noqa: E402

UUID = "3f1c0000-0000-4000-8000-000000000001"


def guest(power: PowerFile, seen: list) -> threading.Thread:
    """A guest that shuts down in order when asked (records each state it was asked for)."""
    def run():
        state = power.wait(UUID, (SHUTTING_DOWN, OFF), 30.0)
        seen.append(state)
        if state == SHUTTING_DOWN:
            power.set(UUID, OFF, expected=(SHUTTING_DOWN,))
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_the_fault_stays_through_power_writes_and_goes_when_lifted(tmp_path):
    power = PowerFile(tmp_path)
    power.ignore_acpi(UUID)
    assert power.set(UUID, RUNNING, expected=(None,))
    assert power.state(UUID) == RUNNING and power.ignores_acpi(UUID)
    power.ignore_acpi(UUID, False)
    assert not power.ignores_acpi(UUID) and IGNORES_ACPI not in power.snapshot()[UUID]
    power.forget(UUID)
    power.ignore_acpi(UUID, False)
    assert UUID not in power.snapshot()


def test_a_guest_that_ignores_acpi_is_powered_off_hard_after_the_shutdown_timeout(tmp_path):
    power = PowerFile(tmp_path)
    power.set(UUID, RUNNING)
    power.ignore_acpi(UUID)
    seen: list = []
    watcher = guest(power, seen)
    how = ComputeEndpoint(tmp_path, shutdown_timeout=0.5).power_off(UUID, clean=True)
    watcher.join(10)
    assert how == "powered off hard after 0.5 s" and power.state(UUID) == OFF
    assert seen == [OFF], "the guest was never asked to shut down in order"


def test_lifted_the_guest_takes_the_shutdown_and_stops_in_order(tmp_path):
    power = PowerFile(tmp_path)
    power.set(UUID, RUNNING)
    seen: list = []
    watcher = guest(power, seen)
    how = ComputeEndpoint(tmp_path, shutdown_timeout=30).power_off(UUID, clean=True)
    watcher.join(10)
    assert how == "the guest shut down" and seen == [SHUTTING_DOWN] and power.state(UUID) == OFF


def test_a_guest_gone_while_nova_waits_is_not_written_back(tmp_path):
    power = PowerFile(tmp_path)
    power.set(UUID, RUNNING)
    power.ignore_acpi(UUID)
    endpoint = ComputeEndpoint(tmp_path, shutdown_timeout=30)
    power.forget(UUID)  # the server deleted: its guest forgotten before Nova's wait looks again
    assert endpoint.acpi_taken(UUID, deadline=float("inf")) is False
    assert UUID not in power.snapshot()
