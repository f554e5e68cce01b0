# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cluster API objects as they change, turned into normalised, de-duplicated events.  Pure.

The ``capi_events`` event source feeds every Cluster, KubeadmControlPlane and Machine it lists or watches
into ``EventState.observe`` (and ``forget`` when the API says an object is gone, ``relisted`` after a fresh
list), and asks ``EventState.tick`` now and then for what time alone makes true (a deletion held too long).
Each call returns the events to put on the queue. The state remembers what it has said: the same rollout,
pause or deletion phase is never reported twice, whatever the watch does (a reconnect and a fresh list show
the same objects again, which changes nothing).

Events (``type``):

- ``rollout_started``: a control plane whose Machines are no longer all up to date, with ``reason``
  (``version``, ``rolloutAfter``, ``template``, ``remediation`` or ``other``), once per rollout: a rollout is
  the control plane's uid with its ``metadata.generation`` (a spec change) or the Machine being remediated.
  On a ClusterClass cluster the rollout starts on the Cluster; with ``topology_rollouts`` a change of
  ``spec.topology.version`` (reason
  ``version``) or a ``spec.topology.controlPlane.rollout.after`` that has come (``rolloutAfter``) is reported at
  once, before the topology controller writes it onto the control plane, with ``topology`` (class, version,
  rollout_after); the control plane's rollout that follows from it is the same rollout, not reported again (and
  a Cluster change the control plane showed first is not reported again either). The first sight of a Cluster is
  no change: a rollout under way then is reported from its control plane.
- ``machine_deleting``: a Machine got its deletionTimestamp (once per Machine).
- ``machine_deletion_stuck``: a Machine held in one deletion phase (``pre-drain hook``, ``drain``,
  ``pre-terminate hook``, ``infrastructure``) longer than the threshold, naming the phase and the hooks (once
  per Machine and phase).
- ``cluster_paused`` / ``cluster_unpaused``: ``spec.paused`` changed (a Cluster paused when first seen is
  reported paused).
- ``control_plane_degraded``: the control plane reports a health condition False (once until it is healthy
  again).

With a standing hook (``standing_hook``, a pre-drain deletion hook name), ``EventState.hook_actions`` also says
which Machines to write: every control-plane Machine of a followed cluster carries the standing hook from the
moment it is seen (``hold``), so that KCP, however fast the replacement is provisioned, can never drain an old
Machine before the guard arrives; a Machine being deleted gives the standing hook up once the guard's own hook is on
it (``hand_over``: the guard releases it when safe), or at once when its Cluster or control plane is being deleted
(``let_go``: nothing to guard). A deletion nobody guards stays held, and ``machine_deletion_stuck`` names the hook.

