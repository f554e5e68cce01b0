# -*- coding: utf-8 -*-
"""Which cluster an object of the project belongs to, read from CAPO's names kind by kind: cluster names that
contain or end in CAPO's own suffixes, names that are prefixes of each other, namespaces with dashes."""

import datetime

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ansible_collections.flightcontrol.openstack.plugins.module_utils.resource_leak_audit import plan

NOW = datetime.datetime(2026, 5, 1, 12, 0, 0, tzinfo=plan.UTC)
OLD = "2026-04-30T12:00:00Z"
#: what CAPO appends to a cluster's resource name, and more words of its names
SUFFIXES = ["", "-kubeapi", "-kubeapi-6443", "-6443", "-secgroup-worker", "-secgroup-controlplane",
            "-secgroup-bastion", "-secgroup", "-bastion", "-cluster", "-k8s-clusterapi-cluster"]
ROLES = ("controlplane", "worker", "bastion")


def objects_of(resource, live):
    """What CAPO leaves in the project for the cluster ``resource``: its network, router and API load balancer
    while it lives; its groups (the control-plane group on a live server's port while it lives, the worker and
    bastion groups on no port) and an unattached floating IP either way."""
    lists = dict(networks=[], routers=[], loadbalancers=[], servers=[], ports=[], pools=[], members={},
                 security_groups=[], floating_ips=[])
    groups = [dict(id="sg-%s-%s" % (role, resource), name="k8s-cluster-%s-secgroup-%s" % (resource, role),
                   description="", tags=[], created_at=OLD) for role in ROLES]
    lists["security_groups"] = groups
    lists["floating_ips"] = [dict(id="fip-" + resource, floating_ip_address="203.0.113.9", port_id=None, tags=[],
                                  description=plan.DESCRIPTION + resource, created_at=OLD)]
    if live:
        lists["networks"] = [dict(id="net-" + resource, name=plan.PREFIX + resource, tags=[])]
        lists["routers"] = [dict(id="rt-" + resource, name=plan.PREFIX + resource)]
        lists["loadbalancers"] = [dict(id="lb-" + resource, name=plan.PREFIX + resource + "-kubeapi")]
        lists["servers"] = [dict(id="srv-" + resource, name=resource + "-cp-0", status="ACTIVE", created=OLD)]
        lists["ports"] = [dict(id="port-" + resource, name=resource + "-cp-0-0", tags=[], device_id="srv-" + resource,
                               device_owner="compute:nova", network_id="net-" + resource, created_at=OLD,
                               description=plan.DESCRIPTION + resource, security_groups=[groups[0]["id"]],
                               fixed_ips=[dict(ip_address="10.6.0.10")])]
    return lists


def view_of(*clusters):
    """A View of the clusters (resource name, alive)."""
    merged = {}
    for resource, live in clusters:
        for key, value in objects_of(resource, live).items():
            if isinstance(value, dict):
                merged.setdefault(key, {}).update(value)
            else:
                merged.setdefault(key, []).extend(value)
    return plan.View(**merged)


def ids_of(resource):
    return set(["sg-%s-%s" % (role, resource) for role in ROLES] + ["fip-" + resource])


def test_the_reported_case_a_live_cluster_named_like_a_load_balancer_is_present_and_nothing_of_it_leaks():
    view = view_of(("default-pk-kubeapi", True), ("default-gone1", False))
    result = plan.audit(view, plan.Options(now=NOW))
    assert result.present == set(["default-pk-kubeapi"])
    found = set(f["id"] for f in result.findings)
    assert found == ids_of("default-gone1"), result.findings
    delete, _skipped, refusal = plan.plan_cleanup(result, ["security_groups", "floating_ips"], 5)
    assert refusal is None and not set(d["id"] for d in delete) & ids_of("default-pk-kubeapi")
    scoped = plan.audit(view, plan.Options(now=NOW, scope="default-pk-kubeapi"))
    assert scoped.findings == [] and scoped.present == set(["default-pk-kubeapi"])


