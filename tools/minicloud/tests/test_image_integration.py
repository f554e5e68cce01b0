"""The real Glance in the shared minicloud: an image endpoint in the catalog (what `openstack server list`
and `server show` look images up in), an empty image list, and servers listed with details beside it."""

from __future__ import annotations

import importlib.util

import pytest

REQUIRED = ("glance", "keystone", "neutron", "nova", "octavia", "octavia_lib", "openstack")
if any(importlib.util.find_spec(name) is None for name in REQUIRED):
    pytest.skip("the OpenStack packages are not installed", allow_module_level=True)

from minicloud.core.settings import Settings  # noqa: E402

pytestmark = pytest.mark.integration


def test_catalog_has_glance_and_images_list_empty_beside_servers(cloud):
    conn = cloud.connect()
    image_url = Settings.load(cloud.state).url("image")
    assert conn.endpoint_for("image").rstrip("/") == image_url
    cloud.request_counts(service="image", reset=True)
    assert list(conn.image.images()) == []
    # The traffic middleware stands in front of Glance like the other services: the call was counted.
    assert cloud.request_counts(service="image")["requests"]["image"]["GET"]["/v2/images"] == 1

    (server,) = cloud.create_servers(["image-check-1"], "servers")
    try:
        listed = {s.id: s for s in conn.compute.servers(details=True)}
        assert listed[server["id"]].name == "image-check-1" and listed[server["id"]].status == "ACTIVE"
        assert listed[server["id"]].flavor.name == "m1.tiny"
    finally:
        cloud.delete_server("image-check-1")
