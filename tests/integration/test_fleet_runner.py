# -*- coding: utf-8 -*-
"""The fleet playbooks run the way AWX runs a job: through ``ansible_runner.run`` on a private data directory
(the project with the playbook, ``inventory/`` with the capi_clusters source file, ``env/extravars`` as a job
template passes them, ``env/envvars`` as credentials inject them), checked on the artifacts AWX reads: ``rc``,
``status``, the ``playbook_on_stats`` event with the ``set_stats`` data, the per-host events, and the reports.

The flight check runs once over three clusters seeded with OpenStack resources (v1beta1 and v1beta2, two
namespaces; one drifted so that it needs a person, one drifted so that it is repaired) and a static host whose
cluster does not exist. The rollout runs over three clusters whose second one gets a member that never serves.
"""

import json
import os
import shutil
import sys
import uuid
from pathlib import Path

import ansible_runner
import pytest
import yaml

from leases import lease
from playbook_runner import REPO

BIN = str(Path(sys.executable).parent)
POD_NETWORK = "10.244.0.0/16"


def awx_job(private_data_dir, playbook, sources, extravars, envvars, forks):
    """Lay out ``private_data_dir`` as AWX does for a job (project, inventory sources, env) and run the playbook
    with ansible-runner; returns the runner."""
    root = Path(private_data_dir)
    (root / "project").mkdir(parents=True)
    shutil.copy(REPO / "playbooks" / playbook, root / "project" / playbook)
    (root / "inventory").mkdir()
    for name, content in sources.items():
        (root / "inventory" / name).write_text(yaml.safe_dump(content))
    (root / "env").mkdir()
    (root / "env" / "extravars").write_text(yaml.safe_dump(extravars))
    (root / "env" / "envvars").write_text(yaml.safe_dump(envvars))
    return ansible_runner.run(private_data_dir=str(root), playbook=playbook, forks=forks, quiet=True, timeout=600)


def credentials(cloud, collections_path):
    """What AWX's credentials inject: the OpenStack credential's clouds.yaml, a kubeconfig credential for the
    management cluster (K8S_AUTH_KUBECONFIG), and where the collection is (the execution environment's)."""
    return {"OS_CLIENT_CONFIG_FILE": str(cloud.clouds_yaml), "K8S_AUTH_KUBECONFIG": str(cloud.state_dir / "kubeconfig"),
            "ANSIBLE_COLLECTIONS_PATH": str(collections_path), "ANSIBLE_INVENTORY_UNPARSED_FAILED": "true",
            "ANSIBLE_NOCOLOR": "1", "PATH": BIN + os.pathsep + os.environ["PATH"]}  # the execution environment's


def source(cloud, namespaces):
    """The inventory source file of the AWX inventory: the capi_clusters plugin on minicloud's management cluster."""
    return {"plugin": "flightcontrol.openstack.capi_clusters", "kubeconfig": str(cloud.state_dir / "kubeconfig"),
            "namespaces": namespaces}


def events_of(runner, event):
    return [e for e in runner.events if e.get("event") == event]


def host_events(runner, event, task):
    return sorted(e["event_data"]["host"] for e in events_of(runner, event) if e["event_data"].get("task") == task)


def artifact_data(runner):
    [stats] = events_of(runner, "playbook_on_stats")
    return stats["event_data"].get("artifact_data") or {}


def remove(cloud, clusters):
    """Delete the seeded clusters' CAPI objects; their OpenStack resources stay, as the other tests leave them
    (nothing reads them once the cluster is gone)."""
    for cluster in clusters:
        cloud.api.delete_capi_cluster(cluster["name"], cluster["namespace"])


def drop_pod_rule(cloud, namespace, name, protocol="udp"):
    """Delete one pod CIDR rule of the cluster's worker group (what minicloud's missing-rule drift does);
    returns the group's id."""
    conn = cloud.sdk()
    group = conn.network.find_security_group("k8s-cluster-%s-%s-secgroup-worker" % (namespace, name),
                                             ignore_missing=False)
    [rule] = [r for r in conn.network.security_group_rules(security_group_id=group.id, protocol=protocol)
              if r.remote_ip_prefix == POD_NETWORK]
    conn.network.delete_security_group_rule(rule)
    return group.id


def by_hand_variables(cluster):
    """The flight check's own variables for ``cluster``, written by hand (names, no capi_* variables)."""
    resource = "%s-%s" % (cluster["namespace"], cluster["name"])
    return {"flight_check_cluster_name": "by-hand", "flight_check_router": "k8s-clusterapi-cluster-" + resource,
            "flight_check_security_group": "k8s-cluster-%s-secgroup-worker" % resource,
            "flight_check_servers": ["%s-md-0-*" % cluster["name"]], "flight_check_cluster_cidr": [POD_NETWORK],
            "flight_check_kubeconfig_secret": {"name": cluster["name"] + "-kubeconfig",
                                               "namespace": cluster["namespace"]}}


