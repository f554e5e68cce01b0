"""Write the fault matrix of docs/reliability.md from the outcomes the matrix test recorded.

    FAULT_MATRIX_REPORT=build/fault-matrix.jsonl pytest tests/integration/test_fault_matrix.py
    python tools/reliability/matrix_table.py build/fault-matrix.jsonl docs/reliability.md

(``make reliability`` does both.) The table goes between the ``fault-matrix`` markers of the document.
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import sys
from pathlib import Path

START, END = "<!-- fault-matrix:start -->", "<!-- fault-matrix:end -->"
SYMBOL = {"pass": "✓", "not run": "–", "failed": "✗"}


def load(path: Path) -> list[dict]:
    cells = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            cell = json.loads(line)
            cells[(cell["module"], cell["row"])] = cell  # a cell run again (a retried test) counts once
    return list(cells.values())


def in_test_order(cells: list[dict]) -> list[dict]:
    """The cells in the test file's order (its ``order``: scenario, then row), whatever order the workers ran
    them in; cells written without one keep theirs."""
    return sorted(cells, key=lambda c: c.get("order") or [])


def render(cells: list[dict], command: str) -> str:
    cells = in_test_order(cells)
    modules = list(dict.fromkeys(c["module"] for c in cells))
    rows = [row for _index, row in sorted(dict.fromkeys((c.get("order", [0, 0])[1], c["row"]) for c in cells))]
    by_key = dict(((c["module"], c["row"]), c) for c in cells)
    passed = sum(1 for c in cells if c["outcome"] == "pass")
    lines = [f"Generated {datetime.date.today().isoformat()} by `{command}`: {len(cells)} cells, {passed} passed, "
             f"{sum(1 for c in cells if c['outcome'] == 'failed')} failed, "
             f"{sum(1 for c in cells if c['outcome'] == 'not run')} not run (with the reason below).", "",
             "| module (write calls) | " + " | ".join(rows) + " |",
             "| --- | " + " | ".join(":---:" for _ in rows) + " |"]
    for module in modules:
        calls = next(c["call"] for c in cells if c["module"] == module)
        marks = [SYMBOL.get(by_key[(module, row)]["outcome"], "?") if (module, row) in by_key else ""
                 for row in rows]
        lines.append(f"| {module} ({calls}) | " + " | ".join(marks) + " |")
    lines += ["", "| cell | outcome | what happened |", "| --- | --- | --- |"]
    for cell in cells:
        detail = cell["detail"].replace("|", "\\|")
        lines.append(f"| {cell['module']} × {cell['row']} | {cell['outcome']} | {detail} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("document", type=Path)
    parser.add_argument("--command", default="make reliability")
    args = parser.parse_args(argv)
    cells = load(args.report)
    if not cells:
        print(f"{args.report} holds no cell", file=sys.stderr)
        return 1
    text = args.document.read_text(encoding="utf-8")
    if START not in text or END not in text:
        print(f"{args.document} has no {START} ... {END} markers", file=sys.stderr)
        return 1
    table = render(cells, args.command)
    args.document.write_text(re.sub(re.escape(START) + ".*?" + re.escape(END),
                                    lambda _m: f"{START}\n{table}\n{END}", text, flags=re.S), encoding="utf-8")
    failed = [c for c in cells if c["outcome"] == "failed"]
    print(f"{len(cells)} cells written to {args.document}; {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
