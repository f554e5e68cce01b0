# -*- coding: utf-8 -*-
"""The one way the integration tests run a real ``ansible-playbook``: a module task, a role or a playbook of
the collection, against minicloud, with its result kept in a file the test reads back."""

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import yaml

import return_docs

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parents[2]


def collections_path(make_folder):
    """ANSIBLE_COLLECTIONS_PATH: the caller's (CI points it at the built collection), else a folder from
    ``make_folder()`` in which this working tree is the collection."""
    if os.environ.get("ANSIBLE_COLLECTIONS_PATH"):
        return os.environ["ANSIBLE_COLLECTIONS_PATH"]
    root = make_folder()
    target = root / "ansible_collections" / "flightcontrol"
    target.mkdir(parents=True)
    (target / "openstack").symlink_to(REPO)
    return root


class PlaybookRun:
    """One ``ansible-playbook`` run: its process, what the play recorded, and an ``rc`` that says whether the
    thing under test failed (plays that keep a result ignore or rescue the failure, so ``ansible-playbook``
    itself exits 0; ``rc`` is then 2, as ``ansible-playbook`` would exit)."""

    def __init__(self, proc, result):
        self.proc = proc
        self.result = result
        self.rc = proc.returncode or (2 if (result or {}).get("failed") else 0)

    @property
    def output(self):
        return self.proc.stdout + self.proc.stderr


class PlaybookRunner:
    """Runs plays in ``folder`` with the collection from ``collections_path`` against the cloud in
    ``clouds_yaml``."""

    def __init__(self, folder, collections_path, clouds_yaml):
        self.folder = Path(folder)
        self.collections_path = str(collections_path)
        self.clouds_yaml = str(clouds_yaml)

    def _file(self, prefix, suffix):
        return self.folder / ("%s-%s%s" % (prefix, uuid.uuid4().hex[:8], suffix))

    def run(self, playbook, extra_vars=None, check_mode=False, diff=False, verbosity=0, env=None, timeout=900):
        """``ansible-playbook PLAYBOOK`` (a path, or a list of plays written to a file) with ``extra_vars``."""
        if not isinstance(playbook, (str, Path)):
            path = self._file("play", ".yml")
            path.write_text(yaml.safe_dump(playbook, sort_keys=False))
            playbook = path
        variables = dict(extra_vars or {}, ansible_python_interpreter=sys.executable)
        vars_file = self._file("vars", ".json")
        vars_file.write_text(json.dumps(variables))
        cmd = [str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local", "-e", "@%s" % vars_file,
               str(playbook)]
        cmd += ["--check"] if check_mode else []
        cmd += ["--diff"] if diff else []
        cmd += ["-" + "v" * verbosity] if verbosity else []
        full_env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=self.collections_path,
                        OS_CLIENT_CONFIG_FILE=self.clouds_yaml, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0",
                        ANSIBLE_LOCALHOST_WARNING="0", ANSIBLE_INVENTORY_UNPARSED_WARNING="0")
        full_env.update(env or {})
        return subprocess.run(cmd, capture_output=True, text=True, env=full_env, timeout=timeout, check=False)

    def keeping(self, tasks, name="under test", keep="{{ result | to_json }}", keep_failure=None):
        """A play running ``tasks`` that writes ``keep`` to a file afterwards, also when they failed; with
        ``keep_failure`` the failure is rescued and that is written instead (``ansible_failed_result`` holds
        it). Returns (play, file)."""
        record = self._file("record", ".json")

        def copy(content):
            return {"name": "keep the result", "check_mode": False,
                    "ansible.builtin.copy": {"content": content, "dest": str(record)}}

        block = {"name": name, "block": list(tasks)}
        if keep_failure:
            block["block"].append(copy(keep))
            block["rescue"] = [copy(keep_failure)]
        else:
            block["always"] = [copy(keep)]
        return [{"name": name, "hosts": "localhost", "gather_facts": False, "tasks": [block]}], record

    def module(self, module, args, check_mode=False, diff=False, verbosity=0):
        """One task of ``module`` with ``args``; returns a PlaybookRun with the task's registered result."""
        play, record = self.keeping([{"name": "module under test", module: args, "register": "result",
                                      "ignore_errors": True}])
        proc = self.run(play, check_mode=check_mode, diff=diff, verbosity=verbosity)
        assert record.exists(), "playbook did not get to record a result:\n%s\n%s" % (proc.stdout, proc.stderr)
        result = json.loads(record.read_text())
        return_docs.check_result(module, result)
        return PlaybookRun(proc, result)

    def role(self, role, keep, role_vars=None, extra_vars=None, keep_failure=None, timeout=900, env=None):
        """``include_role`` with ``role_vars`` (and ``extra_vars`` for the play); returns a PlaybookRun whose
        result is ``keep`` rendered after the role (see ``keeping`` for ``keep_failure``)."""
        play, record = self.keeping([{"name": "role", "ansible.builtin.include_role": {"name": role},
                                      "vars": role_vars or {}}], name=role, keep=keep, keep_failure=keep_failure)
        proc = self.run(play, extra_vars=extra_vars, timeout=timeout, env=env)
        result = json.loads(record.read_text()) if record.exists() else {}
        return PlaybookRun(proc, result)
