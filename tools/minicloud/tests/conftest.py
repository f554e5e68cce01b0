"""One minicloud shared by every integration module (``cloud``): brought up once per session (per pytest-xdist
worker: ``make minicloud-tests`` runs two), on the first test that asks for it, and put back after each module (no
fault rules, no hidden extensions, the Octavia emulator and the CAPO emulation in their default modes). Modules that
restart it (marker ``restarts_cloud``) run last in a session without workers; they leave it up."""

from __future__ import annotations

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "restarts_cloud: takes the shared minicloud down and up again (runs last)")


def pytest_collection_modifyitems(config, items):
    restarting = {item.module for item in items if item.get_closest_marker("restarts_cloud")}
    items.sort(key=lambda item: getattr(item, "module", None) in restarting)  # stable: file order otherwise


@pytest.fixture(scope="session")
def shared_cloud(tmp_path_factory):
    from minicloud.runtime.control import Minicloud
    from minicloud.runtime.settings import free_port_offset

    cloud = Minicloud(tmp_path_factory.mktemp("minicloud") / "state")
    cloud.up(port_offset=free_port_offset())
    yield cloud
    cloud.down()


@pytest.fixture(scope="module")
def cloud(shared_cloud):
    """The shared minicloud, put back in its default modes when the module is done with it."""
    yield shared_cloud
    shared_cloud.clear_faults()
    shared_cloud.restore_extensions()
    shared_cloud.set_octavia_mode("normal")
    shared_cloud.set_capi_provider_mode("silent")
