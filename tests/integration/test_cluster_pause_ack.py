# -*- coding: utf-8 -*-
"""cluster_pause_ack against minicloud's Kubernetes API with its CAPI core and provider controllers."""

import base64
import datetime
import time
import uuid

import pytest
import yaml
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

MODULE = "flightcontrol.openstack.cluster_pause_ack"
BLOCK_MOVE = "clusterctl.cluster.x-k8s.io/block-move"


@pytest.fixture
def capi(cloud):
    """The cloud, with the infrastructure provider back to its default after the test."""
    yield cloud
    cloud.cli("capi", "provider", "silent", "--delay", "2")


def seed(cloud, version="v1beta2", control_plane=1, workers=0):
    name = "c-%s" % uuid.uuid4().hex[:6]
    cloud.json("capi", "cluster", "create", name, "--control-plane", control_plane, "--workers", workers,
               "--api-version", version)
    return name


def args(cloud, name, **extra):
    base = {"kubeconfig": str(cloud.state_dir / "kubeconfig"), "name": name, "timeout": 60, "poll_interval": 0.5,
            "quiet_period": 2}
    base.update(extra)
    return base


def kube_object(cloud, group, version, plural, name, namespace="default"):
    """An object read with the official client, through the kubeconfig minicloud wrote."""
    api = k8s_config.new_client_from_config(config_file=str(cloud.state_dir / "kubeconfig"))
    with api:
        return k8s_client.CustomObjectsApi(api).get_namespaced_custom_object(group, version, namespace, plural, name)


def kube_settings(cloud, folder):
    """The API's address and its CA as a file, read from the kubeconfig."""
    kubeconfig = yaml.safe_load((cloud.state_dir / "kubeconfig").read_text())
    cluster = kubeconfig["clusters"][0]["cluster"]
    ca_cert = folder / "ca.crt"
    ca_cert.write_bytes(base64.b64decode(cluster["certificate-authority-data"]))
    return {"host": cluster["server"], "ca_cert": str(ca_cert)}


def by_kind(result, kind):
    return [o for o in result["objects"] if o["kind"] == kind]


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
def test_block_move_provider_pause_then_unpause(capi, run_module, version):
    name = seed(capi, version, control_plane=1, workers=1)
    capi.cli("capi", "provider", "block-move", "--delay", "3")
    run = run_module(MODULE, args(capi, name, api_version=version))
    assert run.rc == 0, run.output
    result = run.result
    assert result["changed"] is True and result["acknowledged"] is True and result["blockers"] == []
    assert result["cluster"] == dict(name=name, namespace="default", api_version="cluster.x-k8s.io/%s" % version,
                                     paused_before=False, paused=True)
    kinds = set(o["kind"] for o in result["objects"])
    assert {"Cluster", "KubeadmControlPlane", "Machine", "MachineSet", "MachineDeployment", "KubeadmConfig",
            "OpenStackCluster", "OpenStackMachine"} <= kinds
    (cluster,) = by_kind(result, "Cluster")
    where = "status.v1beta2.conditions" if version == "v1beta1" else "status.conditions"
    assert cluster["paused_condition"]["status"] == "True" and cluster["paused_condition"]["location"] == where
    assert where in cluster["how"]
    for infra in by_kind(result, "OpenStackCluster") + by_kind(result, "OpenStackMachine"):
        assert "block-move annotation was removed" in infra["how"], infra
        assert infra["block_move"] is False
    assert result["elapsed"] >= 3, "the provider holds block-move for 3 s after the pause"
    # followed by watch: one list and one watch per kind (no request per poll), the removals seen as events
    assert result["observed_with"]["method"] == "watch" and result["observed_with"]["events"] > 0
    assert result["api_calls"] <= 3 * len(kinds) + 12, result["api_calls"]

    again = run_module(MODULE, args(capi, name, api_version=version))
    assert again.rc == 0 and again.result["changed"] is False, again.output

    run = run_module(MODULE, args(capi, name, api_version=version, state="unpaused"))
    assert run.rc == 0, run.output
    assert run.result["changed"] is True and run.result["cluster"]["paused"] is False
    (cluster,) = by_kind(run.result, "Cluster")
    assert cluster["paused_condition"]["status"] == "False" and cluster["paused_condition"]["reason"] == "NotPaused"
    again = run_module(MODULE, args(capi, name, api_version=version, state="unpaused"))
    assert again.rc == 0 and again.result["changed"] is False


