# -*- coding: utf-8 -*-
"""The guard_rollouts rulebook in the real ansible-rulebook against the real control plane: the capi_events
source keeps its standing hook on the Machines of the real KubeadmControlPlane, a rollout someone else starts
(`kubectl patch kcp` with a new rollout time) is seen and followed by the fleet playbook, and the old Machines go
one at a time, only while the load balancer keeps its three serving members."""

import datetime
import json

import pytest

from rulebooks import needs_rulebook, READY, rulebooks, STANDING, wait_standing
from test_capi import HOOK, machines, pool_floor

pytestmark = needs_rulebook


@pytest.fixture
def rulebook(upstream, collections_path, tmp_path):
    yield from rulebooks(upstream, collections_path, tmp_path)


def test_a_rollout_someone_else_starts_is_guarded_by_the_rulebook(rulebook, upstream, kubectl, settled):
    capi_cluster = settled
    name, namespace = capi_cluster["name"], capi_cluster["namespace"]
    before = {m["metadata"]["name"] for m in machines(kubectl, capi_cluster)}
    # the pool as the inventory's compose gives it: the in-memory infrastructure cluster has no CAPO status
    run = rulebook("guard_rollouts.yml", {"openstack_cloud": "minicloud", "member_timeout": 120},
                   namespace=namespace, compose={"capi_api_pool": "'%s'" % capi_cluster["pool"]})
    try:
        run.wait_for(READY, 240)
        wait_standing(upstream, name, namespace)
        # what `clusterctl alpha rollout restart` writes: the rollout time now, already past when the control
        # plane reads it (a time still to come is rolled only at the control plane's next event or resync)
        now = datetime.datetime.now(datetime.timezone.utc)
        kubectl("patch", "kubeadmcontrolplanes.v1beta2.controlplane.cluster.x-k8s.io", capi_cluster["kcp"], "-n",
                namespace, "--type", "merge",
                "-p", json.dumps({"spec": {"rollout": {"after": now.strftime("%Y-%m-%dT%H:%M:%SZ")}}}))
        output = run.wait_for("PLAY RECAP", 600)
        assert "failed=0" in output.split("PLAY RECAP", 1)[1], output[-6000:]
        assert output.count("PLAY [Roll the fleet, wave by wave") == 1, output[-6000:]
        after = machines(kubectl, capi_cluster)
        assert len(after) == 3 and not {m["metadata"]["name"] for m in after} & before, after
        assert not any(HOOK in (m["metadata"].get("annotations") or {}) for m in after)
        wait_standing(upstream, name, namespace)  # the new Machines are held for the next rollout
        summary = pool_floor(upstream, capi_cluster)
        assert summary["samples"] > 0 and summary["minServing"] >= 3, summary
    finally:
        run.stop()
        # the source leaves its standing hook on the Machines (docs/eda.md); the tests after this one roll the
        # cluster without it
        for machine in machines(kubectl, capi_cluster):
            if STANDING in (machine["metadata"].get("annotations") or {}):
                kubectl("annotate", "machines.v1beta2.cluster.x-k8s.io", machine["metadata"]["name"], "-n",
                        namespace, STANDING + "-")
