# -*- coding: utf-8 -*-
"""Each module's RETURN documentation held against its results: every key documented as ``returned: always``
is in every result a test gets, failed results, refusals and check mode included, and every key documented as
``returned: success`` (or ``success, and <when else>``) is in every result that did not fail. The shared runs
(``inprocess.run_module`` and ``PlaybookRunner.module``, behind the ``run_module`` and ``run_in_process``
fixtures) check each result.

"always" means always: a key that only makes sense once the module got somewhere (read its object, finished
its audit) is documented with that condition, or as ``success``. One kind of result is exempt: a refusal by
AnsibleModule's own argument checks (unknown, missing or mistyped options), made before the module's code
runs; it carries the message and nothing of the module's (no ``elapsed``), and so is told apart."""

import ast
import functools
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]

PREFIX = "flightcontrol.openstack."
#: what a refusal by AnsibleModule's argument checks carries (the controller adds the rest of these)
BEFORE_THE_MODULE = frozenset(["failed", "msg", "changed", "invocation", "warnings", "deprecations", "exception",
                               "_ansible_no_log", "skipped", "module_stderr", "module_stdout", "rc"])


def _constant(path, name, cls=None):
    """The string assigned to ``name`` at the top of ``path`` (or in its class ``cls``)."""
    body = ast.parse(path.read_text(encoding="utf-8"), str(path)).body
    if cls is not None:
        body = [node for node in body if isinstance(node, ast.ClassDef) and node.name == cls][0].body
    for node in body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return node.value.value
    return None


@functools.lru_cache(maxsize=None)
def documented_return(module):
    """The RETURN documentation of ``module`` (``route_audit`` or ``flightcontrol.openstack.route_audit``),
    its fragments' RETURN merged in."""
    name = module[len(PREFIX):] if module.startswith(PREFIX) else module
    docs = yaml.safe_load(_constant(REPO / "plugins" / "modules" / (name + ".py"), "RETURN") or "") or {}
    for fragment in docs.pop("extends_documentation_fragment", None) or []:
        path = REPO / "plugins" / "doc_fragments" / (fragment[len(PREFIX):] + ".py")
        docs.update(yaml.safe_load(_constant(path, "RETURN", cls="ModuleDocFragment") or "") or {})
    return docs


def returned(module, when):
    """The keys ``module`` documents as ``returned: <when>``; for ``success`` also ``success, and <more>``."""
    def promised(text):
        return text == when or (when == "success" and text.startswith("success, and "))
    return sorted(key for key, doc in documented_return(module).items()
                  if promised(str((doc or {}).get("returned", "")).strip()))


def refused_before_the_module(result):
    return bool(result.get("failed")) and not set(result) - BEFORE_THE_MODULE


def missing_keys(module, result):
    """The keys ``module`` documents as returned always (or on success, for a result that did not fail) that
    ``result`` lacks; none for a refusal made before the module's code ran."""
    if not module.startswith(PREFIX) and "." in module:
        return []  # another collection's module
    if refused_before_the_module(result):
        return []
    wanted = returned(module, "always") + ([] if result.get("failed") else returned(module, "success"))
    return [key for key in wanted if key not in result]


def check_result(module, result):
    """Fail the test when ``result`` of ``module`` lacks a key its RETURN says it returns in such a result."""
    missing = missing_keys(module, result)
    assert not missing, "%s's RETURN promises %s in this %s result, which lacks it: %r" % (
        module, ", ".join(missing), "failed" if result.get("failed") else "successful", result)
