"""Glance: the real image API, with a file store in the state folder and no images.

Clients that look images up by name (``openstack server list`` and ``server show``) need an image
endpoint in the catalog; this one answers them for real. Glance's WSGI application reads
``glance-api.conf`` from ``OS_GLANCE_CONFIG_DIR``; its paste pipeline is the ``keystone`` flavor of
Glance's own, without the CORS and profiler filters and the cache.
"""

from __future__ import annotations

import os
from pathlib import Path

from minicloud.services.base import Service, authtoken_section, sqlite_url

# Glance's keystone pipeline (etc/glance-api-paste.ini), less cors, osprofiler and the image cache.
API_PASTE = """[pipeline:glance-api-keystone]
pipeline = http_proxy_to_wsgi versionnegotiation authtoken context rootapp

[composite:rootapp]
paste.composite_factory = glance.api:root_app_factory
/: apiversions
/v2: apiv2app

[app:apiversions]
paste.app_factory = glance.api.versions:create_resource

[app:apiv2app]
paste.app_factory = glance.api.v2.router:API.factory

[filter:http_proxy_to_wsgi]
paste.filter_factory = oslo_middleware:HTTPProxyToWSGI.factory

[filter:versionnegotiation]
paste.filter_factory = glance.api.middleware.version_negotiation:VersionNegotiationFilter.factory

[filter:authtoken]
paste.filter_factory = keystonemiddleware.auth_token:filter_factory
delay_auth_decision = true

[filter:context]
paste.filter_factory = glance.api.middleware.context:ContextMiddleware.factory
"""


class Glance(Service):
    name = "glance"
    service_type = "image"

    @property
    def config_file(self) -> Path:
        return self.folder / "glance-api.conf"  # the name Glance's WSGI application looks for

    @property
    def api_paste(self) -> Path:
        return self.folder / "glance-api-paste.ini"

    @property
    def images(self) -> Path:
        return self.folder / "images"

    def data_paths(self) -> list[Path]:
        return [self.database, self.images]

    def write_config(self) -> None:
        state_path = self.folder / "state"
        (state_path / "lock").mkdir(parents=True, exist_ok=True)
        for store in ("staging", "tasks"):
            (state_path / store).mkdir(exist_ok=True)
        self.api_paste.write_text(API_PASTE)
        self.config_file.write_text(f"""[DEFAULT]
debug = False
enabled_backends = file:file

[database]
connection = {sqlite_url(self.database)}
sqlite_synchronous = False

[paste_deploy]
flavor = keystone
config_file = {self.api_paste}

[glance_store]
default_backend = file

[file]
filesystem_store_datadir = {self.images}

[os_glance_staging_store]
filesystem_store_datadir = {state_path / "staging"}

[os_glance_tasks_store]
filesystem_store_datadir = {state_path / "tasks"}

[oslo_concurrency]
lock_path = {state_path / "lock"}

{authtoken_section(self.settings, "glance")}""")

    def initialize(self) -> None:
        """Build the schema from the models, as ``glance-manage db_sync`` would with its migrations."""
        from glance.db.sqlalchemy import models, models_metadef
        from oslo_db.sqlalchemy import enginefacade

        self.images.mkdir(parents=True, exist_ok=True)
        facade = enginefacade.transaction_context()
        facade.configure(connection=sqlite_url(self.database), sqlite_fk=True)
        engine = facade.writer.get_engine()
        models.BASE.metadata.create_all(engine)
        models_metadef.BASE_DICT.metadata.create_all(engine)

    def application(self):
        os.environ["OS_GLANCE_CONFIG_DIR"] = str(self.folder)
        from glance.common import wsgi_app

        return wsgi_app.init_app()
