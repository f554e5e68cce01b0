# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secrets inside options that cannot be ``no_log`` as a whole: a ``cloud`` dict (its name, when it is a
string, must stay readable) and a kubeconfig given as a dict. Their values are masked in the invocation log
and in results like the values of ``no_log`` options."""

from __future__ import annotations

from typing import Any, Mapping

SECRET_KEY_WORDS = ("password", "secret", "token", "key", "credential")


def secret_values(value: Any, key: str = "") -> set[str]:
    """The values under secret-looking keys of a nested dict (or list), to be masked in output: ``password``,
    ``application_credential_secret``, a kubeconfig user's ``token`` and ``client-key-data``."""
    found: set[str] = set()
    if isinstance(value, dict):
        for name, item in value.items():
            found |= secret_values(item, str(name))
    elif isinstance(value, (list, tuple)):
        for item in value:
            found |= secret_values(item, key)
    elif value not in (None, "") and not isinstance(value, bool) and any(
            word in key.lower() for word in SECRET_KEY_WORDS):
        found.add(str(value))
    return found


def kubeconfig_secrets(options: Mapping[str, Any] | None) -> set[str]:
    """The secrets of a kubeconfig given as a dict in ``options`` (the top-level options of a Kubernetes
    module, or the ``kubernetes`` dict of an OpenStack module that also reads Kubernetes)."""
    kubeconfig = (options or {}).get("kubeconfig")
    return secret_values(kubeconfig) if isinstance(kubeconfig, dict) else set()
