"""Route seeding helpers that need no cloud."""

import pytest

from minicloud.runtime.settings import DEFAULT_MAX_ROUTES, Settings
from minicloud.seeding.neutron_routers import parse_route, pod_cidrs
from minicloud.seeding.openstack import SeedError


def test_parse_route_keeps_the_strings_for_neutron_to_judge():
    assert parse_route("198.19.1.5/24=10.180.0.3") == {"destination": "198.19.1.5/24", "nexthop": "10.180.0.3"}
    with pytest.raises(SeedError, match="DEST=NEXTHOP"):
        parse_route("198.19.1.0/24")


def test_pod_cidrs_in_order_and_bounded():
    assert pod_cidrs("198.19.0.0/16", 24, 3) == ["198.19.1.0/24", "198.19.2.0/24", "198.19.3.0/24"]
    assert pod_cidrs("198.18.0.0/15", 26, 2, first=4) == ["198.18.1.0/26", "198.18.1.64/26"]
    with pytest.raises(SeedError, match="holds 255"):
        pod_cidrs("198.19.0.0/16", 24, 300)


def test_settings_default_route_limit_is_neutrons_and_old_settings_load(tmp_path):
    assert Settings().max_routes == DEFAULT_MAX_ROUTES == 30
    assert Settings(**{"port_offset": 7, "password": "x"}).max_routes == 30
