# -*- coding: utf-8 -*-
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What ships: the collection tarball (`ansible-galaxy collection build`) and the execution
environment build context (`ansible-builder create`).

Run from the repository root with the development environment: `make packaging`
(= `.venv/bin/python -m pytest tests/test_packaging.py`). No network and no container engine needed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.dirname(sys.executable)

# Development state that galaxy.yml's build_ignore must keep out of the tarball. Each entry is
# planted (as a small file) in a copy of the checkout before building, so the test fails when
# an ignore rule goes missing even if the real checkout happens not to have that path right now.
PLANTED = [
    'tools/minicloud/minicloud/__init__.py',
    'tools/ci/helper.py',
    'tests/output/junit/result.xml',
    '.ansible/collections/ansible_collections/x/y/galaxy.yml',
    '.venv/bin/python',
    '.venv-py311/bin/python',
    '.minicloud/state.json',
    'build/collections/ansible_collections/flightcontrol/openstack/galaxy.yml',
    '.ci/run',
    'Makefile',
    '.gitignore',
    'old-build.tar.gz',
    '.pytest_cache/v/cache/lastfailed',
    'plugins/modules/__pycache__/lb_member_wait.cpython-312.pyc',
    '.hypothesis/examples/x',
    'changelogs/.plugin-cache.yaml',
    'constraints/dev.txt',
    'requirements-dev.txt',
    'pytest.ini',
]

# Prefixes no member of the tarball may have (checked for the real checkout too).
FORBIDDEN_PREFIXES = (
    'tools/', 'tests/output/', '.ansible/', '.venv/', '.venv-', '.minicloud/', 'build/', '.ci/', '.git',
    '.pytest_cache/', '.hypothesis/', 'constraints/',
)
FORBIDDEN_NAMES = {'Makefile', 'changelogs/.plugin-cache.yaml', 'requirements-dev.txt', 'pytest.ini'}

# Not copied into the scratch checkout: large or irrelevant, and planted again where needed.
COPY_IGNORE = shutil.ignore_patterns('.git', '.venv', '.venv-*', 'build', '.minicloud', '.ansible',
                                     'output', '.pytest_cache', '.hypothesis', '__pycache__', '*.tar.gz')


def tool(name):
    """Path of a console script from the environment running the tests (the dev venv)."""
    path = os.path.join(BIN, name)
    if os.path.exists(path):
        return path
    found = shutil.which(name)
    if not found:
        pytest.fail('%s is not installed next to %s nor on PATH: run `make venv` first' % (name, sys.executable))
    return found


def run(args, cwd):
    result = subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False)
    assert result.returncode == 0, '%s failed (%d):\n%s\n%s' % (' '.join(args), result.returncode, result.stdout, result.stderr)
    return result


def load_yaml(path):
    with open(path, encoding='utf-8') as handle:
        return yaml.safe_load(handle)


def requirement_names(lines):
    names = set()
    for line in lines:
        line = line.split('#', 1)[0].strip()
        match = re.match(r'^([A-Za-z0-9][A-Za-z0-9._-]*)', line)
        if match:
            names.add(re.sub(r'[-_.]+', '-', match.group(1)).lower())
    return names


def build(source, dest):
    run([tool('ansible-galaxy'), 'collection', 'build', '--force', '--output-path', str(dest), str(source)], cwd=str(dest))
    galaxy = load_yaml(os.path.join(source, 'galaxy.yml'))
    path = os.path.join(str(dest), '%s-%s-%s.tar.gz' % (galaxy['namespace'], galaxy['name'], galaxy['version']))
    assert os.path.exists(path), os.listdir(str(dest))
    return path


def members(path):
    with tarfile.open(path) as tar:
        return sorted(m.name[2:] if m.name.startswith('./') else m.name for m in tar.getmembers())


def forbidden(names):
    return [n for n in names if n.startswith(FORBIDDEN_PREFIXES) or n in FORBIDDEN_NAMES
            or '/__pycache__/' in '/' + n or n.endswith(('.pyc', '.tar.gz'))]


@pytest.fixture(scope='module')
def tarball(tmp_path_factory):
    """The tarball built from the real checkout."""
    return build(ROOT, tmp_path_factory.mktemp('dist'))


@pytest.fixture(scope='module')
def planted_tarball(tmp_path_factory):
    """The tarball built from a scratch copy of the checkout with every ignored path planted."""
    source = tmp_path_factory.mktemp('checkout') / 'openstack'
    shutil.copytree(ROOT, str(source), ignore=COPY_IGNORE, symlinks=True)
    for relative in PLANTED:
        path = source / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.write_text('planted\n', encoding='utf-8')
    return build(source, tmp_path_factory.mktemp('dist-planted'))


def test_tarball_ships_the_collection(tarball):
    names = members(tarball)
    galaxy = load_yaml(os.path.join(ROOT, 'galaxy.yml'))
    assert any(n.startswith('plugins/modules/') and n.endswith('.py') for n in names), names
    for required in ('MANIFEST.json', 'FILES.json', 'meta/runtime.yml', 'LICENSE', 'requirements.txt',
                     'changelogs/changelog.yaml', 'changelogs/config.yaml',
                     'playbooks/fleet_flight_check.yml', 'playbooks/fleet_rollout.yml',
                     'playbooks/deletion_stuck.yml', 'extensions/eda/plugins/event_source/capi_events.py',
                     'extensions/eda/rulebooks/guard_rollouts.yml', 'extensions/eda/rulebooks/stuck_deletions.yml',
                     'examples/inventory/fleet.capi_clusters.yml', 'docs/troubleshooting.md', 'docs/awx.md'):
        assert required in names, '%s missing from the tarball: %s' % (required, names)
    with tarfile.open(tarball) as tar:
        manifest = json.load(tar.extractfile('MANIFEST.json'))
    info = manifest['collection_info']
    assert (info['namespace'], info['name'], info['version']) == ('flightcontrol', 'openstack', galaxy['version'])
    assert info['license'] == ['GPL-3.0-or-later']


