"""Ages as kubectl shows them (apimachinery's ``duration.HumanDuration``), pure."""

from __future__ import annotations

import datetime


def parse_time(value: str | None) -> datetime.datetime | None:
    """An RFC 3339 timestamp (seconds or microseconds, ``Z`` or an offset), or None."""
    if not value:
        return None
    try:
        moment = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=datetime.timezone.utc)


def human(seconds: float) -> str:
    """A duration the way ``kubectl get`` prints ages: 45s, 5m3s, 2h10m, 3d4h, 1y20d..."""
    total = int(seconds)
    if total < -1:
        return "<invalid>"
    if total < 0:
        return "0s"
    if total < 120:
        return f"{total}s"
    minutes = total // 60
    if minutes < 10:
        return f"{minutes}m{total % 60}s" if total % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = total // 3600
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d{hours % 24}h" if hours % 24 else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y{days}d" if days else f"{hours // 24 // 365}y"
    return f"{hours // 24 // 365}y"


def since(value: str | None, now: datetime.datetime) -> str:
    """Age of a timestamp at ``now``; ``<unknown>`` when there is none, ``<invalid>`` when unreadable."""
    if not value:
        return "<unknown>"
    moment = parse_time(value)
    if moment is None:
        return "<invalid>"
    return human((now - moment).total_seconds())
