"""Label and field selectors, parsed once and matched against plain objects (pure).

Label selectors accept what apimachinery's ``labels.Parse`` does: ``k=v``, ``k==v``,
``k!=v``, ``k in (a,b)``, ``k notin (a,b)``, ``k`` and ``!k``, comma-separated.
Field selectors accept ``=``, ``==`` and ``!=`` on the fields a kind supports.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from minicloud.kube.errors import bad_request

Requirement = Callable[[dict], bool]

_SET = re.compile(r"^\s*(!?)\s*([A-Za-z0-9_./-]+)\s*(?:(notin|in)\s*\(([^)]*)\))?\s*$")
_EQ = re.compile(r"^\s*([A-Za-z0-9_./-]+)\s*(==|=|!=)\s*([A-Za-z0-9_.-]*)\s*$")


def _split_terms(text: str) -> list[str]:
    """Split on commas outside parentheses."""
    terms, depth, current = [], 0, ""
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            terms.append(current)
            current = ""
        else:
            current += char
    terms.append(current)
    return [t for t in terms if t.strip()]


@dataclass(frozen=True)
class LabelSelector:
    requirements: tuple[Requirement, ...] = ()

    @classmethod
    def parse(cls, text: str | None) -> LabelSelector:
        if not text:
            return cls()
        return cls(tuple(_label_requirement(term) for term in _split_terms(text)))

    def matches(self, labels: dict | None) -> bool:
        labels = labels or {}
        return all(req(labels) for req in self.requirements)


def _label_requirement(term: str) -> Requirement:
    eq = _EQ.match(term)
    if eq:
        key, op, value = eq.groups()
        if op == "!=":
            return lambda labels: labels.get(key) != value
        return lambda labels: labels.get(key) == value
    match = _SET.match(term)
    if not match:
        raise bad_request(f"unable to parse requirement: {term.strip()!r}: invalid label selector")
    negated, key, op, values = match.groups()
    if op:
        if negated:
            raise bad_request(f"unable to parse requirement: {term.strip()!r}")
        members = {v.strip() for v in values.split(",") if v.strip()}
        if op == "in":
            return lambda labels: labels.get(key) in members
        return lambda labels: labels.get(key) not in members
    if negated:
        return lambda labels: key not in labels
    return lambda labels: key in labels


def field_value(obj: dict, path: str) -> str | None:
    """A dotted field as the string a field selector compares (booleans as ``true``/``false``)."""
    value = obj
    for part in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@dataclass(frozen=True)
class FieldSelector:
    requirements: tuple[tuple[str, str, str], ...] = ()  # (path, op, value)

    @classmethod
    def parse(cls, text: str | None, supported: tuple[str, ...]) -> FieldSelector:
        if not text:
            return cls()
        reqs = []
        for term in _split_terms(text):
            match = _EQ.match(term)
            if not match:
                raise bad_request(f"invalid selector: '{text}'; can't understand '{term.strip()}'")
            path, op, value = match.groups()
            if path not in supported:
                raise bad_request(f'field label not supported: {path}')
            reqs.append((path, "!=" if op == "!=" else "=", value))
        return cls(tuple(reqs))

    def matches(self, obj: dict) -> bool:
        for path, op, value in self.requirements:
            actual = field_value(obj, path)
            if path == "spec.unschedulable" and actual is None:
                actual = "false"
            equal = (actual or "") == value
            if equal != (op == "="):
                return False
        return True
