"""The two management clusters of an upstream cloud (minicloud.upstream.control_plane): the main one and the
move target share one etcd under two prefixes, and nothing else: ports, process names, kubeconfigs, CAPD's
address (its debug server's port is fixed) and the CAPO controller are each plane's own. Pure: no process runs."""

import ipaddress
from pathlib import Path

from minicloud.core.paths import StateDir
from minicloud.core.settings import Settings, cloud_ports
from minicloud.upstream import manifests
from minicloud.upstream.binaries import Binaries
from minicloud.upstream.control_plane import MAIN, TARGET, UpstreamControlPlane

PROVIDER = manifests.Provider("capd", "capd-manager", Path("config"), "InfrastructureProvider", "docker", "capd-system")


def planes(tmp_path, port_offset=100):
    state, settings = StateDir(tmp_path / "state"), Settings(port_offset=port_offset, kubernetes="upstream")
    return UpstreamControlPlane(state, settings, MAIN), UpstreamControlPlane(state, settings, TARGET)


def _flag(argv, name):
    return argv[argv.index(name) + 1]


def test_the_planes_share_etcd_under_two_prefixes_and_nothing_else(tmp_path):
    main, target = planes(tmp_path)
    built = Binaries(tmp_path / "bin")
    main_api, target_api = main._apiserver_argv(built), target._apiserver_argv(built)
    assert _flag(main_api, "--etcd-servers") == _flag(target_api, "--etcd-servers")
    assert (_flag(main_api, "--etcd-prefix"), _flag(target_api, "--etcd-prefix")) == ("/registry", "/registry-target")
    assert _flag(main_api, "--secure-port") != _flag(target_api, "--secure-port")
    assert main.api_url != target.api_url and main.proxy_url != target.proxy_url
    assert (main.kubeconfig.name, target.kubeconfig.name) == ("kubeconfig", "kubeconfig-target")
    assert main.folder != target.folder and main.credentials.ca_cert != target.credentials.ca_cert
    ports = {port for plane in (main, target) for index in range(4) for port in plane.provider_ports(index)}
    assert len(ports) == 16, "every manager of both planes has a webhook and a health port of its own"
    assert ports <= set(cloud_ports(100)), "free_port_offset checks and keeps apart every port the planes take"


def test_only_the_main_plane_runs_etcd_and_the_capo_controller(tmp_path):
    main, target = planes(tmp_path)
    assert main.process_names() == ["etcd", "kube-apiserver", "cluster-api", "kubeadm-control-plane",
                                    "kubeadm-bootstrap", "capd", "capo-load-balancer", "kubernetes-api-proxy"]
    assert target.process_names() == ["kube-apiserver-target", "cluster-api-target", "kubeadm-control-plane-target",
                                      "kubeadm-bootstrap-target", "capd-target", "kubernetes-api-proxy-target"]


def test_the_target_managers_resync_often_and_capd_has_an_address_of_its_own(tmp_path):
    main, target = planes(tmp_path)
    built = Binaries(tmp_path / "bin")
    assert _flag(main._manager_argv(built, PROVIDER, 3, tmp_path), "--sync-period") == "10m"
    assert _flag(target._manager_argv(built, PROVIDER, 3, tmp_path), "--sync-period") == "15s"
    assert main.pod_ip != target.pod_ip


def test_capd_has_an_address_per_cloud_so_that_two_clouds_planes_run_side_by_side(tmp_path):
    at_zero = planes(tmp_path, port_offset=0)
    assert [p.pod_ip for p in at_zero] == ["127.0.0.1", "127.0.0.2"]
    addresses = {p.pod_ip for offset in (0, 5000, 5007, 21994) for p in planes(tmp_path / str(offset), port_offset=offset)}
    assert len(addresses) == 8
    assert all(ipaddress.ip_address(a).is_loopback for a in addresses)
