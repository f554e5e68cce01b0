# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A workload cluster's host name (``{namespace}/{name}`` by default), the same for the capi_clusters inventory
and the capi_events event source, so that an event's host is the inventory's host.  Pure."""

from __future__ import annotations

from typing import Any

DEFAULT_HOSTNAME_FORMAT = "{namespace}/{name}"
HOSTNAME_FIELDS = ("name", "namespace", "uid")


class HostnameError(ValueError):
    """A configuration that cannot give valid host names (a hostname format, two clusters on one name)."""


def check_hostname_format(hostname_format: str) -> None:
    """Refuse a format that names a field the hosts do not have, or no field at all."""
    try:
        sample = hostname_format.format(**dict((f, "x") for f in HOSTNAME_FIELDS))
    except (KeyError, IndexError, ValueError) as exc:
        raise HostnameError(f"hostname_format {hostname_format!r} is not a format of {{name}}, {{namespace}} and "
                            f"{{uid}}: {exc}")
    if sample == hostname_format:
        raise HostnameError(f"hostname_format {hostname_format!r} names no field: every cluster would get the same "
                            f"host name (use {{namespace}}/{{name}} or {{name}})")


def hostname(hostname_format: str, variables: dict[str, Any]) -> str:
    return hostname_format.format(name=variables["capi_cluster_name"], namespace=variables["capi_cluster_namespace"],
                                  uid=variables["capi_cluster_uid"])
