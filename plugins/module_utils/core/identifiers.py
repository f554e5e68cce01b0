# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Recognising OpenStack ids (UUIDs, written with or without dashes) and comparing IP addresses however
they were written."""

from __future__ import annotations

import ipaddress
from typing import Any
import re

_UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$")


def is_uuid(text: object) -> bool:
    return bool(_UUID_RE.match(str(text or "")))


def normalize_uuid(text: object) -> str:
    """The canonical lower-case, dashed form, for comparing ids however they were written."""
    plain = str(text or "").replace("-", "").lower()
    if len(plain) != 32:
        return plain
    return f"{plain[:8]}-{plain[8:12]}-{plain[12:16]}-{plain[16:20]}-{plain[20:]}"


def normalize_address(value: Any) -> Any:
    """The canonical text of an IP address (``2001:db8::1`` for ``2001:DB8:0::1``), for comparing addresses;
    anything that is no address comes back unchanged."""
    try:
        return str(ipaddress.ip_address(str(value)))
    except ValueError:
        return value
