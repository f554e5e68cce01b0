# -*- coding: utf-8 -*-
"""resource_leak_audit against minicloud: a CAPO cluster seeded with its OpenStack resources, each kind of leak
seeded beside it through the OpenStack API (a port whose server is gone, a port without device, a member of no
server, a server in ERROR), and the security groups and floating IP of a cluster that is gone."""

import time
import uuid

import pytest

MODULE = "flightcontrol.openstack.resource_leak_audit"
PREFIX = "k8s-clusterapi-cluster-"


def ok(result):
    assert not result.get("failed"), result.get("msg") or result
    return result


def wait_active(conn, lb_id, timeout=60):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if conn.load_balancer.get_load_balancer(lb_id).provisioning_status == "ACTIVE":
            return
        time.sleep(0.3)
    raise AssertionError("load balancer %s did not return to ACTIVE" % lb_id)


@pytest.fixture
def leaks(cloud):
    """A live cluster ``default/<live>`` (network, router, groups, servers, load balancer from minicloud's CAPO
    seeding) with one leak of each kind, and the groups and floating IP of a cluster ``default/<gone>`` that does
    not exist; everything removed afterwards."""
    live, gone = "leak-%s" % uuid.uuid4().hex[:6], "gone-%s" % uuid.uuid4().hex[:6]
    seeded = cloud.api.create_capi_cluster(live, control_plane=1, openstack=True)["openstack"]
    conn, admin = cloud.sdk(), cloud.api.connect("minicloud-admin")
    network = conn.network.find_network(PREFIX + "default-" + live)
    orphan = conn.network.create_port(network_id=network.id, name=live + "-lost-0", device_owner="compute:nova",
                                      device_id=str(uuid.uuid4()))
    bare = conn.network.create_port(network_id=network.id, name=live + "-bare-0")
    broken = cloud.api.create_servers([live + "-broken"], network.name, error=True)[0]
    lb = conn.load_balancer.find_load_balancer(PREFIX + "default-%s-kubeapi" % live)
    pool = next(p for p in conn.load_balancer.pools() if lb.id in [x["id"] for x in p.loadbalancers])
    subnet = next(iter(conn.network.subnets(network_id=network.id)))
    ghost = conn.load_balancer.create_member(pool.id, name=lb.name + "-6443-ghost", address="10.6.0.250",
                                             protocol_port=6443, subnet_id=subnet.id)
    wait_active(conn, lb.id)
    groups = [conn.network.create_security_group(name="k8s-cluster-default-%s-secgroup-%s" % (gone, role))
              for role in ("controlplane", "worker")]
    external = admin.network.create_network(name="leak-ext-" + gone, is_router_external=True)
    admin.network.create_subnet(network_id=external.id, cidr="198.51.100.0/24", ip_version=4)
    fip = conn.network.create_ip(floating_network_id=external.id,
                                 description="Created by cluster-api-provider-openstack cluster default-" + gone)
    yield dict(live="default/" + live, gone="default/" + gone, orphan=orphan.id, bare=bare.id, broken=broken["id"],
               member=ghost.id, pool=pool.id, groups=sorted(g.id for g in groups), fip=fip.id, seeded=seeded)
    conn.network.delete_ip(fip.id, ignore_missing=True)
    for item in [orphan.id, bare.id]:
        conn.network.delete_port(item, ignore_missing=True)
    for group in groups:
        conn.network.delete_security_group(group.id, ignore_missing=True)
    admin.network.delete_network(external.id, ignore_missing=True)
    cloud.cli("server", "delete", live + "-broken", check=False)
    cloud.api.delete_capi_openstack(live, "default")


def run(run_module, check_mode=False, diff=False, playbook=False, **args):
    task = dict(cloud="minicloud")
    task.update(args)
    return run_module(MODULE, task, check_mode=check_mode, diff=diff, playbook=playbook).result


def found(result):
    return sorted((f["kind"], f["id"]) for f in result["findings"])


