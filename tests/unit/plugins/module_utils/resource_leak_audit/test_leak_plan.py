# -*- coding: utf-8 -*-

import datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.flightcontrol.openstack.plugins.module_utils.resource_leak_audit import plan

NOW = datetime.datetime(2026, 5, 1, 12, 0, 0, tzinfo=plan.UTC)
OLD = "2026-04-30T12:00:00Z"  # a day before NOW
YOUNG = "2026-05-01T11:59:00Z"


def net(resource, nid=None):
    return dict(id=nid or "net-" + resource, name=plan.PREFIX + resource, tags=[])


def server(sid, status="ACTIVE"):
    return dict(id=sid, name=sid, status=status, created=OLD, metadata={})


def port(pid, device_id="", owner="", network="net-a", ip=None, groups=(), created=OLD, description=""):
    return dict(id=pid, name=pid, description=description, tags=[], device_id=device_id, device_owner=owner,
                network_id=network, fixed_ips=[dict(ip_address=ip)] if ip else [], security_groups=list(groups),
                created_at=created)


def group(gid, resource, role="worker"):
    return dict(id=gid, name="%s%s%s%s" % (plan.SG_PREFIX, resource, plan.SG_INFIX, role), description="",
                tags=[], created_at=OLD)


def fip(fid, resource, port_id=None):
    return dict(id=fid, floating_ip_address="203.0.113.%s" % fid[-1], description=plan.DESCRIPTION + resource,
                tags=[], port_id=port_id, created_at=OLD)


def lb(resource):
    return dict(id="lb-" + resource, name=plan.PREFIX + resource + plan.LB_SUFFIX)


def pool(resource):
    return dict(id="pool-" + resource, name=plan.PREFIX + resource + "-kubeapi-6443",
                loadbalancers=[dict(id="lb-" + resource)])


def member(mid, resource, address, machine="m"):
    return dict(id=mid, name="%s%s-kubeapi-6443-%s" % (plan.PREFIX, resource, machine), address=address,
                created_at=OLD)


def world(**overrides):
    """Cluster a alive (network, LB, two servers with ports, two members), cluster gone: its security groups and
    floating IP left."""
    lists = dict(
        servers=[server("s1"), server("s2")],
        ports=[port("p1", "s1", "compute:nova", ip="10.6.0.11", groups=["sg-a"]),
               port("p2", "s2", "compute:nova", ip="10.6.0.12", groups=["sg-a"])],
        networks=[net("a")], routers=[], security_groups=[group("sg-a", "a"), group("sg-g1", "gone", "worker"),
                                                          group("sg-g2", "gone", "controlplane")],
        floating_ips=[fip("fip-1", "gone"), fip("fip-2", "a")], loadbalancers=[lb("a")], pools=[pool("a")],
        members={"pool-a": [member("m1", "a", "10.6.0.11", "s1"), member("m2", "a", "10.6.0.12", "s2")]})
    lists.update(overrides)
    return plan.View(**lists)


def options(**kw):
    kw.setdefault("now", NOW)
    return plan.Options(**kw)


def kinds(result):
    return sorted((f["kind"], f["id"]) for f in result.findings)


def test_a_healthy_cluster_has_no_findings_but_a_gone_clusters_groups_and_address_are_leaks():
    result = plan.audit(world(), options())
    assert kinds(result) == [("floating_ips", "fip-1"), ("security_groups", "sg-g1"), ("security_groups", "sg-g2")]
    assert result.present == set(["a"])
    assert all(f["cluster"] == "gone" for f in result.findings)
    assert plan.counts(result) == dict(ports=0, members=0, security_groups=2, floating_ips=1, servers=0)
    assert plan.audit(world(), options(scope="a")).findings == []


