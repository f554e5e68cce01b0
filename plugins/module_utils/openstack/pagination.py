# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Following an OpenStack list across pages: ``limit`` and ``marker`` (the last item's id), as long as the
answer carries a ``next`` link (``<key>_links``, Nova's form)."""

from __future__ import annotations

from typing import Any, Callable

PAGE_SIZE = 1000


def has_next(page: dict[str, Any], key: str) -> bool:
    return any(link.get("rel") == "next" for link in page.get(key + "_links") or [])


def list_all_pages(get_page: Callable[[dict[str, Any]], dict[str, Any]], key: str,
                   page_size: int = PAGE_SIZE) -> list[dict[str, Any]]:
    """Every item of a paginated list. ``get_page(params)`` sends one list request with these query
    parameters and returns the decoded answer; ``key`` names its list (``servers``). Stops at a page
    without a next link, and at an empty page (a marker cannot move past it)."""
    items: list[dict[str, Any]] = []
    params: dict[str, Any] = {"limit": page_size}
    while True:
        page = get_page(dict(params))
        batch = page.get(key) or []
        items += batch
        if not batch or not has_next(page, key):
            return items
        params = {"limit": page_size, "marker": batch[-1]["id"]}
