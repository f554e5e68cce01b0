# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""resource_leak_audit's decisions, pure functions over plain data (no API access, no clock).

What Cluster API Provider OpenStack (CAPO) leaves behind in a project, found on one read of the project (a
``View``): ports whose server is gone, ports of a cluster that never got a device, load-balancer members whose
address is no server of the pool's cluster, security groups and floating IPs of clusters that no longer exist,
servers in ERROR. Which clusters an object belongs to is read from CAPO's names, descriptions and tags
(``claims``). A clean-up takes at most ``max_deletions`` findings, never every object of a kind (or of a pool),
never an object another cluster claims, and nothing at all while any part of the view is unknown.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from typing import Any, Callable, Collection, Iterable, Optional

from ansible_collections.flightcontrol.openstack.plugins.module_utils.capo.names import (
    DESCRIPTION,
    LB_SUFFIX,
    PREFIX,
    SG_INFIX,
    SG_PREFIX,
    SG_ROLES,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.times import duration, parse_utc

#: CAPO's names come from ``capo/names.py`` (network, subnet and router ``k8s-clusterapi-cluster-<resource>``, the
#: API load balancer ``<that>-kubeapi``, its pool ``<lb>-<port>``, members ``<lb>-<port>-<machine>``, security groups
#: ``k8s-cluster-<resource>-secgroup-<role>``, the description naming ``<resource>``). A resource name may itself end
#: in any of these suffixes (a cluster called ``pk-kubeapi``), so each kind is read with its own pattern only, cut
#: at the end of the name.
POOL_NAME = re.compile(r"^(.+)-kubeapi-[0-9]+$", re.DOTALL)
#: where a member's name may end its load balancer's name: ``-kubeapi-<port>-`` (the machine follows)
MEMBER_CUT = re.compile(r"(?=-kubeapi-[0-9]+-)")

PORTS = "ports"
MEMBERS = "members"
#: the group the ports of a gone server are judged in (a clean-up never deletes every port of a server)
COMPUTE_PORTS = "ports of servers"
SECURITY_GROUPS = "security_groups"
FLOATING_IPS = "floating_ips"
SERVERS = "servers"
KINDS = (PORTS, MEMBERS, SECURITY_GROUPS, FLOATING_IPS, SERVERS)
CLEANABLE = (PORTS, MEMBERS, SECURITY_GROUPS, FLOATING_IPS)

#: The lists each kind's audit reads: a kind is unknown when any of them could not be read.
NEEDS = {
    PORTS: ("servers", "ports", "networks"),
    MEMBERS: ("loadbalancers", "pools", "members", "servers", "ports", "networks"),
    SECURITY_GROUPS: ("security_groups", "networks", "routers", "loadbalancers", "servers", "ports"),
    FLOATING_IPS: ("floating_ips", "networks", "routers", "loadbalancers"),
    SERVERS: ("servers", "ports", "networks"),
}
VIEWS = ("servers", "ports", "networks", "routers", "security_groups", "floating_ips", "loadbalancers", "pools",
         "members")
UTC = datetime.timezone.utc

#: an OpenStack object as its API returns it; a finding of the audit
Obj = dict[str, Any]
Finding = dict[str, Any]


class View:
    """One read of the project: a list per view (``members``: pool id -> its members), None where the list could
    not be read; ``unknown``: view -> why."""

    servers: Optional[list[Obj]]
    ports: Optional[list[Obj]]
    networks: Optional[list[Obj]]
    routers: Optional[list[Obj]]
    security_groups: Optional[list[Obj]]
    floating_ips: Optional[list[Obj]]
    loadbalancers: Optional[list[Obj]]
    pools: Optional[list[Obj]]
    members: Optional[dict[str, list[Obj]]]

    def __init__(self, **lists: Any) -> None:
        for name in VIEWS:
            setattr(self, name, lists.get(name))
        self.unknown = dict(lists.get("unknown") or {})


class Options:
    """What the audit looks at: ``scope`` (a CAPO cluster resource name ``<namespace>-<name>``, None for the whole
    project), ``clusters`` (resource names the user says exist), ``now`` (aware datetime), ``port_grace_period``
    (seconds)."""

    def __init__(self, scope: str | None = None, clusters: Iterable[str] | None = (),
                 now: datetime.datetime | None = None, port_grace_period: float = 3600) -> None:
        self.scope = scope
        self.clusters = set(clusters or ())
        self.now = now
        self.port_grace_period = port_grace_period


@dataclass(eq=False)
class Audit:
    """``findings`` (dicts, each with ``kind``, ``id``, ``name``, ``why``, ``age``, ``cluster``, ``claims``,
    ``group``, ``keep``: why a clean-up must leave it, or None), ``population`` (group -> how many objects it has),
    ``unknown`` (kind -> why), ``present`` (the clusters seen to exist)."""

    findings: list[Finding]
    population: dict[str, int]
    unknown: dict[str, str]
    present: set[str]


def cluster_resource(text: object) -> str:
    """CAPO's cluster resource name of ``namespace/name`` (``namespace-name``); a resource name is kept. The
    runner refuses what names no cluster (``core.names.cluster_reference_problem``) before it gets here."""
    text = str(text)
    return text.replace("/", "-", 1) if "/" in text else text


def age(obj: Obj, now: datetime.datetime | None, field: str = "created_at") -> int | None:
    created = parse_utc(obj.get(field))
    if created is None or now is None:
        return None
    return max(0, int((now - created).total_seconds()))


def after_prefix(name: str | None, prefix: str) -> str:
    name = name or ""
    return name[len(prefix):] if name.startswith(prefix) else ""


def network_claims(name: str | None) -> set[str]:
    """The cluster a network, subnet or router called ``name`` is CAPO's for: ``k8s-clusterapi-cluster-<resource>``
    (the whole rest of the name, whatever it ends in)."""
    rest = after_prefix(name, PREFIX)
    return set([rest]) if rest else set()


def loadbalancer_claims(name: str | None) -> set[str]:
    """The cluster an API load balancer called ``name`` is CAPO's for: ``k8s-clusterapi-cluster-<resource>-kubeapi``."""
    rest = after_prefix(name, PREFIX)
    return set([rest[:-len(LB_SUFFIX)]]) if rest.endswith(LB_SUFFIX) and len(rest) > len(LB_SUFFIX) else set()


def pool_claims(name: str | None) -> set[str]:
    """The cluster of a pool (listener, monitor) of an API load balancer: ``<lb>-<port>``."""
    found = POOL_NAME.match(after_prefix(name, PREFIX))
    return set([found.group(1)]) if found else set()


def member_claims(name: str | None) -> set[str]:
    """Every cluster a member called ``<lb>-<port>-<machine>`` could be of: the machine's name is free, so each
    ``-kubeapi-<port>-`` in the name is a possible end of the load balancer's name."""
    rest = after_prefix(name, PREFIX)
    return set(rest[:cut.start()] for cut in MEMBER_CUT.finditer(rest) if cut.start() > 0)


def security_group_claims(name: str | None) -> set[str]:
    """The cluster a security group called ``name`` is CAPO's for: ``k8s-cluster-<resource>-secgroup-<role>``, one
    of CAPO's roles."""
    rest = after_prefix(name, SG_PREFIX)
    for role in SG_ROLES:
        suffix = SG_INFIX + role
        if rest.endswith(suffix) and len(rest) > len(suffix):
            return set([rest[:-len(suffix)]])
    return set()


def description_claims(description: str | None) -> set[str]:
    """The cluster CAPO's description names (the whole rest of it)."""
    rest = after_prefix((description or "").strip(), DESCRIPTION).strip()
    return set([rest]) if rest else set()


def tag_claims(tags: Iterable[Any] | None) -> set[str]:
    """The clusters of the tags ``k8s-clusterapi-cluster-<resource>``."""
    return set(after_prefix(str(tag), PREFIX) for tag in tags or [] if after_prefix(str(tag), PREFIX))


def claims(obj: Obj, networks_by_id: dict[Any, Obj] | None = None,
           names: Callable[[str | None], set[str]] | None = None) -> set[str]:
    """The clusters ``obj`` says it belongs to: its CAPO description, its tags, its name read with ``names`` (the
    name pattern of its kind; a port's or server's name is the machine's, no evidence) and, for a port, the name
    of its network."""
    found = description_claims(obj.get("description")) | tag_claims(obj.get("tags"))
    if names is not None:
        found |= names(obj.get("name"))
    network = (networks_by_id or {}).get(obj.get("network_id"))
    if network is not None:
        found |= network_claims(network.get("name"))
    return found


def present_clusters(view: View, options: Options) -> set[str]:
    """The clusters that exist: those the user lists, and those whose network, router or API load balancer is in
    the project (a cluster's servers sit on its network, so the network stands for them)."""
    present = set(options.clusters)
    for obj in (view.networks or []) + (view.routers or []):
        present |= network_claims(obj.get("name"))
    for obj in view.loadbalancers or []:
        present |= loadbalancer_claims(obj.get("name"))
    return present


def live_ports(view: View) -> list[Obj]:
    """The ports whose device is a server of the project."""
    server_ids = set(s["id"] for s in view.servers or [])
    return [p for p in view.ports or [] if (p.get("device_owner") or "").startswith("compute:")
            and p.get("device_id") in server_ids]


def finding(kind: str, obj: Obj, why: str, age_: int | None, claimed: Collection[str], group: str,
            cluster: str | None = None, keep: str | None = None, name: str | None = None) -> Finding:
    return dict(kind=kind, id=obj["id"], name=name if name is not None else obj.get("name"), why=why, age=age_,
                cluster=cluster if cluster is not None else (sorted(claimed)[0] if len(claimed) == 1 else None),
                claims=sorted(claimed), group=group, keep=keep)


def other_claim(claimed: Collection[str], scope: str | None) -> str | None:
    """Why a clean-up must leave an object that names another cluster (or several), else None."""
    if scope is not None:
        others = sorted(c for c in claimed if c != scope)
        if others:
            return f'it also names cluster {", ".join(others)} (by its name, description, tags or network)'
    elif len(claimed) > 1:
        return f'its name, description, tags or network name several clusters ({", ".join(sorted(claimed))})'
    return None


def audit_ports(view: View, options: Options, networks_by_id: dict[str, Obj]) -> tuple[list[Finding], dict[str, int]]:
    """Ports whose server is gone, judged among the ports of servers (group ``COMPUTE_PORTS``: a server list that
    came back empty or short makes every one of them look orphaned, which the clean-up refuses), and ports without
    a device past the grace period, judged among all the ports in scope."""
    server_ids = set(s["id"] for s in view.servers or [])
    findings, population = [], {PORTS: 0, COMPUTE_PORTS: 0}
    for port in view.ports or []:
        claimed = claims(port, networks_by_id)
        if options.scope is not None and options.scope not in claimed:
            continue
        population[PORTS] += 1
        owner, device = port.get("device_owner") or "", port.get("device_id") or ""
        port_age = age(port, options.now)
        if owner.startswith("compute:") and device:
            population[COMPUTE_PORTS] += 1
            if device in server_ids:
                continue
            why = f"device_owner {owner}, device_id {device}: no server of the project has this id"
            group = COMPUTE_PORTS
        elif not owner and not device and claimed and port_age is not None and port_age >= options.port_grace_period:
            why = (f"no device, older than port_grace_period ({duration(options.port_grace_period)}), on cluster "
                   f"{', '.join(sorted(claimed))}'s network or made for it")
            group = PORTS
        else:
            continue
        findings.append(finding(PORTS, port, why, port_age, claimed, group, keep=other_claim(claimed, options.scope)))
    return findings, population


def cluster_addresses(view: View, resource: str, networks_by_id: dict[str, Obj]) -> tuple[set[Any], str]:
    """(the addresses of the servers of the cluster, how they were chosen): the fixed IPs of the live servers'
    ports on the cluster's network, or of every live server of the project when the cluster has no CAPO network."""
    ports = live_ports(view)
    nets = [n["id"] for n in networks_by_id.values() if n.get("name") == PREFIX + resource]
    if nets:
        ports = [p for p in ports if p.get("network_id") in nets]
        how = f"no server on network {PREFIX}{resource} has this address"
    else:
        how = f"no server of the project has this address (the cluster has no network {PREFIX}{resource})"
    return set(ip.get("ip_address") for p in ports for ip in p.get("fixed_ips") or []), how


def member_owner(resource: str, member: Obj) -> set[str]:
    """The clusters a member of a pool of ``resource``'s load balancer names: the pool's cluster first (a name that
    reads as that cluster's is its), else every reading of its name beside it."""
    named = member_claims(member.get("name"))
    return set([resource]) | (set() if resource in named else named)


def audit_members(view: View, options: Options, networks_by_id: dict[str, Obj]) -> tuple[list[Finding], dict[str, int]]:
    findings, population = [], {}
    for lb in view.loadbalancers or []:
        lb_claims = loadbalancer_claims(lb.get("name"))
        if not lb_claims:
            continue
        resource = sorted(lb_claims)[0]
        if options.scope is not None and resource != options.scope:
            continue
        addresses, how = cluster_addresses(view, resource, networks_by_id)
        for pool in view.pools or []:
            if lb["id"] not in [x["id"] if isinstance(x, dict) else x for x in pool.get("loadbalancers") or []]:
                continue
            group = f"members of pool {pool.get('name') or pool['id']}"
            members = (view.members or {}).get(pool["id"]) or []
            population[group] = len(members)
            for member in members:
                if member.get("address") in addresses:
                    continue
                claimed = member_owner(resource, member)
                why = f'address {member.get("address")} in pool {pool.get("name") or pool["id"]} of cluster {resource}: {how}'
                entry = finding(MEMBERS, member, why, age(member, options.now), claimed, group, cluster=resource,
                                keep=other_claim(claimed, options.scope if options.scope else resource))
                entry.update(pool_id=pool["id"], address=member.get("address"), loadbalancer=lb.get("name"))
                findings.append(entry)
    return findings, population


def audit_security_groups(view: View, options: Options, present: set[str]) -> tuple[list[Finding], dict[str, int]]:
    in_use = set(g for p in live_ports(view) for g in p.get("security_groups") or [])
    findings, population = [], 0
    for group in view.security_groups or []:
        claimed = claims(group, names=security_group_claims)
        if not claimed:
            continue
        population += 1
        if options.scope is not None and options.scope not in claimed:
            continue
        if claimed & present or group["id"] in in_use:
            continue
        why = (f'cluster {", ".join(sorted(claimed))} has no network, router or API load balancer in the project, is not in clusters, and no '
               "server's port carries the group")
        findings.append(finding(SECURITY_GROUPS, group, why, age(group, options.now), claimed, SECURITY_GROUPS,
                                keep=other_claim(claimed, options.scope)))
    return findings, {SECURITY_GROUPS: population}


def audit_floating_ips(view: View, options: Options, present: set[str]) -> tuple[list[Finding], dict[str, int]]:
    findings, population = [], 0
    for fip in view.floating_ips or []:
        claimed = claims(fip)
        if not claimed:
            continue
        population += 1
        if options.scope is not None and options.scope not in claimed or claimed & present:
            continue
        keep = other_claim(claimed, options.scope)
        if fip.get("port_id"):
            keep = keep or f"it is attached to port {fip['port_id']} (delete the port's leak first)"
        why = (f'cluster {", ".join(sorted(claimed))} has no network, router or API load balancer in the project and is not in clusters')
        findings.append(finding(FLOATING_IPS, fip, why, age(fip, options.now), claimed, FLOATING_IPS, keep=keep,
                                name=fip.get("floating_ip_address")))
    return findings, {FLOATING_IPS: population}


def audit_servers(view: View, options: Options, networks_by_id: dict[str, Obj]) -> tuple[list[Finding], dict[str, int]]:
    ports_of: dict[Any, set[str]] = {}
    for port in view.ports or []:
        ports_of.setdefault(port.get("device_id"), set()).update(claims(port, networks_by_id))
    findings = []
    for server in view.servers or []:
        claimed = ports_of.get(server["id"], set()) | claims(server)
        if options.scope is not None and options.scope not in claimed:
            continue
        if (server.get("status") or "").upper() != "ERROR":
            continue
        findings.append(finding(SERVERS, server, "server in ERROR (reported only, never deleted by this module)",
                                age(server, options.now, "created"), claimed, SERVERS,
                                keep="servers in ERROR are only reported"))
    return findings, {}


def unknown_kinds(view: View) -> dict[str, str]:
    """kind -> why its audit cannot be complete (the views it needs that could not be read)."""
    result = {}
    for kind in KINDS:
        missing = [v for v in NEEDS[kind] if v in view.unknown]
        if missing:
            result[kind] = "; ".join(f"{v}: {view.unknown[v]}" for v in missing)
    return result


def audit(view: View, options: Options) -> Audit:
    """The ``Audit`` of one read. A kind whose views are not all read has no findings and is in ``unknown``: a
    view that could not be read is never taken for "no leaks"."""
    networks_by_id = dict((n["id"], n) for n in view.networks or [])
    present = present_clusters(view, options)
    unknown = unknown_kinds(view)
    findings, population = [], {}
    steps = ((PORTS, lambda: audit_ports(view, options, networks_by_id)),
             (MEMBERS, lambda: audit_members(view, options, networks_by_id)),
             (SECURITY_GROUPS, lambda: audit_security_groups(view, options, present)),
             (FLOATING_IPS, lambda: audit_floating_ips(view, options, present)),
             (SERVERS, lambda: audit_servers(view, options, networks_by_id)))
    for kind, step in steps:
        if kind in unknown:
            continue
        found, counted = step()
        findings += found
        population.update(counted)
    findings.sort(key=lambda f: (KINDS.index(f["kind"]), -(f["age"] or 0), f["name"] or "", f["id"]))
    return Audit(findings, population, unknown, present)


def plan_cleanup(result: Audit, cleanup: Collection[str],
                 max_deletions: int) -> tuple[list[Finding], list[dict[str, Any]], str | None]:
    """(to delete, not deleted, refusal) of a clean-up of the kinds in ``cleanup``: ``candidates`` capped at
    ``max_deletions`` (``capped``)."""
    candidates, skipped, refusal = candidates_of(result, cleanup)
    delete, over = capped(candidates, max_deletions)
    return delete, skipped + over, refusal


def capped(candidates: list[Finding], max_deletions: int) -> tuple[list[Finding], list[dict[str, Any]]]:
    """(the first ``max_deletions`` candidates, the others as not deleted with the cap as the reason)."""
    cap = max(0, int(max_deletions))
    return candidates[:cap], over_cap(candidates[cap:], cap)


def over_cap(entries: Iterable[Finding], cap: int) -> list[dict[str, Any]]:
    """``entries`` as not deleted: the cap of ``cap`` deletions a run is reached."""
    return [brief(f, f"max_deletions ({cap} per run) reached; a later run deletes it") for f in entries]


def candidates_of(result: Audit, cleanup: Collection[str]) -> tuple[list[Finding], list[dict[str, Any]], str | None]:
    """(the findings a clean-up of the kinds in ``cleanup`` may delete, oldest first; not deleted; refusal).
    Nothing when any kind is unknown (the refusal says which); never a finding with a ``keep`` reason; never every
    object of a group (a kind, or one pool's members: that means a broken view, not leaks)."""
    chosen = [f for f in result.findings if f["kind"] in cleanup]
    if not chosen:
        return [], [], None
    if result.unknown:
        unknown = "; ".join(f"{kind} unknown: {why}" for kind, why in sorted(result.unknown.items()))
        refusal = f"the audit's view is partial ({unknown}); a clean-up needs the whole view, so nothing is deleted"
        return [], [brief(f, "refused: " + refusal) for f in chosen], refusal
    skipped, candidates = [], []
    by_group: dict[str, list[Finding]] = {}
    for entry in chosen:
        by_group.setdefault(entry["group"], []).append(entry)
    for entry in chosen:
        size = result.population.get(entry["group"], 0)
        if entry["keep"]:
            skipped.append(brief(entry, "refused: " + entry["keep"]))
        elif len(by_group[entry["group"]]) >= size:
            skipped.append(brief(entry, f"refused: it would delete every one of the {size} "
                                        f"{entry['group'].replace('_', ' ')}; that looks like a broken view, not "
                                        "leaks"))
        else:
            candidates.append(entry)
    candidates.sort(key=lambda f: (-(f["age"] or 0), KINDS.index(f["kind"]), f["id"]))
    return candidates, skipped, None


def recheck(entry: Finding, fresh: Audit, cleanup: Collection[str]) -> str | None:
    """None when ``entry`` may still be deleted on ``fresh`` (the ``Audit`` of a read made just before its
    deletion), else why not: the object is gone or changed, no longer a leak, or the guards now refuse it."""
    if fresh.unknown:
        return f"the view is partial now ({'; '.join(f'{k} unknown' for k in sorted(fresh.unknown))})"
    now = next((f for f in fresh.findings if f["kind"] == entry["kind"] and f["id"] == entry["id"]), None)
    if now is None:
        return "since the audit it is gone or no longer a leak"
    if now["why"] != entry["why"]:
        return f'since the audit: {now["why"]}'
    delete, _skipped, refusal = candidates_of(fresh, cleanup)
    if refusal:
        return refusal
    if not any(f["id"] == entry["id"] for f in delete):
        return "the guards now refuse it (another cluster's claim, or every object of its group)"
    return None


def brief(entry: Finding, reason: str) -> dict[str, Any]:
    return dict(kind=entry["kind"], id=entry["id"], name=entry["name"], age=entry["age"], reason=reason)


def counts(result: Audit) -> dict[str, int | None]:
    """kind -> number of findings, None for a kind that is unknown."""
    return dict((kind, None if kind in result.unknown else len([f for f in result.findings if f["kind"] == kind]))
                for kind in KINDS)
