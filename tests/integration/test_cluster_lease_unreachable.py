# -*- coding: utf-8 -*-
"""control_plane_rollout and flight_check's repairs holding their cluster's Lease while the management cluster goes
away. Gated on the role's own requests (it has taken the Lease, it has come to its renewal), never timed: the role
stops at its renewal, names the cluster and the Lease, and changes nothing after it."""

import datetime
import time

from leases import lease
from races import _ModuleThread
from rollouts import KCP_GROUP, custom, hooks_left, machines, seed_cluster
from test_flight_check import cluster, run_flight_check, unique  # noqa: F401  pylint: disable=unused-import

GATE_TIMEOUT = 240  # ansible-playbook's start and the preflight, on a busy machine
LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
RENEWAL = "Lease | renew it for the guarded rollout"
KEEP = ("{{ {'failed': %s, 'msg': %s, 'holder': control_plane_rollout__lease_holder | default(None),"
        " 'guarded': control_plane_rollout_result is defined} | to_json }}")


def start_role(cloud, playbooks, name, **role_vars):
    variables = dict({"control_plane_rollout_cluster": name,
                      "control_plane_rollout_kubeconfig": str(cloud.state_dir / "kubeconfig"),
                      "control_plane_rollout_cloud": "minicloud", "control_plane_rollout_poll_interval": 1,
                      # how long a Lease step tries (the renewal's retries against the outage)
                      "control_plane_rollout_lease_wait_timeout": 3}, **role_vars)
    return _ModuleThread(lambda: playbooks.role(
        "flightcontrol.openstack.control_plane_rollout", role_vars=variables, timeout=300,
        keep=KEEP % ("false", "''"), keep_failure=KEEP % ("true", "ansible_failed_result.msg")))


def control_plane(cloud, name):
    """What the rollout would change: the KubeadmControlPlane's spec and each control-plane Machine with its
    annotations (deletion hooks) and deletion mark."""
    cluster = custom(cloud, "get_namespaced_custom_object", "cluster.x-k8s.io", "v1beta2", "default", "clusters",
                     name)
    kcp = custom(cloud, "get_namespaced_custom_object", KCP_GROUP, "v1beta2", "default", "kubeadmcontrolplanes",
                 cluster["spec"]["controlPlaneRef"]["name"])
    return dict(paused=cluster["spec"].get("paused"), kcp=kcp["spec"],
                machines=sorted((m["metadata"]["name"], sorted((m["metadata"].get("annotations") or {}).items()),
                                 m["metadata"].get("deletionTimestamp")) for m in machines(cloud, name)))


class RenewalGate:
    """The role held at its first renewal of the Lease on ``service``: its take's create is gated (the gate is set
    here, before the role starts), then, from :meth:`hold`, the renewal's read. :meth:`answer` lets the held read
    through; :meth:`close` lifts whatever is still set (at the end, whatever happened)."""

    def __init__(self, cloud, service, cluster_name):
        self.api, self.service, self.path = cloud.api, service, LEASES + "/flightcontrol-" + cluster_name
        self.take = self.api.add_fault(service, method="POST", path=LEASES, gate=True, count=1)
        self.renew = None

    def hold(self):
        """Once the take's create is held, gate the next read of the Lease (the renewal's), let the take through
        and wait until the renewal's read is held."""
        self.api.wait_held(self.take["id"], 1, timeout=GATE_TIMEOUT)
        self.renew = self.api.add_fault(self.service, method="GET", path=self.path, gate=True, count=1)
        self.api.release_fault(self.take["id"])
        self.take = None
        self.api.wait_held(self.renew["id"], 1, timeout=GATE_TIMEOUT)

    def answer(self):
        self.api.release_fault(self.renew["id"])
        self.renew = None

    def close(self):
        for rule in (self.take, self.renew):
            if rule is not None:
                self.api.release_fault(rule["id"])