def test_tarball_leaves_out_development_state_of_the_checkout(tarball):
    assert forbidden(members(tarball)) == []


def test_build_ignore_keeps_every_development_path_out(planted_tarball):
    names = members(planted_tarball)
    assert 'plugins/modules/lb_member_wait.py' in names or any(n.startswith('plugins/') for n in names)
    leaked = [relative for relative in PLANTED if relative in names]
    assert leaked == [], 'build_ignore in galaxy.yml lets these into the tarball: %s' % leaked
    assert forbidden(names) == []


def test_runtime_metadata_names_the_action_groups():
    runtime = load_yaml(os.path.join(ROOT, 'meta', 'runtime.yml'))
    assert runtime['requires_ansible'] == '>=2.17.0'
    groups = runtime['action_groups']
    assert 'lb_member_wait' in groups['openstack']
    assert set(groups) == {'openstack', 'kubernetes'}


@pytest.fixture(scope='module')
def ee_context(tarball, tmp_path_factory):
    """`ansible-builder create` run on a scratch copy of the EE definition, with the tarball where
    `make ee-context` puts it."""
    work = tmp_path_factory.mktemp('ee')
    shutil.copy(os.path.join(ROOT, 'execution-environment.yml'), str(work / 'execution-environment.yml'))
    shutil.copy(os.path.join(ROOT, 'requirements.txt'), str(work / 'requirements.txt'))
    (work / 'build' / 'ee').mkdir(parents=True)
    shutil.copy(tarball, str(work / 'build' / 'ee' / 'flightcontrol-openstack.tar.gz'))
    run([tool('ansible-builder'), 'create', '--file', 'execution-environment.yml', '--context', 'context',
         '--output-filename', 'Containerfile'], cwd=str(work))
    return work / 'context'


def test_ee_context_installs_our_python_requirements(ee_context):
    with open(os.path.join(ROOT, 'requirements.txt'), encoding='utf-8') as handle:
        ours = requirement_names(handle)
    assert {'openstacksdk', 'kubernetes'} <= ours
    generated = (ee_context / '_build' / 'requirements.txt').read_text(encoding='utf-8').splitlines()
    assert requirement_names(generated) >= ours
    with open(os.path.join(ROOT, 'requirements.txt'), encoding='utf-8') as handle:
        for line in handle:
            line = line.strip()
            if line and not line.startswith('#'):
                assert line in generated, 'requirement %r not in the EE context: %s' % (line, generated)


def test_ee_context_installs_this_collection(ee_context, tarball):
    containerfile = (ee_context / 'Containerfile').read_text(encoding='utf-8')
    definition = load_yaml(os.path.join(ROOT, 'execution-environment.yml'))
    assert definition['version'] == 3
    assert definition['images']['base_image']['name'] in containerfile
    assert 'ansible-galaxy collection install' in containerfile
    galaxy_requirements = load_yaml(str(ee_context / '_build' / 'requirements.yml'))
    entries = galaxy_requirements['collections']
    assert len(entries) == 1 and entries[0]['type'] == 'file'
    shipped = ee_context / '_build' / entries[0]['name']
    assert shipped.is_file(), 'collection tarball not in the build context: %s' % shipped
    with tarfile.open(str(shipped)) as tar:
        info = json.load(tar.extractfile('MANIFEST.json'))['collection_info']
    assert (info['namespace'], info['name']) == ('flightcontrol', 'openstack')


def test_ee_image_has_ansible_runner(ee_context):
    """AWX runs every job through ansible-runner inside the image. The base image brings it (and ansible-core),
    so no context file can list it; what the context can show is that the build checks for it: the Containerfile's
    last stage runs ansible-builder's check_ansible script, which imports ansible_runner and runs
    `ansible-runner --version`, and fails the build without them."""
    definition = load_yaml(os.path.join(ROOT, 'execution-environment.yml'))
    assert not definition.get('options', {}).get('skip_ansible_check', False)
    assert 'ansible_runner' not in (definition.get('dependencies') or {}), 'the base image brings ansible-runner'
    containerfile = (ee_context / 'Containerfile').read_text(encoding='utf-8')
    final_stage = containerfile[containerfile.rindex('\nFROM '):]
    assert 'RUN /output/scripts/check_ansible $PYCMD' in final_stage, final_stage
    check = (ee_context / '_build' / 'scripts' / 'check_ansible').read_text(encoding='utf-8')
    assert 'ansible-runner --version' in check and 'import ansible_runner' in check


def test_installed_collection_declares_its_python_dependencies(tarball, tmp_path):
    """What ansible-builder's introspection finds inside the installed collection (this is how an
    EE built on top of ours, or `ansible-builder introspect`, learns about openstacksdk)."""
    collections = tmp_path / 'collections'
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(collections))
    result = subprocess.run([tool('ansible-galaxy'), 'collection', 'install', '--offline', '--no-deps',
                             '-p', str(collections), tarball], cwd=str(tmp_path), capture_output=True,
                            text=True, env=env, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    result = run([tool('ansible-builder'), 'introspect', '--sanitize', str(collections)], cwd=str(tmp_path))
    introspected = yaml.safe_load(result.stdout)
    found = requirement_names(introspected['python'])
    assert {'openstacksdk', 'kubernetes'} <= found, result.stdout
    assert all('flightcontrol.openstack' in line for line in introspected['python']), result.stdout
