"""CAPI core (and the kubeadm providers): the Paused condition on Cluster, Machine, MachineSet,
MachineDeployment, KubeadmControlPlane and KubeadmConfig.

Objects are stored in the v1beta2 hub form, so the condition goes to ``status.conditions``
there; a client reading v1beta1 sees it under ``status.v1beta2.conditions``, where CAPI
before v1.11 puts it. The controller reacts ``lag`` seconds after it first sees a change,
like a real controller behind its informer cache and work queue. When the condition flips
(True <-> False) it also records an Event ``Paused`` or ``Unpaused`` on the object: minicloud's
own (CAPI records none), so a pause and its acknowledgement show up in ``kubectl get events``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from minicloud.kube import errors
from minicloud.kube.controllers import events, paused, reasons
from minicloud.kube.resources import CAPI_CORE_KINDS, by_kind
from minicloud.kube.store import Store, rfc3339, utc_now

DEFAULT_LAG = 0.5


class PauseController:
    def __init__(self, store: Store, lag: float = DEFAULT_LAG, clock: Callable[[], float] = time.monotonic):
        self.store = store
        self.lag = lag
        self.clock = clock
        self._due: dict[tuple, float] = {}

    def waiting(self) -> bool:
        """Whether a reconcile is due later (the lag), so a pass is needed even with nothing changed."""
        return bool(self._due)

    def tick(self) -> None:
        now = self.clock()
        clusters = {(c["metadata"]["namespace"], c["metadata"]["name"]): c
                    for c in self.store.list(by_kind("Cluster"))[0]}
        seen = set()
        for kind_name in CAPI_CORE_KINDS:
            kind = by_kind(kind_name)
            for obj in self.store.list(kind)[0]:
                key = (kind_name, obj["metadata"]["namespace"], obj["metadata"]["name"])
                seen.add(key)
                cluster = clusters.get((key[1], paused.cluster_name(obj)))
                wanted = paused.paused_condition(cluster, obj)
                current = paused.find_condition(obj.get("status", {}).get("conditions"), paused.PAUSED)
                if paused.same_state(current, wanted):
                    self._due.pop(key, None)
                    continue
                due = self._due.setdefault(key, now + self.lag)
                if now >= due:
                    self._reconcile(kind, key, cluster)
                    self._due.pop(key, None)
        for key in set(self._due) - seen:
            del self._due[key]

    def _reconcile(self, kind, key: tuple, cluster: dict | None) -> None:
        """Set the condition; an Event when its status flips (not when it is first set)."""
        def change(obj: dict) -> dict:
            wanted = paused.paused_condition(cluster, obj)
            status = obj.setdefault("status", {})
            status["conditions"] = paused.set_condition(status.get("conditions"), wanted, rfc3339(utc_now()))
            return obj

        try:
            before = self.store.get(kind, key[1], key[2])
            after = self.store.update(kind, key[1], key[2], change, subresource="status")
        except errors.ApiError:
            return  # deleted meanwhile
        old = paused.find_condition(before.get("status", {}).get("conditions"), paused.PAUSED)
        new = paused.find_condition(after.get("status", {}).get("conditions"), paused.PAUSED)
        if old and new and old.get("status") != new.get("status"):
            now_paused = new.get("status") == "True"
            events.record(self.store, after, reasons.PAUSED if now_paused else reasons.UNPAUSED,
                          new.get("message") if now_paused else "reconciling again: the pause is over",
                          reasons.CAPI_CONTROLLER)
