"""minicloud's layers: each package imports only its own layer and the ones below (docs/architecture.md).

Read from the files (module-level imports, by AST) and checked in a fresh interpreter per layer (importing a
layer loads nothing of a layer above it). An import of minicloud's own code inside a function is refused: it
hid the cycles this layout removed. The package root's lazy ``minicloud.Minicloud`` is the one exception.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "minicloud"

# Bottom first. A module belongs to the entry with the longest matching prefix; it may import its own
# entry and the entries before it, never one after it.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("minicloud.core",)),
    ("traffic", ("minicloud.traffic",)),
    ("seeding", ("minicloud.seeding",)),
    ("octavia_provider", ("minicloud.octavia_provider",)),
    ("dataplane", ("minicloud.dataplane",)),
    ("kube", ("minicloud.kube",)),
    ("clusterctl", ("minicloud.clusterctl",)),
    ("route_controller", ("minicloud.route_controller",)),
    ("services", ("minicloud.services",)),
    ("processes", ("minicloud.runtime.processes",)),
    ("upstream", ("minicloud.upstream",)),
    ("orchestration", ("minicloud.runtime",)),
    ("cli", ("minicloud.cli", "minicloud.__main__")),
)
# Modules that need the optional ``kubernetes`` client: a function may import them (downwards still), so that
# the rest of minicloud runs without it.
OPTIONAL = {"minicloud.kube.admin", "minicloud.kube.providers", "minicloud.clusterctl.kubeapi"}
# minicloud/__init__.py: ``from minicloud import Minicloud`` imports the Python API on first use (PEP 562), so
# that importing any module of minicloud does not load the whole package.
LAZY_ROOT = "minicloud"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def layer_of(module: str) -> int | None:
    best = None
    for rank, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or module.startswith(prefix + "."):
                if best is None or len(prefix) > best[0]:
                    best = (len(prefix), rank)
    return None if best is None else best[1]


def resolve(module: str, path: Path, node: ast.ImportFrom | ast.Import) -> list[str]:
    """The minicloud modules an import statement loads (a name imported from a package may be a module)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "minicloud"]
    base = node.module or ""
    if node.level:
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        package = package[:len(package) - node.level + 1]
        base = ".".join(package + ([node.module] if node.module else []))
    if base.split(".")[0] != "minicloud":
        return []
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]


def imports(module: str, path: Path) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """(module-level imports, imports inside functions) of minicloud modules: (line, module)."""
    tree = ast.parse(path.read_text(), str(path))
    top: list[tuple[int, str]] = []
    nested: list[tuple[int, str]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                (nested if in_function else top).extend((child.lineno, t) for t in resolve(module, path, child))
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(tree, False)
    return top, nested


GRAPH = {name: imports(name, path) for name, path in MODULES.items()}
EMPTY_PACKAGES = {name for name, path in MODULES.items() if path.name == "__init__.py" and GRAPH[name] == ([], [])}


def test_every_module_has_a_layer():
    assert [m for m in MODULES if m != LAZY_ROOT and layer_of(m) is None] == []


def test_imports_go_only_downwards():
    upward = [f"{m}:{line} imports {target} ({LAYERS[layer_of(target)][0]} is above {LAYERS[layer_of(m)][0]})"
              for m, (top, _) in GRAPH.items() if m != LAZY_ROOT
              for line, target in top if layer_of(target) is not None and layer_of(target) > layer_of(m)]
    assert upward == []


def test_no_import_of_minicloud_inside_a_function():
    nested = [f"{m}:{line} imports {target}" for m, (_, inner) in GRAPH.items() if m != LAZY_ROOT
              for line, target in inner if target not in OPTIONAL]
    assert nested == []


def test_optional_imports_go_downwards_too():
    upward = [f"{m}:{line} imports {target}" for m, (_, inner) in GRAPH.items() if m != LAZY_ROOT
              for line, target in inner if target in OPTIONAL and layer_of(target) > layer_of(m)]
    assert upward == []


def test_no_import_cycle():
    edges = {m: {t for _, t in top if t in MODULES and t != m} for m, (top, _) in GRAPH.items()}
    done: set[str] = set()
    cycles: list[list[str]] = []

    def walk(node: str, stack: list[str]) -> None:
        if node in stack:
            cycles.append(stack[stack.index(node):] + [node])
            return
        if node in done:
            return
        for target in sorted(edges[node]):
            walk(target, stack + [node])
        done.add(node)

    for m in sorted(MODULES):
        walk(m, [])
    assert cycles == []


@pytest.mark.parametrize("rank", range(len(LAYERS)), ids=[name for name, _ in LAYERS])
def test_a_layer_imports_alone_in_a_fresh_interpreter(rank):
    """Importing every module of a layer loads nothing of the layers above it."""
    # __main__ modules run when imported: their package stands for them
    ordered = sorted(m for m in MODULES if m != LAZY_ROOT and layer_of(m) == rank and not m.endswith(".__main__"))
    script = ("import importlib, json, sys\n"
              f"for name in {ordered!r}:\n"
              "    importlib.import_module(name)\n"
              "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'minicloud')))\n")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    loaded = json.loads(run.stdout.strip().splitlines()[-1])
    # a package is loaded before its modules: one that imports nothing (minicloud.runtime, loaded for
    # runtime.processes) brings nothing of its layer with it
    above = [m for m in loaded if m != LAZY_ROOT and m not in EMPTY_PACKAGES
             and (layer_of(m) is None or layer_of(m) > rank)]
    assert above == []
