# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Times as the APIs write them, and spans of time as people read them. Pure."""

from __future__ import annotations

import datetime

UTC = datetime.timezone.utc


def parse_utc(text: str | None) -> datetime.datetime | None:
    """An aware UTC datetime of an ISO 8601 time as OpenStack writes it (``2026-05-01T10:00:00Z``, with or
    without the Z, fractions or an offset, ``T`` or a space between date and time; a time without an offset is
    UTC), None when there is none or it cannot be read."""
    if not text:
        return None
    value = str(text).strip().replace(" ", "T")
    if value.endswith("Z"):
        value = value[:-1] + "+00:00"
    try:
        parsed = datetime.datetime.fromisoformat(value)
    except ValueError:
        return None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).astimezone(UTC)


def duration(seconds: float) -> str:
    """``45m``, ``1h30m``, ``20s``: a short form a person reads at a glance."""
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    minutes, sec = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{f'{sec:02d}s' if sec else ''}"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{f'{minutes:02d}m' if minutes else ''}"
