# -*- coding: utf-8 -*-
"""The collection on a management cluster running CAPO v0.15: minicloud's emulated plane with CAPO v0.15's CRDs
(``capo_api_version="v1beta2"``: v1beta2 stored and served, v1beta1 served through conversion, discovery prefers
v1beta2) and a cluster whose OpenStackCluster and OpenStackMachines CAPO wrote at v1beta2.

A guarded rollout (rollout_guard mode=capi, in a real ansible-playbook) and cluster_info find the API load
balancer and pool without ``pool`` given, the emulated controllers roll the control plane through the v1beta2
fields, the capi_clusters inventory reads the pool of a v1beta2 cluster and of a v1beta1 one beside it, and an
OpenStackCluster carrying both load-balancer fields (naming different load balancers) or neither is refused
with a message before any write."""

import copy
import uuid

import pytest

from rollouts import assert_safe_history, custom, history, machines, pool_name
from test_capi_clusters_inventory import inventory, plain

INFRA = "infrastructure.cluster.x-k8s.io"


def kube(cloud):
    return {"kubeconfig": str(cloud.state_dir / "kubeconfig")}


def osc(cloud, name, version="v1beta2"):
    return custom(cloud, "get_namespaced_custom_object", INFRA, version, "default", "openstackclusters", name)


def create(cloud, name, control_plane, capo_api_version="v1beta2"):
    return cloud.api.create_capi_cluster(name, control_plane=control_plane, openstack=True, monitor=False,
                                         capo_api_version=capo_api_version)


@pytest.fixture
def capo_v0_15(cloud):
    """The plane with CAPO v0.15's CRDs for the test; its clusters (``made``: names) deleted afterwards and the
    plane put back to v0.14's CRDs, as the other tests of the run expect it."""
    cloud.octavia("normal", delay=0.1)
    made = []
    yield made
    for name in made:
        cloud.api.delete_capi_cluster(name)
        cloud.api.delete_capi_openstack(name)
    assert cloud.api.install_capo_crds("v1beta1")["served"] == ["v1beta1"]


def test_a_guarded_rollout_on_a_v1beta2_cluster_finds_its_pool_and_rolls_through_the_v1beta2_fields(
        cloud, playbooks, capo_v0_15):
    name = "v2-%s" % uuid.uuid4().hex[:6]
    capo_v0_15.append(name)
    create(cloud, name, 3)
    assert cloud.api.capo_crds() == {"apiVersion": "v1beta2", "release": "v0.15", "served": ["v1beta1", "v1beta2"],
                                     "storage": "v1beta2"}
    stored = osc(cloud, name)
    assert stored["status"]["apiServerManagedLoadBalancer"]["name"] + "-6443" == pool_name(name)
    assert "apiServerLoadBalancer" not in stored["status"] and "apiServerLoadBalancer" not in stored["spec"]
    old = sorted(m["metadata"]["name"] for m in machines(cloud, name))
    run = playbooks.module("flightcontrol.openstack.rollout_guard", dict(
        cloud="minicloud", mode="capi", cluster=name, kubernetes=kube(cloud), start=True, poll_interval=1,
        member_timeout=300, timeout=900))
    assert run.rc == 0, run.output
    assert run.result["pool"]["name"] == pool_name(name) and run.result["changed"] is True, run.result
    new = sorted(m["metadata"]["name"] for m in machines(cloud, name))
    assert len(new) == 3 and not set(new) & set(old), (old, new)
    assert_safe_history(history(cloud, name), 2, pool_name(name))
    # the machines the emulated KCP and CAPO made are CAPO v0.15's: kept at v1beta2, served at both
    for machine in new:
        at_v1beta2 = custom(cloud, "get_namespaced_custom_object", INFRA, "v1beta2", "default", "openstackmachines",
                            machine)
        assert at_v1beta2["spec"]["flavor"] == {"filter": {"name": "m1.medium"}}, at_v1beta2["spec"]
        assert at_v1beta2["status"]["initialization"] == {"provisioned": True} and \
            "ready" not in at_v1beta2["status"], at_v1beta2["status"]
        at_v1beta1 = custom(cloud, "get_namespaced_custom_object", INFRA, "v1beta1", "default", "openstackmachines",
                            machine)
        assert at_v1beta1["spec"]["flavor"] == "m1.medium" and at_v1beta1["status"]["ready"] is True


