# -*- coding: utf-8 -*-

import sys
import types

import pytest
import requests
from keystoneauth1 import exceptions as ksa_exceptions
from openstack import exceptions as sdk_exceptions

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import (
    Deadline,
    LAST_REQUEST_SECONDS,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.request_guard import RequestGuard
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.secrets import secret_values
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack import connection as osc
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack import http, sdk
from ansible_collections.flightcontrol.openstack.tests.unit.plugins.module_utils.fakes import FakeClock


def http_response(status, headers=None):
    response = requests.Response()
    response.status_code = status
    response.headers.update(headers or {})
    response.url = "http://127.0.0.1:9876/v2.0/lbaas/pools/x/members"
    return response


def test_describe_fault_reads_status_and_retry_after_from_sdk_errors():
    fault = http.describe_fault(sdk_exceptions.HttpException(response=http_response(429, {"Retry-After": "3"})))
    assert (fault.status, fault.retry_after, fault.connection_error) == (429, 3.0, False)
    assert "HTTP 429" in fault.description and "Retry-After 3.0" in fault.description
    fault = http.describe_fault(sdk_exceptions.NotFoundException(response=http_response(404)))
    assert fault.status == 404 and fault.retry_after is None


def test_describe_fault_for_keystoneauth_and_connection_errors():
    fault = http.describe_fault(ksa_exceptions.ServiceUnavailable(http_status=503))
    assert fault.status == 503
    assert http.describe_fault(ksa_exceptions.ConnectFailure("refused")).connection_error
    assert http.describe_fault(requests.exceptions.ConnectionError("reset")).connection_error
    assert http.describe_fault(ksa_exceptions.SSLError("bad cert")) is None, "TLS errors are not transient"
    assert http.describe_fault(KeyError("x")) is None


def test_request_guard_caps_timeouts_at_the_deadline_and_counts():
    clock = FakeClock(start=100.0)
    guard = RequestGuard(30)
    sent = []

    class Adapter:
        def send(self, request, **kwargs):
            sent.append(kwargs.get("timeout"))
            return "response"

    session = requests.Session()
    adapter = Adapter()
    session.adapters = {"http://": adapter, "https://": adapter}
    osc.guard_session(guard, session)
    request = requests.Request("GET", "http://x").prepare()
    assert adapter.send(request, timeout=30) == "response"
    with guard.bound(Deadline.after(clock, 10)):
        adapter.send(request, timeout=30)
        adapter.send(request, timeout=None)
        adapter.send(request, timeout=(5, 60))
        clock.now = 120.0  # past the deadline: the last request still gets a moment
        adapter.send(request, timeout=30)
    assert sent == [30, 10.0, 10.0, (5, 10.0), LAST_REQUEST_SECONDS]
    assert guard.total == 5


def test_cloud_dict_conflicts_and_secrets():
    params = dict(cloud={"auth": {"auth_url": "https://keystone", "password": "s3cret",
                                  "application_credential_secret": "acs"}, "region_name": "r1"},
                  auth=None, auth_type=None, region_name=None, validate_certs=None, ca_cert=None,
                  client_cert=None, client_key=None, api_timeout=None)
    assert osc.cloud_dict_problem(params) is None
    assert secret_values(params["cloud"]) == {"s3cret", "acs"}
    clash = dict(params, region_name="r2", auth={"password": "x"})
    problem = osc.cloud_dict_problem(clash)
    assert "auth, region_name would be ignored" in problem
    assert osc.cloud_dict_problem(dict(clash, cloud="production")) is None
    assert secret_values("production") == set()


@pytest.mark.parametrize("installed,problem", [("4.22.0", False), ("1.0.0", False), ("0.61.0", True)])
def test_sdk_version_floor(monkeypatch, installed, problem):
    monkeypatch.setattr(sdk, "sdk_version", lambda: installed)
    assert bool(sdk.sdk_version_error()) is problem


def test_a_module_run_reads_the_entry_point_cache_of_the_path_without_its_payload(monkeypatch, tmp_path):
    stevedore_cache = pytest.importorskip("stevedore._cache")
    from keystoneauth1 import loading

    with monkeypatch.context() as made:
        # stevedore writes no cache file when the Python it runs is under /tmp (a checkout there, say): the test
        # is about the path the cache is written for, so the cache is made as for a Python anywhere else
        made.setattr(sys, "executable", "/usr/bin/python3")
        cache = stevedore_cache.Cache(cache_dir=str(tmp_path))
    monkeypatch.setattr(stevedore_cache, "_c", cache)
    site = list(sys.path)
    for run in ("x1y2", "z3w4"):
        payload = "/tmp/ansible_route_audit_payload_%s/ansible_route_audit_payload.zip" % run
        monkeypatch.setattr("sys.path", [payload] + site)
        sdk.reuse_entry_point_cache()
        assert loading.get_plugin_loader("password") is not None
    # one file, for the path without the payloads: without the reuse each run's path writes its own
    assert len(list(tmp_path.iterdir())) == 1


def test_a_path_without_a_payload_is_left_to_stevedore(monkeypatch, tmp_path):
    stevedore_cache = pytest.importorskip("stevedore._cache")
    cache = stevedore_cache.Cache(cache_dir=str(tmp_path))
    monkeypatch.setattr(stevedore_cache, "_c", cache)
    sdk.reuse_entry_point_cache()
    assert not cache._internal  # pylint: disable=protected-access


def test_interface_applies_to_a_cloud_dict_unless_the_dict_says_otherwise(monkeypatch):
    seen = []
    monkeypatch.setattr(osc, "openstack", types.SimpleNamespace(connect=lambda **kw: seen.append(kw)))
    monkeypatch.setattr(osc, "reuse_entry_point_cache", lambda: None)
    cloud = {"auth": {"auth_url": "https://keystone"}, "region_name": "r1"}
    osc.OpenStackClient._connect(dict(cloud=cloud, interface="internal"), 30.0)
    osc.OpenStackClient._connect(dict(cloud=dict(cloud, interface="admin"), interface="public"), 30.0)
    assert [kw["interface"] for kw in seen] == ["internal", "admin"]
    problem = osc.cloud_dict_problem(dict(cloud=dict(cloud, interface="admin"), interface="internal"))
    assert problem == "interface is internal but the cloud dict says interface: admin; give it in one place"
    assert osc.cloud_dict_problem(dict(cloud=dict(cloud, interface="internal"), interface="internal")) is None


def test_one_request_timeout_for_the_connection_and_the_retry_policy(monkeypatch):
    seen = []
    monkeypatch.setattr(osc, "openstack", types.SimpleNamespace(connect=lambda **kw: seen.append(kw)))
    monkeypatch.setattr(osc, "reuse_entry_point_cache", lambda: None)
    cloud = {"auth": {"auth_url": "https://keystone"}}
    cases = [(dict(cloud="named"), osc.DEFAULT_REQUEST_TIMEOUT), (dict(cloud="named", api_timeout=7), 7),
             (dict(cloud=cloud, api_timeout=7), 7), (dict(cloud=dict(cloud, api_timeout=12), api_timeout=7), 12)]
    for params, expected in cases:
        timeout = osc.request_timeout_of(params)
        osc.OpenStackClient._connect(params, timeout)
        assert timeout == float(expected) and seen[-1]["api_timeout"] == expected, params
