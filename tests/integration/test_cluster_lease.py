# -*- coding: utf-8 -*-
"""cluster_lease against minicloud's Kubernetes API: one actor per cluster. Races are gated (a write held by the
cloud while the other actor runs), never timed."""

import datetime
import uuid

import pytest
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

from races import with_concurrent_change

MODULE = "flightcontrol.openstack.cluster_lease"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases*"


@pytest.fixture
def cluster(cloud):
    """A cluster name of its own (no Cluster object is needed for its Lease); the Lease is deleted afterwards."""
    name = "lease-%s" % uuid.uuid4().hex[:6]
    yield name
    try:
        leases(cloud).delete_namespaced_lease("flightcontrol-" + name, "default")
    except k8s_client.ApiException:
        pass


def leases(cloud):
    return k8s_client.CoordinationV1Api(k8s_config.new_client_from_config(
        config_file=str(cloud.state_dir / "kubeconfig")))


def read(cloud, name):
    try:
        return leases(cloud).read_namespaced_lease("flightcontrol-" + name, "default")
    except k8s_client.ApiException as exc:
        if exc.status == 404:
            return None
        raise


def write_lease(cloud, name, holder, renewed_ago, duration, job_id=None):
    """A Lease another actor wrote ``renewed_ago`` seconds ago for ``duration`` seconds."""
    renewed = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=renewed_ago)
    annotations = {"flightcontrol.openstack/host": "awx-ee-1"}
    if job_id:
        annotations["flightcontrol.openstack/job-id"] = job_id
    leases(cloud).create_namespaced_lease("default", k8s_client.V1Lease(
        metadata=k8s_client.V1ObjectMeta(name="flightcontrol-" + name, annotations=annotations),
        spec=k8s_client.V1LeaseSpec(holder_identity=holder, lease_duration_seconds=duration, acquire_time=renewed,
                                    renew_time=renewed)))


def args(cloud, name, holder_id, **extra):
    base = {"kubeconfig": str(cloud.state_dir / "kubeconfig"), "name": name, "holder": {"id": holder_id},
            "lease_duration": 60}
    base.update(extra)
    return base


def test_two_actors_racing_for_a_free_lease_one_wins(cloud, cluster, run_in_process):
    """Actor a has read the Lease absent and its create is held; actor b takes the Lease meanwhile. a's create is
    refused (409 AlreadyExists): a reads again, finds b's live Lease and fails naming b; b alone holds it."""
    first, second = with_concurrent_change(
        cloud, "kubernetes", "POST", LEASES, lambda: run_in_process(MODULE, args(cloud, cluster, "run-a")),
        lambda: run_in_process(MODULE, args(cloud, cluster, "run-b", holder={"id": "run-b", "job_id": "77"})))
    assert second["acquired"] is True and second["changed"] is True, second
    assert first["failed"] is True and first["changed"] is False, first
    assert "AWX job 77" in first["msg"] and "holder run-b" in first["msg"], first["msg"]
    assert first["holder"]["id"] == "run-b"
    assert read(cloud, cluster).spec.holder_identity == "run-b"


def test_two_actors_racing_for_an_expired_lease_one_wins(cloud, cluster, run_in_process):
    """The same race on an update: both read an expired Lease; a's update is held while b takes it over; a's update
    carries a stale resourceVersion (409 Conflict): a reads again and fails naming b."""
    write_lease(cloud, cluster, "dead-run", renewed_ago=600, duration=10)
    first, second = with_concurrent_change(
        cloud, "kubernetes", "PUT", LEASES, lambda: run_in_process(MODULE, args(cloud, cluster, "run-a")),
        lambda: run_in_process(MODULE, args(cloud, cluster, "run-b")))
    assert second["acquired"] is True and second["taken_over_from"]["id"] == "dead-run", second
    assert first["failed"] is True and "holder run-b" in first["msg"], first
    lease = read(cloud, cluster)
    assert lease.spec.holder_identity == "run-b" and lease.spec.lease_transitions == 1


def test_an_expired_lease_is_taken_over_naming_the_old_holder(cloud, cluster, run_module):
    """A holder that died: its Lease expired (renewed 120 s ago for 5 s); it is taken over, the old holder named
    (AWX job, host) in the result and a warning. In a real ansible-playbook."""
    write_lease(cloud, cluster, "dead-run", renewed_ago=120, duration=5, job_id="41")
    run = run_module(MODULE, args(cloud, cluster, "run-a"), playbook=True)
    assert run.rc == 0, run.output
    taken = run.result["taken_over_from"]
    assert taken["id"] == "dead-run" and taken["job_id"] == "41" and taken["host"] == "awx-ee-1", run.result
    assert run.result["acquired"] is True and run.result["holder"]["id"] == "run-a"
    assert "taken over from AWX job 41" in run.output


