"""Route seeding helpers that need no cloud."""

import random

import pytest

from minicloud.core.settings import DEFAULT_MAX_ROUTES, Settings
from minicloud.seeding.neutron_routers import NODE_MAC_PREFIX, parse_route, pod_cidrs, unique_macs
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


class RepeatingRandom(random.Random):
    """Draws from a short cycle of numbers, so the same MAC comes up again and again."""

    def __init__(self, numbers):
        super().__init__(0)
        self.numbers = list(numbers)
        self.drawn = 0

    def getrandbits(self, k):
        number = self.numbers[self.drawn % len(self.numbers)]
        self.drawn += 1
        return number


def test_unique_macs_skip_the_networks_macs_and_their_own_repeats():
    taken = ["02:FC:00:00:00:01", "fa:16:3e:00:00:02"]  # case does not matter, as for Neutron
    rng = RepeatingRandom([1, 2, 2, 1, 3, 2, 4])
    assert unique_macs(3, taken, rng) == ["02:fc:00:00:00:02", "02:fc:00:00:00:03", "02:fc:00:00:00:04"]
    assert rng.drawn == 7


def test_unique_macs_for_thousands_of_ports_are_distinct_unicast_and_never_neutrons():
    macs = unique_macs(5000, [], random.Random(7))
    assert len(set(macs)) == 5000
    for mac in macs[:50]:
        octets = mac.split(":")
        assert mac.startswith(NODE_MAC_PREFIX) and len(octets) == 6 and all(len(o) == 2 for o in octets)
        assert int(octets[0], 16) & 1 == 0  # unicast (a multicast MAC is refused)
    assert unique_macs(0, macs) == []
