#!/usr/bin/env python
"""Seed ansible-test's pip bootstrap cache so sanity/units work without its download host.

ansible-test creates its sanity (and ``--venv``) virtual environments without pip
and bootstraps pip into them with a ``get-pip.py`` style script that it downloads
from a CI file host which is not reachable from every machine (the download is
in ``ansible_test/_util/target/setup/requirements.py``, function ``bootstrap``).
Before downloading it looks for a cached copy at::

    ~/.ansible/test/cache/get_pip_<pip version with dots replaced by _>.py

The pip version comes from ``get_venv_packages()`` in
``ansible_test/_internal/python_requirements.py``.

This script asks the installed ansible-test for that version, downloads the
matching pip wheel with the running interpreter's pip (package index only), and
writes a small self-contained replacement script into the cache path.  The
replacement behaves like get-pip.py: it is called as
``python get_pip.py [pip options] pip==X --no-setuptools --no-wheel`` and runs
``pip install --upgrade --force-reinstall`` from the embedded wheel, finding the
pip wheel itself locally.

Run it with the Python of the environment that provides ansible-test:
``.venv/bin/python tools/ci/ansible_test_pip_bootstrap.py``.  It is idempotent.
"""

from __future__ import annotations

import argparse
import base64
import glob
import os
import subprocess
import sys
import tempfile
import types

TEMPLATE = '''#!/usr/bin/env python
"""Offline stand-in for get-pip.py (pip {version}), written by tools/ci/ansible_test_pip_bootstrap.py."""
import base64
import os
import shutil
import sys
import tempfile

WHEEL_NAME = {wheel_name!r}
WHEEL_DATA = """
{wheel_data}
"""


def main():
    args = [arg for arg in sys.argv[1:] if arg not in ('--no-setuptools', '--no-wheel')]
    tmpdir = tempfile.mkdtemp(prefix='get-pip-')
    try:
        wheel = os.path.join(tmpdir, WHEEL_NAME)
        with open(wheel, 'wb') as handle:
            handle.write(base64.b64decode(WHEEL_DATA))
        sys.path.insert(0, wheel)
        from pip._internal.cli.main import main as pip_main
        return pip_main(['install', '--upgrade', '--force-reinstall', '--find-links', tmpdir] + args)
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
'''


def bootstrap_pip_version() -> str:
    """Return the pip version that the installed ansible-test bootstraps into its virtual environments."""
    from ansible_test._internal.python_requirements import get_venv_packages

    version = '%d.%d' % sys.version_info[:2]
    return get_venv_packages(types.SimpleNamespace(version=version))['pip']


def cache_path(pip_version: str) -> str:
    return os.path.expanduser('~/.ansible/test/cache/get_pip_%s.py' % pip_version.replace('.', '_'))


def write_script(pip_version: str, path: str) -> None:
    with tempfile.TemporaryDirectory() as tmpdir:
        subprocess.run(
            [sys.executable, '-m', 'pip', 'download', '--quiet', '--disable-pip-version-check',
             '--no-deps', '--only-binary=:all:', '--dest', tmpdir, 'pip==%s' % pip_version],
            check=True,
        )
        wheels = glob.glob(os.path.join(tmpdir, 'pip-%s-*.whl' % pip_version))
        if len(wheels) != 1:
            raise SystemExit('expected one pip %s wheel, found: %s' % (pip_version, wheels))
        with open(wheels[0], 'rb') as handle:
            data = base64.encodebytes(handle.read()).decode('ascii').strip()
        text = TEMPLATE.format(version=pip_version, wheel_name=os.path.basename(wheels[0]), wheel_data=data)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temp_path = path + '.tmp'
    with open(temp_path, 'w', encoding='ascii') as handle:
        handle.write(text)
    os.replace(temp_path, path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    parser.add_argument('--force', action='store_true', help='rewrite the cached script even if it exists')
    options = parser.parse_args()

    pip_version = bootstrap_pip_version()
    path = cache_path(pip_version)
    if os.path.exists(path) and not options.force:
        print('ansible-test pip %s bootstrap already cached: %s' % (pip_version, path))
        return 0
    write_script(pip_version, path)
    print('ansible-test pip %s bootstrap written: %s' % (pip_version, path))
    return 0


if __name__ == '__main__':
    sys.exit(main())
