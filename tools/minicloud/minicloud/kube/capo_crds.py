"""The CAPO CRDs of one emulated plane: which versions of OpenStackCluster and OpenStackMachine it serves.

A plane starts with CAPO v0.14's CRDs: ``infrastructure.cluster.x-k8s.io/v1beta1`` only. Installing CAPO v0.15's
(``api_version`` ``v1beta2``, what ``capi cluster create --capo-api-version v1beta2`` does first) makes it serve
v1beta2 and v1beta1, as a management cluster does after the upgrade: discovery prefers v1beta2, and every object is
served in both versions through :mod:`minicloud.kube.capo_convert`.

Each object is kept in the version it was created at (a real kube-apiserver re-encodes every write in the CRD's
storage version, v1beta2; what clients are served is the same either way): a cluster created at v1beta1 keeps
today's shapes, and the emulated controllers, which read the store, see each object in the version its cluster was
made in. Going back to v0.14's CRDs is refused while an object is kept at v1beta2 (kube-apiserver could no longer
read it).
"""

from __future__ import annotations

from minicloud.kube import capo_convert, errors
from minicloud.kube.resources import CAPO_V1BETA1, CAPO_V1BETA2, INFRA_KINDS, by_kind, served_kinds

ENDPOINT = "/minicloud/capo-crds"
SERVED = {capo_convert.V1BETA1: CAPO_V1BETA1, capo_convert.V1BETA2: CAPO_V1BETA2}
RELEASES = {capo_convert.V1BETA1: "v0.14", capo_convert.V1BETA2: "v0.15"}


def is_capo(kind) -> bool:
    return kind.kind in INFRA_KINDS and kind.stored_as is None


class CapoCrds:
    """What one plane serves of CAPO's kinds (:meth:`kinds`, for routing and discovery)."""

    def __init__(self, api_version: str = capo_convert.V1BETA1):
        self.api_version = api_version
        self._kinds = served_kinds(SERVED[api_version])

    @property
    def kinds(self):
        return self._kinds

    def describe(self) -> dict:
        return {"apiVersion": self.api_version, "release": RELEASES[self.api_version],
                "served": list(SERVED[self.api_version]), "storage": self.api_version}

    def install(self, api_version, store) -> dict:
        """Serve the CRDs of ``api_version``'s release. Back to v1beta1: refused (409) while ``store`` keeps an
        OpenStackCluster or OpenStackMachine at v1beta2."""
        if api_version not in SERVED:
            raise errors.bad_request(f"apiVersion must be one of {', '.join(SERVED)}, not {api_version!r}")
        if api_version == capo_convert.V1BETA1:
            kept = kept_at(store, capo_convert.V1BETA2)
            if kept:
                raise errors.ApiError(409, "Conflict", (
                    f"CAPO v0.14's CRDs serve v1beta1 only, and {len(kept)} object(s) are kept at v1beta2 "
                    f"({', '.join(kept[:5])}): delete them first"), {})
        self.api_version = api_version
        self._kinds = served_kinds(SERVED[api_version])
        return self.describe()


def kept_at(store, version: str) -> list[str]:
    """``Kind namespace/name`` of the CAPO objects ``store`` keeps at ``version``."""
    found = []
    for name in INFRA_KINDS:
        for obj in store.list(by_kind(name))[0]:
            if capo_convert.version_of(obj) == version:
                found.append(f"{name} {obj['metadata'].get('namespace')}/{obj['metadata']['name']}")
    return found
