# -*- coding: utf-8 -*-
"""The real ansible-rulebook (drools engine, Java 17) with the capi_events source and the guard_rollouts rulebook
against minicloud's management cluster: a rollout started by patching the KubeadmControlPlane, as `kubectl patch`
does, is guarded end to end; a new member that never serves stops the guard naming it."""

import datetime

import pytest

from rollouts import (assert_safe_history, custom, history, HOOK, KCP_GROUP, machines, pool_name, seed_cluster,
                      set_capo_wait)
from rulebooks import needs_rulebook, READY, rulebooks, wait_standing

pytestmark = needs_rulebook


@pytest.fixture
def rulebook(cloud, collections_path, tmp_path):
    yield from rulebooks(cloud, collections_path, tmp_path)


def patch_rollout_after(cloud, name, namespace="default"):
    """What `kubectl patch kcp NAME --type merge -p '{"spec":{"rollout":{"after":"<now>"}}}'` sends; returns the
    moment of the change."""
    cluster = custom(cloud, "get_namespaced_custom_object", "cluster.x-k8s.io", "v1beta2", namespace, "clusters", name)
    kcp = cluster["spec"]["controlPlaneRef"]["name"]
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0) + datetime.timedelta(seconds=1)
    custom(cloud, "patch_namespaced_custom_object", KCP_GROUP, "v1beta2", namespace, "kubeadmcontrolplanes", kcp,
           {"spec": {"rollout": {"after": now.strftime("%Y-%m-%dT%H:%M:%SZ")}}})
    return now


GUARD_VARS = {"openstack_cloud": "minicloud", "member_timeout": 20}


def test_a_rollout_started_by_a_patch_is_guarded_end_to_end(cloud, rulebook):
    name = seed_cluster(cloud, control_plane=1)
    set_capo_wait(cloud, name, "lb")  # CAPO before v0.14: a Machine is ready once the load balancer is ACTIVE
    old = [m["metadata"]["name"] for m in machines(cloud, name)]
    run = rulebook("guard_rollouts.yml", GUARD_VARS)
    run.wait_for(READY, 180)
    wait_standing(cloud, name)
    patch_rollout_after(cloud, name)
    output = run.wait_for("PLAY RECAP", 600)
    assert "failed=0" in output.split("PLAY RECAP", 1)[1], output[-6000:]
    # one run for the one rollout (the source said it once), for the cluster's host only
    assert output.count("PLAY [Roll the fleet, wave by wave") == 1, output[-6000:]
    assert "default/%s" % name in output
    now = [m["metadata"]["name"] for m in machines(cloud, name)]
    assert not set(now) & set(old) and len(now) == 1
    assert not any(HOOK in (m["metadata"].get("annotations") or {}) for m in machines(cloud, name))
    wait_standing(cloud, name)  # the new Machine is held for the next rollout
    assert_safe_history(history(cloud, name), 1, pool_name(name))


def test_a_lost_member_stops_the_guard_naming_it(cloud, rulebook):
    name = seed_cluster(cloud, control_plane=1)
    set_capo_wait(cloud, name, "lb")
    [old] = [m["metadata"]["name"] for m in machines(cloud, name)]
    cloud.octavia("lost-member", members=pool_name(name) + "-*", delay=0.2)
    run = rulebook("guard_rollouts.yml", GUARD_VARS)
    run.wait_for(READY, 180)
    wait_standing(cloud, name)
    patch_rollout_after(cloud, name)
    output = run.wait_for("PLAY RECAP", 600)
    assert "failed=1" in output.split("PLAY RECAP", 1)[1], output[-6000:]
    new = [m["metadata"]["name"] for m in machines(cloud, name) if m["metadata"]["name"] != old]
    assert new, "no replacement Machine was created"
    assert "new member not ACTIVE and healthy" in output, output[-6000:]
    assert "%s-%s" % (pool_name(name), new[0]) in output, output[-6000:]
    # the old Machine is still held: the API keeps its member
    [held] = [m for m in machines(cloud, name) if m["metadata"]["name"] == old]
    assert HOOK in held["metadata"]["annotations"]
    assert_safe_history(history(cloud, name), 1, pool_name(name))


def test_bad_input_stops_the_rulebook_at_start_with_the_reason(cloud, rulebook, tmp_path):
    missing = rulebook("guard_rollouts.yml", dict(GUARD_VARS, namespaces=None))
    code, output = missing.ended(180)
    assert code != 0 and "namespaces" in output and "is undefined" in output, output[-4000:]
    broken = tmp_path / "broken.kubeconfig"
    broken.write_text("apiVersion: v1\nusers:\n- name: eda\n  user: {token: s3cr3t-value\n")
    unusable = rulebook("guard_rollouts.yml", dict(GUARD_VARS, kubeconfig=str(broken)))
    code, output = unusable.ended(180)
    assert code != 0 and "the Kubernetes connection settings cannot be used" in output, output[-4000:]
    assert "s3cr3t-value" not in output
