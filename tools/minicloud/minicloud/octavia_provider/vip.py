"""Load balancer VIPs as real Neutron ports, made the way Octavia names them.

Octavia's no-op network driver would invent a VIP (always 198.51.100.1, on a port
Neutron does not know). The provider creates the port in Neutron instead, so the
VIP address comes from the subnet and floating IPs can be attached to it.
"""

from __future__ import annotations

import os
import threading

from octavia_lib.api.drivers import exceptions as driver_exceptions

from minicloud.core import clouds
from minicloud.core.paths import STATE_DIR_ENV, StateDir

DEVICE_OWNER = "Octavia"


def port_name(loadbalancer_id: str) -> str:
    return f"octavia-lb-{loadbalancer_id}"


class VipPorts:
    """Creates and deletes VIP ports with an admin connection (Octavia's service role)."""

    def __init__(self, connect):
        self._connect = connect
        self._conn = None
        self._lock = threading.Lock()

    @property
    def network(self):
        with self._lock:
            if self._conn is None:
                self._conn = self._connect()
            return self._conn.network

    def create(self, loadbalancer_id: str, project_id: str, vip: dict) -> dict:
        """The provider VIP dict for a new (or the user's own) port."""
        try:
            if vip.get("vip_port_id"):
                port = self.network.get_port(vip["vip_port_id"])
            else:
                port = self._create_port(loadbalancer_id, project_id, vip)
        except Exception as exc:
            raise driver_exceptions.DriverError(
                user_fault_string=f"Could not allocate the VIP port: {exc}",
                operator_fault_string=f"minicloud provider: VIP port for {loadbalancer_id} failed: {exc}",
            ) from exc
        fixed = next((f for f in port.fixed_ips if f["subnet_id"] == vip.get("vip_subnet_id")), port.fixed_ips[0])
        return {
            "vip_address": fixed["ip_address"],
            "vip_network_id": port.network_id,
            "vip_port_id": port.id,
            "vip_subnet_id": fixed["subnet_id"],
            "vip_qos_policy_id": vip.get("vip_qos_policy_id"),
            "vip_sg_ids": vip.get("vip_sg_ids") or [],
        }

    def _create_port(self, loadbalancer_id: str, project_id: str, vip: dict):
        network_id = vip.get("vip_network_id")
        fixed_ip = {}
        if vip.get("vip_subnet_id"):
            fixed_ip["subnet_id"] = vip["vip_subnet_id"]
            network_id = network_id or self.network.get_subnet(vip["vip_subnet_id"]).network_id
        if vip.get("vip_address"):
            fixed_ip["ip_address"] = vip["vip_address"]
        return self.network.create_port(
            name=port_name(loadbalancer_id),
            network_id=network_id,
            project_id=project_id,
            device_owner=DEVICE_OWNER,
            device_id=f"lb-{loadbalancer_id}",
            fixed_ips=[fixed_ip] if fixed_ip else None,
        )

    def delete(self, loadbalancer_id: str, port_id: str | None) -> None:
        """Delete the VIP port if the provider made it (a user's own port stays)."""
        if not port_id:
            return
        port = self.network.find_port(port_id, ignore_missing=True)
        if port is not None and port.name == port_name(loadbalancer_id):
            self.network.delete_port(port.id, ignore_missing=True)


_VIP_PORTS: VipPorts | None = None
_VIP_PORTS_LOCK = threading.Lock()


def get() -> VipPorts:
    """The process-wide instance, using the state folder's admin cloud."""
    global _VIP_PORTS
    with _VIP_PORTS_LOCK:
        if _VIP_PORTS is None:
            state = StateDir(os.environ[STATE_DIR_ENV])
            _VIP_PORTS = VipPorts(lambda: clouds.connect(state, clouds.ADMIN_CLOUD, internal=True))
        return _VIP_PORTS
