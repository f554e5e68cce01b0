"""What ``clusterctl move`` decides, as pure functions over plain objects (stored form).

After cluster-api's ``cmd/clusterctl/client/cluster/mover.go``: discover the objects of every
Cluster in the namespace (objects labelled with a cluster's name, and whatever they own), check
that provisioning is complete, refuse paused Clusters (v1.12 and later), pause, wait until no
object carries ``clusterctl.cluster.x-k8s.io/block-move`` (v1.5 and later), create the objects on
the target owners first (resourceVersion, uid and the like stripped, ownerReferences pointing at
the new uids), delete them from the source owned first (finalizers removed, marked
``clusterctl.cluster.x-k8s.io/delete-for-move``), unpause on the target.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from minicloud.kube.controllers.paused import BLOCK_MOVE_ANNOTATION, CLUSTER_NAME_LABEL, PAUSED_ANNOTATION

DELETE_FOR_MOVE_ANNOTATION = "clusterctl.cluster.x-k8s.io/delete-for-move"
# The kinds a move takes, in the order clusterctl's graph puts them when nothing else decides.
MOVE_KINDS = ("Cluster", "OpenStackCluster", "KubeadmControlPlane", "MachineDeployment", "MachineSet", "Machine",
              "KubeadmConfig", "OpenStackMachine", "Secret")
# What a new object must not carry over from its source.
SERVER_FIELDS = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields",
                 "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink")
REFUSES_PAUSED_FROM = (1, 12)  # clusterctl v1.12: "cannot start operation while Cluster NS/NAME is paused"
WAITS_FOR_BLOCK_MOVE_FROM = (1, 5)  # the block-move annotation (cluster-api PR 8690)


class MoveError(RuntimeError):
    """A failure clusterctl reports as ``Error: ...``."""


def parse_version(text: str) -> tuple[int, int, int]:
    match = re.fullmatch(r"v?(\d+)\.(\d+)\.(\d+)(?:[-+].*)?", text.strip())
    if not match:
        raise ValueError(f"not a clusterctl version: {text!r} (expected vMAJOR.MINOR.PATCH)")
    return int(match[1]), int(match[2]), int(match[3])


def refuses_paused(version: tuple[int, int, int]) -> bool:
    return version[:2] >= REFUSES_PAUSED_FROM


def waits_for_block_move(version: tuple[int, int, int]) -> bool:
    return version[:2] >= WAITS_FOR_BLOCK_MOVE_FROM


@dataclass(frozen=True)
class Ref:
    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"


def ref(obj: dict) -> Ref:
    return Ref(obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"])


def select(objects: list[dict], namespace: str) -> list[dict]:
    """The objects a move of ``namespace`` takes: every Cluster there, objects labelled with one of
    their names, and (transitively) whatever those own."""
    here = [o for o in objects if o["metadata"].get("namespace") == namespace and o["kind"] in MOVE_KINDS]
    clusters = {o["metadata"]["name"] for o in here if o["kind"] == "Cluster"}
    chosen = {o["metadata"]["uid"]: o for o in here
              if o["kind"] == "Cluster" or (o["metadata"].get("labels") or {}).get(CLUSTER_NAME_LABEL) in clusters}
    grown = True
    while grown:
        grown = False
        for obj in here:
            uid = obj["metadata"]["uid"]
            if uid not in chosen and any(r.get("uid") in chosen for r in obj["metadata"].get("ownerReferences") or []):
                chosen[uid] = obj
                grown = True
    return creation_order(list(chosen.values()))


def creation_order(objects: list[dict]) -> list[dict]:
    """Owners before what they own (clusterctl creates the graph top-down); otherwise by kind, then name."""
    by_uid = {o["metadata"]["uid"]: o for o in objects}

    def depth(obj: dict, seen: frozenset = frozenset()) -> int:
        owners = [by_uid[r["uid"]] for r in obj["metadata"].get("ownerReferences") or []
                  if r.get("uid") in by_uid and r["uid"] not in seen]
        return 1 + max((depth(o, seen | {obj["metadata"]["uid"]}) for o in owners), default=-1)

    return sorted(objects, key=lambda o: (depth(o), MOVE_KINDS.index(o["kind"]), o["metadata"]["name"]))


def deletion_order(objects: list[dict]) -> list[dict]:
    return list(reversed(creation_order(objects)))


def provisioning_problems(objects: list[dict]) -> list[str]:
    """clusterctl's check that provisioning is complete (stored v1beta2 form)."""
    problems = []
    for obj in objects:
        status = obj.get("status") or {}
        init = status.get("initialization") or {}
        if obj["kind"] == "Cluster":
            if not init.get("infrastructureProvisioned"):
                problems.append(f"cannot start the move operation while {ref(obj)} is still provisioning "
                                "the infrastructure")
            elif not init.get("controlPlaneInitialized"):
                problems.append(f"cannot start the move operation while the control plane for {ref(obj)} "
                                "is not yet initialized")
        elif obj["kind"] == "Machine" and not status.get("nodeRef"):
            problems.append(f"cannot start the move operation while {ref(obj)} is still provisioning the node")
    return problems


def is_paused(cluster: dict) -> bool:
    return bool((cluster.get("spec") or {}).get("paused")) or \
        PAUSED_ANNOTATION in (cluster["metadata"].get("annotations") or {})


def paused_refusal(objects: list[dict]) -> str | None:
    """v1.12 and later: the error for the first paused Cluster, None when none is paused."""
    for obj in objects:
        if obj["kind"] == "Cluster" and is_paused(obj):
            return f"cannot start operation while Cluster {obj['metadata']['namespace']}/" \
                   f"{obj['metadata']['name']} is paused"
    return None


def blocking_move(objects: list[dict]) -> list[Ref]:
    return [ref(o) for o in objects if BLOCK_MOVE_ANNOTATION in (o["metadata"].get("annotations") or {})]


def for_target(obj: dict, new_uids: dict[str, str]) -> dict:
    """The object to create on the target: server-set fields and status dropped, ownerReferences
    re-pointed at the owners' new uids (``new_uids``: source uid -> target uid)."""
    meta = {k: v for k, v in obj["metadata"].items() if k not in SERVER_FIELDS}
    owners = []
    for owner in obj["metadata"].get("ownerReferences") or []:
        owner = dict(owner)
        if owner.get("uid") in new_uids:
            owner["uid"] = new_uids[owner["uid"]]
        owners.append(owner)
    if owners:
        meta["ownerReferences"] = owners
    body = {k: v for k, v in obj.items() if k != "status"}
    body["metadata"] = meta
    return body


def summary(objects: list[dict]) -> list[str]:
    """clusterctl's ``Moving Cluster API objects Clusters=N`` lines, one per kind present."""
    counts: dict[str, int] = {}
    for obj in objects:
        counts[obj["kind"]] = counts.get(obj["kind"], 0) + 1
    return [f"{kind}s={counts[kind]}" for kind in MOVE_KINDS if kind in counts]