@pytest.fixture(scope="module")
def fleet(minicloud):
    """Three clusters seeded at once, each with a router, both security groups, a worker, and a healthy pod
    network: ``PREFIX-1`` (namespace A, v1beta1) is clean; ``PREFIX-2`` (namespace B, v1beta2) lost the udp pod
    CIDR rule of its worker group and a route (the rule is repaired, the route only audited: it needs a person);
    ``PREFIX-3`` (namespace A, v1beta1) lost the rule only (repaired). Seeded once for the module."""
    suffix = uuid.uuid4().hex[:6]
    prefix, namespaces = "fj%s" % suffix, ["fleet-job-a-%s" % suffix, "fleet-job-b-%s" % suffix]
    seeded = {"clusters": []}
    try:
        seeded = minicloud.api.create_capi_fleet(3, prefix=prefix, namespaces=namespaces,
                                                 api_versions=["v1beta1", "v1beta2"], workers=1, drift_every=2,
                                                 drift=["missing-rule", "missing-route"])
        clusters = dict(("%s/%s" % (c["namespace"], c["name"]), c) for c in seeded["clusters"])
        third = seeded["clusters"][2]
        third["drift"] = {"missing-rule": {"security_group": drop_pod_rule(minicloud, third["namespace"],
                                                                           third["name"])}}
        yield {"namespaces": namespaces, "clusters": clusters}
    finally:
        remove(minicloud, seeded["clusters"])


def test_fleet_flight_check_through_ansible_runner(minicloud, fleet, collections_path, tmp_path):
    clusters = fleet["clusters"]
    clean, drifted, repaired = clusters
    assert [clusters[h]["apiVersion"].rsplit("/", 1)[1] for h in clusters] == ["v1beta1", "v1beta2", "v1beta1"]
    absent = "missing-%s" % uuid.uuid4().hex[:6]
    missing, missing_cluster = "static/" + absent, "%s/%s" % (fleet["namespaces"][0], absent)
    by_hand = "static/by-hand"
    local = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    reports = tmp_path / "reports"
    sources = {
        "fleet.capi_clusters.yml": source(minicloud, fleet["namespaces"]),
        # Static hosts in the same group: one for a cluster that does not exist and reports no router (it is
        # reported, and the others are checked all the same), one that names the clean cluster's resources in the
        # role's own variables, as an inventory without the plugin would.
        "static.yml": {"capi_phase_provisioned": {"hosts": {
            missing: dict(local, capi_cluster_name=absent, capi_cluster_namespace=fleet["namespaces"][0],
                          capi_router=None, capi_pod_cidrs=[POD_NETWORK]),
            by_hand: dict(local, **by_hand_variables(clusters[clean]))}}},
    }
    runner = awx_job(tmp_path / "job", "fleet_flight_check.yml", sources,
                     {"fleet_cloud": "minicloud", "fleet_report_dir": str(reports)},
                     credentials(minicloud, collections_path), forks=5)

    # What AWX shows first: the job failed (a cluster needs a person), at the end, on the summary's host only.
    output = runner.stdout.read()
    assert runner.rc != 0 and runner.status == "failed", output
    assert runner.stats["failures"] == {"localhost": 1}, output
    assert set(runner.stats["ok"]) == {drifted, clean, repaired, missing, by_hand, "localhost"}

    # The set_stats data of the playbook_on_stats event (AWX's job artifacts).
    summary = artifact_data(runner)["fleet_flight_check"]
    assert summary["clusters"] == 5
    assert summary["counts"] == {"ok": 2, "repaired": 1, "needs_person": 1, "error": 1}, summary
    assert summary["clusters_by_status"] == {drifted: "needs_person", clean: "ok", repaired: "repaired",
                                             missing_cluster: "error", "by-hand": "ok"}
    people = dict((entry["cluster"], entry) for entry in summary["needs_person"])
    assert sorted(people) == sorted([drifted, missing_cluster])
    route = clusters[drifted]["drift"]["missing-route"]
    assert people[drifted]["reasons"] == ["routes: 1 missing on router %s" % route["router"]]
    assert any(r.startswith("servers: ") for r in people[missing_cluster]["reasons"]), people[missing_cluster]
    assert "routes: not checked, the cluster reports no router (capi_router; or set flight_check_router)" in people[
        missing_cluster]["reasons"]

    # Per-host events: each cluster is a host of its own, the missing one failed (rescued) where its Machines
    # were read.
    assert host_events(runner, "runner_on_ok", "The cluster's result") == sorted(
        [drifted, clean, repaired, missing, by_hand])
    assert host_events(runner, "runner_on_failed", "Read the cluster's Machines from the management cluster") == [
        missing]
    assert host_events(runner, "runner_on_failed", "Fail when a cluster needs a person") == ["localhost"]

    # One report per cluster with a stable name, and the fleet's.
    names = (drifted, clean, repaired, missing_cluster, "by-hand")
    assert sorted(p.name for p in reports.iterdir()) == sorted(
        ["fleet.json"] + ["flight_check-%s.json" % h.replace("/", "_") for h in names])
    fleet_report = json.loads((reports / "fleet.json").read_text())
    assert fleet_report["counts"] == summary["counts"] and len(fleet_report["results"]) == 5
    checks = dict((h, json.loads((reports / ("flight_check-%s.json" % h.replace("/", "_"))).read_text())["summary"])
                  for h in (drifted, clean, repaired, "by-hand"))
    assert checks[drifted]["checks"]["routes"]["counts"]["missing"] == 1
    assert checks[drifted]["checks"]["security_groups"]["rules_created"] == 1
    assert checks[repaired]["checks"]["security_groups"]["rules_created"] == 1 and checks[repaired]["ok"]
    assert checks[clean]["ok"] and checks[clean]["repaired"] == []
    # the leaks check runs report-only on each cluster of the inventory: CAPO's objects of a live cluster are none
    assert checks[clean]["checks"]["leaks"]["status"] == "ok" and checks[clean]["checks"]["leaks"]["unknown"] == []
    assert checks["by-hand"]["checks"]["leaks"]["status"] == "skipped"  # no capi_cluster_* variables
    # Each cluster was checked with its own Nodes (its own API) and only its own worker's server.
    for host in (drifted, clean, repaired, "by-hand"):
        registration = checks[host]["checks"]["node_registration"]["counts"]
        assert (registration["servers"], registration["registered"], registration["nodes"]) == (1, 1, 2), (
            host, registration)

    # The repairs are real: the drifted rule is back, the audited route is still missing.
    conn = minicloud.sdk()
    for host in (drifted, repaired):
        rule = clusters[host]["drift"]["missing-rule"]
        rules = conn.network.security_group_rules(security_group_id=rule["security_group"], protocol="udp")
        assert [r.remote_ip_prefix for r in rules] == [POD_NETWORK]
    routes = conn.network.get_router(route["router"]).routes
    assert {"destination": route["destination"], "nexthop": route["nexthop"]} not in routes

    # Each plugin cluster's repairs held its Lease on the management cluster, and released it.
    for host in (drifted, clean, repaired):
        namespace, name = host.split("/")
        held = lease(minicloud, name, namespace)
        assert held is not None and held.spec.holder_identity is None, (host, held)


