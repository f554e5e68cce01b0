"""pytest plugin (loaded by the repository's pytest.ini): make this checkout importable as
``ansible_collections.flightcontrol.openstack`` so that plain ``pytest tests/unit`` works from the
repository root without building or installing the collection.

It registers the three namespace levels as packages whose search path is the checkout itself;
nothing is written to disk. When the checkout already lives at
``.../ansible_collections/flightcontrol/openstack`` (as in the copy ansible-test uses) the real
parent directory is put on ``sys.path`` instead. ansible-test itself does not read pytest.ini.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NAMESPACE, NAME = 'flightcontrol', 'openstack'


def _register() -> None:
    full_name = 'ansible_collections.%s.%s' % (NAMESPACE, NAME)
    if full_name in sys.modules:
        return
    parts = ROOT.split(os.sep)
    if parts[-3:] == ['ansible_collections', NAMESPACE, NAME]:
        sys.path.insert(0, os.sep.join(parts[:-3]) or os.sep)
        return
    parent = None
    for name, path in (('ansible_collections', []),
                       ('ansible_collections.' + NAMESPACE, []),
                       (full_name, [ROOT])):
        module = sys.modules.get(name)
        if module is None:
            spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
            spec.submodule_search_locations = list(path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
        if parent is not None:
            setattr(parent, name.rsplit('.', 1)[1], module)
        parent = module


_register()
