"""The Python API of minicloud; the command line is a thin layer over it.

    from minicloud.control import Minicloud
    cloud = Minicloud("/tmp/state")      # or Minicloud() to resolve the state folder
    cloud.up()
    cloud.set_octavia_mode("lost-member", members="*-member-3")
    cloud.add_fault("load-balancer", method="GET", path="/v2/lbaas/pools/*", status=429, retry_after=2, count=1)
    conn = cloud.connect()               # openstacksdk, as the demo user
"""

from __future__ import annotations

import time
from pathlib import Path

from minicloud import clouds, processes, seed
from minicloud.faults import FaultRule
from minicloud.lifecycle import CloudStatus, Lifecycle, MinicloudError
from minicloud.paths import StateDir, resolve_state_dir
from minicloud.provider import modes
from minicloud.traffic import TrafficStore

__all__ = ["Minicloud", "MinicloudError"]

MODE_ACK_TIMEOUT = 10.0


class Minicloud:
    """One minicloud, identified by its state folder."""

    def __init__(self, state_dir: str | Path | None = None):
        self.state = StateDir(resolve_state_dir(state_dir))
        self._lifecycle = Lifecycle(self.state)

    @property
    def state_dir(self) -> Path:
        return self.state.root

    @property
    def clouds_yaml(self) -> Path:
        return self.state.clouds_yaml

    # -- lifecycle ---------------------------------------------------------------------

    def up(self, port_offset: int = 0, fresh: bool = False, timeout: float = 90.0) -> tuple[CloudStatus, str]:
        """Start the services (idempotent). ``fresh`` resets the data to the state right
        after the first initialisation. Returns the status and a one-line summary."""
        return self._lifecycle.up(port_offset=port_offset, fresh=fresh, timeout=timeout)

    def down(self, purge: bool = False) -> list[str]:
        """Stop the processes this state folder started (logs stay unless ``purge``)."""
        return self._lifecycle.down(purge=purge)

    def status(self) -> CloudStatus:
        return self._lifecycle.status()

    def env(self) -> str:
        return f"export OS_CLIENT_CONFIG_FILE={self.state.clouds_yaml}"

    def connect(self, cloud: str = clouds.CLOUD):
        """An openstacksdk connection: ``minicloud`` (demo member) or ``minicloud-admin``."""
        if not self.state.clouds_yaml.exists():
            raise MinicloudError(f"{self.state.clouds_yaml} does not exist: run 'up' first")
        return clouds.connect(self.state, cloud)

    # -- Octavia provider emulator ----------------------------------------------------

    def octavia_mode(self) -> dict:
        mode = modes.load(self.state.octavia_mode).to_dict()
        mode["applied"] = modes.applied_generation(self.state.octavia_mode_applied) >= mode["generation"]
        return mode

    def set_octavia_mode(self, name: str, members: str = "*", delay: float | None = None,
                         wait: bool = True) -> dict:
        """Switch the emulator's behaviour. With ``wait``, return once octavia-api applied it
        (existing objects reconciled), if it is running."""
        mode = modes.Mode.parse(name, members, delay)
        self.state.root.mkdir(parents=True, exist_ok=True)
        written = modes.save(self.state.octavia_mode, mode)
        if wait and self._octavia_running():
            deadline = time.monotonic() + MODE_ACK_TIMEOUT
            while modes.applied_generation(self.state.octavia_mode_applied) < written.generation:
                if time.monotonic() > deadline:
                    raise MinicloudError(f"octavia-api did not apply the mode within {MODE_ACK_TIMEOUT:.0f} s")
                time.sleep(0.1)
        return self.octavia_mode()

    def _octavia_running(self) -> bool:
        return any(p.name == "octavia" and p.healthy for p in self.status().processes)

    # -- faults and request counts -----------------------------------------------------

    @property
    def traffic(self) -> TrafficStore:
        return TrafficStore(self.state.traffic_db)

    def add_fault(self, service: str, method: str = "*", path: str = "*", status: int | str | None = None,
                  retry_after: float | None = None, count: int | None = None, delay: float = 0.0) -> dict:
        """Add a fault rule; ``status`` is 429/500/502/503/504, ``"drop"`` or None (delay only)."""
        rule = FaultRule(service=service, method=method, path=path, status=FaultRule.parse_status(status),
                         retry_after=retry_after, remaining=count, delay=delay)
        return self.traffic.add_rule(rule).to_dict()

    def faults(self) -> list[dict]:
        return [rule.to_dict() for rule in self.traffic.rules()]

    def clear_faults(self) -> int:
        return self.traffic.clear_rules()

    def request_counts(self, service: str | None = None, reset: bool = False) -> dict:
        """Counts by service, method and path template; ``reset`` zeroes them after reading."""
        counts = self.traffic.counts(service)
        if reset:
            self.traffic.reset_counts(service)
        return counts

    # -- seeding -----------------------------------------------------------------------

    def create_lb(self, name: str, members: int = 0, monitor: bool = False, member_port: int = 6443,
                  cidr: str = "10.0.0.0/24", timeout: float = 120.0) -> dict:
        """Create (as the demo user) a load balancer with listener, pool, optional monitor and
        members, wait until ACTIVE, and return the ids, names and addresses."""
        return seed.create_lb(self.connect(), name, members=members, monitor=monitor, member_port=member_port,
                              cidr=cidr, timeout=timeout)

    def delete_lb(self, name: str, timeout: float = 60.0) -> str:
        """Cascade-delete load balancer ``name`` and wait until it is gone; returns its id."""
        return seed.delete_lb(self.connect(), name, timeout=timeout)

    # -- servers -----------------------------------------------------------------------

    def _internal(self):
        """The demo user's connection for minicloud's own calls (not counted as client traffic)."""
        self.connect()  # the clouds.yaml check
        return clouds.connect(self.state, clouds.CLOUD, internal=True)

    def _write_instances(self, payload: dict) -> dict:
        return processes.run_seed(self.state, "nova", payload)

    def create_servers(self, names: list[str], network: str, ports: int = 1, port_security: bool = True) -> list[dict]:
        """Seed "booted" servers (as the demo user), each with ``ports`` real Neutron ports on
        ``network`` (created with a subnet if missing); returns the servers with their ports."""
        return seed.create_servers(self._internal(), names, network, ports=ports, port_security=port_security,
                                   write_instances=self._write_instances)

    def delete_server(self, name: str) -> str:
        """Delete server ``name`` (name or id) and its ports; returns its id."""
        admin = clouds.connect(self.state, clouds.ADMIN_CLOUD, internal=True)
        return seed.delete_server(self._internal(), admin, name, write_instances=self._write_instances)

    def list_servers(self) -> list[dict]:
        return seed.list_servers(self._internal())
