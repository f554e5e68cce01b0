# -*- coding: utf-8 -*-
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Choosing Nova servers by id, name or glob pattern: the rules every ``servers`` option follows.

Pure: server dicts (``id``, ``name``) in, no API access.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import ResolveError
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.identifiers import (
    is_uuid,
    normalize_uuid,
)


def is_pattern(text):
    """Whether a ``servers`` entry is a glob pattern on names (it has ``*``, ``?`` or ``[``)."""
    return any(c in text for c in "*?[")


def refuse_ambiguous_names(servers, selectors):
    """Raise ResolveError for the first entry of ``selectors`` that is a plain name (no server's id, no
    pattern) several servers have: the user must say which one with an id, or take them all with a pattern."""
    ids = set(normalize_uuid(s["id"]) for s in servers)
    for selector in selectors:
        if is_pattern(selector) or (is_uuid(selector) and normalize_uuid(selector) in ids):
            continue
        named = [s for s in servers if s.get("name") == selector]
        if len(named) > 1:
            raise ResolveError("server name %r is ambiguous: %d servers have it (%s); use ids or a pattern" % (
                selector, len(named), ", ".join(s["id"] for s in named)))
