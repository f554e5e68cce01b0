# -*- coding: utf-8 -*-
"""resource_leak_audit against minicloud: a CAPO cluster seeded with its OpenStack resources, each kind of leak
seeded beside it through the OpenStack API (a port whose server is gone, a port without device, a member of no
server, a server in ERROR), and the security groups and floating IP of a cluster that is gone."""

import datetime
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
    # Neutron's created_at has whole seconds: the bare port is made in a later second, so "the oldest first" has
    # one answer (with equal ages the order falls to the ids, which are random)
    while conn.network.get_port(orphan.id).created_at >= utc_now():
        time.sleep(0.05)
    bare = conn.network.create_port(network_id=network.id, name=live + "-bare-0")
    broken = cloud.api.create_servers([live + "-broken"], network.name, error=True)[0]
    lb = conn.load_balancer.find_load_balancer(PREFIX + "default-%s-kubeapi" % live)
    pool = [p for p in conn.load_balancer.pools() if lb.id in [x["id"] for x in p.loadbalancers]][0]
    subnet = list(conn.network.subnets(network_id=network.id))[0]
    # Neutron hands out addresses at random: the ghost's is one no port of the network holds
    ghost = conn.load_balancer.create_member(pool.id, name=lb.name + "-6443-ghost", address=free_address(conn, network),
                                             protocol_port=6443, subnet_id=subnet.id)
    wait_active(conn, lb.id)
    groups = [conn.network.create_security_group(name="k8s-cluster-default-%s-secgroup-%s" % (gone, role))
              for role in ("controlplane", "worker")]
    external = admin.network.create_network(name="leak-ext-" + gone, is_router_external=True)
    admin.network.create_subnet(network_id=external.id, cidr="198.51.100.0/24", ip_version=4)
    fip = conn.network.create_ip(floating_network_id=external.id,
                                 description="Created by cluster-api-provider-openstack cluster default-" + gone)
    # the live cluster's API address: the gone cluster's is then not every CAPO floating IP of the project
    api_fip = conn.network.create_ip(floating_network_id=external.id,
                                     description="Created by cluster-api-provider-openstack cluster default-" + live)
    yield dict(live="default/" + live, gone="default/" + gone, orphan=orphan.id, bare=bare.id, broken=broken["id"],
               member=ghost.id, member_address=ghost.address, pool=pool.id, groups=sorted(g.id for g in groups), fip=fip.id, seeded=seeded)
    for address in (fip, api_fip):
        conn.network.delete_ip(address.id, ignore_missing=True)
    for item in [orphan.id, bare.id]:  # a project member may not delete a port of a compute device
        admin.network.delete_port(item, ignore_missing=True)
    for group in groups:
        conn.network.delete_security_group(group.id, ignore_missing=True)
    admin.network.delete_network(external.id, ignore_missing=True)
    cloud.cli("server", "delete", live + "-broken", check=False)
    cloud.api.delete_capi_openstack(live, "default")


def free_address(conn, network):
    """An address of the network's 10.6.0.0/24 that no port holds (so no member of a server either)."""
    used = set(ip["ip_address"] for port in conn.network.ports(network_id=network.id) for ip in port.fixed_ips)
    return next("10.6.0.%d" % last for last in range(250, 2, -1) if "10.6.0.%d" % last not in used)


