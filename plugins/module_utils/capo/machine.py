# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the collection reads of CAPO's OpenStackMachine and of the Machines CAPO provisions: the Nova server's id.
Pure.

CAPO writes the server's id in the OpenStackMachine's ``status.instanceID`` (the same field in its v1beta1 and
v1beta2 APIs, ``api/v1beta1/openstackmachine_types.go`` and ``api/v1beta2/openstackmachine_types.go``) and the
providerID ``openstack:///<id>`` (``openstack://<region>/<id>`` with a region) in the OpenStackMachine's
``spec.providerID``, which Cluster API copies to the Machine's ``spec.providerID``.
"""

from __future__ import annotations

from typing import Any

PROVIDER_PREFIX = "openstack://"


def server_of_provider_id(provider_id: str | None) -> str | None:
    """The Nova server id of an OpenStack providerID, or None (no providerID, or another provider's)."""
    text = str(provider_id or "")
    if not text.startswith(PROVIDER_PREFIX):
        return None
    return text[len(PROVIDER_PREFIX):].rsplit("/", 1)[-1] or None


def instance_id(osm: dict[str, Any] | None) -> str | None:
    """The Nova server id an OpenStackMachine reports (``status.instanceID``, else its ``spec.providerID``), or
    None before CAPO made the server (and after it deleted it)."""
    osm = osm or {}
    found = (osm.get("status") or {}).get("instanceID")
    return found or server_of_provider_id((osm.get("spec") or {}).get("providerID"))
