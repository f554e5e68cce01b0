"""A few commands of python-openstackclient against the shared minicloud: the fast part of the peer suite that
``make test`` runs (``make peer`` runs all of it, with openstack.cloud, kubernetes.core and kubectl). The client is
the one in this interpreter's virtualenv (requirements-dev.txt installs it); without it the module is skipped."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REQUIRED = ("glance", "keystone", "neutron", "nova", "octavia", "octavia_lib", "openstack")
if any(importlib.util.find_spec(name) is None for name in REQUIRED):
    pytest.skip("the OpenStack packages are not installed", allow_module_level=True)

OPENSTACK = Path(sys.executable).parent / "openstack"
if not OPENSTACK.exists():
    pytest.skip("python-openstackclient is not installed next to %s" % sys.executable, allow_module_level=True)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def server(cloud):
    (seeded,) = cloud.create_servers(["peer-cli-1"], "peer-cli")
    yield seeded
    cloud.delete_server("peer-cli-1")


def openstack(cloud, *args):
    env = dict(os.environ, OS_CLIENT_CONFIG_FILE=str(cloud.state.clouds_yaml), PYTHONWARNINGS="ignore")
    env.pop("OS_CLOUD", None)
    done = subprocess.run([str(OPENSTACK), "--os-cloud", "minicloud", *args, "-f", "json"], capture_output=True,
                          text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, "openstack %s exited %d: %s" % (" ".join(args), done.returncode, done.stderr[-2000:])
    return json.loads(done.stdout)


def test_server_list_and_show(cloud, server):
    listed = {row["Name"]: row for row in openstack(cloud, "server", "list", "--name", "^peer-cli-")}
    assert listed["peer-cli-1"]["ID"] == server["id"] and listed["peer-cli-1"]["Status"] == "ACTIVE"
    shown = openstack(cloud, "server", "show", server["id"])
    assert shown["name"] == "peer-cli-1" and shown["status"] == "ACTIVE" and "m1.tiny" in json.dumps(shown["flavor"])
    assert server["ports"][0]["ip_address"] in json.dumps(shown["addresses"])


def test_security_group_rule_list_shows_the_default_groups_rules(cloud):
    rules = openstack(cloud, "security", "group", "rule", "list", "default")
    assert {(r["Direction"], r["Ethertype"]) for r in rules} >= {
        ("ingress", "IPv4"), ("ingress", "IPv6"), ("egress", "IPv4"), ("egress", "IPv6")}
