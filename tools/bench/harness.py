"""What every benchmark script shares: running a playbook and timing it, the collection path, a
minicloud that is up for the run, and the generated sections of docs/benchmarks.md."""

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from minicloud.runtime.control import Minicloud

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "benchmarks.md"
BIN = Path(sys.executable).parent


def bench_parser(doc, optional_baseline=False):
    """The command line every benchmark shares: ``--baseline-venv`` (with ``optional_baseline``, ``none``
    skips the side by side) and ``--no-write``; the description is the first line of ``doc``."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--baseline-venv", default=str(REPO / ".venv-bench"),
                        help="the baseline's virtualenv (make venv-bench)"
                        + ("; 'none' skips the side by side" if optional_baseline else ""))
    parser.add_argument("--no-write", action="store_true", help="print only, leave docs/benchmarks.md alone")
    return parser


def baseline_bin(args):
    """The baseline virtualenv's bin folder, None when ``--baseline-venv none``."""
    return None if args.baseline_venv == "none" else Path(args.baseline_venv).resolve() / "bin"


def playbook_env(cloud, collections, **extra):
    """The environment of a benchmark's ``ansible-playbook``: the cloud's clouds.yaml, the collections, no
    warnings in the output; ``extra``: more variables."""
    return dict(os.environ, OS_CLIENT_CONFIG_FILE=str(cloud.clouds_yaml), ANSIBLE_COLLECTIONS_PATH=str(collections),
                PYTHONWARNINGS="ignore", ANSIBLE_DEPRECATION_WARNINGS="0", ANSIBLE_LOCALHOST_WARNING="0",
                ANSIBLE_INVENTORY_UNPARSED_WARNING="0", **extra)


def run_playbook(play, venv_bin, cloud, workdir, collections):
    """Run ``play`` (its first play registers ``result``) with the ansible of ``venv_bin``; return the
    registered result and the wall time."""
    path = workdir / "play.yml"
    result_file = workdir / "result.json"
    play[0]["tasks"].append({"name": "keep the result", "ansible.builtin.copy": {
        "content": "{{ result | to_json }}", "dest": str(result_file)}})
    path.write_text(yaml.safe_dump(play, sort_keys=False))
    env = playbook_env(cloud, collections)
    if venv_bin != BIN:
        env.pop("ANSIBLE_COLLECTIONS_PATH")  # the baseline uses the collections its ansible package ships
    started = time.monotonic()
    proc = subprocess.run([str(venv_bin / "ansible-playbook"), "-i", "localhost,", "-c", "local",
                           "-e", "ansible_python_interpreter=%s" % (venv_bin / "python"), str(path)],
                          capture_output=True, text=True, env=env, check=False)
    wall = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit("playbook failed:\n%s\n%s" % (proc.stdout[-8000:], proc.stderr[-3000:]))
    return json.loads(result_file.read_text()), wall


@contextlib.contextmanager
def collections_path():
    """ANSIBLE_COLLECTIONS_PATH as given (make sets it), else a temporary one holding this checkout."""
    if os.environ.get("ANSIBLE_COLLECTIONS_PATH"):
        yield Path(os.environ["ANSIBLE_COLLECTIONS_PATH"])
        return
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "ansible_collections" / "flightcontrol").mkdir(parents=True)
        (Path(tmp) / "ansible_collections" / "flightcontrol" / "openstack").symlink_to(REPO)
        yield Path(tmp)


@contextlib.contextmanager
def running_cloud():
    """The default minicloud, started for the run unless it was up already (then left running)."""
    cloud = Minicloud()
    started_here = not cloud.status().healthy
    if started_here:
        cloud.up()
    try:
        yield cloud
    finally:
        if started_here:
            cloud.down()


def markdown_table(header, align, rows):
    """A Markdown table: ``header`` (column titles), ``align`` (one of ``---`` or ``---:`` per column) and
    ``rows`` (one list of already formatted cells each)."""
    return "\n".join("| %s |" % " | ".join(cells) for cells in [header, align] + list(rows))


def write_doc(mark, text):
    """Replace (or append) the generated section ``mark`` of docs/benchmarks.md."""
    start, end = "<!-- bench:%s:start -->" % mark, "<!-- bench:%s:end -->" % mark
    doc = DOC.read_text() if DOC.exists() else "# Benchmarks\n"
    block = "%s\n%s\n%s" % (start, text, end)
    if start in doc:
        doc = re.sub(re.escape(start) + ".*?" + re.escape(end), lambda _m: block, doc, flags=re.S)
    else:
        doc = doc.rstrip() + "\n\n" + block + "\n"
    DOC.write_text(doc)
