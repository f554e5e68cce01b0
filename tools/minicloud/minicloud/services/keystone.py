"""Keystone: identity, with fernet tokens and the service catalog."""

from __future__ import annotations

import getpass
import grp
import os
from pathlib import Path

from minicloud.core import settings as s
from minicloud.services.base import Service, sqlite_url


class Keystone(Service):
    name = "keystone"
    service_type = "identity"

    @property
    def fernet_keys(self) -> Path:
        return self.folder / "fernet-keys"

    @property
    def credential_keys(self) -> Path:
        return self.folder / "credential-keys"

    def write_config(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.config_file.write_text(f"""[DEFAULT]
debug = False

[database]
connection = {sqlite_url(self.database)}
sqlite_synchronous = False

[identity]
# bcrypt's fewest rounds: keystone's default (12) costs 0.3 s of CPU per password check, and every
# module run and every client logs in with a password.
password_hash_rounds = 4

[cache]
# What production keystones do with memcached, in this single process's memory: role assignments,
# catalog and validated tokens are computed once, not on each of the services' token checks.
enabled = true
backend = dogpile.cache.memory

[token]
provider = fernet

[fernet_tokens]
key_repository = {self.fernet_keys}

[fernet_receipts]
key_repository = {self.fernet_keys}

[credential]
key_repository = {self.credential_keys}
""")

    def data_paths(self) -> list[Path]:
        return [self.database, self.fernet_keys, self.credential_keys]

    def initialize(self) -> None:
        """``keystone-manage`` db_sync, fernet_setup, credential_setup and bootstrap, in one process."""
        from keystone.cmd import cli

        self.fernet_keys.mkdir(parents=True, exist_ok=True)
        self.credential_keys.mkdir(parents=True, exist_ok=True)
        owner = ["--keystone-user", getpass.getuser(), "--keystone-group", grp.getgrgid(os.getgid()).gr_name]
        url = self.url + "/v3"
        for command in (
            ["db_sync"],
            ["fernet_setup", *owner],
            ["credential_setup", *owner],
            ["bootstrap", "--bootstrap-password", self.settings.password,
             "--bootstrap-region-id", s.REGION, "--bootstrap-public-url", url,
             "--bootstrap-internal-url", url, "--bootstrap-admin-url", url],
        ):
            # keystone-manage parses its command line once per process; reset between commands.
            cli.CONF.clear()
            cli.main(argv=["keystone-manage", "--config-file", str(self.config_file), *command])

    def application(self):
        from keystone.server.flask import core

        return core.initialize_application(name="public", config_files=[str(self.config_file)])


def register(conn, settings: s.Settings, catalog: dict[str, tuple[str, str, str]]) -> None:
    """Create catalog entries, service users and the demo project through the API.

    ``conn`` is an admin openstacksdk connection; ``catalog`` maps service type to
    (service name, keystone user, endpoint url).
    """
    idn = conn.identity
    service_project = idn.find_project(s.SERVICE_PROJECT) or idn.create_project(
        name=s.SERVICE_PROJECT, domain_id="default"
    )
    admin_role = idn.find_role("admin")
    service_role = idn.find_role("service") or idn.create_role(name="service")
    for service_type, (name, user_name, url) in catalog.items():
        service = next(iter(idn.services(type=service_type)), None) or idn.create_service(name=name, type=service_type)
        existing = {e.interface for e in idn.endpoints(service_id=service.id)}
        for interface in ("public", "internal", "admin"):
            if interface not in existing:
                idn.create_endpoint(service_id=service.id, interface=interface, url=url, region_id=s.REGION)
        user = idn.find_user(user_name) or idn.create_user(
            name=user_name, password=settings.password, domain_id="default", default_project_id=service_project.id
        )
        # keystonemiddleware requires the service role on service tokens.
        for role in (admin_role, service_role):
            idn.assign_project_role_to_user(service_project, user, role)
    demo = idn.find_project(s.DEMO_PROJECT) or idn.create_project(name=s.DEMO_PROJECT, domain_id="default")
    demo_user = idn.find_user(s.DEMO_USER) or idn.create_user(
        name=s.DEMO_USER, password=settings.password, domain_id="default", default_project_id=demo.id
    )
    for role_name in s.DEMO_ROLES:
        role = idn.find_role(role_name) or idn.create_role(name=role_name)
        idn.assign_project_role_to_user(demo, demo_user, role)
