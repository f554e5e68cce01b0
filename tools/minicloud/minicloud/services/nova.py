"""Nova: the real nova-api (compute), with no conductor, scheduler, compute or message queue.

Nothing below nova-api runs, so servers cannot boot: :func:`seed_servers` writes
"booted" instances through Nova's own objects (as the cells would), after the
caller created their Neutron ports with ``device_id`` set to the instance.
Everything nova-api does itself then works for real: list, show, the name
filter, and the add/remove security group actions (which update the Neutron
ports whose device_id is the server). Stop and start (``os-stop``, ``os-start``) get
what nova-compute would do with them from :mod:`minicloud.services.nova_compute`.
"""

from __future__ import annotations

import os
import shutil
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

from minicloud.services import nova_compute
from minicloud.services.base import Service, authtoken_section, shipped_api_paste, sqlite_url

CELL0_UUID = "00000000-0000-0000-0000-000000000000"
CELL1_NAME = "cell1"
FLAVOR = dict(name="m1.tiny", flavorid="1", memory_mb=512, vcpus=1, root_gb=1, ephemeral_gb=0, swap=0,
              rxtx_factor=1.0, vcpu_weight=0, disabled=False, is_public=True)


class Nova(Service):
    name = "nova"
    service_type = "compute"
    seeds_while_serving = True

    @property
    def catalog_url(self) -> str:
        return self.url + "/v2.1"

    @property
    def api_database(self) -> Path:
        return self.folder / "nova_api.sqlite"

    @property
    def cell0_database(self) -> Path:
        return self.folder / "nova_cell0.sqlite"

    @property
    def api_paste(self) -> Path:
        return self.folder / "api-paste.ini"

    def data_paths(self) -> list[Path]:
        return [self.api_database, self.cell0_database, self.database]

    def _credentials(self, section: str) -> str:
        return f"""[{section}]
auth_type = password
auth_url = {self.settings.url("identity")}
username = nova
password = {self.settings.password}
project_name = service
user_domain_name = Default
project_domain_name = Default
region_name = RegionOne
"""

    def write_config(self) -> None:
        state_path = self.folder / "state"
        (state_path / "lock").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shipped_api_paste("nova"), self.api_paste)
        self.config_file.write_text(f"""[DEFAULT]
debug = False
transport_url = fake://
state_path = {state_path}
host = minicloud

[api_database]
connection = {sqlite_url(self.api_database)}
sqlite_synchronous = False

[database]
connection = {sqlite_url(self.database)}
sqlite_synchronous = False

[api]
auth_strategy = keystone
# The seeded instances lack what a real boot records; do not validate responses.
response_validation = ignore

[wsgi]
api_paste_config = {self.api_paste}

[oslo_concurrency]
lock_path = {state_path / "lock"}

[quota]
driver = nova.quota.NoopQuotaDriver

[glance]
# A delete (local: the seeded instances' host has no nova-compute) builds the legacy notification,
# whose image URL needs an image endpoint: Glance's, only written into that URL, never called.
api_servers = {self.settings.url("image")}

{self._credentials("neutron")}
{self._credentials("placement")}# No placement runs; the local delete's allocation cleanup meets a closed port, which Nova logs and
# passes over (the seeded instances hold no allocations).
endpoint_override = http://127.0.0.1:9

# As Nova requires: requests to Neutron carry a service token, so the user's delete can remove the
# ports Nova created (Neutron lets a member delete a compute:* port only with the service role).
{self._credentials("service_user")}send_service_user_token = True

{authtoken_section(self.settings, "nova")}""")

    def initialize(self) -> None:
        """Build the API, cell0 and cell1 schemas from the models (faster than nova-manage's
        migrations) and map the cells, the way ``nova-manage cell_v2`` would."""
        from nova.db.api import models as api_models
        from nova.db.main import models as main_models
        from oslo_db.sqlalchemy import enginefacade

        def engine(path: Path):
            facade = enginefacade.transaction_context()
            facade.configure(connection=sqlite_url(path))
            return facade.writer.get_engine(), facade

        for path in (self.cell0_database, self.database):
            main_models.BASE.metadata.create_all(engine(path)[0])
        api_engine, facade = engine(self.api_database)
        api_models.BASE.metadata.create_all(api_engine)
        session = facade.writer.get_sessionmaker()()
        with session.begin():
            session.add(api_models.CellMapping(uuid=CELL0_UUID, name="cell0", transport_url="none:///",
                                               database_connection=sqlite_url(self.cell0_database)))
            session.add(api_models.CellMapping(uuid=str(uuid.uuid4()), name=CELL1_NAME, transport_url="fake://",
                                               database_connection=sqlite_url(self.database)))
            session.add(api_models.Flavors(**FLAVOR))

    def application(self):
        os.environ["OS_NOVA_CONFIG_DIR"] = str(self.folder)
        os.environ["OS_NOVA_CONFIG_FILES"] = f"{self.api_paste.name};{self.config_file.name}"
        from nova.wsgi import osapi_compute

        return osapi_compute.application

    def started(self, write_instances: Callable[[dict], dict]) -> None:
        """The compute side of stop and start, in this process (where the casts of the fake transport go)."""
        self.compute = nova_compute.start(self.state.root)

    def seed(self, payload: dict) -> dict:
        """:meth:`seed_served` in a process of its own (Nova's config is global): while nova
        serves, ``processes.run_seed`` hands the payload to the serving process instead."""
        from nova import config, objects

        objects.register_all()
        config.parse_args(["minicloud-seed", "--config-file", str(self.config_file)])
        return self.seed_served(payload)

    def seed_served(self, payload: dict) -> dict:
        """Write booted instances into Nova's databases (Nova's config parsed, objects registered).

        ``payload``: ``{"project_id", "user_id", "servers": [{"uuid", "name", "ports": [
        {"port_id", "mac", "network_id", "network_name", "cidr", "ip"}]}]}`` to create and
        ``"delete": [uuid, ...]`` to remove.
        """
        from nova import context, objects
        from nova.network import model as nm
        from oslo_utils import timeutils

        ctxt = context.get_admin_context()
        cell = next(c for c in objects.CellMappingList.get_all(ctxt) if c.name == CELL1_NAME)
        flavor = objects.Flavor.get_by_name(ctxt, FLAVOR["name"])
        created = []
        with context.target_cell(ctxt, cell) as cctxt:
            for uuid_ in payload.get("delete", []):
                try:
                    objects.Instance.get_by_uuid(cctxt, uuid_).destroy()
                except Exception as exc:  # noqa: BLE001  (reported, not fatal: the mapping still goes)
                    print(f"instance {uuid_}: {exc}", file=sys.stderr)
                try:
                    objects.InstanceMapping.get_by_instance_uuid(ctxt, uuid_).destroy()
                except Exception as exc:  # noqa: BLE001
                    print(f"instance mapping {uuid_}: {exc}", file=sys.stderr)
            for server in payload.get("servers", []):
                nwinfo = nm.NetworkInfo([
                    nm.VIF(id=p["port_id"], address=p["mac"], active=True, type="ovs",
                           network=nm.Network(id=p["network_id"], label=p["network_name"],
                                              subnets=[nm.Subnet(cidr=p["cidr"],
                                                                 ips=[nm.FixedIP(address=p["ip"])])]))
                    for p in server["ports"]
                ])
                booted = server.get("vm_state", "active") == "active"  # else "error": the boot failed
                inst = objects.Instance(
                    cctxt, uuid=server["uuid"], project_id=payload["project_id"], user_id=payload["user_id"],
                    display_name=server["name"], hostname=server["name"], host="minicloud", node="minicloud",
                    vm_state="active" if booted else "error", power_state=1 if booted else 0, task_state=None,
                    instance_type_id=flavor.id, flavor=flavor,
                    old_flavor=None, new_flavor=None, system_metadata={}, metadata={}, image_ref="", root_gb=1,
                    ephemeral_gb=0, memory_mb=512, vcpus=1, availability_zone="nova",
                    launched_at=timeutils.utcnow() if booted else None, launch_index=0, key_name=None,
                    config_drive="", locked=False, compute_id=None,
                    info_cache=objects.InstanceInfoCache(network_info=nwinfo),
                )
                inst.create()
                objects.InstanceMapping(ctxt, instance_uuid=inst.uuid, cell_mapping=cell,
                                        project_id=payload["project_id"], user_id=payload["user_id"],
                                        queued_for_delete=False).create()
                created.append(inst.uuid)
        return {"created": created}
