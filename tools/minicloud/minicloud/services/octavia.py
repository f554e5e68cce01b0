"""Octavia: the real API with minicloud's provider drivers, plus the real driver agent.

Two providers, both enabled: ``amphora`` (the default; the emulator of Octavia's amphora driver,
:mod:`minicloud.octavia_provider.driver`, also enabled as ``minicloud``, its former name, for load balancers
made before) and ``ovn`` (ovn-octavia-provider's rules and statuses, :mod:`minicloud.octavia_provider.ovn_driver`).
Each provider driver runs inside this API
process and reports statuses to ``octavia-driver-agent`` over its unix sockets,
exactly like a third-party provider. It is registered in-process (:func:`register_driver`), so
Octavia finds it whatever entry point an installed copy of minicloud declares. Compute, network and
amphora drivers are Octavia's no-op ones (no amphorae exist here).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

from minicloud.dataplane.plane import data_plane_or_none
from minicloud.octavia_provider import agent_server, emulator
from minicloud.octavia_provider.driver import MinicloudProviderDriver
from minicloud.octavia_provider.ovn_driver import OvnProviderDriver
from minicloud.services.base import Service, authtoken_section, sqlite_url

PROVIDER = "amphora"  # the default provider
OVN = "ovn"
LEGACY_PROVIDER = "minicloud"  # the amphora emulator's former name
DRIVERS = {PROVIDER: MinicloudProviderDriver, OVN: OvnProviderDriver, LEGACY_PROVIDER: MinicloudProviderDriver}
DESCRIPTIONS = {PROVIDER: "The amphora provider (minicloud's emulator)",
                OVN: "The OVN provider (minicloud's emulator of ovn-octavia-provider)",
                LEGACY_PROVIDER: "The amphora provider under its former minicloud name"}
DRIVER_NAMESPACE = "octavia.api.drivers"


def register_driver() -> None:
    """Let Octavia load minicloud's provider drivers (:data:`DRIVERS`) without the ``octavia.api.drivers`` entry
    points (Octavia's own ``amphora`` entry point is the real amphora driver, which needs a controller).

    The entry point in the installed metadata names the driver's module path at install time (an
    editable install keeps it across moves of the code); loading the driver class directly does not
    depend on it. Other drivers (cert managers...) still come from their entry points.
    """
    from octavia.api.drivers import driver_factory
    from stevedore import driver as stevedore_driver

    class Drivers:
        @staticmethod
        def DriverManager(namespace, name, invoke_on_load=False, **kwargs):  # noqa: N802 (stevedore's name)
            if namespace == DRIVER_NAMESPACE and name in DRIVERS:
                return SimpleNamespace(driver=DRIVERS[name]() if invoke_on_load else DRIVERS[name])
            return stevedore_driver.DriverManager(namespace=namespace, name=name, invoke_on_load=invoke_on_load,
                                                  **kwargs)

    driver_factory.stevedore_driver = Drivers


class Octavia(Service):
    name = "octavia"
    service_type = "load-balancer"

    @property
    def sockets(self) -> dict[str, Path]:
        folder = self.state.sockets
        return {kind: folder / f"{kind}.sock" for kind in ("status", "stats", "get")}

    def write_config(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        policy = self.state.policy_file(self.name)
        if not policy.exists():
            policy.write_text("{}\n")
        socks = self.sockets
        self.config_file.write_text(f"""[DEFAULT]
debug = False
transport_url = fake://

[api_settings]
bind_host = 127.0.0.1
bind_port = {self.port}
auth_strategy = keystone
enabled_provider_drivers = {",".join(f"{name}:{text}" for name, text in DESCRIPTIONS.items())}
default_provider_driver = {PROVIDER}
api_v2_enabled = True

[database]
connection = {sqlite_url(self.database)}
sqlite_synchronous = False
pool_timeout =

[oslo_messaging]
topic = octavia_prov

