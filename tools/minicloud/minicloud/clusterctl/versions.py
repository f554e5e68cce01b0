"""The API versions a move reads and writes, as pure functions over what each plane says of its CRDs.

After cluster-api's ``cmd/clusterctl/client/cluster/objectgraph.go`` (``getDiscoveryTypes``): clusterctl takes the
kinds to move from the source's CRDs, each at the version its CRD marks ``storage: true``, and reads and creates
every object at that version (``mover.go``, ``createTargetObject``: the object is created as it was read). On
minicloud's emulated plane the CAPI kinds store v1beta2 and Secrets v1; CAPO's kinds store what the plane's CAPO
CRDs say (``/minicloud/capo-crds``: v1beta1 with CAPO v0.14's, v1beta2 with v0.15's).

Before any write the stand-in checks that the target serves every kind at the version the source stores it at.
The real clusterctl checks the providers' inventory there instead (``checkTargetProviders``: a provider of the
source missing on the target, or older there, refuses the move, naming the provider); a target without the version
but with a provider inventory that passes would fail at the first create of such a kind, after the pause.
"""

from __future__ import annotations

from dataclasses import dataclass

from minicloud.clusterctl.sequence import MOVE_KINDS, MoveError
from minicloud.kube.resources import INFRA_KINDS, by_kind

CAPO_RELEASES = {"v1beta1": "v0.14", "v1beta2": "v0.15"}


@dataclass(frozen=True)
class PlaneCrds:
    """What one plane's CRDs say of the kinds a move takes: ``storage`` (kind: version) and ``served`` (kind:
    versions), and ``release``, the CAPO release of its CAPO CRDs (``v0.15``), as ``/minicloud/capo-crds`` says."""

    storage: dict[str, str]
    served: dict[str, tuple[str, ...]]
    release: str = ""


def plane_crds(capo: dict) -> PlaneCrds:
    """A plane's CRDs from its CAPO CRDs' description (``{"storage": "v1beta2", "served": [...], "release":
    "v0.15"}``); every other kind as minicloud serves it (CAPI's contract stored at v1beta2, Secret at v1)."""
    storage, served = {}, {}
    for name in MOVE_KINDS:
        kind = by_kind(name)
        if name in INFRA_KINDS:
            if not capo.get("storage") or not capo.get("served"):
                raise MoveError(f"the plane's CAPO CRDs name no storage version: {capo!r}")
            storage[name], served[name] = capo["storage"], tuple(capo["served"])
        else:
            storage[name], served[name] = kind.hub, kind.versions
    return PlaneCrds(storage, served, capo.get("release") or CAPO_RELEASES.get(capo.get("storage") or "", ""))


def unserved(source: PlaneCrds, target: PlaneCrds) -> list[str]:
    """The kinds (in move order) the target does not serve at the version the source stores them at."""
    return [name for name in MOVE_KINDS if source.storage[name] not in target.served.get(name, ())]


def api_version(name: str, version: str) -> str:
    return by_kind(name).api_version(version)


def refusal(kinds: list[str], source: PlaneCrds, target: PlaneCrds) -> str:
    """The error for a target that does not serve ``kinds`` at the source's storage version; nothing written."""
    by_version: dict[str, list[str]] = {}
    for name in kinds:
        by_version.setdefault(api_version(name, source.storage[name]), []).append(name)
    missing = "; ".join(f"{', '.join(names)} at {version}" for version, names in by_version.items())
    releases = ""
    if any(name in INFRA_KINDS for name in kinds) and source.release and target.release:
        releases = f" (CAPO {source.release}'s CRDs on the source, {target.release}'s on the target)"
    served = "; ".join(f"{name}: {', '.join(target.served.get(name, ())) or 'none'}" for name in kinds)
    return (f"failed to check the target cluster: it does not serve {missing}, the version the source cluster stores "
            f"them at{releases}; the target serves {served}. Install the same providers' CRDs on the target first; "
            "nothing was changed")


def choose(source: PlaneCrds, target: PlaneCrds | None) -> dict[str, str]:
    """The version each kind is read and written at: the source's storage version. ``target`` (None: a dry run,
    which writes nothing and checks nothing): refused with :func:`refusal` when it does not serve one of them."""
    if target is not None:
        kinds = unserved(source, target)
        if kinds:
            raise MoveError(refusal(kinds, source, target))
    return dict(source.storage)
