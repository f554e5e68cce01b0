"""The real Kubernetes control plane of a minicloud started with ``--kubernetes upstream``.

etcd and kube-apiserver on loopback, Cluster API's CRDs and webhook configurations applied from its Go
module, and the managers: Cluster API's core, KubeadmControlPlane, kubeadm bootstrap and CAPD (with its
in-memory backend only), then minicloud's CAPO load-balancer controller (:mod:`minicloud.upstream.capo_lb`) and
the fault proxy (:mod:`minicloud.upstream.api_proxy`) on the ``kubernetes`` port: the kubeconfig in the state
folder names the proxy (the same file as with the emulation, and the same fault rules), the managers' own
kubeconfig (``kubernetes/internal.kubeconfig``) kube-apiserver itself.

A cloud has two such planes, as it has two emulated APIs: ``MAIN`` and ``TARGET``, the management cluster a
``clusterctl move`` goes to (its own kube-apiserver on the same etcd under another prefix, its own four managers,
its own proxy on the ``kubernetes-target`` port and ``kubeconfig-target``; no CAPO controller).

The credentials are the emulation's (:class:`minicloud.kube.credentials.Credentials`: a CA, a serving
certificate for 127.0.0.1 and a bearer token): the token is the admin's (``system:masters``) in the API server's
token file; the managers use the same kubeconfig and serve their webhooks with the same certificate, so each
webhook's ``caBundle`` is the CA.
"""

from __future__ import annotations

import json
import socket
import ssl
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization

from minicloud.kube.credentials import Credentials
from minicloud.runtime import processes
from minicloud.core.paths import StateDir
from minicloud.core.settings import HOST, Settings
from minicloud.upstream import binaries, manifests

ETCD = "etcd"
APISERVER = "kube-apiserver"
CAPO = "capo-load-balancer"
PROXY = "kubernetes-api-proxy"
SERVICE_CLUSTER_IP_RANGE = "10.96.0.0/24"
FIELD_MANAGER = "minicloud"
# ClusterClass and managed topologies (alpha, off by default in v1.12 and v1.13): the core manager's topology
# controllers and the ClusterClass templates' webhooks (KubeadmControlPlaneTemplate, DevClusterTemplate) need it
FEATURE_GATES = "ClusterTopology=true"


@dataclass(frozen=True)
class Plane:
    """One of a cloud's two management clusters."""

    service: str        # the clients' port, the traffic service and the state folder under services/
    suffix: str         # of its port and process names
    kubeconfig: str     # the clients' kubeconfig, in the state folder
    etcd_prefix: str    # where its kube-apiserver keeps its objects in the one etcd
    pod_host: int       # the last byte of CAPD's in-memory backend's address (UpstreamControlPlane.pod_ip)
    sync_period: str    # the managers' --sync-period (Cluster API's default: 10m)

    @property
    def main(self) -> bool:
        return self.suffix == ""


MAIN = Plane("kubernetes", "", "kubeconfig", "/registry", 1, "10m")
# A moved cluster's in-memory workload API stays in the source's CAPD (the target's cannot take it over: "unable
# to restart the WorkloadClustersMux"), so no Node event or KCP write wakes the target's Machine controller, which
# v1.12 does not wake on an unpause either: its sync period stands in for them
TARGET = Plane("kubernetes-target", "-target", "kubeconfig-target", "/registry-target", 2, "15s")
PLANES = (MAIN, TARGET)


def plane_named(service: str) -> Plane:
    return next(p for p in PLANES if p.service == service)


@dataclass(frozen=True)
class Component:
    name: str
    version: str
    process: str
    endpoint: str


