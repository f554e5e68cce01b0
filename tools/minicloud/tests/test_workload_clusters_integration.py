"""Each seeded cluster's own Kubernetes API in a real minicloud: reached through its ``NAME-kubeconfig`` Secret
(Python client and kubectl), holding the cluster's Nodes, with a token of its own; the controllers keep a
replaced Machine's Node there; faults and request counts see its paths; deleting the cluster removes it."""

from __future__ import annotations

import base64
import importlib.util
import json
import shutil
import subprocess
import sys
import time

import pytest
import yaml

REQUIRED = ("keystone", "neutron", "nova", "octavia", "octavia_lib", "openstack")
if any(importlib.util.find_spec(name) is None for name in REQUIRED):
    pytest.skip("the OpenStack packages are not installed", allow_module_level=True)

from kubernetes import client, config  # noqa: E402

from minicloud.kube.admin import rest_call  # noqa: E402
from minicloud.kube.controllers.rollout import PRE_TERMINATE_HOOK_PREFIX  # noqa: E402
from minicloud.runtime.control import MinicloudError  # noqa: E402

pytestmark = pytest.mark.integration

NAMESPACE = "fleet"
GROUP, VERSION = "cluster.x-k8s.io", "v1beta2"
HOOK = f"{PRE_TERMINATE_HOOK_PREFIX}/test"