@pytest.fixture
def rollout_fleet(minicloud):
    """Three clusters with one control-plane machine each, in a namespace of their own, seeded at once; their
    names in the order the inventory lists them."""
    suffix = uuid.uuid4().hex[:6]
    prefix, namespace = "fr%s" % suffix, "fleet-roll-%s" % suffix
    minicloud.normal()
    seeded = {"clusters": []}
    try:
        seeded = minicloud.api.create_capi_fleet(3, prefix=prefix, namespaces=[namespace])
        yield namespace, [c["name"] for c in seeded["clusters"]]
    finally:
        minicloud.normal()
        remove(minicloud, seeded["clusters"])


def test_fleet_rollout_stops_at_the_first_cluster_whose_rollout_stops(minicloud, rollout_fleet, collections_path,
                                                                      tmp_path):
    namespace, names = rollout_fleet
    first, second, third = ["%s/%s" % (namespace, name) for name in names]
    # The second cluster's new member is never served (the amphora v2 failure).
    minicloud.octavia("lost-member", members="k8s-clusterapi-cluster-%s-%s-kubeapi-6443-*" % (namespace, names[1]),
                      delay=0.2)
    # The second cluster's rollout stops 10 s after its new Machine; the first gets the time a busy machine may need
    # to bring its new Machine's member up (a host variable, composed by the inventory source as AWX would keep it).
    inventory = dict(source(minicloud, [namespace]), compose={
        "control_plane_rollout_member_timeout": "10 if capi_cluster_name == %r else 180" % names[1]})
    runner = awx_job(tmp_path / "job", "fleet_rollout.yml", {"fleet.capi_clusters.yml": inventory},
                     {"fleet_cloud": "minicloud", "control_plane_rollout_poll_interval": 1},
                     credentials(minicloud, collections_path), forks=5)

    assert runner.rc != 0 and runner.status == "failed"
    assert runner.stats["failures"] == {second: 1}, runner.stats
    assert first in runner.stats["ok"] and third not in runner.stats["ok"]  # the third was never started
    stopped = artifact_data(runner)["fleet_rollout"]
    assert stopped["stopped_at"] == second and stopped["done"] == [first] and stopped["not_started"] == [third]
    assert "new member not ACTIVE and healthy" in stopped["reason"]
    [failed] = [e for e in events_of(runner, "runner_on_failed") if e["event_data"]["task"] == "Stop the fleet at this cluster"]
    message = failed["event_data"]["res"]["msg"]
    assert message.startswith("The fleet rollout stopped at cluster %s (2 of 3): " % second), message
    assert message.endswith("Done (1): %s. Not started (1): %s." % (first, third)), message