class UpstreamControlPlane:
    """Start, check and stop the real control plane of one state folder."""

    def __init__(self, state: StateDir, settings: Settings, plane: Plane = MAIN):
        self.state = state
        self.settings = settings
        self.plane = plane
        self.folder = state.service(plane.service)
        self.credentials = Credentials(self.folder / "pki")

    def _port(self, name: str) -> int:
        return self.settings.port(name + self.plane.suffix)

    @property
    def pod_ip(self) -> str:
        """CAPD's in-memory backend's address (its workload API servers and its debug server, whose port is fixed):
        one per plane and per cloud, a loopback address made of the cloud's port offset, so that the planes of two
        clouds run side by side (127.0.0.1 and 127.0.0.2 for a cloud at offset 0)."""
        offset = self.settings.port_offset
        return f"127.{offset >> 8 & 255}.{offset & 255}.{self.plane.pod_host}"

    def _name(self, name: str) -> str:
        return name + self.plane.suffix

    # -- names, ports, files -----------------------------------------------------------

    @property
    def api_url(self) -> str:
        """kube-apiserver itself (the managers', minicloud's own requests)."""
        return f"https://{HOST}:{self._port(APISERVER)}"

    @property
    def proxy_url(self) -> str:
        """The API as clients reach it: through the fault proxy."""
        return f"https://{HOST}:{self.settings.port(self.plane.service)}"

    @property
    def kubeconfig(self) -> Path:
        """The clients' kubeconfig (the proxy)."""
        return self.state.root / self.plane.kubeconfig

    @property
    def internal_kubeconfig(self) -> Path:
        """The managers' kubeconfig (kube-apiserver, no faults)."""
        return self.folder / "internal.kubeconfig"

    def provider_ports(self, index: int) -> tuple[int, int]:
        """(webhook, health) ports of the index-th manager."""
        return self._port("capi-webhooks") + index, self._port("capi-health") + index

    def provider_names(self) -> list[str]:
        return [self._name(name) for name in manifests.PROVIDER_NAMES]

    def process_names(self) -> list[str]:
        """In start order: the main plane runs etcd and the CAPO controller, the target shares that etcd."""
        if self.plane.main:
            return [ETCD, APISERVER, *self.provider_names(), CAPO, PROXY]
        return [self._name(APISERVER), *self.provider_names(), self._name(PROXY)]

    def data_paths(self) -> list[Path]:
        return [self.folder]

    # -- initialise --------------------------------------------------------------------

    @property
    def service_account_public_key(self) -> Path:
        return self.folder / "service-account.pub"

    def initialize(self) -> None:
        """Credentials, the API server's token file and service-account key, an empty etcd folder."""
        self.credentials.generate()
        self._write_kubeconfigs()
        self._write_token_file()
        if self.plane.main:
            (self.folder / "etcd").mkdir(parents=True, exist_ok=True)

    def _write_service_account_key(self) -> None:
        """The public half of the serving key, which signs service-account tokens (the API server wants the
        public key in its own file)."""
        key = serialization.load_pem_private_key(self.credentials.server_key.read_bytes(), password=None)
        self.service_account_public_key.write_bytes(key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))

    def _write_kubeconfigs(self) -> None:
        self.credentials.write_kubeconfig(self.kubeconfig, self.proxy_url)
        self.credentials.write_kubeconfig(self.internal_kubeconfig, self.api_url)

    def _write_token_file(self) -> None:
        tokens = self.folder / "tokens.csv"
        tokens.write_text(f'{self.credentials.token},minicloud-admin,minicloud-admin,"system:masters"\n')
        tokens.chmod(0o600)

    def write_config(self) -> None:
        if self.credentials.exist():
            self._write_kubeconfigs()
            self._write_token_file()
            self._write_service_account_key()

    # -- up ----------------------------------------------------------------------------

    def up(self, deadline: float) -> None:
        """Start whatever is not running and wait until the API answers and every manager serves."""
        with open(self.state.log("upstream-build"), "a") as log:
            built = binaries.build(self.settings.capi_version, log=log)
        folders = binaries.module_folders(self.settings.capi_version)
        providers = manifests.providers(folders["sigs.k8s.io/cluster-api"], folders["sigs.k8s.io/cluster-api/test"])
        if self.plane.main:
            self._start(ETCD, self._etcd_argv(built))
            self._wait(ETCD, lambda: _tcp_open(self.settings.port("etcd")), deadline)
        apiserver = self._name(APISERVER)
        self._start(apiserver, self._apiserver_argv(built))
        self._wait(apiserver, self.ready, deadline)
        crds = self._apply_manifests(providers, folders["sigs.k8s.io/cluster-api"],
                                    binaries.versions(self.settings.capi_version), deadline)
        self._wait(apiserver, lambda: self._served(crds), deadline)
        certs = self._webhook_cert_dir()
        names = self.provider_names()
        for index, provider in enumerate(providers):
            self._start(names[index], self._manager_argv(built, provider, index, certs),
                        env={"POD_IP": self.pod_ip} if provider.name == "capd" else None)
        for index, name in enumerate(names):
            webhook, health = self.provider_ports(index)
            self._wait(name, lambda h=health: _http_ok(f"http://{HOST}:{h}/readyz"), deadline)
            self._wait(name, lambda w=webhook: _tls_open(w), deadline)
        if self.plane.main:
            self._start_python(CAPO, "controller", "capo-load-balancer")
        proxy = self._name(PROXY)
        self._start_python(proxy, "proxy", self.plane.service)
        self._wait(proxy, lambda: _tls_open(self.settings.port(self.plane.service)), deadline)

    def _start(self, name: str, argv: list[str], env: dict | None = None) -> None:
        if processes.find(self.state, name) is None:
            processes.spawn_program(self.state, name, argv, env)

    def _start_python(self, name: str, action: str, service: str) -> None:
        if processes.find(self.state, name) is None:
            processes.spawn(self.state, name, action, service)

    def _etcd_argv(self, built: binaries.Binaries) -> list[str]:
        client, peer = self.settings.port("etcd"), self.settings.port("etcd-peer")
        return [built.path("etcd"), "--name", "minicloud", "--data-dir", str(self.folder / "etcd"),
                "--listen-client-urls", f"http://{HOST}:{client}", "--advertise-client-urls", f"http://{HOST}:{client}",
                "--listen-peer-urls", f"http://{HOST}:{peer}", "--initial-advertise-peer-urls", f"http://{HOST}:{peer}",
                "--initial-cluster", f"minicloud=http://{HOST}:{peer}", "--log-level", "warn",
                "--unsafe-no-fsync"]  # a test cloud: speed over durability

    def _apiserver_argv(self, built: binaries.Binaries) -> list[str]:
        c = self.credentials
        return [built.path("kube-apiserver"), "--bind-address", HOST, "--advertise-address", HOST,
                "--secure-port", str(self._port(APISERVER)),
                "--etcd-servers", f"http://{HOST}:{self.settings.port('etcd')}", "--etcd-prefix", self.plane.etcd_prefix,
                "--tls-cert-file", str(c.server_cert), "--tls-private-key-file", str(c.server_key),
                "--client-ca-file", str(c.ca_cert), "--token-auth-file", str(self.folder / "tokens.csv"),
                "--authorization-mode", "RBAC",
                "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
                "--service-account-key-file", str(self.service_account_public_key), "--service-account-signing-key-file",
                str(c.server_key), "--service-cluster-ip-range", SERVICE_CLUSTER_IP_RANGE,
                "--endpoint-reconciler-type", "none", "--cert-dir", str(self.folder / "apiserver-certs"),
                "--enable-priority-and-fairness=false", "--v", "1"]

    def _manager_argv(self, built: binaries.Binaries, provider: manifests.Provider, index: int,
                      certs: Path) -> list[str]:
        webhook, health = self.provider_ports(index)
        return [built.path(provider.binary), "--kubeconfig", str(self.internal_kubeconfig), "--leader-elect=false",
                "--webhook-port", str(webhook), "--webhook-cert-dir", str(certs),
                "--health-addr", f"{HOST}:{health}", "--diagnostics-address", "0", "--v", "1",
                "--sync-period", self.plane.sync_period, "--feature-gates", FEATURE_GATES]

    def _webhook_cert_dir(self) -> Path:
        certs = self.folder / "webhook-certs"
        certs.mkdir(parents=True, exist_ok=True)
        (certs / "tls.crt").write_bytes(self.credentials.server_cert.read_bytes())
        (certs / "tls.key").write_bytes(self.credentials.server_key.read_bytes())
        (certs / "tls.key").chmod(0o600)
        return certs

    def _apply_manifests(self, providers: list[manifests.Provider], cluster_api: Path, versions: dict,
                         deadline: float) -> list[dict]:
        """Apply the CRDs and webhook configurations, then clusterctl's inventory (each provider's namespace
        and Provider object, as ``clusterctl init`` leaves them) once its CRD is served; returns the CRDs."""
        ca = self.credentials.ca_cert.read_bytes()
        inventory_crds = list(manifests.clusterctl_inventory_crd(cluster_api))
        objects = list(inventory_crds)
        for index, provider in enumerate(providers):
            url = f"https://{HOST}:{self.provider_ports(index)[0]}"
            objects += manifests.crds(provider, url, ca) + manifests.webhook_configurations(provider, url, ca)
        for obj in objects:
            self.apply(obj)
        crds = [obj for obj in objects if obj.get("kind") == "CustomResourceDefinition"]
        self._wait(self._name(APISERVER), lambda: self._served(inventory_crds), deadline)
        for obj in manifests.inventory(providers, versions["sigs.k8s.io/cluster-api"]):
            self.apply(obj)
        return crds

    def _served(self, crds: list[dict]) -> bool:
        """Every served version of every CRD is in the API's discovery, which is where a manager's REST mapper
        looks its kinds up (one that starts before exits: "no matches for kind")."""
        for crd in crds:
            spec = crd["spec"]
            for version in (v["name"] for v in spec["versions"] if v.get("served", True)):
                try:
                    found = self.request("GET", f"/apis/{spec['group']}/{version}", timeout=5)
                except (OSError, urllib.error.HTTPError):
                    return False
                if spec["names"]["plural"] not in {r.get("name") for r in found.get("resources", [])}:
                    return False
        return True

    # -- the API -----------------------------------------------------------------------

    def request(self, method: str, path: str, body: dict | None = None, content_type: str = "application/json",
                timeout: float = 30.0) -> dict:
        return json.loads(self._call(method, path, body, content_type, timeout) or b"{}")

    def _call(self, method: str, path: str, body: dict | None = None, content_type: str = "application/json",
              timeout: float = 30.0) -> bytes:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.api_url + path, data=data, method=method, headers={
            "Authorization": f"Bearer {self.credentials.token}", "Content-Type": content_type,
            "Accept": "application/json"})
        with urllib.request.urlopen(request, timeout=timeout, context=self.credentials.client_context()) as answer:
            return answer.read()

    def apply(self, obj: dict) -> dict:
        """Server-side apply of one cluster-scoped or namespaced object (field manager ``minicloud``)."""
        return self.request("PATCH", f"{resource_path(obj)}?fieldManager={FIELD_MANAGER}&force=true", obj,
                            content_type="application/apply-patch+yaml")

    def ready(self) -> bool:
        try:
            self._call("GET", "/readyz", timeout=2)  # "ok", not JSON
        except (OSError, ValueError, urllib.error.HTTPError):
            return False
        return True

    # -- status and down ---------------------------------------------------------------

    def components(self) -> list[Component]:
        """Each component with its pinned version, its process (pid or '-') and endpoint."""
        pinned = binaries.versions(self.settings.capi_version)
        core, test = pinned.get("sigs.k8s.io/cluster-api", "?"), pinned.get("sigs.k8s.io/cluster-api/test", "?")
        known = {ETCD: (pinned.get("go.etcd.io/etcd/server/v3", "?"), f"http://{HOST}:{self.settings.port('etcd')}"),
                 self._name(APISERVER): (pinned.get("k8s.io/kubernetes", "?"), self.api_url),
                 self._name(PROXY): ("minicloud", self.proxy_url), CAPO: ("minicloud", "-")}
        for index, name in enumerate(self.provider_names()):
            known[name] = (test if name == self._name("capd") else core, f"https://{HOST}:{self.provider_ports(index)[0]}")
        result = []
        for name in self.process_names():
            record = processes.find(self.state, name)
            version, endpoint = known[name]
            result.append(Component(name, version, str(record.pid) if record else "-", endpoint))
        return result

    def stop(self) -> list[str]:
        return [name for name in reversed(self.process_names()) if processes.stop(self.state, name)]

    def _wait(self, name: str, ready, deadline: float) -> None:
        while not ready():
            if processes.find(self.state, name) is None:
                raise binaries.UpstreamError(f"{name} exited; end of {self.state.log(name)}:\n{_tail(self.state, name)}")
            if time.monotonic() > deadline:
                raise binaries.UpstreamError(
                    f"{name} did not come up in time; end of {self.state.log(name)}:\n{_tail(self.state, name)}")
            time.sleep(0.3)