Every event has ``cluster`` (``{namespace, name}``), ``host`` (the capi_clusters inventory's host name) and
``meta.hosts`` (the same, so that ansible-rulebook limits a playbook to that cluster's host).
"""

# no ``from __future__ import annotations``: ``annotations`` below is capi.objects' helper; hence Optional
from typing import Any, Iterable, Optional, Tuple

from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.hostnames import DEFAULT_HOSTNAME_FORMAT
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.topology import ROLLOUT_AFTER_PATH, class_of
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.objects import (
    annotations,
    CLUSTER_NAME_LABEL,
    CONTROL_PLANE_LABEL,
    condition_false,
    condition_true,
    dig,
    find_condition,
    labels,
    meta,
    new_condition,
    new_conditions,
    old_condition,
    old_conditions,
    parse_kube_time,
    PRE_DRAIN_HOOK_PREFIX,
    PRE_TERMINATE_HOOK_PREFIX,
    replica_counts,
    rollout_after,
)

ROLLOUT_STARTED = "rollout_started"
MACHINE_DELETING = "machine_deleting"
MACHINE_DELETION_STUCK = "machine_deletion_stuck"
CLUSTER_PAUSED = "cluster_paused"
CLUSTER_UNPAUSED = "cluster_unpaused"
CONTROL_PLANE_DEGRADED = "control_plane_degraded"
EVENT_TYPES = (ROLLOUT_STARTED, MACHINE_DELETING, MACHINE_DELETION_STUCK, CLUSTER_PAUSED, CLUSTER_UNPAUSED,
               CONTROL_PLANE_DEGRADED)

KINDS = ("Cluster", "KubeadmControlPlane", "Machine")
# Machines KCP remediates carry this annotation (MachineHealthCheck asks for it; KCP then deletes them).
REMEDIATE_ANNOTATION = "cluster.x-k8s.io/remediate-machine"
# KCP's health conditions (the same names in both condition styles).
HEALTH_CONDITIONS = ("Available", "EtcdClusterHealthy", "ControlPlaneComponentsHealthy")
TEMPLATE_PATHS = (("spec", "machineTemplate", "infrastructureRef"),
                  ("spec", "machineTemplate", "spec", "infrastructureRef"))
# a ClusterClass cluster's rollout time (Cluster API v1.13 and later), the same path in v1beta1 and v1beta2
TOPOLOGY_AFTER_PATH = ROLLOUT_AFTER_PATH
DEFAULT_STUCK_SECONDS = 600.0
DEFAULT_GUARD_HOOK = "flightcontrol-rollout"
HOLD, HAND_OVER, LET_GO = "hold", "hand_over", "let_go"

#: an object as the API sends it; an event of the source
Obj = dict[str, Any]
Event = dict[str, Any]
#: (kind, namespace, name) of an object
Key = Tuple[Any, Any, Any]


def parse_time(text: Optional[str]) -> Optional[float]:
    """An RFC 3339 time as seconds since the epoch, or None."""
    moment = parse_kube_time(text)
    return None if moment is None else moment.timestamp()


def key_of(obj: Obj) -> Key:
    metadata = meta(obj)
    return (obj.get("kind"), metadata.get("namespace"), metadata.get("name"))


def cluster_of(obj: Obj) -> Optional[str]:
    """The name of the Cluster ``obj`` belongs to: its cluster-name label, ``spec.clusterName`` or an owner."""
    name = labels(obj).get(CLUSTER_NAME_LABEL) or dig(obj, "spec", "clusterName")
    if name:
        return name
    for owner in meta(obj).get("ownerReferences") or []:
        if isinstance(owner, dict) and owner.get("kind") == "Cluster":
            return owner.get("name")
    return None


def template_name(kcp: Obj) -> Optional[str]:
    for path in TEMPLATE_PATHS:
        ref = dig(kcp, *path)
        if isinstance(ref, dict) and ref.get("name"):
            return ref["name"]
    return None


def outdated_reason(machine: Obj, kcp: Obj, now: float) -> Optional[str]:
    """Why the Machine is not up to date with the control plane (``version``, ``rolloutAfter``,
    ``remediation``, ``template`` or ``other``), or None when it is (or nothing says it is not)."""
    if REMEDIATE_ANNOTATION in annotations(machine):
        return "remediation"
    version, wanted = dig(machine, "spec", "version"), dig(kcp, "spec", "version")
    if version and wanted and version != wanted:
        return "version"
    after = parse_time(rollout_after(kcp))
    created = parse_time(meta(machine).get("creationTimestamp"))
    if after is not None and after <= now and created is not None and created < after:
        return "rolloutAfter"
    condition = new_condition(machine, "UpToDate")  # Cluster API v1.9+
    if condition_false(condition):
        text = f'{condition.get("reason") or ""} {condition.get("message") or ""}'  # type: ignore[union-attr]  # condition_false: not None
        return "template" if "template" in text.lower() or "infrastructure" in text.lower() else "other"
    return None


def kcp_rollout_id(kcp: Obj) -> str:
    """The rollout of a control plane's spec change: its uid (or name) and generation."""
    metadata = meta(kcp)
    return f'{metadata.get("uid") or metadata.get("name")}/{metadata.get("generation")}'


def topology_wanted(cluster: Obj, now: float) -> Optional[Tuple[Any, Any]]:
    """What a ClusterClass cluster asks of its control plane: (``spec.topology.version``, its
    ``controlPlane.rollout.after`` once that time has come, else None); None for a Cluster without a topology."""
    if not isinstance(dig(cluster, "spec", "topology"), dict):
        return None
    after = dig(cluster, *TOPOLOGY_AFTER_PATH)
    moment = parse_time(after)
    return dig(cluster, "spec", "topology", "version"), (after if moment is not None and moment <= now else None)


def takes_topology(kcp: Obj, asked: dict[str, Any]) -> bool:
    """Whether the control plane now asks what a topology rollout asked (``version``, ``after``)."""
    if asked.get("version") and dig(kcp, "spec", "version") == asked["version"]:
        return True
    wanted = parse_time(asked.get("after"))
    return wanted is not None and parse_time(rollout_after(kcp)) == wanted


def asked_of(machine: Obj, asked: dict[str, Any]) -> bool:
    """Whether a topology rollout replaces the Machine: another version, or created before the rollout time."""
    version = dig(machine, "spec", "version")
    if asked.get("version") and version and version != asked["version"]:
        return True
    after, created = parse_time(asked.get("after")), parse_time(meta(machine).get("creationTimestamp"))
    return after is not None and created is not None and created < after


def kcp_status_behind(kcp: Obj) -> bool:
    """Whether the control plane's own status counts fewer up-to-date replicas than replicas."""
    replicas, up_to_date = replica_counts(kcp)
    if replicas is None or up_to_date is None:
        return False
    return up_to_date < replicas


def deletion_phase(machine: Obj) -> Tuple[str, list[str]]:
    """``(phase, hooks)`` of a Machine being deleted: what holds it now."""
    notes = annotations(machine)
    drain_hooks = sorted(k[len(PRE_DRAIN_HOOK_PREFIX):] for k in notes if k.startswith(PRE_DRAIN_HOOK_PREFIX))
    if drain_hooks:
        return "pre-drain hook", drain_hooks
    drained = old_condition(machine, "DrainingSucceeded")
    deleting = new_condition(machine, "Deleting")
    reason = (deleting or {}).get("reason") or ""
    if reason in ("DrainingNode", "WaitingForVolumeDetach") or (
            not reason and dig(machine, "status", "nodeRef") and drained is not None
            and not condition_true(drained)):
        return "drain", []
    terminate_hooks = sorted(k[len(PRE_TERMINATE_HOOK_PREFIX):] for k in notes
                             if k.startswith(PRE_TERMINATE_HOOK_PREFIX))
    if terminate_hooks:
        return "pre-terminate hook", terminate_hooks
    return "infrastructure", []


def degraded_conditions(kcp: Obj) -> list[str]:
    """The control plane's health conditions that are False, as ``type: reason message`` texts."""
    found: list[str] = []
    for conditions in (new_conditions(kcp)[0], old_conditions(kcp)):
        for kind in HEALTH_CONDITIONS:
            condition = find_condition(conditions, kind)
            if condition_false(condition):
                text = f'{kind}: {condition.get("message") or condition.get("reason") or "False"}'  # type: ignore[union-attr]
                if text not in found:
                    found.append(text)
    return found


class EventState:
    """What the source knows of the objects and what it has already reported."""

    def __init__(self, hostname_format: str = DEFAULT_HOSTNAME_FORMAT, stuck_seconds: float = DEFAULT_STUCK_SECONDS,
                 standing_hook: Optional[str] = None, guard_hook: str = DEFAULT_GUARD_HOOK,
                 topology_rollouts: bool = False) -> None:
        self.topology_rollouts_on = topology_rollouts  # report a ClusterClass rollout at the Cluster's change
        self.standing_hook = PRE_DRAIN_HOOK_PREFIX + standing_hook if standing_hook else None
        self.guard_hook = PRE_DRAIN_HOOK_PREFIX + guard_hook
        self.acted: set[Tuple[Any, Any, str]] = set()  # (uid, resourceVersion, action) written already
        self.hostname_format = hostname_format
        self.stuck_seconds = float(stuck_seconds)
        self.objects: dict[Key, Obj] = {}  # (kind, namespace, name) -> object
        self.reported: set[Tuple[Any, ...]] = set()  # keys of the events said
        self.paused: dict[str, bool] = {}  # cluster uid -> the pause state last reported
        self.degraded: set[Any] = set()  # control plane uids reported degraded (until healthy again)
        self.phases: dict[Any, Tuple[str, list[str], float]] = {}  # machine uid -> (phase, hooks, since)
        self.topology: dict[Any, Tuple[Any, Any]] = {}  # cluster uid -> (topology version, rollout time come)
        # (namespace, cluster) -> what a topology rollout reported asks of the control plane ({version, after})
        self.topology_rollouts: dict[Tuple[Any, Any], dict[str, Any]] = {}

    # -- feeding ------------------------------------------------------------------------------

    def observe(self, obj: Obj, now: float) -> list[Event]:
        """An object as listed or as a watch event brought it; the events it makes."""
        if obj.get("kind") not in KINDS:
            return []
        self.objects[key_of(obj)] = obj
        if not self._selected(obj):
            return []
        events: list[Event] = []
        if obj["kind"] == "Cluster":
            events.extend(self._cluster(obj))
            events.extend(self._topology(obj, now))
        elif obj["kind"] == "Machine":
            events.extend(self._machine(obj, now))
        namespace, cluster = meta(obj).get("namespace"), (
            meta(obj).get("name") if obj["kind"] == "Cluster" else cluster_of(obj))
        for kcp in self._control_planes(namespace, cluster):
            events.extend(self._control_plane(kcp, now))
        return events

    def forget(self, obj: Obj) -> list[Event]:
        """An object the API reports deleted."""
        self.objects.pop(key_of(obj), None)
        uid = meta(obj).get("uid")
        self.phases.pop(uid, None)
        return []

    def relisted(self, kind: str, namespace: Optional[str], objects: Iterable[Obj], now: float) -> list[Event]:
        """A fresh list of ``kind`` in ``namespace`` (None: all namespaces): objects no longer there are
        forgotten, the others observed again (which reports only what changed)."""
        listed = set(key_of(dict(o, kind=kind)) for o in objects)
        for key in [k for k in self.objects if k[0] == kind and (namespace is None or k[1] == namespace)]:
            if key not in listed:
                self.forget(self.objects[key])
        events: list[Event] = []
        for obj in objects:
            events.extend(self.observe(dict(obj, kind=kind), now))
        return events

    def tick(self, now: float) -> list[Event]:
        """Events time alone makes true: deletions held in one phase longer than the threshold."""
        events: list[Event] = []
        for key, obj in sorted(self.objects.items(), key=lambda item: item[0]):
            if not self._selected(obj):
                continue
            if key[0] == "Machine" and meta(obj).get("deletionTimestamp"):
                events.extend(self._stuck(obj, now))
            elif key[0] == "KubeadmControlPlane" and rollout_after(obj):
                events.extend(self._rollout(obj, now))  # a rollout time that has just come
            elif key[0] == "Cluster" and dig(obj, *TOPOLOGY_AFTER_PATH):
                events.extend(self._topology(obj, now))  # the Cluster's rollout time that has just come
        return events

    def hook_actions(self) -> list[dict[str, Any]]:
        """The standing-hook writes the objects call for now: ``[{action, namespace, name, annotation, value}]``
        (value None removes the annotation), each once per version of the Machine."""
        if not self.standing_hook:
            return []
        found = []
        for key, machine in sorted(self.objects.items(), key=lambda item: item[0]):
            if key[0] != "Machine" or CONTROL_PLANE_LABEL not in labels(machine) or not self._selected(machine):
                continue
            action = self._hook_action(machine)
            metadata = meta(machine)
            mark = (metadata.get("uid") or key, metadata.get("resourceVersion"), action)
            if action is None or mark in self.acted:
                continue
            self.acted.add(mark)
            found.append(dict(action=action, namespace=key[1], name=key[2], annotation=self.standing_hook,
                              value="" if action == HOLD else None))
        return found

    def _hook_action(self, machine):
        notes = annotations(machine)
        namespace, cluster = meta(machine).get("namespace"), cluster_of(machine)
        owner = self.objects.get(("Cluster", namespace, cluster))
        kcps = self._control_planes(namespace, cluster)
        ending = bool(meta(owner).get("deletionTimestamp")) or any(meta(k).get("deletionTimestamp") for k in kcps)  # type: ignore[arg-type]
        if not meta(machine).get("deletionTimestamp"):
            return HOLD if self.standing_hook not in notes and not ending else None
        if self.standing_hook not in notes:
            return None
        if ending:
            return LET_GO
        return HAND_OVER if self.guard_hook in notes else None

    # -- the events ---------------------------------------------------------------------------

    def _selected(self, obj):
        """Only the objects of a Cluster the source follows (listed with the label selector) make events."""
        if obj.get("kind") == "Cluster":
            return True
        cluster = self._kcp_cluster(obj) if obj.get("kind") == "KubeadmControlPlane" else cluster_of(obj)
        return ("Cluster", meta(obj).get("namespace"), cluster) in self.objects

    def _new(self, key):
        if key in self.reported:
            return False
        self.reported.add(key)
        return True

    def event(self, kind: str, namespace: Optional[str], cluster: Optional[str], **fields: Any) -> Event:
        variables = dict(capi_cluster_name=cluster, capi_cluster_namespace=namespace,
                         capi_cluster_uid=self._cluster_uid(namespace, cluster))
        try:
            host = self.hostname_format.format(name=cluster, namespace=namespace, uid=variables["capi_cluster_uid"])
        except (KeyError, IndexError, ValueError):
            host = f"{namespace}/{cluster}"
        result = dict(type=kind, cluster=dict(namespace=namespace, name=cluster), host=host)
        result.update(fields)
        result["meta"] = dict(hosts=host)
        return result

    def _cluster_uid(self, namespace, name):
        cluster = self.objects.get(("Cluster", namespace, name))
        return meta(cluster).get("uid") if cluster else ""

    def _cluster(self, cluster):
        metadata = meta(cluster)
        uid = metadata.get("uid") or f'{metadata.get("namespace")}/{metadata.get("name")}'
        paused = bool(dig(cluster, "spec", "paused"))
        if self.paused.get(uid, False) == paused:
            return []
        self.paused[uid] = paused
        return [self.event(CLUSTER_PAUSED if paused else CLUSTER_UNPAUSED, metadata.get("namespace"),
                           metadata.get("name"), generation=metadata.get("generation"))]

    def _control_planes(self, namespace, cluster):
        if not cluster:
            return []
        return [obj for key, obj in sorted(self.objects.items(), key=lambda item: item[0])
                if key[0] == "KubeadmControlPlane" and key[1] == namespace and self._kcp_cluster(obj) == cluster]

    def _kcp_cluster(self, kcp):
        name = cluster_of(kcp)
        if name:
            return name
        for key, obj in self.objects.items():
            if key[0] == "Cluster" and key[1] == meta(kcp).get("namespace") and \
                    dig(obj, "spec", "controlPlaneRef", "name") == meta(kcp).get("name"):
                return key[2]
        return None

    def control_plane_machines(self, kcp: Obj) -> list[Obj]:
        namespace, cluster = meta(kcp).get("namespace"), self._kcp_cluster(kcp)
        return [obj for key, obj in sorted(self.objects.items(), key=lambda item: item[0])
                if key[0] == "Machine" and key[1] == namespace and cluster_of(obj) == cluster
                and CONTROL_PLANE_LABEL in labels(obj)]

    def _control_plane(self, kcp, now):
        return self._rollout(kcp, now) + self._degraded(kcp)

    def _rollout(self, kcp, now):
        machines = [m for m in self.control_plane_machines(kcp) if not meta(m).get("deletionTimestamp")]
        reasons = [(m, outdated_reason(m, kcp, now)) for m in machines]
        old = [(m, why) for m, why in reasons if why]
        if not old and not kcp_status_behind(kcp):
            return []
        metadata = meta(kcp)
        remediated = sorted(meta(m).get("name") for m, why in old if why == "remediation")  # type: ignore[type-var]  # Machines have names
        why = "remediation" if remediated else (old[0][1] if old else "other")
        reason_of = dict((w, True) for _m, w in old)
        if "version" in reason_of and not remediated:
            why = "version"
        rollout_id = kcp_rollout_id(kcp)
        if remediated:
            rollout_id = f'{metadata.get("uid") or metadata.get("name")}/remediation/{",".join(remediated)}'  # type: ignore[arg-type]
        cluster = self._kcp_cluster(kcp)
        if not remediated and self._from_topology(kcp, cluster, set(reason_of)):
            self.reported.add((ROLLOUT_STARTED, rollout_id))  # the Cluster's change reported it already
        if not self._new((ROLLOUT_STARTED, rollout_id)):
            return []
        return [self.event(
            ROLLOUT_STARTED, metadata.get("namespace"), cluster, reason=why,
            reasons=sorted(reason_of), rollout_id=rollout_id,
            control_plane=dict(kind=kcp.get("kind"), name=metadata.get("name"), generation=metadata.get("generation"),
                               version=dig(kcp, "spec", "version"), rollout_after=rollout_after(kcp),
                               template=template_name(kcp), replicas=dig(kcp, "spec", "replicas")),
            old_machines=sorted(meta(m).get("name") for m, _w in old),
            machines=sorted(meta(m).get("name") for m in machines))]

    def _from_topology(self, kcp, cluster, reasons):
        """Whether this control plane's rollout is the one a topology change of its Cluster reported: the control
        plane now asks the version or the rollout time the Cluster asked (then the note is dropped), or, while an
        upgrade the Cluster asked is under way, another version only (``reasons``: why its Machines are old): a step
        of an upgrade in steps (an intermediate version the topology controller writes first), the same rollout."""
        key = (meta(kcp).get("namespace"), cluster)
        asked = self.topology_rollouts.get(key)
        if not asked:
            return False
        if takes_topology(kcp, asked):
            self.topology_rollouts.pop(key, None)
            return True
        return bool(asked.get("version")) and reasons == {"version"}

    def _topology(self, cluster, now):
        """A ClusterClass cluster's rollout asked on the Cluster: its topology version changed, or its rollout
        time came (see the module docstring)."""
        metadata = meta(cluster)
        namespace, name = metadata.get("namespace"), metadata.get("name")
        wanted = topology_wanted(cluster, now)
        if wanted is None or not self.topology_rollouts_on:
            return []
        uid = metadata.get("uid") or f"{namespace}/{name}"
        seen = self.topology.get(uid)
        self.topology[uid] = wanted
        if seen is None or seen == wanted:
            return []
        asked = {}
        if wanted[0] and wanted[0] != seen[0]:
            asked["version"] = wanted[0]
        if wanted[1] and wanted[1] != seen[1]:
            asked["after"] = wanted[1]
        kcps = self._control_planes(namespace, name)
        if not asked or any(takes_topology(k, asked) and (ROLLOUT_STARTED, kcp_rollout_id(k)) in self.reported
                            for k in kcps):
            return []  # nothing asked, or the control plane showed it first and was reported
        rollout_id = f'{uid}/topology/{metadata.get("generation")}'
        if not self._new((ROLLOUT_STARTED, rollout_id)):
            return []
        self.topology_rollouts[(namespace, name)] = asked
        return [self._topology_event(cluster, kcps[0] if kcps else None, asked, rollout_id)]

    def _topology_event(self, cluster, kcp, asked, rollout_id):
        metadata = meta(cluster)
        namespace, name = metadata.get("namespace"), metadata.get("name")
        machines = [m for key, m in sorted(self.objects.items(), key=lambda item: item[0])
                    if key[0] == "Machine" and key[1] == namespace and cluster_of(m) == name
                    and CONTROL_PLANE_LABEL in labels(m) and not meta(m).get("deletionTimestamp")]
        old = [m for m in machines if asked_of(m, asked)]
        reasons = sorted(("version",) * ("version" in asked) + ("rolloutAfter",) * ("after" in asked))
        class_name, class_namespace = class_of(cluster)
        ref = dig(cluster, "spec", "controlPlaneRef") or {}
        return self.event(
            ROLLOUT_STARTED, namespace, name, reason=reasons[-1], reasons=reasons, rollout_id=rollout_id,
            control_plane=dict(kind=ref.get("kind") or (kcp or {}).get("kind"),
                               name=ref.get("name") or meta(kcp).get("name"),
                               generation=meta(kcp).get("generation") if kcp else None,
                               version=dig(cluster, "spec", "topology", "version"),
                               rollout_after=dig(cluster, *TOPOLOGY_AFTER_PATH),
                               template=template_name(kcp) if kcp else None,
                               replicas=dig(cluster, "spec", "topology", "controlPlane", "replicas")),
            old_machines=sorted(meta(m).get("name") for m in old),
            machines=sorted(meta(m).get("name") for m in machines),
            topology={"class": class_name, "class_namespace": class_namespace,
                      "version": dig(cluster, "spec", "topology", "version"),
                      "rollout_after": dig(cluster, *TOPOLOGY_AFTER_PATH), "generation": metadata.get("generation")})

    def _degraded(self, kcp):
        uid = meta(kcp).get("uid") or meta(kcp).get("name")
        failing = degraded_conditions(kcp)
        if not failing:
            self.degraded.discard(uid)
            return []
        if uid in self.degraded:
            return []
        self.degraded.add(uid)
        return [self.event(CONTROL_PLANE_DEGRADED, meta(kcp).get("namespace"), self._kcp_cluster(kcp),
                           control_plane=dict(kind=kcp.get("kind"), name=meta(kcp).get("name")),
                           conditions=failing)]

    def _machine(self, machine, now):
        metadata = meta(machine)
        if not metadata.get("deletionTimestamp"):
            return []
        uid = metadata.get("uid") or metadata.get("name")
        phase, hooks = deletion_phase(machine)
        held = self.phases.get(uid)
        if held is None or held[:2] != (phase, hooks):
            since = now
            if held is None:  # first seen: the deletion may have begun long before (a source started late)
                since = min(now, parse_time(metadata.get("deletionTimestamp")) or now)
            self.phases[uid] = (phase, hooks, since)
        events = []
        if self._new((MACHINE_DELETING, uid)):
            events.append(self._machine_event(MACHINE_DELETING, machine, phase, hooks))
        return events + self._stuck(machine, now)

    def _stuck(self, machine, now):
        uid = meta(machine).get("uid") or meta(machine).get("name")
        held = self.phases.get(uid)
        if held is None or now - held[2] < self.stuck_seconds:
            return []
        phase, hooks, since = held
        if not self._new((MACHINE_DELETION_STUCK, uid, phase, tuple(hooks))):
            return []
        return [self._machine_event(MACHINE_DELETION_STUCK, machine, phase, hooks, held_seconds=round(now - since, 1))]

    def _machine_event(self, kind, machine, phase, hooks, **extra):
        metadata = meta(machine)
        return self.event(kind, metadata.get("namespace"), cluster_of(machine),
                          machine=dict(name=metadata.get("name"), node=dig(machine, "status", "nodeRef", "name"),
                                       control_plane=CONTROL_PLANE_LABEL in labels(machine),
                                       deletion_timestamp=metadata.get("deletionTimestamp")),
                          phase=phase, hooks=hooks, **extra)
