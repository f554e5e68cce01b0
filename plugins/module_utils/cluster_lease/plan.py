# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The decisions of cluster_lease, pure: how a ``coordination.k8s.io/v1`` Lease stands for an actor (free, its own,
held by another and live, or expired), what to write to take, renew or release it, and how to name its holder.

Time is the actor's wall clock against the ``renewTime`` the holder wrote (``acquireTime`` when it never renewed):
a lease is live until ``renewTime + leaseDurationSeconds``. Clocks of the actors are assumed within seconds of
each other (NTP); a lease duration is minutes, so a skew of seconds never lets a live lease be taken."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any, Optional, cast

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.times import parse_utc

API_VERSION = "coordination.k8s.io/v1"
LEASE_PREFIX = "flightcontrol-"
ANNOTATION_PREFIX = "flightcontrol.openstack/"
MANAGED_BY = {"app.kubernetes.io/managed-by": "flightcontrol.openstack"}
#: The holder's details kept as annotations of the Lease (``flightcontrol.openstack/<field with ->``).
DETAILS = ("job_id", "host", "playbook", "rulebook", "action")
#: What the Lease says after a release: nobody holds it, and it would expire at once anyway.
RELEASED_DURATION = 1

FREE = "free"          # no Lease, or one nobody holds (released)
OURS = "ours"          # held by this actor (its holder id)
HELD = "held"          # held by another actor and live
EXPIRED = "expired"    # held by another actor that stopped renewing it

CREATE = "create"      # no Lease yet
TAKE = "take"          # a free Lease, or an expired one (taken over), updated on its resourceVersion
RENEW = "renew"        # our own Lease, its renewTime moved on
WAIT = "wait"          # another actor holds it: wait or fail


def lease_name(cluster: str) -> str:
    """The Lease of cluster ``cluster``, in the cluster's namespace."""
    return LEASE_PREFIX + cluster


@dataclass(frozen=True)
class Holder:
    """An actor: ``id`` (``spec.holderIdentity``, one per run, the same in every task of the run) and where it runs."""

    id: str
    job_id: Optional[str] = None
    host: Optional[str] = None
    playbook: Optional[str] = None
    rulebook: Optional[str] = None
    action: Optional[str] = None

    def details(self) -> dict[str, str]:
        return dict((field, getattr(self, field)) for field in DETAILS if getattr(self, field))

    def describe(self) -> str:
        """``AWX job 41 (host h, playbook fleet_rollout.yml, holder id x)``: the words a second actor reads."""
        parts = [f"{field.replace('_', ' ')} {getattr(self, field)}"
                 for field in ("host", "playbook", "rulebook", "action") if getattr(self, field)]
        head = f"AWX job {self.job_id}" if self.job_id else f"holder {self.id}"
        if self.job_id:
            parts.append(f"holder {self.id}")
        return f"{head} ({', '.join(parts)})" if parts else head


@dataclass(frozen=True)
class LeaseView:
    """What a Lease says, read: None fields where it says nothing."""

    exists: bool
    holder: Optional[Holder] = None
    acquired_at: Optional[float] = None
    renewed_at: Optional[float] = None
    duration: Optional[int] = None
    transitions: int = 0
    resource_version: Optional[str] = None

    @property
    def expires_at(self) -> Optional[float]:
        since = self.renewed_at if self.renewed_at is not None else self.acquired_at
        if since is None or not self.duration:
            return None
        return since + self.duration


ABSENT = LeaseView(exists=False)


def _epoch(text: Optional[str]) -> Optional[float]:
    parsed = parse_utc(text)
    return parsed.timestamp() if parsed is not None else None


def read_lease(obj: Optional[dict[str, Any]]) -> LeaseView:
    """The LeaseView of a Lease object (a plain dict as the API returns it), ABSENT for None."""
    if obj is None:
        return ABSENT
    meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
    annotations = meta.get("annotations") or {}
    holder = None
    if spec.get("holderIdentity"):
        details = dict((field, annotations.get(ANNOTATION_PREFIX + field.replace("_", "-"))) for field in DETAILS)
        holder = Holder(id=spec["holderIdentity"], **details)
    return LeaseView(exists=True, holder=holder, acquired_at=_epoch(spec.get("acquireTime")),
                     renewed_at=_epoch(spec.get("renewTime")), duration=spec.get("leaseDurationSeconds"),
                     transitions=int(spec.get("leaseTransitions") or 0),
                     resource_version=meta.get("resourceVersion"))


def standing(view: LeaseView, me: Optional[str], now: float) -> str:
    """How the Lease ``view`` stands for actor id ``me`` at wall-clock ``now``: FREE, OURS, HELD or EXPIRED. A
    held Lease that says neither when it was renewed nor for how long cannot be live: EXPIRED."""
    if not view.exists or view.holder is None:
        return FREE
    if view.holder.id == me:
        return OURS
    expires = view.expires_at
    if expires is None or now >= expires:
        return EXPIRED
    return HELD


def acquire_step(view: LeaseView, me: Optional[str], now: float) -> str:
    """What taking the Lease for ``me`` asks: CREATE, TAKE (a free or expired Lease), RENEW (ours) or WAIT."""
    found = standing(view, me, now)
    if found == FREE:
        return CREATE if not view.exists else TAKE
    return dict(ours=RENEW, expired=TAKE, held=WAIT)[found]


