# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure decisions of route_audit about who owns the pod routes (``route_owner``).

``flightcontrol``: route_audit repairs every route finding (the behaviour before the option existed).
``cloud-controller``: cloud-provider-openstack's route controller (``[Route] router-id`` with
``--configure-cloud-routes``) reconciles the routes of the nodes it knows: it adds a missing route, points a
wrong one right and deletes the orphans of its cluster CIDR, every reconcile period, by replacing the router's
route list. A repair that added or removed such a route would race it. So route_audit adds none of them and
removes only routes the controller never adds back (it only ever adds ``pod CIDR -> InternalIP`` of a node it
knows): the other routes of a destination whose right route is in place (duplicates) and routes to pod CIDRs no
node has (stale, the routes of nodes it does not know), stale ones first when the route limit leaves the
controller no room. Everything else is reported, with what the controller got wrong (``controller_fault``).
``none``: route_audit owns nothing: it reports, and a repair writes nothing (another tool owns the routes).

Without the option the owner is ``flightcontrol``, unless the ``cloud_controller`` option is given or a node read
from Kubernetes carries the condition the route controller sets once it has routed it (``NetworkUnavailable``
false, reason ``RouteCreated``).
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit import cidr_cache
from ansible_collections.flightcontrol.openstack.plugins.module_utils.route_audit.cidr_cache import IPNetwork, RouteKey, inside

FLIGHTCONTROL = "flightcontrol"
CLOUD_CONTROLLER = "cloud-controller"
NONE = "none"
OWNERS = (FLIGHTCONTROL, CLOUD_CONTROLLER, NONE)
NOBODY = "nobody"

# controller_fault: what the cloud controller got wrong, on a finding of a destination it reconciles
KEPT_STALE = "kept_stale"
DUPLICATE = "duplicate"
DROPPED_FOREIGN = "dropped_foreign"
NOT_RECONCILED = "not_reconciled"


class Ownership:
    """Who repairs what: the owner, where the choice came from (``source``: ``route_owner``,
    ``cloud_controller``, ``detected`` or ``default``), the evidence of a detection, and the destinations the
    cloud controller reconciles (inside ``controller_cidrs``)."""

    def __init__(self, owner: str, source: str, controller_cidrs: Iterable[IPNetwork] = (),
                 evidence: str | None = None) -> None:
        self.owner = owner
        self.source = source
        self.controller_cidrs = list(controller_cidrs)
        self.evidence = evidence

    def controlled(self, destination: IPNetwork) -> bool:
        """Whether the cloud controller reconciles the routes of ``destination`` (a network)."""
        if self.owner == NONE:
            return True
        return self.owner == CLOUD_CONTROLLER and inside(destination, self.controller_cidrs)

    @property
    def restricted(self) -> bool:
        return self.owner != FLIGHTCONTROL

    @property
    def writes_routes(self) -> bool:
        return self.owner != NONE

    def summary(self) -> dict[str, Any]:
        return dict(owner=self.owner, source=self.source, evidence=self.evidence,
                    controller_cluster_cidr=[str(c) for c in self.controller_cidrs]
                    if self.owner == CLOUD_CONTROLLER else [])


def route_created(node_record: dict[str, Any]) -> bool:
    """Whether a Node (a ``kubernetes.nodes.node_record``) carries the route controller's condition."""
    return bool(node_record.get("route_created"))


def decide(requested: str | None, controller_cidrs: Iterable[IPNetwork] | None, cluster_cidrs: Iterable[IPNetwork],
           node_records: Sequence[dict[str, Any]] = ()) -> Ownership:
    """The ``Ownership`` of a run: the option when given; ``cloud-controller`` when the ``cloud_controller``
    option is given (``controller_cidrs`` is then a list, maybe empty: route_audit's cluster CIDRs) or when a
    Node read from Kubernetes says the route controller routed it; else ``flightcontrol``."""
    cidrs = list(controller_cidrs or cluster_cidrs)
    if requested:
        return Ownership(requested, "route_owner", cidrs)
    if controller_cidrs is not None:
        return Ownership(CLOUD_CONTROLLER, "cloud_controller", cidrs,
                         evidence="the cloud_controller option is given")
    routed = sorted(r.get("name") or "" for r in node_records if route_created(r))
    if routed:
        return Ownership(CLOUD_CONTROLLER, "detected", cidrs, evidence=(
            f"{len(routed)} of {len(node_records)} node(s) "
            f"({', '.join(routed[:5])}{', ...' if len(routed) > 5 else ''}) carry the condition "
            "NetworkUnavailable=False reason RouteCreated, which cloud-provider-openstack's route controller sets on "
            "the nodes it routes"))
    return Ownership(FLIGHTCONTROL, "default", cidrs)