def test_stuck_provider_times_out_naming_the_object_and_the_annotation(capi, run_module):
    name = seed(capi)
    capi.cli("capi", "provider", "stuck")
    run = run_module(MODULE, args(capi, name, timeout=5))
    result = run.result
    assert result["failed"] is True and result["timed_out"] is True
    assert "OpenStackCluster default/%s" % name in result["msg"]
    assert BLOCK_MOVE in result["msg"]
    assert "set spec.paused=true (left as it is)" in result["msg"]
    assert result["changed"] is True and result["cluster"]["paused"] is True
    assert "OpenStackCluster default/%s" % name in result["blockers"]
    (cluster,) = by_kind(result, "Cluster")
    assert cluster["acknowledged"] is True, "CAPI core did acknowledge; only the provider is stuck"
    assert 5 <= result["elapsed"] < 30  # the timeout, plus at most one slow poll
    assert "Traceback" not in run.output


def test_silent_provider_is_waited_for_until_its_writes_have_stopped_for_the_quiet_period(capi, run_module):
    name = seed(capi)
    capi.cli("capi", "provider", "silent", "--delay", "4")
    run = run_module(MODULE, args(capi, name, quiet_period=3, scope="cluster"))
    finished = datetime.datetime.now(datetime.timezone.utc)
    assert run.rc == 0, run.output
    (infra,) = by_kind(run.result, "OpenStackCluster")
    assert "no writes for" in infra["how"]
    # The provider writes for 4 s after it sees the pause; the ack needs 3 quiet seconds after that.
    assert run.result["elapsed"] >= 4 + 3 - 1, run.result["elapsed"]
    obj = kube_object(capi, "infrastructure.cluster.x-k8s.io", "v1beta1", "openstackclusters", name)
    last_write = datetime.datetime.strptime(obj["status"]["lastReconcileTime"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc)
    assert (finished - last_write).total_seconds() >= 3
    assert set(o["kind"] for o in run.result["objects"]) == {"Cluster", "OpenStackCluster", "KubeadmControlPlane"}


def test_check_mode_writes_nothing(capi, run_module):
    name = seed(capi)
    capi.requests(reset=True)
    run = run_module(MODULE, args(capi, name), check_mode=True)
    assert run.rc == 0, run.output
    assert run.result["changed"] is True
    assert run.result["cluster"]["paused"] is False
    assert capi.writes("kubernetes") == {}
    assert kube_object(capi, "cluster.x-k8s.io", "v1beta2", "clusters", name)["spec"].get("paused") in (None, False)


def test_transient_faults_and_a_dropped_connection_are_retried(capi, run_module):
    name = seed(capi)
    capi.cli("capi", "provider", "block-move", "--delay", "1")
    capi.fault("kubernetes", "/apis/cluster.x-k8s.io/*/namespaces/*/clusters/*", 429, count=1, retry_after=1)
    capi.fault("kubernetes", "/apis/cluster.x-k8s.io/*/namespaces/*/clusters/*", 503, method="PATCH", count=1)
    capi.fault("kubernetes", "/apis/cluster.x-k8s.io/*/namespaces/*/machines", "drop", count=1)
    run = run_module(MODULE, args(capi, name), playbook=True)
    assert run.rc == 0, run.output
    assert sorted(run.result["retried_faults"], key=str) == [429, 503, "connection"]
    assert run.result["cluster"]["paused"] is True


def test_an_api_that_serves_no_watch_is_polled_and_the_result_says_why(capi, run_module):
    name = seed(capi)
    capi.cli("capi", "provider", "block-move", "--delay", "1")
    capi.fault("kubernetes", "/apis/*", 405, query="watch=true")  # a proxy that refuses long requests, say
    run = run_module(MODULE, args(capi, name, scope="cluster"))
    assert run.rc == 0, run.output
    assert run.result["acknowledged"] is True
    observed = run.result["observed_with"]
    assert observed["method"] == "poll" and "does not serve watch" in observed["fallback_reason"]
    assert "405" in observed["fallback_reason"]
    assert run.result["polls"] >= 2  # it went on by listing


def test_a_watch_cut_with_410_gone_is_answered_with_a_fresh_list(capi, run_module):
    name = seed(capi)
    capi.cli("capi", "provider", "block-move", "--delay", "1")
    capi.fault("kubernetes", "/apis/infrastructure.cluster.x-k8s.io/*", 410, query="watch=true", count=1)
    run = run_module(MODULE, args(capi, name, scope="cluster"))
    assert run.rc == 0, run.output
    assert run.result["acknowledged"] is True
    (infra,) = by_kind(run.result, "OpenStackCluster")
    assert "block-move annotation was removed" in infra["how"], "the removal was seen through the watch"
    assert run.result["observed_with"]["method"] == "watch" and run.result["observed_with"]["relists"] == 1


def test_polling_when_asked(capi, run_module):
    name = seed(capi)
    run = run_module(MODULE, args(capi, name, scope="cluster", use_watch=False))
    assert run.rc == 0, run.output
    assert run.result["observed_with"] == {"method": "poll", "fallback_reason": "use_watch is false"}


@pytest.mark.parametrize("case,expected", [
    ("missing", "Cluster default/no-such-cluster not found"),
    ("namespace", "a Cluster of that name exists in namespace default"),
])
def test_missing_cluster_and_wrong_namespace_are_named(capi, run_module, case, expected):
    name = seed(capi) if case == "namespace" else "no-such-cluster"
    extra = {"namespace": "elsewhere"} if case == "namespace" else {}
    run = run_module(MODULE, args(capi, name, **extra))
    assert run.result["failed"] is True
    assert expected in run.result["msg"]
    assert run.result["changed"] is False


def test_unreachable_api_fails_fast_with_the_address(capi, run_module):
    started = time.monotonic()
    run = run_module(MODULE, {"host": "https://127.0.0.1:1", "api_key": "secret-token", "name": "x",
                              "validate_certs": False})
    assert run.result["failed"] is True
    assert "https://127.0.0.1:1 does not answer" in run.result["msg"]
    assert time.monotonic() - started < 40
    assert "secret-token" not in run.output


def test_invalid_kubeconfig_is_a_clear_error(capi, run_module, tmp_path):
    broken = tmp_path / "kubeconfig"
    broken.write_text("apiVersion: v1\nclusters: [this is not a cluster\n")
    run = run_module(MODULE, {"kubeconfig": str(broken), "name": "x"})
    assert run.result["failed"] is True
    assert "Kubernetes connection settings are invalid" in run.result["msg"]
    assert "Traceback" not in run.output


def test_a_wrong_token_is_refused_with_a_hint(capi, run_module, tmp_path):
    settings = kube_settings(capi, tmp_path)
    run = run_module(MODULE, {"host": settings["host"], "api_key": "wrong", "ca_cert": settings["ca_cert"],
                              "name": "x"})
    assert run.result["failed"] is True
    assert "HTTP 401" in run.result["msg"] and "credentials were refused" in run.result["msg"]


def patch_cluster(cloud, name, body, version="v1beta2", namespace="default"):
    """A merge patch of a Cluster, with the official client (another client than the module)."""
    api = k8s_config.new_client_from_config(config_file=str(cloud.state_dir / "kubeconfig"))
    with api:
        return k8s_client.CustomObjectsApi(api).patch_namespaced_custom_object(
            "cluster.x-k8s.io", version, namespace, "clusters", name, body)


def writes_of(result):
    return [(w["call"], w["outcome"]) for w in result.get("writes") or []]


@pytest.mark.parametrize("fault", [503, 401])
def test_a_failure_after_the_pause_was_written_says_changed_and_what_was_written(capi, run_module, fault):
    # the Machines list that follows the patch fails: 503 until the deadline, or 401 (a Kubernetes token is never
    # renewed); spec.paused stays written, and the result must say so
    name = seed(capi)
    capi.fault("kubernetes", "/apis/cluster.x-k8s.io/*/namespaces/*/machines", fault)
    run = run_module(MODULE, args(capi, name, timeout=6), playbook=True)
    result = run.result
    assert result["failed"] is True, run.output
    assert result["changed"] is True, result
    assert result["cluster"]["paused"] is True and result["cluster"]["paused_before"] is False, result
    assert writes_of(result) == [("setting spec.paused=true on Cluster default/%s" % name, "done")]
    assert "written before this failure: setting spec.paused=true" in result["msg"]
    assert kube_object(capi, "cluster.x-k8s.io", "v1beta2", "clusters", name)["spec"]["paused"] is True
    assert "Traceback" not in run.output


def test_a_reference_to_a_group_not_served_is_named_and_nothing_is_written(capi, run_module):
    name = seed(capi)
    patch_cluster(capi, name, {"spec": {"infrastructureRef": {
        "apiGroup": "infrastructure.example.org", "kind": "FooCluster", "name": name}}})
    capi.requests(reset=True)
    run = run_module(MODULE, args(capi, name))
    result = run.result
    assert result["failed"] is True and result["changed"] is False, result
    assert "infrastructureRef of Cluster default/%s" % name in result["msg"]
    assert "FooCluster default/%s in API group infrastructure.example.org" % name in result["msg"]
    assert "does not serve" in result["msg"] and "validation error" not in result["msg"]
    assert capi.writes("kubernetes") == {}
    info = run_module("flightcontrol.openstack.cluster_info",
                      {"kubeconfig": args(capi, name)["kubeconfig"], "name": name})
    assert info.result["failed"] is True
    assert "infrastructureRef of Cluster default/%s names FooCluster" % name in info.result["msg"]
    assert "infrastructure.example.org" in info.result["msg"] and "validation error" not in info.result["msg"]


def wait_for_annotation(cloud, name, timeout=30):
    """The infrastructure cluster, once its provider has set the block-move annotation."""
    deadline = time.monotonic() + timeout
    while True:
        obj = kube_object(cloud, "infrastructure.cluster.x-k8s.io", "v1beta1", "openstackclusters", name)
        if BLOCK_MOVE in (obj["metadata"].get("annotations") or {}):
            return obj
        assert time.monotonic() < deadline, "the provider never set %s" % BLOCK_MOVE
        time.sleep(0.2)


def test_an_unpause_during_a_move_is_refused_unless_forced(capi, run_module):
    name = seed(capi)
    capi.cli("capi", "provider", "stuck")  # keeps block-move on its objects, as a provider still pausing does
    patch_cluster(capi, name, {"spec": {"paused": True}})
    wait_for_annotation(capi, name)
    capi.requests(reset=True)
    run = run_module(MODULE, args(capi, name, state="unpaused", wait=False), playbook=True)
    result = run.result
    assert result["failed"] is True and result["changed"] is False, result
    assert "is not unpaused" in result["msg"] and "force: true" in result["msg"]
    assert "OpenStackCluster default/%s (%s)" % (name, BLOCK_MOVE) in result["moving"]
    assert capi.writes("kubernetes") == {}
    assert kube_object(capi, "cluster.x-k8s.io", "v1beta2", "clusters", name)["spec"]["paused"] is True
    forced = run_module(MODULE, args(capi, name, state="unpaused", wait=False, force=True))
    assert forced.rc == 0, forced.output
    assert forced.result["changed"] is True and forced.result["cluster"]["paused"] is False