def test_each_kind_of_leak_is_found_and_nothing_is_written(cloud, leaks, run_module):
    cloud.reset_counts()
    live = ok(run(run_module, cluster=leaks["live"], port_grace_period=0, playbook=True))
    assert found(live) == sorted([("ports", leaks["orphan"]), ("ports", leaks["bare"]),
                                  ("members", leaks["member"]), ("servers", leaks["broken"])]), live["findings"]
    assert live["counts"] == dict(ports=2, members=1, security_groups=0, floating_ips=0, servers=1)
    assert live["unknown"] == {} and not live["changed"] and not live["healthy"]
    why = dict((f["id"], f["why"]) for f in live["findings"])
    assert "no server of the project has this id" in why[leaks["orphan"]]
    assert "address 10.6.0.250" in why[leaks["member"]] and "no server on network" in why[leaks["member"]]
    assert cloud.write_count() == 0

    gone = ok(run(run_module, cluster=leaks["gone"]))
    assert found(gone) == sorted([("security_groups", g) for g in leaks["groups"]] + [("floating_ips", leaks["fip"])])
    assert all(f["age"] is not None and f["age"] >= 0 for f in gone["findings"])
    # the cluster named as existing (a management cluster's list): its groups and address are no leaks
    known = ok(run(run_module, cluster=leaks["gone"], clusters=[leaks["gone"]]))
    assert known["findings"] == [] and known["healthy"]
    # the whole project holds all of them (and whatever else the project has)
    project = ok(run(run_module, port_grace_period=0))
    assert set(found(live) + found(gone)) <= set(found(project)) and project["scope"] == "project"
    # a young port without device is no leak yet
    young = ok(run(run_module, cluster=leaks["live"]))
    assert ("ports", leaks["bare"]) not in found(young) and ("ports", leaks["orphan"]) in found(young)


def test_cleanup_within_its_cap_check_mode_and_diff(cloud, leaks, run_module):
    args = dict(cluster=leaks["live"], port_grace_period=0, cleanup=["ports", "members"], max_deletions=2)
    cloud.reset_counts()
    planned = ok(run(run_module, check_mode=True, diff=True, **args))
    assert cloud.write_count() == 0
    assert planned["changed"] and [d["status"] for d in planned["deleted"]] == ["planned", "planned"]
    assert len(planned["not_deleted"]) == 1 and "max_deletions (2 per run)" in planned["not_deleted"][0]["reason"]
    assert len(planned["diff"]["before"]["ports"]) == 2 and planned["diff"]["before"]["servers"]
    assert sum(len(v) for v in planned["diff"]["after"].values()) == 2  # the server and the one over the cap

    cloud.reset_counts()
    cleaned = ok(run(run_module, **args))
    assert [d["status"] for d in cleaned["deleted"]] == ["done", "done"] and cleaned["changed"]
    assert cloud.write_count() == 2
    deleted = set(d["id"] for d in cleaned["deleted"])
    assert deleted == set(d["id"] for d in planned["deleted"])
    again = ok(run(run_module, **args))
    assert [d["status"] for d in again["deleted"]] == ["done"]
    assert found(again) == sorted([(k, i) for k, i in found(planned) if i not in deleted])
    last = ok(run(run_module, **args))
    assert found(last) == [("servers", leaks["broken"])] and last["deleted"] == []  # servers are only reported
    conn = cloud.sdk()
    assert conn.network.find_port(leaks["orphan"]) is None and conn.network.find_port(leaks["bare"]) is None
    assert leaks["member"] not in [m.id for m in conn.load_balancer.members(leaks["pool"])]
    # the cluster's own server and member are untouched
    assert len(list(conn.load_balancer.members(leaks["pool"]))) == 1

    gone = ok(run(run_module, cluster=leaks["gone"], cleanup=["security_groups", "floating_ips"], max_deletions=5))
    assert sorted(d["id"] for d in gone["deleted"]) == sorted(leaks["groups"] + [leaks["fip"]])
    assert ok(run(run_module, cluster=leaks["gone"]))["healthy"]


def test_a_forbidden_kind_is_unknown_and_the_cleanup_refuses(cloud, leaks, run_module):
    cloud.api.set_policy("load-balancer", {"os_load-balancer_api:member:get_all": "!"})
    cloud.reset_counts()
    audit = ok(run(run_module, cluster=leaks["live"], port_grace_period=0, playbook=True))
    assert audit["counts"]["members"] is None and "members" in audit["unknown"]
    assert "403" in audit["unknown"]["members"] and not audit["healthy"]
    assert ("ports", leaks["orphan"]) in found(audit)  # the kinds that could be read are still reported

    refused = ok(run(run_module, cluster=leaks["live"], port_grace_period=0, cleanup=["ports"]))
    assert refused["deleted"] == [] and "partial" in refused["refused"] and "members unknown" in refused["refused"]
    assert cloud.write_count() == 0
    failing = run(run_module, cluster=leaks["live"], fail_on_findings=True)
    assert failing.get("failed") and "unknown: members" in failing["msg"]


def test_request_count_of_one_audit(cloud, leaks, run_module):
    cloud.reset_counts()
    audit = ok(run(run_module, cluster=leaks["live"]))
    totals = cloud.requests()["totals"]["by_service"]
    # project id (a token), servers, five Neutron lists, load balancers, pools, one member list per pool
    assert totals.get("compute") == 1 and totals.get("network") == 5
    assert totals.get("load-balancer") == 3, totals
    assert audit["api_calls"] == sum(totals.values())