def test_a_live_lease_fails_fast_or_waits_naming_its_holder(cloud, cluster, run_in_process):
    """Another actor's live Lease: without wait the task fails at once, with wait once its timeout (the whole
    task's, counted from its start) is over; both name the holder and change nothing."""
    write_lease(cloud, cluster, "other-run", renewed_ago=0, duration=3600, job_id="12")
    fast = run_in_process(MODULE, args(cloud, cluster, "run-a"))
    assert fast["failed"] is True and fast["polls"] == 1, fast
    assert "AWX job 12 (host awx-ee-1, holder other-run)" in fast["msg"], fast["msg"]
    waited = run_in_process(MODULE, args(cloud, cluster, "run-a", wait=True, timeout=4, poll_interval=0.2))
    assert waited["failed"] is True and "waited" in waited["msg"], waited
    assert "AWX job 12 (host awx-ee-1, holder other-run)" in waited["msg"], waited["msg"]
    assert waited["elapsed"] >= 4 and waited["polls"] >= 1, waited  # it waited until its timeout, however slow
    assert read(cloud, cluster).spec.holder_identity == "other-run"


def test_renew_and_release_and_check_mode(cloud, cluster, run_in_process):
    """Check mode takes no Lease; a take, a renewal (acquireTime kept, duration changed), a release (holder
    cleared), and a release of a Lease another actor then took is left alone."""
    checked = run_in_process(MODULE, args(cloud, cluster, "run-a"), check_mode=True)
    assert checked["would"] == "acquire" and checked["changed"] is True and read(cloud, cluster) is None, checked
    taken = run_in_process(MODULE, args(cloud, cluster, "run-a"))
    renewed = run_in_process(MODULE, args(cloud, cluster, "run-a", lease_duration=900))
    assert taken["acquired"] is True and renewed["renewed"] is True and renewed["acquired"] is False, renewed
    assert renewed["holder"]["acquired_at"] == taken["holder"]["acquired_at"]
    assert read(cloud, cluster).spec.lease_duration_seconds == 900
    released = run_in_process(MODULE, args(cloud, cluster, "run-a", state="released"))
    assert released["released"] is True and read(cloud, cluster).spec.holder_identity is None, released
    run_in_process(MODULE, args(cloud, cluster, "run-b"))
    left = run_in_process(MODULE, args(cloud, cluster, "run-a", state="released"))
    assert left["released"] is False and left["changed"] is False, left
    assert read(cloud, cluster).spec.holder_identity == "run-b"


ROLE_KEEP = ("{{ {'failed': %s, 'msg': %s, 'read': control_plane_rollout__before is defined,"
             " 'lease': control_plane_rollout_lease_result | default(None)} | to_json }}")


def rollout_role(cloud, playbooks, cluster):
    role_vars = dict(control_plane_rollout_cluster=cluster,
                     control_plane_rollout_kubeconfig=str(cloud.state_dir / "kubeconfig"))
    run = playbooks.role("flightcontrol.openstack.control_plane_rollout", role_vars=role_vars, timeout=300,
                         keep=ROLE_KEEP % ("false", "''"), keep_failure=ROLE_KEEP % ("true", "ansible_failed_result.msg"),
                         extra_vars={"awx_job_id": 5150})
    assert run.result, "the play recorded nothing:\n%s" % run.output
    return run


def test_the_rollout_role_stops_on_anothers_lease_and_releases_its_own_after_a_failure(cloud, cluster, playbooks):
    """control_plane_rollout: another actor's live Lease stops the role at its first task, naming the holder, before
    the cluster is even read; once the Lease is free the role takes it, fails on its
    preflight (no such cluster) and releases the Lease in its always."""
    write_lease(cloud, cluster, "other-run", renewed_ago=0, duration=3600, job_id="12")
    stopped = rollout_role(cloud, playbooks, cluster)
    assert stopped.result["failed"] is True and stopped.result["read"] is False, stopped.output
    assert "AWX job 12" in stopped.result["msg"], stopped.result["msg"]
    assert read(cloud, cluster).spec.holder_identity == "other-run"
    leases(cloud).delete_namespaced_lease("flightcontrol-" + cluster, "default")  # the other actor is gone: by hand
    failed = rollout_role(cloud, playbooks, cluster)
    assert failed.result["failed"] is True and "Preflight | read the cluster" in failed.result["msg"], failed.output
    assert failed.result["lease"]["released"] is True, failed.result["lease"]
    lease = read(cloud, cluster)
    assert lease is not None and lease.spec.holder_identity is None, lease
