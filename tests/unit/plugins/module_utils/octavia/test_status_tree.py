# -*- coding: utf-8 -*-

import pytest

from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.status_tree import (
    pool_in_tree,
    status_path,
    TreeLacks,
)

POOL = "5a0c1f4e-5d1b-4a51-9c3e-0b0b6c1e2f10"


def member(name, address, port=6443, provisioning="ACTIVE", operating="NO_MONITOR"):
    return {"id": "id-" + (name or address), "name": name, "address": address, "protocol_port": port,
            "provisioning_status": provisioning, "operating_status": operating}


def tree(*listeners):
    """An answer in the shape Octavia gives (octavia.api.v2.types.load_balancer.StatusRootResponse)."""
    return {"statuses": {"loadbalancer": {
        "id": "lb-1", "name": "kubeapi", "provisioning_status": "PENDING_UPDATE", "operating_status": "ONLINE",
        "listeners": [{"id": "l-%d" % i, "name": "", "provisioning_status": "ACTIVE", "operating_status": "ONLINE",
                       "pools": pools} for i, pools in enumerate(listeners)]}}}


def pool(pool_id, members):
    return {"id": pool_id, "name": "kubeapi-6443", "provisioning_status": "ACTIVE", "operating_status": "ONLINE",
            "members": members}


def test_the_pool_under_its_listener_gives_members_and_the_load_balancer():
    answer = tree([pool("other", [member("x", "10.0.0.9")])],
                  [pool(POOL, [member("a", "10.0.0.1"), member("", "10.0.0.2", provisioning="PENDING_CREATE")])])
    loadbalancer, members = pool_in_tree(answer, POOL)
    assert loadbalancer == {"id": "lb-1", "name": "kubeapi", "provisioning_status": "PENDING_UPDATE",
                            "operating_status": "ONLINE"}
    assert [(m["name"], m["address"], m["provisioning_status"]) for m in members] == [
        ("a", "10.0.0.1", "ACTIVE"), (None, "10.0.0.2", "PENDING_CREATE")]  # unnamed: None, as in the list


def test_a_pool_shared_by_two_listeners_is_read_once():
    shared = pool(POOL, [member("a", "10.0.0.1")])
    assert len(pool_in_tree(tree([shared], [shared]), POOL)[1]) == 1


def test_an_empty_pool_has_no_members():
    assert pool_in_tree(tree([pool(POOL, [])]), POOL)[1] == []


@pytest.mark.parametrize("answer, reason", [
    (tree([pool("other", [])]), "on no listener"),
    (tree(), "on no listener"),
    ({"statuses": {}}, "no load balancer"),
    ({}, "no load balancer"),
    (tree([pool(POOL, [dict(member("a", "10.0.0.1"), address=None)])]), "no address for member id-a"),
    (tree([pool(POOL, [{"id": "m", "name": "b", "operating_status": "ONLINE"}])]),
     "no address, protocol_port, provisioning_status for member m"),
])
def test_what_the_tree_lacks_is_said(answer, reason):
    with pytest.raises(TreeLacks, match=reason):
        pool_in_tree(answer, POOL)


def test_status_path_is_relative_to_the_v2_endpoint():
    assert status_path("lb-1") == "/lbaas/loadbalancers/lb-1/status"