def live_for(found, holder):
    """The Lease ``found`` is ``holder``'s and live by this clock."""
    renewed = found.spec.renew_time
    expires = renewed + datetime.timedelta(seconds=found.spec.lease_duration_seconds)
    return found.spec.holder_identity == holder and expires > datetime.datetime.now(datetime.timezone.utc)


def test_the_management_cluster_unreachable_at_a_renewal_stops_the_rollout(cloud, playbooks):
    """The role has taken the Lease and comes to its renewal before the guarded rollout; the management cluster
    stops answering (every connection dropped) from there on. The renewal fails naming the cluster and the Lease;
    the role sends no write and reads nothing but its Lease from then on (no Machine's hook, no KubeadmControlPlane
    patch, no pause: pause_on_stuck is on); the release cannot reach the API either, so the Lease is left to
    expire, still the role's."""
    name = seed_cluster(cloud, control_plane=1)  # no rollout runs: one Machine is enough
    before = control_plane(cloud, name)
    gate, outage = RenewalGate(cloud, "kubernetes", name), None
    run = start_role(cloud, playbooks, name, control_plane_rollout_pause_on_stuck=True)
    try:
        gate.hold()  # from the take's create on, the next read of the Lease is the renewal's
        held = lease(cloud, name)
        assert held is not None and held.spec.holder_identity.startswith("fc-"), held
        assert live_for(held, held.spec.holder_identity), held
        cloud.api.request_counts("kubernetes", reset=True)
        outage = cloud.api.add_fault("kubernetes", status="drop")
        gate.answer()  # the held read is answered; every request after it is dropped
        outcome = run.result()
        after_fault = cloud.api.request_counts("kubernetes")["requests"].get("kubernetes", {})
    finally:
        gate.close()
        if outage is not None:
            cloud.api.release_fault(outage["id"])
    result = outcome.result
    assert result["failed"] is True and result["guarded"] is False, outcome.output
    assert "stopped at task '%s'" % RENEWAL in result["msg"], result["msg"]
    assert ("Lease default/flightcontrol-%s of cluster default/%s could not be renewed" % (name, name)
            in result["msg"]), result["msg"]
    assert "this run stops here rather than change the cluster without its Lease" in result["msg"], result["msg"]
    assert "TASK [flightcontrol.openstack.control_plane_rollout : Guard the rollout]" not in outcome.output
    # after the fault the role tried its Lease (the renewal's write, the release's read) and nothing else: no
    # other task reached for the management cluster (not even the API's discovery), no pause of the cluster
    lease_path = LEASES + "/flightcontrol-" + name
    assert set(after_fault) == {"GET", "PUT"}, after_fault
    assert set(after_fault["GET"]) == set(after_fault["PUT"]) == {lease_path}, after_fault
    assert "Stuck | pause the cluster so that nothing else changes it] ***\nskipping" in outcome.output
    assert control_plane(cloud, name) == before
    assert hooks_left(cloud, name) == {}
    left = lease(cloud, name)
    assert left.spec.holder_identity == result["holder"]["id"], left  # not released: left to expire


def wait_expired(cloud, name, timeout=60):
    """The Lease once it has expired by this clock (its holder stopped renewing it: at most its duration)."""
    deadline = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=timeout)
    while True:
        found = lease(cloud, name)
        if not live_for(found, found.spec.holder_identity):
            return found
        assert datetime.datetime.now(datetime.timezone.utc) < deadline, found
        time.sleep(0.2)


