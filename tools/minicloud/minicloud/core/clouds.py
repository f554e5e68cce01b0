"""clouds.yaml for the clouds ``minicloud`` (demo project member) and ``minicloud-admin``."""

from __future__ import annotations

import threading

import openstack.config
import yaml
from openstack import connection

from minicloud.core import settings as s
from minicloud.core.paths import StateDir

CLOUD = "minicloud"
ADMIN_CLOUD = "minicloud-admin"
# Application name (User-Agent) of minicloud's own API calls; the traffic middleware
# counts them as internal.
INTERNAL_APP = "minicloud-internal"


def clouds_config(settings: s.Settings) -> dict:
    def cloud(user: str, project: str) -> dict:
        return {
            "auth": {
                "auth_url": settings.auth_url,
                "username": user,
                "password": settings.password,
                "project_name": project,
                "user_domain_name": "Default",
                "project_domain_name": "Default",
            },
            "region_name": s.REGION,
            "identity_api_version": 3,
            "interface": "public",
        }

    return {"clouds": {CLOUD: cloud(s.DEMO_USER, s.DEMO_PROJECT), ADMIN_CLOUD: cloud(s.ADMIN_USER, "admin")}}


def write_clouds_yaml(state: StateDir, settings: s.Settings) -> None:
    state.clouds_yaml.write_text(yaml.safe_dump(clouds_config(settings), sort_keys=False))


# One connection per (clouds.yaml as written, cloud, internal, thread) in this process: every command run in a
# test's process, and every call of the Python API, would otherwise read clouds.yaml, get a new token and have
# every service validate it (about 0.3 s of CPU each time). A new ``up`` rewrites clouds.yaml, so a cloud
# brought up again gets new connections.
_CONNECTIONS: dict = {}


def connect(state: StateDir, cloud: str = CLOUD, internal: bool = False, fresh: bool = False):
    """An openstacksdk connection to one of this minicloud's clouds, reused within this process and thread.

    ``internal`` marks minicloud's own calls (setup, VIP ports) so request counts
    show only what clients did. ``fresh``: a new connection, not kept (while the cloud starts: a token got
    before the catalog is complete would never see the services registered after it).
    """
    if fresh:
        return _new_connection(state, cloud, internal)
    written = state.clouds_yaml.stat().st_mtime_ns if state.clouds_yaml.exists() else None
    key = (str(state.clouds_yaml), written, cloud, internal, threading.get_ident())
    conn = _CONNECTIONS.get(key)
    if conn is None:
        conn = _CONNECTIONS[key] = _new_connection(state, cloud, internal)
    return conn


def _new_connection(state: StateDir, cloud: str, internal: bool):
    config = openstack.config.OpenStackConfig(config_files=[str(state.clouds_yaml)],
                                              app_name=INTERNAL_APP if internal else None)
    return connection.Connection(config=config.get_one(cloud=cloud))