def micro_time(now: float) -> str:
    """A Kubernetes MicroTime of wall-clock seconds ``now`` (``2026-05-01T10:00:00.123456Z``)."""
    return datetime.datetime.fromtimestamp(now, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _annotations(holder: Holder) -> dict[str, str]:
    return dict((ANNOTATION_PREFIX + field.replace("_", "-"), str(value))
                for field, value in holder.details().items())


def held_body(cluster: str, namespace: str, me: Holder, view: LeaseView, now: float,
              duration: int) -> dict[str, Any]:
    """The Lease ``me`` writes to hold it for ``duration`` seconds from ``now``: a new one (``view`` ABSENT), or
    ``view`` updated on its resourceVersion (a renewal keeps acquireTime; a take counts a transition)."""
    renewing = view.holder is not None and view.holder.id == me.id
    acquired = view.acquired_at if renewing and view.acquired_at is not None else now
    metadata: dict[str, Any] = dict(name=lease_name(cluster), namespace=namespace, labels=dict(MANAGED_BY),
                                    annotations=_annotations(me))
    if view.exists:
        metadata["resourceVersion"] = view.resource_version
    spec = dict(holderIdentity=me.id, leaseDurationSeconds=int(duration), acquireTime=micro_time(acquired),
                renewTime=micro_time(now), leaseTransitions=view.transitions + (1 if view.exists and not renewing
                                                                                else 0))
    return dict(apiVersion=API_VERSION, kind="Lease", metadata=metadata, spec=spec)


def released_body(cluster: str, namespace: str, view: LeaseView, now: float) -> dict[str, Any]:
    """Our Lease ``view`` released: nobody holds it (``holderIdentity`` empty), on its resourceVersion."""
    metadata = dict(name=lease_name(cluster), namespace=namespace, labels=dict(MANAGED_BY),
                    resourceVersion=view.resource_version)
    spec = dict(leaseDurationSeconds=RELEASED_DURATION, renewTime=micro_time(now),
                leaseTransitions=view.transitions)
    return dict(apiVersion=API_VERSION, kind="Lease", metadata=metadata, spec=spec)


def holder_summary(view: LeaseView, now: float) -> Optional[dict[str, Any]]:
    """The holder of ``view`` for results (None when nobody holds it)."""
    if view.holder is None:
        return None
    expires = view.expires_at
    summary: dict[str, Any] = dict(id=view.holder.id, description=view.holder.describe(), **view.holder.details())
    summary.update(acquired_at=micro_time(view.acquired_at) if view.acquired_at is not None else None,
                   renewed_at=micro_time(view.renewed_at) if view.renewed_at is not None else None,
                   lease_duration=view.duration,
                   expires_in=round(expires - now, 1) if expires is not None else None)
    return summary


def held_message(cluster: str, namespace: str, view: LeaseView, now: float) -> str:
    """Why this actor may not act on the cluster: the Lease and who holds it (``view.holder``, not None), and
    until when."""
    holder = cast(Holder, view.holder)  # the caller found it held
    expires = view.expires_at
    until = ("" if expires is None else f"; it expires in {expires - now:.0f} s unless renewed" if expires > now
             else f"; it expired {now - expires:.0f} s ago")
    since = f" since {micro_time(view.acquired_at)}" if view.acquired_at is not None else ""
    return (f"Cluster {namespace}/{cluster} is being changed by another actor: {holder.describe()} holds "
            f"Lease {namespace}/{lease_name(cluster)}{since}{until}")


def lease_words(cluster: str, namespace: str) -> str:
    """``Lease clusters/flightcontrol-prod-eu-1 of cluster clusters/prod-eu-1``: the Lease and its cluster."""
    return f"Lease {namespace}/{lease_name(cluster)} of cluster {namespace}/{cluster}"


def lost_message(cluster: str, namespace: str, view: LeaseView, me: Optional[str], now: float) -> str:
    """Why a renewal (``renew_only``) refuses: the Lease ``view`` is no longer ``me``'s (deleted, released, or
    another actor's), so another actor may have changed the cluster since ``me`` last renewed it."""
    if not view.exists:
        how = "it was deleted"
    elif view.holder is None:
        how = "it was released (by an actor that took it over once it expired, or by hand)"
    else:
        expires = view.expires_at
        until = f", until {micro_time(expires)} unless renewed" if expires is not None and expires > now else ""
        how = f"{view.holder.describe()} holds it now{until}"
    return (f"{lease_words(cluster, namespace)} is no longer held by this run (holder {me}): {how}; this run stops "
            "here rather than take it again, as another actor may have changed the cluster since it was last "
            "renewed; nothing was changed")


def unreachable_message(cluster: str, namespace: str, state: str, renewing: bool, cause: str,
                        last_seen: Optional[LeaseView], me: Optional[str], now: float) -> str:
    """Why a task on the Lease failed on the API (``cause``: the request's own failure). ``renewing``: a renewal
    between two steps, whose actor stops there. ``last_seen``: the Lease as last read in this task, or None."""
    verb = "released" if state == "released" else ("renewed" if renewing else "taken or renewed")
    words = f"{lease_words(cluster, namespace)} could not be {verb}: {cause.rstrip('.')}"
    mine = last_seen is not None and last_seen.holder is not None and last_seen.holder.id == me
    expires = last_seen.expires_at if mine and last_seen is not None else None
    if expires is not None and expires > now:
        words += f"; it is this run's until {micro_time(expires)} (in {expires - now:.0f} s) unless renewed"
    if state == "released":
        return words + "; it is left to expire"
    if renewing:
        return words + "; this run stops here rather than change the cluster without its Lease"
    return words + "; do not change the cluster without it"
