# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Choosing Nova servers by id, name or glob pattern: the rules every ``servers`` option follows.

An entry is a server's id, or a name read by ``core.names``: exactly an existing server's name means that
server only; otherwise an entry with ``*`` is a glob pattern on names; without ``*`` it is a literal name.

Pure: server dicts (``id``, ``name``) in, no API access.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core import names
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import ResolveError
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.identifiers import (
    is_uuid,
    normalize_uuid,
)


def is_pattern(text: str) -> bool:
    """Whether a ``servers`` entry is a glob pattern on names (it has ``*``; ``?`` and ``[`` alone do not make
    one). An entry that is an existing server's name still means that server only (``select``)."""
    return names.is_pattern(text)


def refuse_ambiguous_names(servers: list[dict[str, Any]], selectors: Iterable[str]) -> None:
    """Raise ResolveError for the first entry of ``selectors`` that is a plain name (no server's id, no
    pattern) several servers have: the user must say which one with an id, or take them all with a pattern."""
    ids = set(normalize_uuid(s["id"]) for s in servers)
    existing = set(s.get("name") for s in servers)
    for selector in selectors:
        if (is_pattern(selector) and selector not in existing) or (is_uuid(selector) and normalize_uuid(selector) in ids):
            continue
        named = [s for s in servers if s.get("name") == selector]
        if len(named) > 1:
            raise ResolveError(f"server name {selector!r} is ambiguous: {len(named)} servers have it "
                               f"({', '.join(s['id'] for s in named)}); use ids or a pattern")


@dataclass
class Selection:
    """The servers an option chose: ``chosen`` (list order of the servers, each once), ``matched`` (server id ->
    [(entry, how)], ``how`` from ``core.names``) and ``missing`` (entries that matched no server)."""

    chosen: list[dict[str, Any]]
    matched: dict[str, list[tuple[str, str]]]
    missing: list[str]

    def destructible(self, server_id: str) -> bool:
        """Whether some entry named the server exactly or matched it through ``*`` alone."""
        return any(names.destructible(how) for _entry, how in self.matched.get(server_id, ()))

    def class_only(self, server_id: str) -> list[str]:
        """The entries that matched the server only through ``?`` or ``[...]`` (when none did better)."""
        if self.destructible(server_id):
            return []
        return [entry for entry, how in self.matched.get(server_id, ()) if how == names.CLASS_MATCH]


def select(servers: list[dict[str, Any]], selectors: Iterable[str] | None) -> Selection:
    """The ``Selection`` of ``selectors`` (ids, names, patterns) among ``servers``. Raises ResolveError for a plain
    name several servers have."""
    selectors = [str(s) for s in selectors or []]
    refuse_ambiguous_names(servers, selectors)
    existing = set(s.get("name") or "" for s in servers)
    matched: dict[str, list[tuple[str, str]]] = {}
    hit = set()
    how: str | None
    for server in servers:
        for selector in selectors:
            if selector == server["id"] or (is_uuid(selector) and normalize_uuid(selector) == normalize_uuid(server["id"])):
                how = names.EXACT
            else:
                how = names.how_matched(server.get("name"), selector, existing)
            if how is not None:
                matched.setdefault(server["id"], []).append((selector, how))
                hit.add(selector)
    chosen = [s for s in servers if s["id"] in matched]
    missing = [s for s in selectors if s not in hit]
    return Selection(chosen, matched, missing)