[oslo_policy]
policy_file = {policy}

[controller_worker]
network_driver = network_noop_driver
compute_driver = compute_noop_driver
amphora_driver = amphora_noop_driver

[certificates]
cert_manager = noop_cert_manager

[driver_agent]
status_socket_path = {socks["status"]}
stats_socket_path = {socks["stats"]}
get_socket_path = {socks["get"]}
enabled_provider_agents =

{authtoken_section(self.settings, "octavia")}""")

    def initialize(self) -> None:
        """Build the schema from the models (migrations are MySQL/PostgreSQL only) and seed lookups."""
        from octavia.common import constants as c
        from octavia.db import base_models, models
        from oslo_db.sqlalchemy import enginefacade

        facade = enginefacade.transaction_context()
        facade.configure(connection=sqlite_url(self.database), sqlite_fk=True)
        base_models.BASE.metadata.create_all(facade.writer.get_engine())
        session = facade.writer.get_sessionmaker()()
        lookups = (
            (models.ProvisioningStatus, c.SUPPORTED_PROVISIONING_STATUSES),
            (models.HealthMonitorType, c.SUPPORTED_HEALTH_MONITOR_TYPES),
            (models.Algorithm, c.SUPPORTED_LB_ALGORITHMS),
            (models.Protocol, c.SUPPORTED_PROTOCOLS),
            (models.OperatingStatus, c.SUPPORTED_OPERATING_STATUSES),
            (models.SessionPersistenceType, c.SUPPORTED_SP_TYPES),
            (models.AmphoraRoles, c.SUPPORTED_AMPHORA_ROLES),
            (models.LBTopology, c.SUPPORTED_LB_TOPOLOGIES),
            (models.VRRPAuthMethod, c.SUPPORTED_VRRP_AUTH),
            (models.L7RuleType, c.SUPPORTED_L7RULE_TYPES),
            (models.L7RuleCompareType, c.SUPPORTED_L7RULE_COMPARE_TYPES),
            (models.L7PolicyAction, c.SUPPORTED_L7POLICY_ACTIONS),
            (models.ClientAuthenticationMode, c.SUPPORTED_CLIENT_AUTH_MODES),
        )
        with session.begin():
            for model, names in lookups:
                session.add_all(model(name=name) for name in names)
            # Placeholders the migrations create, referenced when flavors/AZs are deleted.
            session.add(models.FlavorProfile(id=c.NIL_UUID, name="DELETED-PLACEHOLDER",
                                             provider_name=c.DELETED, flavor_data="{}"))
            session.flush()
            session.add(models.Flavor(id=c.NIL_UUID, flavor_profile_id=c.NIL_UUID, name="DELETED-PLACEHOLDER",
                                      enabled=False, description="placeholder"))
            session.add(models.AvailabilityZoneProfile(id=c.NIL_UUID, name="DELETED-PLACEHOLDER",
                                                       provider_name=c.DELETED, availability_zone_data="{}"))
            session.flush()
            session.add(models.AvailabilityZone(availability_zone_profile_id=c.NIL_UUID, name=c.NIL_UUID,
                                                enabled=False, description="placeholder"))

    def application(self):
        from octavia.api import app

        register_driver()
        return app.setup_app(argv=["octavia-api", "--config-file", str(self.config_file)])

    def started(self, write_instances: Callable[[dict], dict]) -> None:
        emulator.get(data_plane=data_plane_or_none).start()

    def run_driver_agent(self) -> None:
        """Run ``octavia-driver-agent`` in this process (it forks its listeners), its listeners serving each
        request in a thread instead of a fork (:mod:`minicloud.octavia_provider.agent_server`)."""
        from octavia.cmd import driver_agent

        self.state.sockets.mkdir(parents=True, exist_ok=True)
        agent_server.serve_listeners_with_threads()
        sys.argv = ["octavia-driver-agent", "--config-file", str(self.config_file)]
        driver_agent.main()
