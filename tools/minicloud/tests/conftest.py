"""One minicloud shared by every integration module (``cloud``): brought up once per session (per pytest-xdist
worker: ``make minicloud-tests`` runs two), on the first test that asks for it, and put back after each module (no
fault rules, no hidden extensions, the Octavia emulator and the CAPO emulation in their default modes). Modules that
restart it (marker ``restarts_cloud``) run last in a session without workers; they leave it up."""

from __future__ import annotations

import os

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "restarts_cloud: takes the shared minicloud down and up again (runs last)")


def pytest_collection_modifyitems(config, items):
    restarting = {item.module for item in items if item.get_closest_marker("restarts_cloud")}
    items.sort(key=lambda item: getattr(item, "module", None) in restarting)  # stable: file order otherwise


@pytest.fixture(scope="session")
def shared_cloud(tmp_path_factory):
    """A cloud of this test run's own, or the one up already in MINICLOUD_TESTS_STATE_DIR (left up afterwards;
    ``make test`` lends its role scenarios' cloud, which they use after these tests)."""
    from minicloud.runtime.control import Minicloud
    from minicloud.core.settings import free_port_offset

    given = os.environ.get("MINICLOUD_TESTS_STATE_DIR")
    if given:
        if os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") != "1":
            pytest.exit("MINICLOUD_TESTS_STATE_DIR is one cloud: run the tests without workers (-p no:xdist)", 2)
        cloud = Minicloud(given)
        assert cloud.status().healthy, "the minicloud in %s is not up" % given
        yield cloud
        return
    cloud = Minicloud(tmp_path_factory.mktemp("minicloud") / "state")
    cloud.up(port_offset=free_port_offset())
    yield cloud
    cloud.down()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """minicloud's Kubernetes API served in this process, without controllers, for one test module (a module
    that needs the controllers defines its own)."""
    from kube_harness import KubeServer

    server = KubeServer(tmp_path_factory.mktemp("kube")).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def cloud(shared_cloud):
    """The shared minicloud, put back in its default modes when the module is done with it."""
    yield shared_cloud
    shared_cloud.clear_faults()
    shared_cloud.restore_extensions()
    shared_cloud.set_octavia_mode("normal")
    shared_cloud.set_capi_provider_mode("silent")
