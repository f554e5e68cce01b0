# -*- coding: utf-8 -*-
"""Following Nova's pages: limit, marker, next links."""

from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.pagination import list_all_pages


def pages(items, size, links_on_last=False):
    """A fake list endpoint over ``items``, recording the query of each request."""
    asked = []

    def get_page(params):
        asked.append(params)
        start = 0
        if "marker" in params:
            start = [i["id"] for i in items].index(params["marker"]) + 1
        batch = items[start:start + size]
        more = start + size < len(items) or links_on_last
        return {"servers": batch, "servers_links": [{"rel": "next", "href": "..."}] if more else []}
    get_page.asked = asked
    return get_page


def test_follows_next_links_with_the_last_id_as_marker():
    items = [{"id": "s%d" % n} for n in range(5)]
    get_page = pages(items, 2)
    assert list_all_pages(get_page, "servers", page_size=2) == items
    assert get_page.asked == [{"limit": 2}, {"limit": 2, "marker": "s1"}, {"limit": 2, "marker": "s3"}]


def test_stops_at_an_empty_page_even_with_a_next_link():
    get_page = pages([{"id": "s0"}], 1, links_on_last=True)
    assert list_all_pages(get_page, "servers", page_size=1) == [{"id": "s0"}]
    assert len(get_page.asked) == 2


def test_one_request_without_a_next_link():
    get_page = pages([], 1000)
    assert list_all_pages(get_page, "servers") == []
    assert get_page.asked == [{"limit": 1000}]
