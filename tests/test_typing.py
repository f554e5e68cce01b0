"""Type hints, read from the files: every public function and method of the packages in ANNOTATED has a type on
each parameter (``self`` and ``cls`` aside) and on its return. mypy (``make typecheck``, mypy.ini) checks that the
hints are right; this test holds that they are there, so that a new function cannot leave the check by having none.

The rule holds for every folder of plugins/ (a new package is held as soon as it exists) and for the EDA event
source."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = ROOT / "plugins"
MODULE_UTILS = PLUGINS / "module_utils"

#: Folders of the collection outside plugins/ held to the same rule: the EDA event source (ansible-rulebook runs it).
ANNOTATED_ELSEWHERE = [
    "extensions/eda/plugins/event_source",
]

FunctionNode = (ast.FunctionDef, ast.AsyncFunctionDef)


def annotated_folders() -> list[Path]:
    """Every folder of plugins/ that holds Python files, and those of ANNOTATED_ELSEWHERE."""
    found = sorted({path.parent for path in PLUGINS.rglob("*.py") if "__pycache__" not in path.parts})
    return found + [ROOT / folder for folder in ANNOTATED_ELSEWHERE]


def is_public(name: str) -> bool:
    """``run`` and ``__init__`` are public, ``_helper`` is not."""
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def public_functions(tree: ast.Module) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, bool]]:
    """``(qualified name, node, is a method)`` of the module's public functions and the public methods of its
    public classes (nested functions are a function's own business)."""
    found: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, bool]] = []
    for node in tree.body:
        if isinstance(node, FunctionNode) and is_public(node.name):
            found.append((node.name, node, False))
        elif isinstance(node, ast.ClassDef) and is_public(node.name):
            found.extend(("%s.%s" % (node.name, item.name), item, True) for item in node.body
                         if isinstance(item, FunctionNode) and is_public(item.name))
    return found


def missing_hints(node: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> list[str]:
    """The parameters without a type (and ``return`` when the result has none)."""
    args = node.args
    positional = args.posonlyargs + args.args
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)
    if method and not static and positional:
        positional = positional[1:]  # self, cls
    params = positional + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a is not None]
    missing = [a.arg for a in params if a.annotation is None]
    return missing + (["return"] if node.returns is None else [])


def unannotated(source: str, path: str) -> list[str]:
    """``name (what lacks a type)`` for each public function of the source that is not fully annotated."""
    return ["%s (%s)" % (name, ", ".join(missing)) for name, node, method in public_functions(ast.parse(source, path))
            for missing in [missing_hints(node, method)] if missing]


def test_a_missing_hint_is_found():
    source = ("def typed(a: int, *rest: str, key: bool = False, **more: int) -> None: pass\n"
              "def untyped(a, b: int): pass\n"
              "def _private(a): pass\n"
              "class Thing:\n"
              "    def __init__(self, value: int) -> None: pass\n"
              "    @classmethod\n"
              "    def make(cls, value) -> Thing: pass\n"
              "    @staticmethod\n"
              "    def pure(value: int): pass\n"
              "    def _own(self, value): pass\n")
    assert unannotated(source, "x.py") == ["untyped (a, return)", "Thing.make (value)", "Thing.pure (return)"]


def test_the_walk_finds_every_kind_of_plugin_and_the_named_folders_exist():
    folders = annotated_folders()
    assert {PLUGINS / "modules", PLUGINS / "inventory", MODULE_UTILS / "core", MODULE_UTILS / "rollout_guard"} <= set(folders)
    missing = [str(folder.relative_to(ROOT)) for folder in folders if not list(folder.glob("*.py"))]
    assert not missing, "no Python files in: %s" % ", ".join(missing)


def test_every_public_function_of_the_annotated_packages_has_types():
    found = []
    for folder in annotated_folders():
        for path in sorted(folder.glob("*.py")):
            relative = str(path.relative_to(ROOT))
            source = path.read_text(encoding="utf-8")
            found.extend("%s: %s" % (relative, entry) for entry in unannotated(source, relative))
    assert not found, "add the missing type hints:\n%s" % "\n".join(found)
