"""Neutron: ML2 with no mechanism drivers, the router plugin, no agents, no message queue."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from minicloud.services.base import Service, authtoken_section, shipped_api_paste, sqlite_url


class Neutron(Service):
    name = "neutron"
    service_type = "network"

    @property
    def api_paste(self) -> Path:
        return self.folder / "api-paste.ini"

    def write_config(self) -> None:
        state_path = self.folder / "state"
        (state_path / "lock").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shipped_api_paste("neutron"), self.api_paste)
        self.config_file.write_text(f"""[DEFAULT]
debug = False
core_plugin = ml2
service_plugins = router,revisions
auth_strategy = keystone
allow_overlapping_ips = True
transport_url = fake://
state_path = {state_path}
api_paste_config = {self.api_paste}
dhcp_agent_notification = False
notify_nova_on_port_status_changes = False
notify_nova_on_port_data_changes = False
rpc_workers = 0
rpc_state_report_workers = 0
api_workers = 1
# The per-router route limit (`up --max-routes`): Neutron before 2026.2 enforces max_routes
# (400 RoutesExhausted); 2026.2 deprecated it and enforces the router_route quota (409 OverQuota).
max_routes = {self.settings.max_routes}

[database]
connection = {sqlite_url(self.database)}
sqlite_synchronous = False

[oslo_concurrency]
lock_path = {state_path / "lock"}

[ml2]
type_drivers = flat,vlan,vxlan
tenant_network_types = vxlan
mechanism_drivers =
extension_drivers = port_security

[ml2_type_vxlan]
vni_ranges = 1:1000

[ml2_type_flat]
flat_networks = public

[securitygroup]
enable_security_group = True

# No quota surprises in tests and benchmarks.
[quotas]
default_quota = -1
quota_network = -1
quota_subnet = -1
quota_port = -1
quota_router = -1
quota_floatingip = -1
quota_security_group = -1
quota_security_group_rule = -1
quota_router_route = {self.settings.max_routes}

{authtoken_section(self.settings, "neutron")}""")

    def initialize(self) -> None:
        """Build the schema from the models: Neutron's alembic migrations do not run on sqlite."""
        from neutron.db.migration.models import head  # noqa: F401  (imports every model)
        from neutron_lib.db import model_base
        from oslo_db.sqlalchemy import enginefacade

        facade = enginefacade.transaction_context()
        facade.configure(connection=sqlite_url(self.database), sqlite_fk=True)
        model_base.BASEV2.metadata.create_all(facade.writer.get_engine())

    def application(self):
        os.environ["OS_NEUTRON_CONFIG_DIR"] = str(self.folder)
        os.environ["OS_NEUTRON_CONFIG_FILES"] = self.config_file.name
        from neutron import server
        from neutron.server import api

        return server.boot_server(api.api_server, prog="neutron-api")


# Default security group rule templates. Neutron writes them in a data migration,
# which building the schema from the models skips.
DEFAULT_SG_RULES = (
    dict(direction="egress", ethertype="IPv4", used_in_default_sg=True, used_in_non_default_sg=True),
    dict(direction="egress", ethertype="IPv6", used_in_default_sg=True, used_in_non_default_sg=True),
    dict(direction="ingress", ethertype="IPv4", remote_group_id="PARENT", used_in_default_sg=True,
         used_in_non_default_sg=False),
    dict(direction="ingress", ethertype="IPv6", remote_group_id="PARENT", used_in_default_sg=True,
         used_in_non_default_sg=False),
)


def seed(conn) -> None:
    """Add the default security group rule templates (admin connection), unless present."""
    if list(conn.network.default_security_group_rules()):
        return
    for rule in DEFAULT_SG_RULES:
        conn.network.create_default_security_group_rule(**rule)