def utc_now():
    """Now as Neutron writes created_at (UTC, whole seconds)."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


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
    assert "address %s" % leaks["member_address"] in why[leaks["member"]] and "no server on network" in why[leaks["member"]]
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
    args = dict(cluster=leaks["live"], port_grace_period=0, cleanup=["ports", "members"])
    cloud.reset_counts()
    planned = ok(run(run_module, check_mode=True, diff=True, max_deletions=1, **args))
    assert cloud.write_count() == 0
    assert planned["changed"] and [d["status"] for d in planned["deleted"]] == ["planned"]
    assert planned["deleted"][0]["id"] == leaks["orphan"]  # the oldest first
    assert [n["reason"] for n in planned["not_deleted"]] == ["max_deletions (1 per run) reached; a later run "
                                                             "deletes it"] * 2
    assert len(planned["diff"]["before"]["ports"]) == 2 and len(planned["diff"]["before"]["servers"]) == 1
    assert sum(len(v) for v in planned["diff"]["after"].values()) == 3

    # A project member may not delete the port of a compute device (Neutron's policy): reported, not counted in
    # the cap; the port without device is deleted, the member is left to a later run.
    cloud.reset_counts()
    cleaned = ok(run(run_module, max_deletions=1, **args))
    assert [(d["id"], d["status"]) for d in cleaned["deleted"]] == [(leaks["bare"], "done")] and cleaned["changed"], (
        leaks, cleaned["deleted"], cleaned["not_deleted"])
    reasons = dict((n["id"], n["reason"]) for n in cleaned["not_deleted"])
    assert "policy forbids" in reasons[leaks["orphan"]] and "max_deletions (1" in reasons[leaks["member"]]
    assert cloud.writes() == {"DELETE": {"/v2.0/ports/{id}": 2}} and cloud.writes("load-balancer") == {}
    again = ok(run(run_module, max_deletions=5, **args))
    assert [(d["id"], d["status"]) for d in again["deleted"]] == [(leaks["member"], "done")]
    last = ok(run(run_module, **args))
    assert found(last) == sorted([("ports", leaks["orphan"]), ("servers", leaks["broken"])])  # ERROR: reported
    assert last["deleted"] == [] and not last["changed"]
    conn = cloud.sdk()
    assert conn.network.find_port(leaks["bare"]) is None
    left = [m.name for m in conn.load_balancer.members(leaks["pool"])]
    assert len(left) == 1 and not left[0].endswith("-ghost")  # the cluster's own member is untouched

    gone = ok(run(run_module, cluster=leaks["gone"], cleanup=["security_groups", "floating_ips"], max_deletions=5))
    assert sorted(d["id"] for d in gone["deleted"]) == sorted(leaks["groups"] + [leaks["fip"]]), gone["not_deleted"]
    assert ok(run(run_module, cluster=leaks["gone"]))["healthy"]


def test_the_only_floating_ip_of_a_kind_is_never_deleted(cloud, leaks, run_module):
    """The guard "never every object of a kind": with the live cluster's address gone too, the gone cluster's
    floating IP is every CAPO floating IP of the project (minicloud's project holds no other)."""
    conn = cloud.sdk()
    live = [ip for ip in conn.network.ips() if (ip.description or "").endswith("default-" + leaks["live"][8:])]
    if len([ip for ip in conn.network.ips() if (ip.description or "").startswith("Created by cluster-api")]) != 2:
        pytest.skip("the project holds other CAPO floating IPs")
    conn.network.delete_ip(live[0].id)
    result = ok(run(run_module, cluster=leaks["gone"], cleanup=["floating_ips"]))
    assert result["deleted"] == [] and "every one of the 1 floating ips" in result["not_deleted"][0]["reason"]


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


@pytest.fixture
def look_alike(cloud):
    """A live cluster ``default/pk<id>-kubeapi`` (a name that ends in CAPO's load balancer suffix) with no workers:
    its worker group on no port and an unattached floating IP naming it; and a cluster ``default/gone<id>`` that
    is gone, leaving its groups and floating IP."""
    tag = uuid.uuid4().hex[:4]
    live, gone = "pk%s-kubeapi" % tag, "gone%s" % tag
    cloud.api.create_capi_cluster(live, control_plane=1, openstack=True)
    conn, admin = cloud.sdk(), cloud.api.connect("minicloud-admin")
    live_groups = dict((role, conn.network.find_security_group("k8s-cluster-default-%s-secgroup-%s" % (live, role)))
                       for role in ("controlplane", "worker"))
    network = conn.network.find_network(PREFIX + "default-" + live)
    for port in conn.network.ports(network_id=network.id, device_owner="compute:nova"):  # no workers: no port has it
        conn.network.update_port(port, security_group_ids=[live_groups["controlplane"].id])
    gone_groups = [conn.network.create_security_group(name="k8s-cluster-default-%s-secgroup-%s" % (gone, role))
                   for role in ("controlplane", "worker")]
    external = admin.network.create_network(name="look-alike-ext-" + tag, is_router_external=True)
    admin.network.create_subnet(network_id=external.id, cidr="198.51.100.0/24", ip_version=4)
    fips = dict((name, conn.network.create_ip(floating_network_id=external.id, description=(
        "Created by cluster-api-provider-openstack cluster default-" + name))) for name in (live, gone))
    yield dict(live=live, gone=gone, live_ids=set([live_groups["worker"].id, live_groups["controlplane"].id,
                                                   fips[live].id]),
               gone_ids=set([g.id for g in gone_groups] + [fips[gone].id]))
    for address in fips.values():
        conn.network.delete_ip(address.id, ignore_missing=True)
    for group in gone_groups:
        conn.network.delete_security_group(group.id, ignore_missing=True)
    admin.network.delete_network(external.id, ignore_missing=True)
    cloud.api.delete_capi_openstack(live, "default")


def test_a_live_cluster_named_like_capos_suffix_is_never_a_gone_one(cloud, look_alike, run_module):
    args = dict(cleanup=["security_groups", "floating_ips"], max_deletions=5)
    planned = ok(run(run_module, check_mode=True, **args))
    live, gone = "default-" + look_alike["live"], "default-" + look_alike["gone"]
    assert live in planned["clusters_present"] and gone not in planned["clusters_present"]
    assert live[:-len("-kubeapi")] not in planned["clusters_present"]  # no cluster default-pk<id> exists
    assert not set(f["id"] for f in planned["findings"]) & look_alike["live_ids"], planned["findings"]
    assert look_alike["gone_ids"] <= set(f["id"] for f in planned["findings"])

    scoped = ok(run(run_module, cluster="default/" + look_alike["live"], **args))
    assert scoped["findings"] == [] and scoped["deleted"] == [] and not scoped["changed"]

    cleaned = ok(run(run_module, **args))
    assert not set(d["id"] for d in cleaned["deleted"]) & look_alike["live_ids"], cleaned["deleted"]
    conn = cloud.sdk()
    assert all(conn.network.find_security_group(i) or conn.network.find_ip(i) for i in look_alike["live_ids"])
