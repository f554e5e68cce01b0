# -*- coding: utf-8 -*-
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Following an OpenStack list across pages: ``limit`` and ``marker`` (the last item's id), as long as the
answer carries a ``next`` link (``<key>_links``, Nova's form)."""

PAGE_SIZE = 1000


def has_next(page, key):
    return any(link.get("rel") == "next" for link in page.get(key + "_links") or [])


def list_all_pages(get_page, key, page_size=PAGE_SIZE):
    """Every item of a paginated list. ``get_page(params)`` sends one list request with these query
    parameters and returns the decoded answer; ``key`` names its list (``servers``). Stops at a page
    without a next link, and at an empty page (a marker cannot move past it)."""
    items = []
    params = {"limit": page_size}
    while True:
        page = get_page(dict(params))
        batch = page.get(key) or []
        items += batch
        if not batch or not has_next(page, key):
            return items
        params = {"limit": page_size, "marker": batch[-1]["id"]}
