# -*- coding: utf-8 -*-
"""The layout of docs/architecture.md, read from the files: every module in plugins/modules has its feature
package in plugins/module_utils named after it (and every feature package is a module's), runners live in
feature packages, and imports only go downwards: a feature package imports API packages and ``core``, never
another feature package; an API package imports only the API packages below it; ``core`` imports only itself."""

import ast
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


def module_names():
    return sorted(p.stem for p in (ROOT / "plugins" / "modules").glob("*.py") if p.stem != "__init__")


def packages():
    return sorted(p.name for p in MODULE_UTILS.iterdir() if (p / "__init__.py").is_file())


def imported_packages(path):
    """The packages of plugins/module_utils that ``path`` imports (absolute or relative, at any depth of the
    file: an import inside a function counts too)."""
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
                found.add(target[len(PREFIX) + 1:].split(".")[0])
    return found


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
    assert set(packages()) == set(API_PACKAGES) | set(module_names())


@pytest.mark.parametrize("package", sorted(API_PACKAGES))
def test_api_packages_import_only_downwards_and_hold_no_runner(package):
    for path in files_of(package):
        assert "runner" not in path.stem, "%s: runners live in feature packages" % path.relative_to(ROOT)
        wrong = imported_packages(path) - API_PACKAGES[package]
        assert not wrong, "%s imports %s" % (path.relative_to(ROOT), sorted(wrong))


@pytest.mark.parametrize("name", module_names())
def test_a_feature_package_imports_no_other_feature(name):
    for path in files_of(name):
        wrong = imported_packages(path) - set(API_PACKAGES) - {name}
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
