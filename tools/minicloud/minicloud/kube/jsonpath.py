"""The JSONPath subset of printer columns (``additionalPrinterColumns``), evaluated on plain dicts (pure).

Supported, as CAPI and CAPO columns use them::

    .spec.clusterName                                  fields
    .metadata.labels.cluster\\.x-k8s\\.io/cluster-name   escaped dots in a key
    .metadata.labels['cluster\\.x-k8s\\.io/cluster-name'] quoted keys
    .status.conditions[?(@.type=="Ready")].status      filters (== and !=) on a field
    .status.addresses[0].address, .items[*].name       indexes and wildcards
"""

from __future__ import annotations

import json
import re

_FILTER = re.compile(r"""^\?\(@((?:\.[\w\-/\\.]+)+)\s*(==|!=)\s*(?:"([^"]*)"|'([^']*)'|([\w.\-]+))\)$""")


class JsonPathError(ValueError):
    pass


def _name(text: str, start: int) -> tuple[str, int]:
    """A dotted step's key up to the next unescaped ``.`` or ``[``."""
    out, i = [], start
    while i < len(text) and text[i] not in ".[":
        if text[i] == "\\" and i + 1 < len(text):
            i += 1
        out.append(text[i])
        i += 1
    return "".join(out), i


def parse(path: str) -> list[tuple[str, object]]:
    """Steps of ``path``: ("key", name), ("index", n), ("all", None), ("filter", (fields, op, value))."""
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    steps: list[tuple[str, object]] = []
    i = 0
    while i < len(text):
        if text[i] == ".":
            key, i = _name(text, i + 1)
            if key:
                steps.append(("key", key))
        elif text[i] == "[":
            end = _closing(text, i)
            inner = text[i + 1:end].strip()
            i = end + 1
            if inner == "*":
                steps.append(("all", None))
            elif inner[:1] in "'\"" and inner[-1:] == inner[:1]:
                steps.append(("key", inner[1:-1].replace("\\.", ".")))
            elif inner.startswith("?("):
                match = _FILTER.match(inner)
                if not match:
                    raise JsonPathError(f"unsupported filter: {inner}")
                fields = [f for f in re.split(r"(?<!\\)\.", match.group(1)) if f]
                value = next(g for g in match.groups()[2:] if g is not None)
                steps.append(("filter", ([f.replace("\\.", ".") for f in fields], match.group(2), value)))
            else:
                try:
                    steps.append(("index", int(inner)))
                except ValueError:
                    raise JsonPathError(f"unsupported step: [{inner}]") from None
        else:
            key, i = _name(text, i)
            steps.append(("key", key))
    return steps


def _closing(text: str, start: int) -> int:
    quote = None
    for i in range(start + 1, len(text)):
        char = text[i]
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "]":
            return i
    raise JsonPathError(f"unclosed [ in {text}")


def _field(value, fields: list[str]):
    for field in fields:
        if not isinstance(value, dict) or field not in value:
            return None
        value = value[field]
    return value


def _text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value)


def find(obj, path: str) -> list:
    """Every value ``path`` reaches in ``obj`` (empty when it reaches none)."""
    nodes = [obj]
    for kind, arg in parse(path):
        found = []
        for node in nodes:
            if kind == "key" and isinstance(node, dict) and arg in node:
                found.append(node[arg])
            elif kind == "index" and isinstance(node, list) and -len(node) <= arg < len(node):
                found.append(node[arg])
            elif kind == "all":
                found.extend(node.values() if isinstance(node, dict) else node if isinstance(node, list) else [])
            elif kind == "filter" and isinstance(node, list):
                fields, op, expected = arg
                for item in node:
                    actual = _field(item, fields)
                    if actual is not None and (_text(actual) == expected) == (op == "=="):
                        found.append(item)
        nodes = found
    return nodes


def text(value) -> str:
    """How kubectl's JSONPath printer writes a value (strings as they are, booleans lower-case)."""
    return _text(value)
