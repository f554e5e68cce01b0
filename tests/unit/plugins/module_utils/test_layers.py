# -*- coding: utf-8 -*-
"""The layout of docs/architecture.md, read from the files: every module in plugins/modules has its feature
package in plugins/module_utils named after it (and every feature package is a module's), runners live in
feature packages, and imports only go downwards: a feature package imports API packages and ``core``, never
another feature package; an API package imports only the API packages below it; ``core`` imports only itself.
The other plugins (the inventory, the EDA event source) keep their engines in a package named after the plugin,
which imports only API packages and itself; an API package holds no plugin's engine."""

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]
MODULE_UTILS = ROOT / "plugins" / "module_utils"
PREFIX = "ansible_collections.flightcontrol.openstack.plugins.module_utils"

#: API package -> the packages of ours it may import (itself included). Everything above ``core`` may import it.
API_PACKAGES = {
    "core": {"core"},
    "openstack": {"core", "openstack"},
    "kubernetes": {"core", "openstack", "kubernetes"},
    "capo": {"core", "capo"},
    "capi": {"core", "kubernetes", "capo", "capi"},
    "octavia": {"core", "openstack", "octavia"},
    "neutron": {"core", "openstack", "neutron"},
    "nova": {"core", "openstack", "nova"},
}


#: Where the collection's plugins other than modules live (the event sources are shipped in extensions/eda).
PLUGIN_DIRS = (ROOT / "plugins" / "inventory", ROOT / "extensions" / "eda" / "plugins" / "event_source")


def module_names():
    return sorted(p.stem for p in (ROOT / "plugins" / "modules").glob("*.py") if p.stem != "__init__")


def plugins():
    """``name -> path`` of every plugin that is not a module."""
    return dict((p.stem, p) for d in PLUGIN_DIRS for p in sorted(d.glob("*.py")) if p.stem != "__init__")


def plugin_packages():
    return sorted(set(packages()) & set(plugins()))


def packages():
    return sorted(p.name for p in MODULE_UTILS.iterdir() if (p / "__init__.py").is_file())


def imported_packages(path):
    """The packages of plugins/module_utils that ``path`` imports (absolute or relative, at any depth of the
    file: an import inside a function counts too)."""
    return set(name.split(".")[0] for name in imported_names(path))


@functools.lru_cache(maxsize=None)
def imported_names(path):
    """What ``path`` imports of plugins/module_utils, dotted below it (``capi.objects``, ``capi.objects.meta``)."""
    here = path.relative_to(ROOT).with_suffix("").parts  # ("plugins", "module_utils", "capi", "service")
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(("ansible_collections", "flightcontrol", "openstack") + here[:-node.level])
                module = base + ("." + node.module if node.module else "")
            else:
                module = node.module or ""
            targets = [module] + ["%s.%s" % (module, alias.name) for alias in node.names]
        else:
            continue
        for target in targets:
            if target.startswith(PREFIX + "."):
                found.add(target[len(PREFIX) + 1:])
    return frozenset(found)


def files_of(package):
    return sorted((MODULE_UTILS / package).rglob("*.py"))


def test_the_layout_is_found():
    assert "route_audit" in module_names() and "core" in packages()
    assert imported_packages(MODULE_UTILS / "route_audit" / "runner.py") >= {"core", "neutron", "route_audit"}


@pytest.mark.parametrize("name", module_names())
def test_each_module_has_its_feature_package_with_its_runner(name):
    assert (MODULE_UTILS / name / "__init__.py").is_file(), "plugins/module_utils/%s/ (named after the module)" % name
    assert (MODULE_UTILS / name / "runner.py").is_file(), "plugins/module_utils/%s/runner.py" % name


def test_every_package_is_an_api_package_or_a_modules_feature_package():
    assert set(packages()) == set(API_PACKAGES) | set(module_names()) | set(plugin_packages())


def test_the_plugins_are_found():
    assert {"capi_clusters", "capi_events"} <= set(plugins())
    assert "capi_events" in plugin_packages()


@pytest.mark.parametrize("name", sorted(plugins()))
def test_a_plugin_imports_api_packages_and_its_own_package_only(name):
    imported = imported_packages(plugins()[name])
    assert not imported - set(API_PACKAGES) - {name}, "%s imports %s (its engine goes in plugins/module_utils/%s/)" % (
        plugins()[name].relative_to(ROOT), sorted(imported - set(API_PACKAGES)), name)


