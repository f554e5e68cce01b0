# -*- coding: utf-8 -*-
"""The shape of the repository's Python, read from the files: no function outside the tests is longer than 60
lines (from its ``def`` to its last line, docstring included), in the collection, its extensions and tools/
alike. A long function is split into steps with names, as the runners are."""

import ast
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 60

#: Functions allowed to be longer while someone splits them (``path:function``), the only allowance; empty now
#: that minicloud's last two are split. Nothing else is exempt.
BEING_SPLIT = set()


def python_files():
    """The repository's Python files that git tracks (or would: untracked, not ignored), tests left out."""
    try:
        listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.py"], cwd=ROOT,
                                capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):  # not a checkout: every file below the root
        listed = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py")
                  if not any(part.startswith(".") or part in ("build", "__pycache__") for part in p.parts)]
    return sorted(p for p in listed if "tests" not in Path(p).parts and (ROOT / p).is_file())


def long_functions(source, path):
    """``(name, lines)`` of every function (methods and nested functions too) over MAX_LINES lines."""
    found = []
    for node in ast.walk(ast.parse(source, path)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines = node.end_lineno - node.lineno + 1
            if lines > MAX_LINES:
                found.append((node.name, lines))
    return found


def test_the_files_are_found():
    files = python_files()
    assert "plugins/modules/route_audit.py" in files and "tools/demo/run.py" in files
    assert not [p for p in files if p.startswith("tests/")]


def test_a_long_function_is_found():
    def body(lines, indent):
        return "".join("%sx = %d\n" % (indent, i) for i in range(lines))
    assert long_functions("def short():\n" + body(MAX_LINES - 1, "    "), "short.py") == []
    assert long_functions("class A:\n    def long(self):\n" + body(MAX_LINES, "        "), "a.py") == [
        ("long", MAX_LINES + 1)]


def test_no_function_is_over_60_lines():
    found = []
    for path in python_files():
        for name, lines in long_functions((ROOT / path).read_text(encoding="utf-8"), path):
            if "%s:%s" % (path, name) not in BEING_SPLIT:
                found.append("%s: %s is %d lines" % (path, name, lines))
    assert not found, "split these into steps with names (at most %d lines each):\n%s" % (MAX_LINES, "\n".join(found))


def test_every_allowance_is_still_needed():
    """An allowance goes when its function is split (or gone)."""
    still_long = set()
    for entry in BEING_SPLIT:
        path, name = entry.split(":")
        if (ROOT / path).is_file():
            source = (ROOT / path).read_text(encoding="utf-8")
            still_long.update("%s:%s" % (path, n) for n, _lines in long_functions(source, path) if n == name)
    assert still_long == BEING_SPLIT, "remove from BEING_SPLIT: %s" % sorted(BEING_SPLIT - still_long)