def run(cloud, *args):
    done = subprocess.run([sys.executable, "-m", "minicloud", "--state-dir", str(cloud.state_dir), *args],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def wait_for(check, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def secret_kubeconfig(management: client.ApiClient, name: str) -> dict:
    secret = client.CoreV1Api(management).read_namespaced_secret(f"{name}-kubeconfig", NAMESPACE)
    assert secret.type == "cluster.x-k8s.io/secret"
    return yaml.safe_load(base64.b64decode(secret.data["value"]))


def node_names(api: client.ApiClient) -> set[str]:
    return {n.metadata.name for n in client.CoreV1Api(api).list_node().items}


def status_of(api: client.ApiClient, path: str) -> int:
    """The HTTP status of a GET of ``path``."""
    try:
        rest_call(api, "GET", path)
    except client.ApiException as exc:
        return exc.status
    return 200


def with_token(api: client.ApiClient, token: str) -> client.ApiClient:
    configuration = client.Configuration()
    configuration.host = api.configuration.host
    configuration.ssl_ca_cert = api.configuration.ssl_ca_cert
    configuration.api_key = {"BearerToken": f"Bearer {token}"}
    return client.ApiClient(configuration)


@pytest.fixture(scope="module")
def fleet(cloud):
    """Two seeded clusters in namespace ``fleet``: ``wl-a`` (one control-plane Machine, two workers), ``wl-b``."""
    made = {name: cloud.create_capi_cluster(name, control_plane=1, workers=workers, namespace=NAMESPACE)
            for name, workers in (("wl-a", 2), ("wl-b", 1))}
    yield made
    for name in made:
        try:
            cloud.delete_capi_cluster(name, namespace=NAMESPACE)
        except Exception:  # noqa: BLE001  (a test deleted it already)
            pass


def test_the_secret_reaches_the_clusters_own_api_where_its_nodes_live(cloud, fleet, tmp_path):
    management = cloud.kube_client()
    management_nodes = node_names(management)
    for name, created in fleet.items():
        kubeconfig = secret_kubeconfig(management, name)
        assert kubeconfig["current-context"] == f"{name}-admin@{name}"
        assert [c["name"] for c in kubeconfig["clusters"]] == [name]
        assert [u["name"] for u in kubeconfig["users"]] == [f"{name}-admin"]
        assert kubeconfig["clusters"][0]["cluster"]["server"].endswith(f"/clusters/{NAMESPACE}/{name}")
        assert kubeconfig["clusters"][0]["cluster"]["certificate-authority-data"]
        assert yaml.safe_load(cloud.workload_kubeconfig(name, NAMESPACE)) == kubeconfig

        workload = config.new_client_from_config_dict(kubeconfig)
        nodes = client.CoreV1Api(workload).list_node().items
        assert {n.metadata.name for n in nodes} == {n["name"] for n in created["nodes"]}
        # every cluster's pod CIDRs start at 10.244.0.0/24, as kube-controller-manager allocates them
        assert sorted(n.spec.pod_cidr for n in nodes) == [f"10.244.{i}.0/24" for i in range(len(nodes))]
        assert {n["podCIDR"] for n in cloud.list_nodes(cluster=name, namespace=NAMESPACE)} == \
            {n.spec.pod_cidr for n in nodes}
        assert not management_nodes & {n.metadata.name for n in nodes}
        assert {ns.metadata.name for ns in client.CoreV1Api(workload).list_namespace().items} >= {
            "default", "kube-system", "kube-public", "kube-node-lease"}

        if shutil.which("kubectl"):
            path = tmp_path / f"{name}.kubeconfig"
            path.write_text(yaml.safe_dump(kubeconfig))
            done = subprocess.run(["kubectl", "--kubeconfig", str(path), "get", "nodes", "-o", "name"],
                                  capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stderr
            assert set(done.stdout.split()) == {f"node/{n['name']}" for n in created["nodes"]}


def test_node_methods_take_the_cluster(cloud, fleet):
    made = cloud.create_node("wl-a-extra", "10.244.50.0/24", "10.6.9.50", cluster="wl-a", namespace=NAMESPACE)
    assert made["podCIDR"] == "10.244.50.0/24"
    assert "wl-a-extra" in {n["name"] for n in cloud.list_nodes(cluster="wl-a", namespace=NAMESPACE)}
    assert "wl-a-extra" not in {n["name"] for n in cloud.list_nodes(cluster="wl-b", namespace=NAMESPACE)}
    assert "wl-a-extra" not in {n["name"] for n in cloud.list_nodes()}
    with pytest.raises(MinicloudError, match="no node named 'wl-a-extra'"):
        cloud.delete_node("wl-a-extra")  # not in the management API
    cloud.delete_node("wl-a-extra", cluster="wl-a", namespace=NAMESPACE)
    assert "wl-a-extra" not in {n["name"] for n in cloud.list_nodes(cluster="wl-a", namespace=NAMESPACE)}


def test_tokens_are_not_interchangeable_and_unknown_prefixes_are_404(cloud, fleet):
    management = cloud.kube_client()
    a = config.new_client_from_config_dict(secret_kubeconfig(management, "wl-a"))
    b = config.new_client_from_config_dict(secret_kubeconfig(management, "wl-b"))
    token = {name: api.configuration.api_key["BearerToken"].split()[-1]
             for name, api in (("management", management), ("a", a), ("b", b))}
    assert len(set(token.values())) == 3
    assert status_of(a, "/api/v1/nodes") == 200 and status_of(with_token(management, token["a"]), f"/clusters/"
                                                               f"{NAMESPACE}/wl-a/api/v1/nodes") == 200
    assert status_of(with_token(a, token["management"]), "/api/v1/nodes") == 401
    assert status_of(with_token(a, token["b"]), "/api/v1/nodes") == 401
    assert status_of(with_token(management, token["a"]), "/api/v1/nodes") == 401
    assert status_of(management, "/api/v1/nodes") == 200
    # the registration endpoint takes the management token only
    assert status_of(with_token(management, token["a"]), f"/minicloud/v1/workloadclusters/{NAMESPACE}/wl-a") == 401
    with pytest.raises(client.ApiException) as caught:
        rest_call(management, "GET", f"/clusters/{NAMESPACE}/nowhere/api/v1/nodes")
    assert caught.value.status == 404
    assert json.loads(caught.value.body) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "the server could not find the requested resource", "reason": "NotFound", "details": {},
        "code": 404}


def test_faults_and_request_counts_see_the_workload_paths(cloud, fleet):
    management = cloud.kube_client()
    a = client.CoreV1Api(config.new_client_from_config_dict(secret_kubeconfig(management, "wl-a")))
    b = client.CoreV1Api(config.new_client_from_config_dict(secret_kubeconfig(management, "wl-b")))
    path_a = f"/clusters/{NAMESPACE}/wl-a/api/v1/nodes"
    cloud.request_counts(service="kubernetes", reset=True)
    cloud.add_fault("kubernetes", method="GET", path=path_a, status=503, count=1)
    try:
        with pytest.raises(client.ApiException) as caught:
            a.list_node()
        assert caught.value.status == 503
        assert b.list_node().items and a.list_node().items
    finally:
        cloud.clear_faults()
    counts = cloud.request_counts(service="kubernetes")["requests"]["kubernetes"]["GET"]
    assert counts[path_a] == 2 and counts[f"/clusters/{NAMESPACE}/wl-b/api/v1/nodes"] == 1


def test_a_replaced_machine_gets_its_node_in_the_workload_api_and_the_old_one_leaves_it(cloud, fleet):
    management = cloud.kube_client()
    capi = client.CustomObjectsApi(management)
    workload = client.CoreV1Api(config.new_client_from_config_dict(secret_kubeconfig(management, "wl-a")))

    def workers():
        return {m["metadata"]["name"]: m for m in capi.list_namespaced_custom_object(
            GROUP, VERSION, NAMESPACE, "machines", label_selector="cluster.x-k8s.io/cluster-name=wl-a,"
                                                                  "cluster.x-k8s.io/deployment-name")["items"]}

    before = workers()
    victim = sorted(before)[0]
    capi.patch_namespaced_custom_object(GROUP, VERSION, NAMESPACE, "machines", victim,
                                        {"metadata": {"annotations": {HOOK: ""}}})
    capi.delete_namespaced_custom_object(GROUP, VERSION, NAMESPACE, "machines", victim)
    # drained (cordoned in the workload API), then held by the pre-terminate hook: the Node is still there
    cordoned = wait_for(lambda: workload.read_node(victim).spec.unschedulable, 30, f"{victim} cordoned")
    assert cordoned and victim not in node_names(management)
    capi.patch_namespaced_custom_object(GROUP, VERSION, NAMESPACE, "machines", victim,
                                        {"metadata": {"annotations": {HOOK: None}}})

    def replaced():
        now = workers()
        new = [n for n in now if n not in before]
        ready = len(now) == 2 and new and now[new[0]].get("status", {}).get("nodeRef")
        return new[0] if ready else None

    new = wait_for(replaced, 30, "the MachineSet's replacement Machine Running")
    nodes = {n.metadata.name: n for n in workload.list_node().items}
    assert victim not in nodes and new in nodes
    assert nodes[new].spec.pod_cidr not in {n.spec.pod_cidr for name, n in nodes.items() if name != new}
    assert new not in node_names(management)
    provider_id = capi.get_namespaced_custom_object(GROUP, VERSION, NAMESPACE, "machines", new)["spec"]["providerID"]
    assert nodes[new].spec.provider_id == provider_id


def test_deleting_the_cluster_removes_its_api(cloud, fleet):
    kubeconfig = yaml.safe_load(cloud.workload_kubeconfig("wl-b", NAMESPACE))
    workload = config.new_client_from_config_dict(kubeconfig)
    assert status_of(workload, "/api/v1/nodes") == 200
    cloud.delete_capi_cluster("wl-b", namespace=NAMESPACE)
    assert status_of(workload, "/api/v1/nodes") == 404
    with pytest.raises(MinicloudError, match="no workload cluster API for 'wl-b'"):
        cloud.workload_kubeconfig("wl-b", NAMESPACE)
    printed = yaml.safe_load(run(cloud, "capi", "cluster", "kubeconfig", "wl-a", "--namespace", NAMESPACE))
    assert printed == secret_kubeconfig(cloud.kube_client(), "wl-a")


def test_a_moved_clusters_secret_still_reaches_its_api_and_deleting_it_on_the_target_removes_it(cloud):
    from minicloud.clusterctl.cli import Mover
    from minicloud.clusterctl.kubeapi import KubeApi

    namespace = "fleet-moving"
    created = cloud.create_capi_cluster("wl-moved", namespace=namespace)
    Mover(KubeApi(str(cloud.kubeconfig)), KubeApi(str(cloud.target_kubeconfig)), "v1.12.0",
          say=lambda _text: None).move(namespace)
    target = config.new_client_from_config(config_file=str(cloud.target_kubeconfig))
    secret = client.CoreV1Api(target).read_namespaced_secret("wl-moved-kubeconfig", namespace)
    workload = config.new_client_from_config_dict(yaml.safe_load(base64.b64decode(secret.data["value"])))
    assert node_names(workload) == {n["name"] for n in created["nodes"]}
    cloud.delete_capi_cluster("wl-moved", namespace=namespace, target=True)
    assert status_of(workload, "/api/v1/nodes") == 404
    again = cloud.create_capi_cluster("wl-moved", namespace=namespace)  # the name is free again
    assert {n["name"] for n in again["nodes"]} == {n["name"] for n in created["nodes"]}
    cloud.delete_capi_cluster("wl-moved", namespace=namespace)
