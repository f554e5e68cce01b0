# -*- coding: utf-8 -*-
"""What the documentation says, held against the code: versions, the roles' metadata and argument specs, the
action groups, the connection options the roles pass, the example inventory and the list of benchmarks."""

import json
import os
import re

import pytest
import yaml

from ansible_collections.flightcontrol.openstack.plugins.inventory import capi_clusters
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.client import (
    kubernetes_argument_spec,
)

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
ROLES = os.path.join(ROOT, "roles")
EXAMPLE_INVENTORY = os.path.join(ROOT, "examples", "inventory", "fleet.capi_clusters.yml")


def read(*parts):
    with open(os.path.join(ROOT, *parts)) as handle:
        return handle.read()


def collection_version():
    """galaxy.yml's version; in an installed copy (ansible-test's), MANIFEST.json's, made from it."""
    if os.path.exists(os.path.join(ROOT, "galaxy.yml")):
        return yaml.safe_load(read("galaxy.yml"))["version"]
    return json.loads(read("MANIFEST.json"))["collection_info"]["version"]


def version(text):
    return tuple(int(part) for part in re.findall(r"\d+", str(text)))


def python_files(*folders):
    for folder in folders:
        for dirpath, _dirs, files in os.walk(os.path.join(ROOT, folder)):
            for name in files:
                if name.endswith(".py"):
                    yield os.path.join(dirpath, name)


def test_no_plugin_was_added_in_a_version_after_the_collections():
    collection = version(collection_version())
    found = []
    for path in python_files("plugins", "extensions"):
        with open(path) as handle:
            for added in re.findall(r"^\s*version_added:\s*['\"]?([0-9.]+)", handle.read(), re.MULTILINE):
                found.append(added)
                assert version(added) <= collection, (path, added, collection)
    assert found


def test_the_roles_need_the_ansible_the_collection_needs():
    required = version(re.search(r"[0-9.]+", yaml.safe_load(read("meta", "runtime.yml"))["requires_ansible"]).group())
    for role in sorted(os.listdir(ROLES)):
        meta = yaml.safe_load(read("roles", role, "meta", "main.yml"))
        assert version(meta["galaxy_info"]["min_ansible_version"]) == required[:2], role


@pytest.mark.parametrize("role", sorted(os.listdir(ROLES)))
def test_a_required_role_variable_has_no_default(role):
    specs = yaml.safe_load(read("roles", role, "meta", "argument_specs.yml"))["argument_specs"]
    defaults_path = os.path.join(ROLES, role, "defaults", "main.yml")
    defaults = {}
    if os.path.exists(defaults_path):
        with open(defaults_path) as handle:
            defaults = yaml.safe_load(handle) or {}
    for entry in specs.values():
        for name, option in (entry.get("options") or {}).items():
            if option.get("required"):
                assert "default" not in option and name not in defaults, (role, name)


def test_every_module_is_in_an_action_group_but_the_one_that_fits_none():
    modules = set(name[:-3] for name in os.listdir(os.path.join(ROOT, "plugins", "modules")) if name.endswith(".py"))
    groups = yaml.safe_load(read("meta", "runtime.yml"))["action_groups"]
    grouped = set(name for members in groups.values() for name in members)
    assert grouped <= modules, "names of modules that do not exist: %s" % sorted(grouped - modules)
    # workload_kubeconfig takes no cloud and no top-level kubeconfig (its connection is a kubernetes dictionary),
    # so the defaults of either group would fail it; meta/runtime.yml says so
    assert modules - grouped == {"workload_kubeconfig"}
    assert "workload_kubeconfig is in neither" in read("meta", "runtime.yml")


def test_control_plane_rollout_passes_every_connection_option_to_every_kubernetes_call():
    tasks = yaml.safe_load(read("roles", "control_plane_rollout", "tasks", "main.yml"))
    options = set(kubernetes_argument_spec()) - {"persist_config"}  # accepted and ignored
    calls = []

    def walk(items):
        for task in items or []:
            for key in ("block", "rescue", "always"):
                walk(task.get(key))
            for module in ("flightcontrol.openstack.cluster_info", "flightcontrol.openstack.cluster_pause_ack"):
                if module in task:
                    calls.append((task["name"], task[module]))
            if "flightcontrol.openstack.rollout_guard" in task:
                assert "control_plane_rollout__kubernetes" in task["flightcontrol.openstack.rollout_guard"]["kubernetes"]

    walk(tasks)
    assert len(calls) >= 3
    for name, args in calls:
        for option in options:
            assert "control_plane_rollout__kubernetes.%s " % option in args.get(option, ""), (name, option)


def test_the_example_inventory_is_a_file_of_the_plugin_with_documented_options():
    plugin = capi_clusters.InventoryModule()
    assert plugin.verify_file(EXAMPLE_INVENTORY)
    with open(EXAMPLE_INVENTORY) as handle:
        config = yaml.safe_load(handle)
    assert config["plugin"] == "flightcontrol.openstack.capi_clusters"
    documented = set(yaml.safe_load(capi_clusters.DOCUMENTATION)["options"])
    documented |= {"strict", "compose", "groups", "keyed_groups", "leading_separator", "use_extra_vars",  # constructed
                   "cache", "cache_plugin", "cache_timeout", "cache_connection", "cache_prefix"}  # inventory_cache
    assert set(config) <= documented, set(config) - documented


def test_the_example_inventory_ships():
    if not os.path.exists(os.path.join(ROOT, "galaxy.yml")):
        assert os.path.exists(EXAMPLE_INVENTORY)  # an installed copy: it shipped
        return
    ignored = yaml.safe_load(read("galaxy.yml")).get("build_ignore") or []
    assert not any(pattern.strip("/").split("/")[0] == "examples" for pattern in ignored)


def test_the_benchmark_list_is_what_make_bench_runs():
    if not os.path.exists(os.path.join(ROOT, "Makefile")):
        pytest.skip("the Makefile is not shipped in the collection")
    ran = re.search(r"for bench in ([a-z_ ]+); do", read("Makefile")).group(1).split()
    first = read("docs", "benchmarks.md").split("\n\n")[1]
    listed = re.findall(r"`(?:tools/bench/)?([a-z_]+)\.py`", first.split("run by hand")[0])
    assert listed == ran, (listed, ran)


def test_the_fleet_examples_run_a_playbook_whose_hosts_the_inventory_has():
    for line in read("docs", "fleet.md").splitlines():
        if line.startswith("ansible-playbook -i") and "capi_clusters.yml" in line:
            assert "playbooks/flight_check.yml" not in line, line