# -- findings -----------------------------------------------------------------------------------------------

def _destination(finding: dict[str, Any]) -> IPNetwork | None:
    text = finding.get("destination")
    return cidr_cache.destination(text) if text else None


def _fault(finding: dict[str, Any], has_right: bool) -> str | None:
    kind = finding["kind"]
    if kind == "stale":
        return KEPT_STALE
    if kind == "duplicate":
        return DUPLICATE if has_right else NOT_RECONCILED
    if kind in ("missing", "wrong_nexthop", "address_pair_missing"):
        return NOT_RECONCILED
    return None


def _repairer(finding: dict[str, Any], has_right: bool, ownership: Ownership) -> str:
    """Who repairs ``finding`` under ``ownership``."""
    kind = finding["kind"]
    if kind in ("incomplete_node", "foreign_dropped"):
        return NOBODY
    if ownership.owner == NONE:
        return NOBODY
    if kind == "limit":
        return FLIGHTCONTROL
    destination = _destination(finding)
    if kind == "address_pair_missing":
        return CLOUD_CONTROLLER if ownership.owner == CLOUD_CONTROLLER and destination is not None and \
            ownership.controlled(destination) else FLIGHTCONTROL
    if destination is None or not ownership.controlled(destination):
        return FLIGHTCONTROL
    if kind == "stale" or (kind == "duplicate" and has_right):
        return FLIGHTCONTROL  # what the controller never adds back
    return CLOUD_CONTROLLER


def annotate(findings: Iterable[dict[str, Any]], ownership: Ownership) -> list[dict[str, Any]]:
    """The findings, each with ``repaired_by`` (``flightcontrol``, ``cloud-controller`` or ``nobody``) and, for a
    destination the cloud controller reconciles, ``controller_fault`` (what it got wrong: ``kept_stale``,
    ``duplicate``, ``dropped_foreign``, ``not_reconciled``)."""
    annotated: list[dict[str, Any]] = []
    for finding in findings:
        has_right = any(r.get("role") == "right" for r in finding.get("routes") or [])
        entry = dict(finding, repaired_by=_repairer(finding, has_right, ownership))
        destination = _destination(finding)
        if ownership.owner == CLOUD_CONTROLLER:
            if finding["kind"] == "foreign_dropped":
                entry["controller_fault"] = DROPPED_FOREIGN
            elif destination is not None and ownership.controlled(destination):
                fault = _fault(finding, has_right)
                if fault:
                    entry["controller_fault"] = fault
        annotated.append(entry)
    return annotated


def kept_route_findings(routes: Iterable[dict[str, Any]], keep_routes: Iterable[dict[str, Any]] | None,
                        ownership: Ownership) -> list[dict[str, Any]]:
    """``foreign_dropped`` findings: each route of ``keep_routes`` (routes that must stay on the router: another
    cluster's, an operator's) that is not on it. Never re-added by route_audit: under a cloud controller that
    drops routes it does not own (cloud-provider-openstack issue 3128) a re-added route would be dropped at its
    next reconcile, and the two would take turns."""
    present: set[RouteKey] = set()
    for route in routes:
        key = _key(route)
        if key is not None:
            present.add(key)
    findings: list[dict[str, Any]] = []
    for route in keep_routes or []:
        key = _key(route)
        if key is None or key in present:
            continue
        who = ("the cloud controller most likely dropped it (it deletes routes whose nexthop is no node it knows)"
               if ownership.owner == CLOUD_CONTROLLER else "someone removed it")
        findings.append(dict(
            kind="foreign_dropped", severity="error", destination=route["destination"], node=None,
            routes=[dict(destination=route["destination"], nexthop=route["nexthop"], role="dropped", node=None)],
            fix={}, message=f'route {route["destination"]} -> {route["nexthop"]}, which must stay on the router (keep_routes), is gone: {who}; route_audit '
                            "does not add it back"))
    return findings


def _key(route: dict[str, Any]) -> RouteKey | None:
    try:
        return cidr_cache.route_key(route["destination"], route["nexthop"])
    except (KeyError, TypeError, ValueError):
        return None
