# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Result helpers: every module returns ``changed``, ``elapsed`` and ``api_calls`` the same way."""

from __future__ import annotations

from typing import Any, Iterable


def complete(data: dict[str, Any], started: float, now: float, api_calls: int,
             retried: Iterable[int | str] | None = None) -> dict[str, Any]:
    """Add the fields every result carries to ``data`` and return it."""
    result = dict(data)
    result.setdefault("changed", False)
    result["elapsed"] = round(max(0.0, now - started), 3)
    result["api_calls"] = api_calls
    if retried is not None:
        result["retried_faults"] = list(retried)
    return result
