# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""openstacksdk, keystoneauth and requests behind one import guard, and the SDK's version check.

Every other file imports the libraries from here, so ``SDK_IMPORT_ERROR`` is the one place that
knows whether they are installed."""

from __future__ import annotations

import os
import re
import sys
import traceback

SDK_IMPORT_ERROR = None
try:
    # Imported here for the other files (the one import guard), hence unused in this one.
    import openstack  # pylint: disable=unused-import
    from openstack import exceptions as sdk_exceptions  # pylint: disable=unused-import
    from keystoneauth1 import exceptions as ksa_exceptions
    import requests  # pylint: disable=unused-import
except ImportError:
    openstack = None
    sdk_exceptions = None
    ksa_exceptions = None  # type: ignore[assignment]
    requests = None  # type: ignore[assignment]
    SDK_IMPORT_ERROR = traceback.format_exc()

from importlib import metadata as importlib_metadata  # noqa: E402

MINIMUM_SDK_VERSION = "1.0.0"
COLLECTION_NAME = "flightcontrol.openstack"


def sdk_version() -> str | None:
    """The installed openstacksdk version string, read from package metadata (never a submodule)."""
    try:
        return importlib_metadata.version("openstacksdk")
    except importlib_metadata.PackageNotFoundError:
        return None


def _version_tuple(text: object) -> tuple[int, ...]:
    parts = []
    for piece in str(text).split("."):
        digits = ""
        for char in piece:
            if not char.isdigit():
                break
            digits += char
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def sdk_version_error() -> str | None:
    """A message when openstacksdk is missing or too old for this collection, else None."""
    version = sdk_version()
    if version is None:
        return None
    if _version_tuple(version) < _version_tuple(MINIMUM_SDK_VERSION):
        return f"openstacksdk {version} is installed; {COLLECTION_NAME} needs {MINIMUM_SDK_VERSION} or newer"
    return None


# The zip Ansible runs a module from: /tmp/ansible_<module>_payload_<random>/ansible_<module>_payload.zip
_MODULE_PAYLOAD = re.compile(r"^ansible_.+_payload\.zip$")


def reuse_entry_point_cache() -> None:
    """Let this run of the module read the entry points from stevedore's file cache instead of scanning every
    installed package again.

    keystoneauth finds its auth plugin through stevedore, which caches the entry points of ``sys.path`` in a
    file named after a hash of ``sys.path``. A module's ``sys.path`` starts with its own payload zip, whose
    name is new at every run: stevedore misses its cache, scans every package (0.5 to 1 s of CPU) and writes a
    new 90 KB file into ~/.cache/python-entrypoints each time. The zip holds no package metadata, so the entry
    points of ``sys.path`` without it are the same: stevedore's cache for that path is handed to this one.
    Best effort: anything unexpected (another stevedore) leaves stevedore to do what it always does."""
    key = tuple(sys.path)
    stable = tuple(entry for entry in key if not _MODULE_PAYLOAD.match(os.path.basename(entry)))
    if stable == key:
        return
    try:
        from stevedore import _cache  # pylint: disable=import-outside-toplevel

        cache = _cache._c  # pylint: disable=protected-access
        if key not in cache._internal:  # pylint: disable=protected-access
            cache._internal[key] = cache._get_data_for_path(stable)  # pylint: disable=protected-access
    except Exception:  # pylint: disable=broad-except
        return