@pytest.mark.parametrize("name", plugin_packages())
def test_a_plugin_package_is_its_plugins_and_imports_no_other(name):
    assert name in imported_packages(plugins()[name]), "plugins/module_utils/%s/ is not used by its plugin" % name
    for path in files_of(name):
        wrong = imported_packages(path) - set(API_PACKAGES) - {name}
        assert not wrong, "%s imports %s" % (path.relative_to(ROOT), sorted(wrong))


def owner(path):
    """The package, module or plugin a file of plugins/ or extensions/eda belongs to."""
    parts = path.relative_to(ROOT).parts
    if parts[:2] == ("plugins", "module_utils"):
        return parts[2] if len(parts) > 3 else None
    return path.stem


def users(path):
    """The owners (``owner``) of the files that import ``path``, its own package aside."""
    dotted = ".".join(path.relative_to(MODULE_UTILS).with_suffix("").parts)
    sources = list((ROOT / "plugins").rglob("*.py")) + list((ROOT / "extensions" / "eda" / "plugins").rglob("*.py"))
    found = set()
    for source in sources:
        if owner(source) in (None, owner(path)):
            continue
        if any(name == dotted or name.startswith(dotted + ".") for name in imported_names(source)):
            found.add(owner(source))
    return found


@pytest.mark.parametrize("package", sorted(API_PACKAGES))
def test_api_packages_hold_no_plugins_engine(package):
    """A file of an API package that only one plugin uses is that plugin's engine: it goes in the plugin's package."""
    for path in files_of(package):
        used_by = users(path)
        only = used_by.pop() if len(used_by) == 1 else None
        assert only not in plugins(), "%s serves only the %s plugin: it belongs in plugins/module_utils/%s/" % (
            path.relative_to(ROOT), only, only)


@pytest.mark.parametrize("package", sorted(API_PACKAGES))
def test_api_packages_import_only_downwards_and_hold_no_runner(package):
    for path in files_of(package):
        assert "runner" not in path.stem, "%s: runners live in feature packages" % path.relative_to(ROOT)
        wrong = imported_packages(path) - API_PACKAGES[package]
        assert not wrong, "%s imports %s" % (path.relative_to(ROOT), sorted(wrong))


#: The one feature that reads another's engine, and why: fleet_wave plans over exactly the fleet the capi_clusters
#: inventory source lists (an AWX job slice sees only its own hosts, so the plan lists the Clusters itself and names
#: and groups them with the inventory's own pure functions, capi_clusters.hosts).
READS_ANOTHER_FEATURE = {"fleet_wave": {"capi_clusters"}}


@pytest.mark.parametrize("name", module_names())
def test_a_feature_package_imports_no_other_feature(name):
    for path in files_of(name):
        wrong = imported_packages(path) - set(API_PACKAGES) - {name} - READS_ANOTHER_FEATURE.get(name, set())
        assert not wrong, "%s imports the feature package(s) %s" % (path.relative_to(ROOT), sorted(wrong))


@pytest.mark.parametrize("name", module_names())
def test_a_module_file_imports_its_own_feature_package_only(name):
    imported = imported_packages(ROOT / "plugins" / "modules" / (name + ".py"))
    assert name in imported
    assert not imported - set(API_PACKAGES) - {name}, sorted(imported)


@pytest.mark.parametrize("name", module_names())
def test_a_runner_is_handed_its_options_and_is_no_module_base(name):
    """The module class stands on a module base of an API package (spec, connections, exit and fail); its runner
    is handed the options the module built, instead of being the module's base class and reading parameters
    that only the module file declares."""
    import importlib
    module = importlib.import_module("ansible_collections.flightcontrol.openstack.plugins.modules." + name)
    module_class = [v for v in vars(module).values() if isinstance(v, type) and v.__dict__.get("argument_spec")][0]
    feature = "%s.%s." % (PREFIX, name)
    assert not [c for c in module_class.__mro__ if c.__module__.startswith(feature)], module_class.__mro__
    runner = importlib.import_module(feature + "runner")
    assert [v for v in vars(runner).values() if isinstance(v, type) and v.__name__.endswith("Options")
            and v.__module__ == runner.__name__], "%srunner declares its options dataclass" % feature
    base = importlib.import_module(PREFIX + ".core.options").ModuleRunner
    assert [v for v in vars(runner).values() if isinstance(v, type) and issubclass(v, base)
            and v.__module__ == runner.__name__], "%srunner's runner stands on core.options.ModuleRunner" % feature
