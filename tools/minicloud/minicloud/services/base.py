"""What every service of minicloud is (:class:`Service`), and the configuration pieces several share."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from minicloud.core.paths import StateDir
from minicloud.core.settings import Settings


class Service:
    """One real API service served by ``python -m minicloud.runtime.runner serve NAME``."""

    name: str = ""
    service_type: str = ""
    # Requests run one at a time (SerializedApp): sqlite has one writer. A service with a
    # thread-safe application sets this to False.
    serialized: bool = True
    # The serving process also takes seed data (wsgi.SeedEndpoint, seed_served()).
    seeds_while_serving: bool = False

    def __init__(self, state: StateDir, settings: Settings):
        self.state = state
        self.settings = settings

    @property
    def folder(self) -> Path:
        return self.state.service(self.name)

    @property
    def config_file(self) -> Path:
        return self.folder / f"{self.name}.conf"

    @property
    def database(self) -> Path:
        return self.folder / f"{self.name}.sqlite"

    @property
    def port(self) -> int:
        return self.settings.port(self.service_type)

    @property
    def url(self) -> str:
        return self.settings.url(self.service_type)

    @property
    def catalog_url(self) -> str:
        """The endpoint registered in Keystone's catalog."""
        return self.url

    def write_config(self) -> None:
        raise NotImplementedError

    def initialize(self) -> None:
        """Create the database (and keys). Runs in its own process."""
        raise NotImplementedError

    def application(self):
        """The service's WSGI application. Runs in the serving process."""
        raise NotImplementedError

    def data_paths(self) -> list[Path]:
        """Files and folders holding the service's data."""
        return [self.database]

    def seed(self, payload: dict) -> dict:
        """Write seed data offline (``python -m minicloud.runtime.runner seed NAME``, JSON on stdin)."""
        raise NotImplementedError(f"{self.name} has no offline seeding")

    def seed_served(self, payload: dict) -> dict:
        """Write seed data from inside the serving process, whose application is built."""
        raise NotImplementedError(f"{self.name} takes no seed data while serving")

    def started(self, write_instances: Callable[[dict], dict]) -> None:
        """Hook run in the serving process once the application is built. ``write_instances(payload)`` writes
        Nova's instances (what booting a server is here) for a service whose controllers make servers."""

    def server_ssl_context(self):
        """The TLS context to serve with (None: plain HTTP)."""
        return None

    def client_ssl_context(self):
        """The TLS context minicloud's own probes use to reach the service (None: plain HTTP)."""
        return None


def shipped_api_paste(project: str) -> Path:
    """A project's api-paste.ini, installed as data beside the interpreter (neutron, nova)."""
    candidate = Path(sys.prefix) / "etc" / project / "api-paste.ini"
    if not candidate.is_file():
        raise FileNotFoundError(f"{project}'s api-paste.ini not found at {candidate}; is {project} installed?")
    return candidate


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


def authtoken_section(settings: Settings, user: str) -> str:
    """keystonemiddleware settings for a service user."""
    return f"""[keystone_authtoken]
www_authenticate_uri = {settings.url("identity")}
auth_url = {settings.url("identity")}
auth_type = password
username = {user}
password = {settings.password}
project_name = service
user_domain_name = Default
project_domain_name = Default
service_token_roles_required = True
"""
