# -*- coding: utf-8 -*-
"""The flight_check role through playbooks/flight_check.yml in a real ansible-playbook against minicloud.

A cluster of three servers, two of them Nodes (matched by name) with correct routes on the cluster's router, one
that never registered, and one port that lost the cluster's security group.
"""

import json
import uuid

import pytest

from leases import drop_lease, hold_lease, lease
from playbook_runner import REPO
CLUSTER_CIDR = "198.19.0.0/16"


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:6])


@pytest.fixture
def run_flight_check(playbooks, tmp_path):
    """Run playbooks/flight_check.yml with these variables; returns (process, report or None)."""

    def run(**variables):
        report = tmp_path / ("report-%s.json" % uuid.uuid4().hex[:8])
        variables.setdefault("flight_check_report_path", str(report))
        proc = playbooks.run(REPO / "playbooks" / "flight_check.yml", extra_vars=variables)
        data = json.loads(report.read_text()) if report.exists() else None
        return proc, data

    return run


@pytest.fixture
def cluster(cloud, run_module):
    """Servers NAME-node-1..3; Nodes (labelled) and routes for 1 and 2; the group on every port but one."""
    name = unique("fc")
    router = unique("fc-rt")
    cloud.json("router", "create", router, "--network", unique("fc-nodes"))
    routed = cloud.json("router", "nodes", router, "--count", 2, "--prefix", name + "-node", "--routes",
                        "--address-pairs")
    for node in routed:
        cloud.cli("kube", "node", "create", node["name"], "--pod-cidr", node["pod_cidr"], "--address", node["address"],
                  "--label", "flight-check=" + name)
    servers = cloud.json("server", "create", name + "-node", "--network", "fcnet", "--count", 3)
    group = name + "-nodes"
    seeded = run_module("flightcontrol.openstack.secgroup_ensure",
                        dict(cloud="minicloud", security_group=group, pod_cidr=[CLUSTER_CIDR],
                             servers=[s["id"] for s in servers])).result
    assert not seeded.get("failed"), seeded.get("msg")
    conn = cloud.sdk()
    lost = servers[0]["ports"][0]["id"]
    port = conn.network.get_port(lost)
    conn.network.update_port(port, security_group_ids=[g for g in port.security_group_ids
                                                       if g != seeded["security_group"]["id"]])
    variables = dict(flight_check_cluster_name=name, flight_check_cloud="minicloud",
                     flight_check_kubeconfig=str(cloud.state_dir / "kubeconfig"),
                     flight_check_node_selector="flight-check=" + name,
                     flight_check_servers=[name + "-node-*"], flight_check_cluster_cidr=[CLUSTER_CIDR],
                     flight_check_security_group=group, flight_check_router=router,
                     flight_check_registration_timeout=0)
    yield dict(name=name, servers=servers, lost_port=lost, group=seeded["security_group"]["id"], vars=variables)
    for node in routed:
        cloud.cli("kube", "node", "delete", node["name"], check=False)