def test_each_kind_is_read_with_its_own_name_pattern():
    resource = "default-pk-kubeapi"
    assert plan.network_claims(plan.PREFIX + resource) == set([resource])
    assert plan.loadbalancer_claims(plan.PREFIX + resource) == set(["default-pk"])
    assert plan.loadbalancer_claims(plan.PREFIX + resource + "-kubeapi") == set([resource])
    assert plan.loadbalancer_claims(plan.PREFIX + "-kubeapi") == set()
    assert plan.security_group_claims("k8s-cluster-%s-secgroup-worker" % resource) == set([resource])
    assert plan.security_group_claims("k8s-cluster-a-secgroup-other") == set()  # no role CAPO makes
    assert plan.pool_claims(plan.PREFIX + resource + "-kubeapi-6443") == set([resource])
    assert plan.member_claims(plan.PREFIX + "a-kubeapi-6443-b-kubeapi-6443-m") == set(["a", "a-kubeapi-6443-b"])
    assert plan.description_claims(plan.DESCRIPTION + resource) == set([resource])
    assert plan.description_claims("Created by cluster-api-provider-openstack OpenStackFloatingIPPool p") == set()
    assert plan.tag_claims(["k8s-clusterapi-cluster-ns-c", "other"]) == set(["ns-c"])
    # a server's or port's name is no evidence: CAPO names them after the machine
    assert plan.claims(dict(name=plan.PREFIX + "x-kubeapi", tags=[])) == set()


def test_a_member_named_for_two_readings_belongs_to_its_pools_cluster():
    view = view_of(("a", True))
    view.pools = [dict(id="pool-a", name=plan.PREFIX + "a-kubeapi-6443", loadbalancers=[dict(id="lb-a")])]
    view.members = {"pool-a": [dict(id="m1", name=plan.PREFIX + "a-kubeapi-6443-b-kubeapi-6443-m",
                                    address="10.6.0.99", created_at=OLD)]}
    entry = [f for f in plan.audit(view, plan.Options(now=NOW)).findings if f["id"] == "m1"][0]
    assert entry["cluster"] == "a" and entry["keep"] is None and entry["claims"] == ["a"]


LABEL = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,8}[a-z0-9])?", fullmatch=True)


@settings(max_examples=400, deadline=None)
@given(LABEL, LABEL, st.sampled_from(SUFFIXES), st.sampled_from(SUFFIXES), st.booleans(), st.booleans())
def test_a_live_cluster_is_never_taken_for_a_gone_one(namespace, name, live_suffix, gone_suffix, swap, scoped):
    """Two clusters whose resource names are prefixes of each other (one ends in a suffix of CAPO's), in a
    namespace that may hold dashes: the live one is present and none of its objects is a finding; every object of
    the gone one is a finding of the gone one."""
    live, gone = "%s-%s%s" % (namespace, name, live_suffix), "%s-%s%s" % (namespace, name, gone_suffix)
    if swap:
        live, gone = gone, live
    assume(live != gone)
    view = view_of((live, True), (gone, False))
    result = plan.audit(view, plan.Options(now=NOW, scope=live if scoped else None))
    assert result.present == set([live])
    assert not set(f["id"] for f in result.findings) & ids_of(live), result.findings
    if not scoped:
        assert set(f["id"] for f in result.findings) == ids_of(gone)
        assert all(f["cluster"] == gone and f["keep"] is None for f in result.findings)
    delete, _skipped, _refusal = plan.plan_cleanup(result, list(plan.CLEANABLE), 100)
    assert not set(d["id"] for d in delete) & ids_of(live)


@settings(max_examples=300, deadline=None)
@given(LABEL, LABEL, st.sampled_from(SUFFIXES), st.sampled_from(ROLES))
def test_every_name_capo_makes_reads_back_as_its_cluster(namespace, name, suffix, role):
    resource = "%s-%s%s" % (namespace, name, suffix)
    assert plan.network_claims(plan.PREFIX + resource) == set([resource])
    assert plan.loadbalancer_claims(plan.PREFIX + resource + "-kubeapi") == set([resource])
    assert plan.pool_claims(plan.PREFIX + resource + "-kubeapi-6443") == set([resource])
    assert resource in plan.member_claims(plan.PREFIX + resource + "-kubeapi-6443-" + name + suffix + "-0")
    assert plan.security_group_claims("k8s-cluster-%s-secgroup-%s" % (resource, role)) == set([resource])
    assert plan.description_claims(plan.DESCRIPTION + resource) == set([resource])