def test_each_kind_of_leak_is_found_with_its_evidence():
    view = world(servers=[server("s1"), server("bad", "ERROR")],
                 ports=[port("p1", "s1", "compute:nova", ip="10.6.0.11"),
                        port("p2", "s2", "compute:nova", ip="10.6.0.12"),
                        port("p3"), port("p4", created=YOUNG), port("p5", network="net-other")])
    result = plan.audit(view, options())
    assert ("ports", "p2") in kinds(result) and ("ports", "p3") in kinds(result)
    assert ("ports", "p4") not in kinds(result)  # within the grace period
    assert ("ports", "p5") not in kinds(result)  # no device, but no cluster's port
    assert ("members", "m2") in kinds(result) and ("members", "m1") not in kinds(result)
    assert ("servers", "bad") in kinds(result)
    by_id = dict((f["id"], f) for f in result.findings)
    assert "device_id s2: no server of the project has this id" in by_id["p2"]["why"]
    assert "address 10.6.0.12" in by_id["m2"]["why"] and by_id["m2"]["pool_id"] == "pool-a"
    assert by_id["p2"]["age"] == 86400


def test_clusters_given_or_a_live_port_with_the_group_keep_a_cluster_present():
    result = plan.audit(world(), options(clusters=["gone"]))
    assert result.findings == []
    view = world(ports=world().ports + [port("p9", "s2", "compute:nova", groups=["sg-g1"])])
    assert ("security_groups", "sg-g1") not in kinds(plan.audit(view, options()))


def test_an_unknown_view_is_never_no_leaks_and_a_cleanup_refuses():
    view = world(members=None, unknown={"members": "HTTP 403: Policy does not allow this request"})
    result = plan.audit(view, options())
    assert result.unknown == {"members": "members: HTTP 403: Policy does not allow this request"}
    assert plan.counts(result)["members"] is None
    delete, skipped, refusal = plan.plan_cleanup(result, ["security_groups"], 5)
    assert delete == [] and "partial" in refusal and "members unknown" in refusal
    assert len(skipped) == 2
    # a load-balancer list refused makes the groups' and addresses' evidence unknown too
    result = plan.audit(world(loadbalancers=None, unknown={"loadbalancers": "HTTP 403"}), options())
    assert set(result.unknown) == set(["members", "security_groups", "floating_ips"])


def test_cleanup_never_deletes_every_object_of_a_kind_or_a_pool():
    view = world(servers=[server("s3")])  # the server list lost both servers: every member and port looks leaked
    result = plan.audit(view, options())
    delete, skipped, _refusal = plan.plan_cleanup(result, ["ports", "members"], 10)
    assert delete == []
    assert all("every one of" in s["reason"] for s in skipped) and len(skipped) == 4


def test_an_empty_server_list_deletes_no_port_of_a_server_whatever_other_ports_there_are():
    """The ports of servers are judged among themselves: a DHCP or router port beside them does not make a server
    list that came back empty look like two leaked ports out of three."""
    view = world(servers=[], ports=world().ports + [port("d1", "dhcp-a", "network:dhcp")])
    result = plan.audit(view, options())
    assert {("ports", "p1"), ("ports", "p2")} <= set(kinds(result))  # still reported
    delete, skipped, _refusal = plan.plan_cleanup(result, ["ports"], 10)
    assert delete == []
    assert sorted(s["id"] for s in skipped) == ["p1", "p2"]
    assert all("every one of the 2 ports of servers" in s["reason"] for s in skipped)


def test_cleanup_never_deletes_what_another_cluster_claims():
    other = port("p7", "gone-server", "compute:nova", network="net-a", description=plan.DESCRIPTION + "b")
    view = world(ports=world().ports + [other, port("p8", "gone-server", "compute:nova")])
    result = plan.audit(view, options())
    by_id = dict((f["id"], f) for f in result.findings)
    assert "several clusters (a, b)" in by_id["p7"]["keep"]
    delete, skipped, refusal = plan.plan_cleanup(result, ["ports"], 10)
    assert refusal is None
    assert [d["id"] for d in delete] == ["p8"] and skipped[0]["id"] == "p7"
    scoped = plan.audit(view, options(scope="a"))
    assert "also names cluster b" in dict((f["id"], f) for f in scoped.findings)["p7"]["keep"]


