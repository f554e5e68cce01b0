# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""node_registration_audit's decisions, pure functions over plain data (no API access, no clock).

Which Nova servers belong to the cluster, which Kubernetes Node each one became, which servers never
registered within the timeout (or are in ERROR), and which of those a clean-up may delete: at most
``max_deletions``, oldest first, never a server that is a Node, never every server of the cluster, and
nothing at all when no server is a Node (then the Node source is broken, not the servers).
"""

from __future__ import annotations

import datetime
from typing import Any, Iterable, Mapping, Sequence

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import PlanError, ResolveError
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.names import RULE
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.times import duration, parse_utc
from ansible_collections.flightcontrol.openstack.plugins.module_utils.nova import selection as nova_selection

REGISTERED = "registered"
WAITING = "waiting"
UNREGISTERED = "unregistered"
ERROR = "error"
DELETING = "deleting"

# Statuses of servers that are going away or parked on purpose: never findings, never deleted.
GONE_STATUSES = frozenset(["DELETED", "SOFT_DELETED", "SHELVED", "SHELVED_OFFLOADED"])
PROVIDER_PREFIX = "openstack://"
GONE_SINCE = "it is gone since the audit"


def parse_time(text: str | None) -> datetime.datetime:
    """An aware UTC datetime from Nova's ``created`` (``2024-05-01T10:00:00Z``, with or without
    fractions or an offset; a time without an offset is UTC)."""
    if not text:
        raise PlanError("a server has no created time")
    parsed = parse_utc(text)
    if parsed is None:
        raise PlanError(f"created time {text!r} is not an ISO 8601 time")
    return parsed


UTC = datetime.timezone.utc


def epoch_time(seconds: float) -> datetime.datetime:
    """An aware UTC datetime from epoch seconds (the module's wall clock)."""
    return datetime.datetime.fromtimestamp(seconds, UTC)


def choose_servers(servers: list[dict[str, Any]], patterns: Iterable[str] | None = None,
                   metadata: Mapping[str, Any] | None = None) -> nova_selection.Selection:
    """The servers of the cluster as a ``nova.selection.Selection``: those an entry of ``patterns`` chooses (an id,
    an existing name, or a ``*`` pattern: ``core.names``) and whose metadata has every key/value of ``metadata``.
    A criterion not given selects everything; the caller makes sure at least one is given. ``missing`` lists the
    entries that chose no server of the result. A plain name that several servers have is refused
    (ResolveError), as everywhere a ``servers`` option names servers."""
    if patterns:
        chosen = nova_selection.select(servers, patterns)
    else:
        chosen = nova_selection.Selection(list(servers), dict((s["id"], [("*", "wildcard")]) for s in servers), [])
    if metadata:
        kept = [s for s in chosen.chosen if _has_metadata(s, metadata)]
        kept_ids = set(s["id"] for s in kept)
        matched = dict((k, v) for k, v in chosen.matched.items() if k in kept_ids)
        hit = set(entry for pairs in matched.values() for entry, _how in pairs)
        chosen = nova_selection.Selection(kept, matched, [str(p) for p in patterns or [] if str(p) not in hit])
    return chosen


def _has_metadata(server: dict[str, Any], metadata: Mapping[str, Any]) -> bool:
    have = server.get("metadata") or {}
    return not any(k not in have or str(have.get(k)) != str(v) for k, v in metadata.items())


def select_servers(servers: list[dict[str, Any]], patterns: Iterable[str] | None = None,
                   metadata: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """The chosen servers of ``choose_servers``, as a list."""
    return choose_servers(servers, patterns, metadata).chosen


def unmatched_message(missing: Sequence[str], metadata: Mapping[str, Any] | None, count: int) -> str:
    """Why a selection that named something that is not there fails (nothing deleted): an audit of fewer servers
    than asked for is no healthy audit."""
    if missing:
        return (f"servers entr{'y' if len(missing) == 1 else 'ies'} {', '.join(repr(m) for m in missing)} matched no "
                f"server{f' with server_metadata {metadata}' if metadata else ''} among the project's {count} "
                f"({RULE}); nothing was deleted: fix the entry or remove it")
    return (f"no server of the project's {count} has server_metadata {metadata}; nothing was deleted: fix "
            "server_metadata")


def provider_server_id(provider_id: object) -> str | None:
    """The server id of an OpenStack providerID (``openstack:///<id>`` or ``openstack://<region>/<id>``)."""
    if not provider_id or not str(provider_id).startswith(PROVIDER_PREFIX):
        return None
    rest = str(provider_id)[len(PROVIDER_PREFIX):]
    server_id = rest.rsplit("/", 1)[-1]
    return server_id or None


def match_nodes(servers: Iterable[dict[str, Any]], nodes: Iterable[dict[str, Any]]) -> dict[str, tuple[str, str]]:
    """server id -> (node name, how) for the servers that are a Node: by providerID first, else by name
    (case-insensitive, as kubelet lowercases the hostname). A Node is matched to one server at most."""
    by_provider: dict[str, str] = {}
    by_name: dict[str, str] = {}
    for node in nodes:
        server_id = provider_server_id(node.get("provider_id"))
        if server_id:
            by_provider.setdefault(server_id, node["name"])
        else:
            by_name.setdefault((node.get("name") or "").lower(), node["name"])
    used = set()
    matched: dict[str, tuple[str, str]] = {}
    for server in servers:
        if server["id"] in by_provider:
            matched[server["id"]] = (by_provider[server["id"]], "providerID")
            used.add(by_provider[server["id"]])
    for server in servers:
        if server["id"] in matched:
            continue
        name = by_name.get((server.get("name") or "").lower())
        if name and name not in used:
            matched[server["id"]] = (name, "name")
            used.add(name)
    return matched


def classify(servers: Iterable[dict[str, Any]], nodes: Iterable[dict[str, Any]], now: datetime.datetime,
             timeout: float) -> list[dict[str, Any]]:
    """One record per server, sorted oldest first: ``id``, ``name``, ``status``, ``created``, ``age``
    (seconds), ``node`` (name or None), ``matched_by``, ``state`` (registered, waiting, unregistered,
    error, deleting) and ``reason`` (words)."""
    matched = match_nodes(servers, nodes)
    records = []
    for server in servers:
        created = parse_time(server.get("created"))
        age = max(0, int((now - created).total_seconds()))
        status = (server.get("status") or "").upper()
        node, how = matched.get(server["id"], (None, None))
        task = server.get("task_state")
        if node:
            state = REGISTERED
            reason = f"registered as Node {node} (matched by {how})"
            if status == "ERROR":
                reason += "; the server is in ERROR but its Node exists, so it is left alone"
        elif task == "deleting" or status in GONE_STATUSES:
            state = DELETING
            reason = "being deleted (task_state deleting)" if task == "deleting" else f"status {status}"
        elif status == "ERROR":
            state = ERROR
            reason = "server in ERROR and no Node"
        elif age >= timeout:
            state = UNREGISTERED
            reason = f"no Node after {duration(age)} (registration_timeout {duration(timeout)})"
        else:
            state = WAITING
            reason = f"no Node yet, {duration(timeout - age)} of the {duration(timeout)} registration_timeout left"
        records.append(dict(id=server["id"], name=server.get("name"), status=status, created=server.get("created"),
                            age=age, node=node, matched_by=how, state=state, reason=reason))
    records.sort(key=lambda r: (-r["age"], r["name"] or "", r["id"]))
    return records


def cluster_marks(records: Iterable[dict[str, Any]], metadata_by_id: Mapping[str, Any]) -> dict[str, Any]:
    """The Nova metadata every registered server of the cluster carries with one value (``{key: value}``):
    what marks a server as this cluster's (CAPO's and most tools' cluster tags)."""
    registered = [metadata_by_id.get(r["id"]) or {} for r in records if r["state"] == REGISTERED]
    if not registered:
        return {}
    marks = dict(registered[0])
    for metadata in registered[1:]:
        marks = dict((k, v) for k, v in marks.items() if k in metadata and str(metadata[k]) == str(v))
    return marks


def foreign_mark(metadata: Any, marks: Mapping[str, Any]) -> str | None:
    """``key=value`` of ``metadata`` that contradicts the cluster's ``marks`` (another cluster's tag), or None."""
    for key in sorted(marks):
        if key in (metadata or {}) and str(metadata[key]) != str(marks[key]):
            return f"{key}={metadata[key]}"
    return None


def plan_deletions(records: list[dict[str, Any]], max_deletions: int, nodes_visible: int,
                   metadata_by_id: Mapping[str, Any] | None = None, selection: nova_selection.Selection | None = None,
                   ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str | None]:
    """(to delete, skipped, refusal) for a clean-up.

    Candidates are the ``unregistered`` and ``error`` records, oldest first. ``refusal`` is a message
    when nothing may be deleted at all: no Node visible, or no server of the cluster is a Node (every
    candidate is then more likely a broken Node source than a broken server). Otherwise at most
    ``max_deletions`` are deleted; the rest are skipped with the reason. A candidate whose Nova metadata
    contradicts what every registered server of the cluster carries (``metadata_by_id``: server id ->
    metadata) is another cluster's server matched by a too wide selection: skipped, never deleted. A candidate
    that ``selection`` (``nova.selection.Selection``) chose only through ``?`` or ``[...]`` of a pattern is
    skipped too (``core.names``: a deletion takes only what an entry names or its ``*`` matches).
    """
    metadata_by_id = metadata_by_id or {}
    marks = cluster_marks(records, metadata_by_id)
    foreign: list[dict[str, Any]] = []
    candidates: list[dict[str, Any]] = []
    for record in records:
        if record["state"] not in (UNREGISTERED, ERROR):
            continue
        mark = foreign_mark(metadata_by_id.get(record["id"]), marks)
        loose = selection.class_only(record["id"]) if selection is not None else []
        if loose:
            foreign.append(dict(brief(record), reason=f"refused: only {', '.join(repr(e) for e in loose)} matched it, "
                                "through '?' or '[...]'; a deletion takes only a server an entry names or matches "
                                "through '*' (name it)"))
        elif mark:
            theirs = ", ".join(f"{key}={value}" for key, value in sorted(marks.items()))
            foreign.append(dict(brief(record), reason=f"refused: it carries {mark}, while every registered server of "
                                f"the cluster carries {theirs}; it belongs to another cluster (narrow servers or use "
                                "server_metadata)"))
        else:
            candidates.append(record)
    registered = [r for r in records if r["state"] == REGISTERED]
    refusal = None
    if candidates and not nodes_visible:
        refusal = ("no Kubernetes Node is visible (check the kubernetes options and node_selector); the Node source "
                   "looks broken, so no server is deleted")
    elif candidates and not registered:
        refusal = (f"none of the cluster's {len(records)} server(s) is a Node ({nodes_visible} Node(s) visible); "
                   "deleting would remove every server of the cluster, so none is deleted: check the server selection "
                   "and the Node source")
    if refusal:
        return [], foreign + [dict(brief(r), reason="refused: " + refusal) for r in candidates], refusal
    cap = max(0, int(max_deletions))
    delete = guard_deletions(candidates[:cap], foreign)
    skipped = [dict(brief(r), reason=f"max_deletions ({cap} per run) reached; a later run deletes it")
               for r in candidates[cap:]]
    return delete, foreign + skipped, None


def guard_deletions(delete: list[dict[str, Any]], refused: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The final guard over a clean-up plan: a server that is a Node, still waiting, being deleted, or refused
    (``refused``: another cluster's mark, matched only through '?' or '[...]') is never among the deletions. A plan
    that breaks this is an internal error (PlanError), raised before any deletion. Returns ``delete``."""
    refused_ids = set(r["id"] for r in refused)
    wrong = [r for r in delete if r["state"] not in (UNREGISTERED, ERROR) or r.get("node") or r["id"] in refused_ids]
    if wrong:
        named = ", ".join(f'{r["name"]} ({r["id"]}, {r["state"]})' for r in wrong)
        raise PlanError(f"internal error: the clean-up planned to delete {named}, which "
                        f"{'is' if len(wrong) == 1 else 'are'} protected; nothing was deleted")
    return delete


def recheck(record: dict[str, Any], servers_now: list[dict[str, Any]], nodes_now: list[dict[str, Any]],
            patterns: Iterable[str] | None, metadata: Mapping[str, Any] | None, marks: Mapping[str, Any],
            now: datetime.datetime, timeout: float) -> str | None:
    """None when the record's server may still be deleted on the read just before its deletion (``servers_now``:
    the project's servers then, ``nodes_now``: the Nodes then), else why not. The server must still be there, be
    chosen by the selection as the audit chose it (by an entry's name or ``*``), carry no other cluster's mark,
    and still be no Node (and unregistered or in ERROR), while some Node is visible and some server of the
    cluster is a Node."""
    server = next((s for s in servers_now if s["id"] == record["id"]), None)
    if server is None:
        return GONE_SINCE
    try:
        chosen = choose_servers(servers_now, patterns, metadata)
    except ResolveError as exc:
        return f"the selection no longer resolves: {exc}"
    if server["id"] not in chosen.matched:
        return f'the selection no longer chooses it (now named {server.get("name")!r})'
    if not chosen.destructible(server["id"]):
        return f"it is now matched only through '?' or '[...]' (now named {server.get('name')!r})"
    mark = foreign_mark(server.get("metadata"), marks)
    if mark:
        return f"it now carries {mark}, another cluster's mark"
    if not nodes_now:
        return "no Kubernetes Node is visible any more; the Node source looks broken"
    records_now = classify(chosen.chosen, nodes_now, now, timeout)
    if not any(r["state"] == REGISTERED for r in records_now):
        return "none of the cluster's servers is a Node any more; the Node source or the selection looks broken"
    state = [r for r in records_now if r["id"] == server["id"]][0]
    if state["state"] not in (UNREGISTERED, ERROR):
        return f'since the audit: {state["reason"]}'
    return None


def brief(record: dict[str, Any]) -> dict[str, Any]:
    return dict(id=record["id"], name=record["name"], status=record["status"], created=record["created"],
                age=record["age"], state=record["state"])


def counts(records: Sequence[dict[str, Any]]) -> dict[str, int]:
    result = dict((state, 0) for state in (REGISTERED, WAITING, UNREGISTERED, ERROR, DELETING))
    for record in records:
        result[record["state"]] += 1
    result["servers"] = len(records)
    return result
