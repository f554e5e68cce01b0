# -*- coding: utf-8 -*-

import pytest

kubernetes = pytest.importorskip("kubernetes")
urllib3 = pytest.importorskip("urllib3")

from kubernetes.client.exceptions import ApiException  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import UnreachableError  # noqa: E402
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.client import (  # noqa: E402
    auth_settings,
    build_configuration,
    credential_source,
    describe_fault,
    KubernetesClient,
    status_message,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import (  # noqa: E402
    Deadline,
    LAST_REQUEST_SECONDS,
)


class FakeResponse:
    def __init__(self, status, headers=None, body=b""):
        self.status = status
        self.reason = "reason"
        self.headers = headers or {}
        self.data = body


def test_options_win_over_environment_and_environment_fills_gaps():
    env = {"K8S_AUTH_KUBECONFIG": "/env/kubeconfig", "K8S_AUTH_CONTEXT": "env-ctx", "K8S_AUTH_VERIFY_SSL": "no",
           "K8S_AUTH_SSL_CA_CERT": "/env/ca.pem"}
    settings = auth_settings({"context": "mine"}, env)
    assert settings == {"kubeconfig": "/env/kubeconfig", "context": "mine", "validate_certs": False,
                        "ca_cert": "/env/ca.pem"}
    assert auth_settings({}, {"K8S_AUTH_VALIDATE_CERTS": "true"})["validate_certs"] is True


def test_credential_source_follows_kubernetes_core():
    assert credential_source({"host": "https://k", "api_key": "t"}) == "options"
    assert credential_source({"host": "https://k", "username": "u", "password": "p"}) == "options"
    assert credential_source({"host": "https://k"}) == "default"
    assert credential_source({"context": "c"}) == "kubeconfig"
    assert credential_source({"kubeconfig": {"apiVersion": "v1"}}) == "kubeconfig"


def test_configuration_from_options_switches_off_urllib3_retries():
    configuration = build_configuration({"host": "https://k8s.example:6443/", "api_key": "token",
                                         "validate_certs": False})
    assert configuration.host == "https://k8s.example:6443"
    assert configuration.api_key == {"authorization": "Bearer token"}
    assert configuration.verify_ssl is False
    assert configuration.retries is False


class StoppedClock:
    def __init__(self, now=100.0):
        self.now = now

    def monotonic(self):
        return self.now


def test_request_timeout_is_api_timeout_cut_to_the_deadline():
    settings = {"host": "https://k8s.example:6443", "api_key": "token"}
    clock = StoppedClock()
    assert KubernetesClient(settings, clock=clock).guard.timeout() == 30
    client = KubernetesClient(settings, clock=clock, request_timeout=5)
    assert client.guard.timeout() == 5
    with client.guard.bound(Deadline.after(clock, 3)):
        assert client.guard.timeout() == 3
    with client.guard.bound(Deadline.after(clock, -1)):  # past: the last request still gets a moment
        assert client.guard.timeout() == LAST_REQUEST_SECONDS


def test_missing_kubeconfig_file_is_a_config_error(tmp_path):
    with pytest.raises(kubernetes.config.ConfigException, match="does not exist"):
        build_configuration({"kubeconfig": str(tmp_path / "nope")})


def test_faults_are_classified_like_the_openstack_ones():
    limited = ApiException(http_resp=FakeResponse(429, {"Retry-After": "3"}))
    fault = describe_fault(limited)
    assert fault.status == 429 and fault.retry_after == 3.0
    assert describe_fault(ApiException(http_resp=FakeResponse(404))).status == 404
    dropped = urllib3.exceptions.ProtocolError("Connection aborted.", ConnectionResetError())
    assert describe_fault(dropped).connection_error is True
    assert describe_fault(urllib3.exceptions.SSLError("bad cert")) is None
    assert describe_fault(ValueError("x")) is None
    assert issubclass(UnreachableError, Exception)


def test_status_message_reads_the_kubernetes_status_body():
    body = b'{"kind":"Status","status":"Failure","message":"clusters.cluster.x-k8s.io \\"x\\" not found","code":404}'
    assert status_message(ApiException(http_resp=FakeResponse(404, body=body))) == \
        'clusters.cluster.x-k8s.io "x" not found'


def test_node_record_takes_pod_cidrs_and_internal_ips_only():
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.nodes import node_record
    node = {"metadata": {"name": "n1"},
            "spec": {"podCIDR": "198.19.1.0/24", "podCIDRs": ["198.19.1.0/24", "fd00:1::/64"],
                     "providerID": "openstack:///0b1c"},
            "status": {"addresses": [{"type": "Hostname", "address": "n1"}, {"type": "InternalIP", "address": "10.0.0.5"},
                                     {"type": "ExternalIP", "address": "203.0.113.5"},
                                     {"type": "InternalIP", "address": "fd00::5"}]}}
    assert node_record(node) == {"name": "n1", "pod_cidrs": ["198.19.1.0/24", "fd00:1::/64"],
                                 "address": ["10.0.0.5", "fd00::5"], "provider_id": "openstack:///0b1c",
                                 "route_created": False}
    old = {"metadata": {"name": "n2"}, "spec": {"podCIDR": "198.19.2.0/24"}, "status": {}}
    assert node_record(old) == {"name": "n2", "pod_cidrs": ["198.19.2.0/24"], "address": [], "provider_id": None,
                                "route_created": False}
    routed = dict(old, status={"conditions": [{"type": "NetworkUnavailable", "status": "False",
                                               "reason": "RouteCreated"}]})
    assert node_record(routed)["route_created"] is True
    assert node_record({"metadata": {"name": "n3"}})["pod_cidrs"] == []
