"""The workload clusters' APIs in process (:mod:`minicloud.kube.workloads`): registration through the internal
endpoint, dispatch by path prefix to each cluster's own store, 401/404/409 answers, and where the controllers put
a Machine's Node."""

from __future__ import annotations

import threading

import pytest
import yaml
from kubernetes import client, config

from minicloud.kube import seed
from minicloud.kube.admin import KubeAdmin, rest_call
from minicloud.kube.controllers import machines
from minicloud.kube.resources import by_kind
from minicloud.kube.workloads import ENDPOINT

NODE = by_kind("Node")


@pytest.fixture(scope="module")
def admin(server):
    return KubeAdmin(server.kubeconfig)


def status(api: client.ApiClient, method: str, path: str) -> int:
    try:
        rest_call(api, method, path)
    except client.ApiException as exc:
        return exc.status
    return 200


def at_root(api: client.ApiClient, url: str) -> client.ApiClient:
    """The same credentials, against the server's root instead of a workload prefix."""
    configuration = client.Configuration()
    configuration.host, configuration.ssl_ca_cert = url, api.configuration.ssl_ca_cert
    configuration.api_key = dict(api.configuration.api_key)
    return client.ApiClient(configuration)


def test_the_endpoint_creates_an_api_with_its_own_store_and_token(server, admin):
    answer = admin.call("POST", f"{ENDPOINT}/ns1/one")
    kubeconfig = yaml.safe_load(answer["kubeconfig"])
    assert answer["server"] == f"{server.url}/clusters/ns1/one"
    assert kubeconfig["current-context"] == "one-admin@one"
    one = config.new_client_from_config_dict(kubeconfig)
    rest_call(one, "POST", "/api/v1/nodes", seed.node("n1", "10.244.0.0/24", "10.6.1.10"))
    assert [n["metadata"]["name"] for n in server.nodes("one", "ns1").list(NODE)[0]] == ["n1"]
    assert server.store.find(NODE, None, "n1") is None
    assert yaml.safe_load(admin.workload_kubeconfig("one", "ns1")) == kubeconfig

    assert status(admin.api, "POST", f"{ENDPOINT}/ns1/one") == 409
    assert status(at_root(one, server.url), "GET", "/clusters/ns1/one/api/v1/nodes") == 200
    assert status(at_root(one, server.url), "POST", f"{ENDPOINT}/ns1/two") == 401  # a workload token cannot register
    assert status(at_root(one, server.url), "GET", "/api/v1/namespaces") == 401  # nor read the management API
    assert status(admin.api, "GET", "/clusters/ns1/one/api/v1/nodes") == 401
    assert status(admin.api, "GET", "/clusters/ns1/nowhere/api/v1/nodes") == 404
    assert status(admin.api, "GET", "/clusters/ns1") == 404
    assert admin.remove_workload_api("one", "ns1") is True
    assert admin.remove_workload_api("one", "ns1") is False
    assert status(one, "GET", "/api/v1/nodes") == 404


def test_registration_is_safe_from_many_threads(server, admin):
    results: list[int] = []

    def register():
        results.append(status(KubeAdmin(server.kubeconfig).api, "POST", f"{ENDPOINT}/race/same"))

    threads = [threading.Thread(target=register) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [200] + [409] * 7  # exactly one created it (rest_call's 2xx is 200 here)
    admin.remove_workload_api("same", "race")


def test_a_machines_node_store_is_its_clusters_own_or_the_management_one(server, admin):
    admin.call("POST", f"{ENDPOINT}/ns2/has-api")
    machine = {"metadata": {"namespace": "ns2", "name": "m", "labels": {"cluster.x-k8s.io/cluster-name": "has-api"}}}
    assert machines.node_store(server.store, server.workloads, machine) is server.nodes("has-api", "ns2")
    other = {"metadata": {"namespace": "ns2", "name": "m", "labels": {"cluster.x-k8s.io/cluster-name": "none"}}}
    assert machines.node_store(server.store, server.workloads, other) is server.store
    assert machines.node_store(server.store, None, machine) is server.store
    before = server.workloads.revision()
    server.nodes("has-api", "ns2").create(NODE, seed.node("x", "10.244.0.0/24", "10.6.1.10"))
    assert server.workloads.revision() != before  # a change in a workload API wakes the controllers
    admin.remove_workload_api("has-api", "ns2")