def test_a_lease_lost_while_the_management_cluster_was_out_of_reach_is_not_taken_again(cloud, playbooks, run_in_process):
    """The role's renewal before the guarded rollout gets no answer (its read is held) for longer than its Lease
    (5 s): the Lease expires, another actor takes it over, acts and releases it. Once the renewal's read is
    answered, the role finds the Lease released: it stops there naming the Lease, the cluster and how it was lost,
    and takes it not again (a renewal that took a free Lease would go on as if it had held the cluster all along)."""
    name = seed_cluster(cloud, control_plane=1)  # no rollout runs: one Machine is enough
    before = control_plane(cloud, name)
    gate = RenewalGate(cloud, "kubernetes", name)
    run = start_role(cloud, playbooks, name, control_plane_rollout_lease_duration=5,
                     control_plane_rollout_pause_on_stuck=True)
    try:
        gate.hold()
        mine = wait_expired(cloud, name).spec.holder_identity
        other = dict(kubeconfig=str(cloud.state_dir / "kubeconfig"), name=name, holder={"id": "other-run"})
        taken = run_in_process("flightcontrol.openstack.cluster_lease", other)
        assert taken["acquired"] is True and taken["taken_over_from"]["id"] == mine, taken
        released = run_in_process("flightcontrol.openstack.cluster_lease", dict(other, state="released"))
        assert released["released"] is True, released
        cloud.api.request_counts("kubernetes", reset=True)
        gate.answer()
        outcome = run.result()
    finally:
        gate.close()
    result = outcome.result
    assert result["failed"] is True and result["guarded"] is False, outcome.output
    assert "stopped at task '%s'" % RENEWAL in result["msg"], result["msg"]
    assert ("Lease default/flightcontrol-%s of cluster default/%s is no longer held by this run (holder %s): it was "
            "released" % (name, name, mine)) in result["msg"], result["msg"]
    writes = dict((method, paths) for method, paths in
                  cloud.api.request_counts("kubernetes")["requests"].get("kubernetes", {}).items() if method != "GET")
    assert writes == {}, writes  # the Lease not taken again, nothing else changed, the cluster not paused
    assert lease(cloud, name).spec.holder_identity is None
    assert control_plane(cloud, name) == before


def test_the_repairs_stop_at_their_renewal_when_the_management_cluster_is_unreachable(cloud, cluster,
                                                                                      run_flight_check):
    """flight_check with its repairs: the management cluster is the second Kubernetes API (the move target's), the
    workload cluster the first. The run takes the Lease there, audits the servers on the workload cluster, and
    comes to its renewal before the security group repair; from there on the management cluster drops every
    connection. The renewal fails naming the Lease and the cluster, and the repair, which needs nothing of the
    management cluster, does not run: the port that lost the group stays as it was, no Neutron or Nova write."""
    capi = unique("fc-lease")  # no Cluster object is needed for its Lease
    variables = dict(cluster["vars"], flight_check_capi_cluster="default/" + capi, awx_job_id=5150,
                     flight_check_management_kubeconfig=str(cloud.state_dir / "kubeconfig-target"),
                     flight_check_lease_wait_timeout=3)
    gate, outage = RenewalGate(cloud, "kubernetes-target", capi), None
    run = _ModuleThread(lambda: run_flight_check(**variables))
    try:
        gate.hold()
        held = lease(cloud, capi, kubeconfig="kubeconfig-target")
        assert held is not None and held.spec.holder_identity.startswith("fc-"), held
        cloud.requests(reset=True)
        outage = cloud.api.add_fault("kubernetes-target", status="drop")
        gate.answer()
        proc, report = run.result()
        after_fault = cloud.requests("kubernetes-target")["requests"].get("kubernetes-target", {})
    finally:
        gate.close()
        if outage is not None:
            cloud.api.release_fault(outage["id"])
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0 and report is None, output
    assert ("Lease default/flightcontrol-%s of cluster default/%s could not be renewed" % (capi, capi)) in output, output
    assert "TASK [flightcontrol.openstack.flight_check : Ensure the pod CIDR rules" not in output, output
    assert cloud.writes() == {} and cloud.writes("compute") == {}
    assert cluster["group"] not in cloud.sdk().network.get_port(cluster["lost_port"]).security_group_ids
    assert set(after_fault) <= {"GET", "PUT"}, after_fault  # the renewal's own requests, nothing else
    assert set(path for paths in after_fault.values() for path in paths) == {LEASES + "/flightcontrol-" + capi}
    left = lease(cloud, capi, kubeconfig="kubeconfig-target")
    assert left.spec.holder_identity == held.spec.holder_identity, left  # left to expire