def test_flight_check_repairs_reports_deletes_one_with_the_opt_in_then_is_clean(cloud, cluster, run_flight_check):
    unregistered = cluster["servers"][2]["name"]
    capi = unique("fc-capi")
    cloud.json("capi", "cluster", "create", capi, "--control-plane", 1, "--workers", 0)

    # The first run also reads the readiness report of a CAPI cluster (report only): minicloud shows no providers,
    # MachineHealthChecks or managedFields, so the check is partial, not a problem and never OK.
    proc, report = run_flight_check(flight_check_checks=["security_groups", "routes", "node_registration", "readiness"],
                                    flight_check_readiness_cluster="default/" + capi, **cluster["vars"])
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output  # a server never registered and it is not deleted without the opt-in
    assert report is not None, output
    summary = report["summary"]
    checks = summary["checks"]
    assert not summary["ok"] and summary["cluster"] == cluster["name"]
    assert checks["security_groups"]["status"] == "repaired" and checks["security_groups"]["ports_updated"] == 1
    assert cluster["group"] in cloud.sdk().network.get_port(cluster["lost_port"]).security_group_ids
    assert checks["routes"]["status"] == "ok" and checks["routes"]["findings"] == 0
    assert checks["node_registration"]["status"] == "problem"
    assert checks["node_registration"]["unregistered"] == [unregistered]
    assert checks["node_registration"]["deleted"] == []
    assert report["node_registration"]["audit"]["counts"]["registered"] == 2
    assert report["routes"]["findings"] == [] and report["security_groups"]["ports_updated"][0]["port"] == cluster[
        "lost_port"]
    # The lines a person reads.
    assert "Flight check of %s: NEEDS A PERSON (1)" % cluster["name"] in output
    assert "security groups: REPAIRED - 0 rule(s) added, group put back on 1 port(s)" in output
    assert "never became a Node: %s" % unregistered in output
    assert "flight_check_delete_unregistered is off" in output
    assert checks["readiness"]["status"] == "partial" and checks["readiness"]["critical"] == 0
    assert "health_checks" in checks["readiness"]["unknown"] and report["readiness"]["summary"]
    assert "readiness: PARTIAL - nothing found among what could be read (unknown, not readable: " in output

    cloud.requests(reset=True)
    proc, report = run_flight_check(flight_check_delete_unregistered=True, flight_check_max_deletions=1,
                                    **cluster["vars"])
    assert cloud.writes("compute") == {"DELETE": {"/v2.1/servers/{id}": 1}}
    registration = report["node_registration"]["cleanup"]
    assert registration is not None and report["summary"]["checks"]["security_groups"]["status"] == "ok"
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report["summary"]["checks"]["node_registration"]["deleted"] == [unregistered]
    # The server is gone (Nova deletes a server without a compute host at once), the others are untouched.
    left = set(s.name for s in cloud.sdk().compute.servers())
    assert unregistered not in left and set(s["name"] for s in cluster["servers"] if s["name"] != unregistered) <= left

    cloud.requests(reset=True)
    proc, report = run_flight_check(**cluster["vars"])
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert report["summary"]["ok"] and report["summary"]["needs_person"] == []
    assert "changed=0" in output and "failed=0" in output
    assert cloud.writes() == {} and cloud.writes("compute") == {}
    assert "Flight check of %s: OK" % cluster["name"] in output


def test_the_repairs_stop_on_anothers_lease_and_release_their_own_after_a_failed_repair(cloud, cluster,
                                                                                        run_flight_check):
    """With flight_check_capi_cluster, another actor's live Lease stops the role before any check, naming the
    holder: no report, the lost port left as it was. Once the Lease is free the run takes it, a repair fails (no
    such router: the route check is an error) and the Lease is released after the last repair all the same."""
    capi = unique("fc-lease")  # no Cluster object is needed for its Lease
    leased = dict(cluster["vars"], flight_check_capi_cluster="default/" + capi, awx_job_id=5150,
                  flight_check_management_kubeconfig=str(cloud.state_dir / "kubeconfig"))
    hold_lease(cloud, capi)
    cloud.requests(reset=True)
    proc, report = run_flight_check(**leased)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0 and report is None, output
    assert "AWX job 12 (host awx-ee-1" in output and "holder other-run" in output, output
    assert cloud.writes() == {} and cloud.writes("compute") == {}
    assert cluster["group"] not in cloud.sdk().network.get_port(cluster["lost_port"]).security_group_ids
    assert lease(cloud, capi).spec.holder_identity == "other-run"

    drop_lease(cloud, capi)
    proc, report = run_flight_check(flight_check_route_state="repaired", **dict(leased, flight_check_router="no-such"))
    output = proc.stdout + proc.stderr
    assert report is not None and report["summary"]["checks"]["routes"]["status"] == "error", output
    assert report["summary"]["checks"]["security_groups"]["status"] == "repaired"
    held = lease(cloud, capi)  # deleted before the run: this run took it, and released it
    assert held is not None and held.spec.holder_identity is None, held
