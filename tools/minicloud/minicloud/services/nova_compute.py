"""What nova-compute does for Nova's stop and start, in nova-api's own process.

nova-api's ``os-stop`` sets the instance's task_state ``powering-off`` and casts ``stop_instance`` to its host's
compute service over RPC (``nova/compute/api.py`` ``API.stop``, ``nova/compute/rpcapi.py``); ``os-start`` sets
``powering-on`` and casts ``start_instance``. minicloud's transport is oslo.messaging's ``fake://``, whose
exchanges live in the memory of the process: with nobody listening the cast is queued for ever and the instance
stays ``powering-off``. :func:`start` listens on that transport as host ``minicloud``'s compute service would
(topic ``compute``, server ``minicloud``), for these two methods only, and does what
``nova/compute/manager.py`` ``ComputeManager.stop_instance`` / ``start_instance`` do with a libvirt guest:

- stop (clean): send the guest an ACPI shutdown and wait for it to power off, at most Nova's ``shutdown_timeout``
  (``[DEFAULT] shutdown_timeout``, 60 s), then power it off hard; a forced stop (``clean_shutdown`` false) or a
  server without a guest here is powered off at once; then vm_state ``stopped``, power_state ``SHUTDOWN`` (4),
  task_state None (status ``SHUTOFF``);
- start: power the guest on; vm_state ``active``, power_state ``RUNNING`` (1), task_state None.

A guest that ignores ACPI (the power file's fault, :meth:`minicloud.dataplane.power.PowerFile.ignore_acpi`) is
sent the shutdown again and again, as libvirt's ``_clean_shutdown`` does, until ``shutdown_timeout``: the instance
stays ``powering-off`` (status ACTIVE) that long, then is powered off hard; lifted meanwhile, the guest takes the
next one and shuts down in order.

The guests are the control-plane servers' API endpoints (:mod:`minicloud.dataplane.servers`), reached through
the power file (:mod:`minicloud.dataplane.power`). Every other cast to the host stays unanswered, as before.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from minicloud.dataplane.power import OFF, POLL, RUNNING, SHUTTING_DOWN, PowerFile

LOG = logging.getLogger(__name__)
HOST = "minicloud"  # the host of the seeded instances (services/nova.py)
RPC_VERSION = "6.4"  # what this endpoint accepts of the compute RPC API (the casts ask 6.0 or 5.0)
HARD_OFF_SECONDS = 5.0  # how long a hard power off waits for the guest to say it is off (it follows at once)


class ComputeEndpoint:
    """The two RPC methods, over the power file of the state folder ``root``."""

    def __init__(self, root: Path, shutdown_timeout: float):
        import oslo_messaging

        self.target = oslo_messaging.Target(version=RPC_VERSION)
        self.power = PowerFile(root)
        self.shutdown_timeout = shutdown_timeout

    def stop_instance(self, context, instance, clean_shutdown=True):
        from nova.compute import power_state, task_states, vm_states

        started = time.monotonic()
        how = self.power_off(instance.uuid, clean_shutdown)
        instance.power_state = power_state.SHUTDOWN
        instance.vm_state = vm_states.STOPPED
        instance.task_state = None
        instance.save(expected_task_state=[task_states.POWERING_OFF])
        LOG.info("instance %s stopped (%s) in %.1f s", instance.uuid, how, time.monotonic() - started)

    def power_off(self, uuid: str, clean: bool) -> str:
        """Power the guest off (in order if ``clean`` and it has a guest here); how it went."""
        if not clean or self.power.state(uuid) not in (RUNNING, SHUTTING_DOWN):
            self.power.set(uuid, OFF)
            return "powered off" if clean else "forced"
        deadline = time.monotonic() + self.shutdown_timeout
        if self.acpi_taken(uuid, deadline):
            self.power.set(uuid, SHUTTING_DOWN, expected=(RUNNING, SHUTTING_DOWN))
            if self.power.wait(uuid, (OFF,), max(0.0, deadline - time.monotonic())) == OFF:
                return "the guest shut down"
        if self.power.state(uuid) is None:
            return "the guest is gone"
        self.power.set(uuid, OFF)  # the guest did not shut down in time: destroyed
        self.power.wait(uuid, (OFF,), HARD_OFF_SECONDS)
        return f"powered off hard after {self.shutdown_timeout:g} s"

    def acpi_taken(self, uuid: str, deadline: float) -> bool:
        """Whether the guest takes an ACPI shutdown before ``deadline``: at once, unless it ignores ACPI (the
        fault), then once the fault is lifted; False when it ignored them all, or is gone."""
        while self.power.ignores_acpi(uuid):
            if time.monotonic() >= deadline:
                return False
            time.sleep(POLL * 4)
        return self.power.state(uuid) is not None

    def start_instance(self, context, instance):
        from nova.compute import power_state, task_states, vm_states

        self.power.set(instance.uuid, RUNNING)
        instance.power_state = power_state.RUNNING
        instance.vm_state = vm_states.ACTIVE
        instance.task_state = None
        instance.save(expected_task_state=[task_states.POWERING_ON])
        LOG.info("instance %s started", instance.uuid)


def start(root: Path):
    """Listen for the compute casts to host ``minicloud`` in this (nova-api's) process; the RPC server."""
    import oslo_messaging
    from nova import rpc
    from nova.objects import base as objects_base
    from oslo_config import cfg

    conf = cfg.CONF
    transport = rpc.create_transport(rpc.get_transport_url())
    target = oslo_messaging.Target(topic="compute", server=HOST)
    serializer = rpc.RequestContextSerializer(objects_base.NovaObjectSerializer())
    server = oslo_messaging.get_rpc_server(transport, target, [ComputeEndpoint(root, conf.shutdown_timeout)],
                                           executor="threading", serializer=serializer)
    server.start()
    return server
