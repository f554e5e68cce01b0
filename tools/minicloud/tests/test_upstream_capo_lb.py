"""CAPO's load-balancer part on the upstream plane (minicloud.upstream.capo_lb): a pass says whether it found work
under way, which sets how soon the next pass comes. Pure: the API answers from lists, no process runs."""

import json
import urllib.error

from minicloud.kube.controllers import history
from minicloud.upstream import capo_lb

OPENSTACK = {"lb_id": "lb", "pool_id": "pool", "network": "net", "subnet_id": "subnet"}
LABELS = {capo_lb.CLUSTER_LABEL: "c1", capo_lb.CONTROL_PLANE_LABEL: ""}


class _Api:
    def __init__(self, machines, devmachines, replicas=1):
        self.lists = {
            f"{capo_lb.CAPI}/clusters": [{"metadata": {"namespace": "ns", "name": "c1", "annotations": {
                capo_lb.ANNOTATION: json.dumps(OPENSTACK)}}}],
            f"{capo_lb.CAPI}/machines?labelSelector={capo_lb.CONTROL_PLANE_LABEL}": machines,
            f"{capo_lb.INFRA}/devmachines": devmachines,
            f"{capo_lb.CONTROL_PLANE}/kubeadmcontrolplanes": [{"metadata": {"namespace": "ns", "name": "c1-cp",
                                                                            "labels": LABELS, "generation": 2},
                                                               "spec": {"replicas": replicas}}]}
        self.writes = []

    def __call__(self, method, path, body=None, content_type=None):
        if method != "GET":  # somebody else wrote the object meanwhile: the pass ends, the next reads it again
            self.writes.append((method, path))
            raise urllib.error.HTTPError(path, 409, "Conflict", None, None)
        return {"items": self.lists[path]}


class _OpenStack:
    def lb_status(self, lb_id):
        return "ACTIVE"

    def members(self, pool_id):
        return []


def _machine(name, up_to_date=True):
    return {"metadata": {"namespace": "ns", "name": name, "labels": LABELS},
            "spec": {"infrastructureRef": {"name": name}},
            "status": {"conditions": [{"type": "UpToDate", "status": "True" if up_to_date else "False"}]}}


def _devmachine(name, uid, **metadata):
    return {"metadata": {"namespace": "ns", "name": name, "uid": uid, "resourceVersion": "1",
                         "labels": {capo_lb.CLUSTER_LABEL: "c1"}, **metadata}}


def test_a_pass_over_clusters_at_rest_finds_no_work_and_writes_nothing(tmp_path):
    api = _Api([_machine("m1")], [_devmachine("m1", "u1", finalizers=[capo_lb.FINALIZER])])
    controller = capo_lb.CapoLoadBalancer(api, _OpenStack, tmp_path)
    controller.done.add("u1")
    assert controller.tick() is False
    assert api.writes == [] and not list(tmp_path.rglob("*"))


def test_a_new_machine_a_deletion_or_a_rollout_is_work_under_way(tmp_path):
    new = _Api([_machine("m1")], [_devmachine("m1", "u1")])
    assert capo_lb.CapoLoadBalancer(new, _OpenStack, tmp_path).tick() is True
    assert new.writes == [("PATCH", f"{capo_lb.INFRA}/namespaces/ns/devmachines/m1")], "its finalizer first"

    rolling = _Api([_machine("m1", up_to_date=False)], [_devmachine("m1", "u1")])
    controller = capo_lb.CapoLoadBalancer(rolling, _OpenStack, tmp_path)
    controller.done.add("u1")
    assert controller.tick() is True
    assert history.history_file(tmp_path, "ns", "c1").exists(), "the rollout is sampled"

    released = _Api([], [_devmachine("m1", "u1", finalizers=["other"], deletionTimestamp="now")], replicas=0)
    assert capo_lb.CapoLoadBalancer(released, _OpenStack, tmp_path / "r").tick() is False, "not ours to release"
