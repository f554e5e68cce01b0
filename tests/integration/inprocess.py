# -*- coding: utf-8 -*-
"""Run a module of the collection in this Python process, the way Ansible runs it, against minicloud.

``ansible-playbook`` starts a new interpreter per task (about 2 s each on these machines). For what the
playbook path adds nothing to (argument checks, refusals, check mode, guards, fuzzing) a test calls the
module's ``main()`` here instead: the same AnsibleModule argument parsing, the same runner, the same
requests to minicloud, the same JSON result. Anything but ``SystemExit`` escaping ``main()`` is what
Ansible would show as a traceback, so it is raised to the test as ``ModuleTraceback``. Every result is held
against the module's RETURN documentation (``return_docs``: the keys documented as always returned are there).
"""

import contextlib
import importlib
import io
import json
import os
import tempfile

from ansible.module_utils import basic
from ansible.module_utils.common import warnings as module_warnings

import return_docs

PACKAGE = "ansible_collections.flightcontrol.openstack.plugins.modules."


class ModuleTraceback(AssertionError):
    """The module raised instead of returning a result (a user would see a traceback)."""


@contextlib.contextmanager
def _environment(env):
    saved = dict((key, os.environ.get(key)) for key in env)
    os.environ.update(dict((k, str(v)) for k, v in env.items() if v is not None))
    for key, value in env.items():
        if value is None:
            os.environ.pop(key, None)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run_module(name, args, check_mode=False, diff=False, env=None):
    """Run ``flightcontrol.openstack.<name>`` with ``args``; returns its result dict (``failed`` set when
    the module failed). ``env`` adds (or, with None, removes) environment variables for the call."""
    module = importlib.import_module(PACKAGE + name)
    with tempfile.TemporaryDirectory(prefix="fc-inprocess-") as tmp:
        payload = dict(args)
        payload.update(_ansible_check_mode=bool(check_mode), _ansible_diff=bool(diff), _ansible_tmpdir=tmp,
                       _ansible_remote_tmp=tmp, _ansible_keep_remote_files=False, _ansible_no_log=False,
                       _ansible_verbosity=0, _ansible_debug=False)
        basic._ANSIBLE_ARGS = json.dumps({"ANSIBLE_MODULE_ARGS": payload}).encode("utf-8")
        basic._ANSIBLE_PROFILE = "legacy"
        # a new process starts with none: warnings of an earlier run in this process are not this run's
        module_warnings._global_warnings.clear()
        module_warnings._global_deprecations.clear()
        out = io.StringIO()
        try:
            with _environment(env or {}), contextlib.redirect_stdout(out):
                try:
                    module.main()
                except SystemExit:
                    pass
                except Exception as exc:  # pylint: disable=broad-except
                    raise ModuleTraceback("%s raised %s: %s (args %r)" % (name, type(exc).__name__, exc, args)) \
                        from exc
        finally:
            basic._ANSIBLE_ARGS = None
    text = out.getvalue().strip()
    try:
        result = json.loads(text[text.index("{"):])
    except ValueError:
        raise ModuleTraceback("%s printed no JSON result: %r" % (name, text[-2000:]))
    result = _as_registered(result)
    return_docs.check_result(name, result)
    return result


def _as_registered(result):
    """The result as a play registers it: the module sends its warnings as structured events, the controller
    hands the task their messages, and says ``failed`` and ``changed`` even when the module left them out."""
    result.setdefault("failed", False)
    result.setdefault("changed", False)
    if result.get("warnings"):
        result["warnings"] = [w["event"]["msg"] if isinstance(w, dict) and "event" in w else w
                              for w in result["warnings"]]
    return result