def test_cluster_info_and_the_inventory_read_a_v1beta2_cluster_and_a_v1beta1_one_beside_it(
        cloud, run_module, collections_path, tmp_path, capo_v0_15):
    suffix = uuid.uuid4().hex[:6]
    new, old = "v2-%s" % suffix, "v1-%s" % suffix
    capo_v0_15.extend([new, old])
    create(cloud, new, 1)
    create(cloud, old, 1, capo_api_version="v1beta1")  # kept at v1beta1 on the upgraded plane: today's shapes
    assert "apiServerLoadBalancer" in osc(cloud, old, "v1beta1")["status"]
    for name in (new, old):
        run = run_module("flightcontrol.openstack.cluster_info", dict(kube(cloud), name=name))
        assert run.rc == 0, run.output
        infra = run.result["infrastructure"]
        assert infra["api_version"] == "%s/v1beta2" % INFRA, infra  # discovery's preferred version, both
        assert infra["api_server_pool"] == pool_name(name) and infra["api_server_load_balancer_error"] is None
        assert infra["api_server_load_balancer"]["id"] == osc(cloud, name)["status"][
            "apiServerManagedLoadBalancer"]["id"]
    rc, data, stderr = inventory(cloud, collections_path, tmp_path, namespaces=["default"])
    assert rc == 0, stderr
    hostvars = plain(data["_meta"]["hostvars"])
    for name in (new, old):
        variables = hostvars["default/%s" % name]
        assert variables["capi_api_pool"] == pool_name(name), variables
        assert variables["capi_api_load_balancer"]["name"] + "-6443" == pool_name(name)
        assert variables["capi_api_load_balancer_error"] is None


@pytest.fixture
def refused_shape(cloud, capo_v0_15):
    """A one-node v1beta2 cluster whose OpenStackCluster's status the test reshapes (at v1beta2, where an extra
    v1beta1 field is kept as sent: the emulated CRD has no schema for v1beta2); put back afterwards."""
    name = "bad-%s" % uuid.uuid4().hex[:6]
    capo_v0_15.append(name)
    create(cloud, name, 1)
    lb = copy.deepcopy(osc(cloud, name)["status"]["apiServerManagedLoadBalancer"])

    def reshape(status):
        custom(cloud, "patch_namespaced_custom_object_status", INFRA, "v1beta2", "default", "openstackclusters",
               name, {"status": status})

    yield name, lb, reshape
    reshape({"apiServerLoadBalancer": None, "apiServerManagedLoadBalancer": lb})


def guard_and_info(cloud, run_module, name):
    """(rollout_guard's run with start=True, cluster_info's run), and whether they left it untouched: no write
    request to any service, the same control-plane Machines."""
    before = sorted(m["metadata"]["name"] for m in machines(cloud, name))
    cloud.requests(reset=True)
    guard = run_module("flightcontrol.openstack.rollout_guard", dict(
        cloud="minicloud", mode="capi", cluster=name, kubernetes=kube(cloud), start=True, timeout=60,
        poll_interval=0.5))
    info = run_module("flightcontrol.openstack.cluster_info", dict(kube(cloud), name=name))
    writes = cloud.write_count()
    return guard, info, writes == 0 and sorted(m["metadata"]["name"] for m in machines(cloud, name)) == before


def test_both_load_balancer_fields_naming_different_load_balancers_are_refused_before_any_write(
        cloud, run_module, refused_shape):
    name, lb, reshape = refused_shape
    reshape({"apiServerLoadBalancer": dict(lb, id="another-load-balancer")})
    guard, info, untouched = guard_and_info(cloud, run_module, name)
    assert guard.rc != 0 and untouched, guard.output
    message = guard.result["msg"]
    assert "carries both status.apiServerManagedLoadBalancer" in message and "status.apiServerLoadBalancer" in \
        message and "another-load-balancer" in message and "give pool and loadbalancer" in message, message
    assert info.rc == 0, info.output
    infra = info.result["infrastructure"]
    assert infra["api_server_pool"] is None and "carries both" in infra["api_server_load_balancer_error"]


def test_neither_load_balancer_field_is_refused_before_any_write(cloud, run_module, refused_shape):
    name, _lb, reshape = refused_shape
    reshape({"apiServerManagedLoadBalancer": None})
    guard, info, untouched = guard_and_info(cloud, run_module, name)
    assert guard.rc != 0 and untouched, guard.output
    message = guard.result["msg"]
    assert "reports no API load balancer (status.apiServerManagedLoadBalancer in CAPO's v1beta2 API, " \
        "status.apiServerLoadBalancer in v1beta1); give pool" in message, message
    assert info.rc == 0, info.output
    infra = info.result["infrastructure"]
    assert infra["api_server_load_balancer"] is None and infra["api_server_pool"] is None, infra