def test_attached_floating_ip_and_servers_are_reported_not_deleted():
    view = world(floating_ips=[fip("fip-1", "gone", port_id="px"), fip("fip-3", "gone"), fip("fip-2", "a")],
                 servers=world().servers + [server("bad", "ERROR")])
    result = plan.audit(view, options())
    delete, skipped, refusal = plan.plan_cleanup(result, ["floating_ips"], 10)
    assert refusal is None
    assert [d["id"] for d in delete] == ["fip-3"] and "attached to port px" in skipped[0]["reason"]
    assert not any(f["kind"] == "servers" for f in plan.plan_cleanup(result, list(plan.CLEANABLE), 10)[0])


def test_the_evidence_of_a_port_without_device_does_not_change_with_time():
    view = world(ports=world().ports + [port("p3")])
    later = options(now=NOW + datetime.timedelta(seconds=30))
    entry = [f for f in plan.audit(view, options()).findings if f["id"] == "p3"][0]
    assert plan.recheck(entry, plan.audit(view, later), ["ports"]) is None


def test_recheck_keeps_what_changed_since_the_audit():
    view = world(ports=world().ports + [port("p8", "gone-server", "compute:nova")])
    entry = [f for f in plan.audit(view, options()).findings if f["id"] == "p8"][0]
    assert plan.recheck(entry, plan.audit(view, options()), ["ports"]) is None
    revived = world(ports=world().ports + [port("p8", "s1", "compute:nova")])
    assert "gone or no longer a leak" in plan.recheck(entry, plan.audit(revived, options()), ["ports"])
    partial = world(ports=view.ports, networks=None, unknown={"networks": "HTTP 403"})
    assert "partial" in plan.recheck(entry, plan.audit(partial, options()), ["ports"])


def test_names_and_resources():
    assert plan.cluster_resource("default/prod") == "default-prod"
    assert plan.member_claims("k8s-clusterapi-cluster-default-prod-kubeapi-6443-prod-cp-x") == set(["default-prod"])
    assert plan.security_group_claims("k8s-cluster-default-prod-secgroup-controlplane") == set(["default-prod"])
    assert plan.network_claims("k8s-clusterapi-cluster-default-prod") == set(["default-prod"])
    assert plan.network_claims("web") == set() and plan.loadbalancer_claims("web") == set()
    assert plan.claims(dict(name="x", tags=["k8s-clusterapi-cluster-ns-c"])) == set(["ns-c"])


LEAKS = st.lists(st.tuples(st.sampled_from(["gone", "a", "b"]), st.booleans(), st.integers(0, 10 ** 6)),
                 min_size=0, max_size=12)


@settings(max_examples=300, deadline=None)
@given(LEAKS, st.integers(1, 6), st.sampled_from([None, "a", "b"]))
def test_cleanup_never_exceeds_the_cap_never_all_never_claimed(specs, cap, scope):
    ports = [port("p1", "s1", "compute:nova", ip="10.6.0.11")]
    for index, (resource, alive, seconds) in enumerate(specs):
        created = (NOW - datetime.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")
        ports.append(port("q%d" % index, "s1" if alive else "lost-%d" % index, "compute:nova", network="net-a",
                          created=created, description=plan.DESCRIPTION + resource))
    result = plan.audit(world(ports=ports), options(scope=scope))
    delete, skipped, refusal = plan.plan_cleanup(result, ["ports"], cap)
    assert refusal is None and len(delete) <= cap
    assert len(delete) < max(1, result.population.get("ports", 0))
    for entry in delete:
        assert entry["claims"] == ["a"]  # the network names a; another description is another cluster's claim
        assert entry["kind"] == "ports" and entry["keep"] is None
    ages = [d["age"] for d in delete]
    assert ages == sorted(ages, reverse=True)
    assert set(d["id"] for d in delete).isdisjoint(s["id"] for s in skipped)
