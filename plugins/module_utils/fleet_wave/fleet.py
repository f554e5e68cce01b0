# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The whole fleet of a run, read from the management cluster: the Clusters the capi_clusters inventory source
lists with the same filters (``namespaces``, ``label_selector``, ``hostname_format``, ``api_version``), named and
grouped as it names and groups them (``capi_clusters.hosts``), then those the play's host pattern (``hosts``,
e.g. ``capi_phase_provisioned``) selects. So every executor of a run sees the same fleet whatever slice of the
inventory it was given (an AWX sliced job gives each slice an inventory of its own hosts only).

``select`` is pure: Ansible's host patterns over the inventory's default groups and host names (``,`` or ``:``
between terms, ``&`` an intersection, ``!`` an exclusion, ``*`` wildcards, ``~`` a regular expression, ``all``)."""

from __future__ import annotations

import fnmatch
import re
from typing import Any

from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.hostnames import DEFAULT_HOSTNAME_FORMAT
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.objects import CORE_GROUP
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.service import CapiService, choose_version
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi_clusters.hosts import fleet_hosts

DEFAULT_HOSTS = "capi_phase_provisioned"


class PatternError(ValueError):
    """A host pattern this module cannot read."""


def _terms(pattern: str) -> list[str]:
    if not isinstance(pattern, str) or not pattern.strip():
        raise PatternError("hosts must be a host pattern, e.g. capi_phase_provisioned")
    return [term.strip() for term in re.split(r"[,:]", pattern) if term.strip()]


def _matches(term: str, host: dict[str, Any]) -> bool:
    names = [host["name"]] + list(host.get("groups") or [])
    if term in ("all", "*"):
        return True
    if term.startswith("~"):
        try:
            found = re.compile(term[1:])
        except re.error as exc:
            raise PatternError(f"hosts term {term!r} is no regular expression: {exc}")
        return any(found.search(name) for name in names)
    return any(fnmatch.fnmatchcase(name, term) for name in names)


def select(hosts: list[dict[str, Any]], pattern: str) -> list[dict[str, Any]]:
    """The hosts (``{name, groups}``) ``pattern`` selects, as Ansible does: the union of the plain terms, then
    the ``&`` terms intersected, then the ``!`` terms taken out; in the order of ``hosts``."""
    terms = _terms(pattern)
    plain = [t for t in terms if t[0] not in "&!"]
    inter = [t[1:] for t in terms if t[0] == "&"]
    excl = [t[1:] for t in terms if t[0] == "!"]
    chosen: list[dict[str, Any]] = []
    if not plain:
        return chosen  # only & and ! terms: Ansible starts from no host, so none is selected
    for host in hosts:
        if not any(_matches(t, host) for t in plain):
            continue
        if all(_matches(t, host) for t in inter) and not any(_matches(t, host) for t in excl):
            chosen.append(host)
    return chosen


def source_of(discover: dict[str, Any]) -> dict[str, Any]:
    """The filters with their defaults (the inventory's): recorded in the plan, so a reader sees what the fleet is."""
    return dict(namespaces=sorted(discover.get("namespaces") or []), label_selector=discover.get("label_selector") or None,
                hostname_format=discover.get("hostname_format") or DEFAULT_HOSTNAME_FORMAT,
                api_version=discover.get("api_version") or None, hosts=discover.get("hosts") or DEFAULT_HOSTS)


def discover_fleet(kube: Any, discover: dict[str, Any], deadline: Any) -> list[dict[str, Any]]:
    """``[{host, labels}]``: the fleet the inventory source would list and the pattern select, host names sorted.
    One list request per namespace (one in all when none is given), after the API discovery."""
    source = source_of(discover)
    capi = CapiService(kube)
    served = capi.discover(deadline)
    contract = choose_version(served, source["api_version"])
    clusters = capi.list_across(CORE_GROUP, contract, "clusters", source["namespaces"], source["label_selector"],
                                deadline)
    for cluster in clusters:
        cluster.setdefault("apiVersion", f"{CORE_GROUP}/{contract}")
        cluster.setdefault("kind", "Cluster")
    hosts = fleet_hosts(clusters, {}, source["hostname_format"])
    return [dict(host=h["name"], labels=h["vars"].get("capi_labels") or {}) for h in select(hosts, source["hosts"])]