def resource_path(obj: dict) -> str:
    """The REST path of an object of the kinds minicloud applies (CRDs, webhook configurations, namespaced
    objects of core and CAPI groups)."""
    group_version = obj["apiVersion"]
    prefix = f"/api/{group_version}" if "/" not in group_version else f"/apis/{group_version}"
    plural = _PLURALS.get(obj["kind"]) or obj["kind"].lower() + "s"
    namespace = obj["metadata"].get("namespace")
    where = f"/namespaces/{namespace}" if namespace else ""
    return f"{prefix}{where}/{plural}/{obj['metadata']['name']}"


_PLURALS = {"CustomResourceDefinition": "customresourcedefinitions",
            "MutatingWebhookConfiguration": "mutatingwebhookconfigurations",
            "ValidatingWebhookConfiguration": "validatingwebhookconfigurations",
            "KubeadmControlPlane": "kubeadmcontrolplanes", "Namespace": "namespaces",
            "ClusterClass": "clusterclasses"}


def _tcp_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex((HOST, port)) == 0


def _tls_open(port: int) -> bool:
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    try:
        with socket.create_connection((HOST, port), timeout=1) as sock, context.wrap_socket(sock):
            return True
    except OSError:
        return False


def _http_ok(url: str) -> bool:
    try:
        urllib.request.urlopen(url, timeout=1).close()
    except (OSError, ValueError):
        return False
    return True


def _tail(state: StateDir, name: str, lines: int = 30) -> str:
    try:
        return "\n".join(state.log(name).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"
