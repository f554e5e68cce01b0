"""Settings fixed when a state folder is first brought up: ports, region, credentials."""

from __future__ import annotations

import json
import random
import socket
from dataclasses import asdict, dataclass

from minicloud.core.paths import StateDir

HOST = "127.0.0.1"
REGION = "RegionOne"
# Catalog service type -> default port.
DEFAULT_PORTS = {"identity": 5000, "network": 9696, "load-balancer": 9876, "compute": 8774, "image": 9292,
                 "kubernetes": 6443, "kubernetes-target": 6444,
                 # the real control plane (--kubernetes upstream): kube-apiserver (its clients reach it through the
                 # fault proxy on the kubernetes port), etcd, then four managers' webhooks and health; the same
                 # for the move target (its proxy on the kubernetes-target port), on the same etcd
                 "kube-apiserver": 6445, "etcd": 2379, "etcd-peer": 2380, "capi-webhooks": 9443, "capi-health": 9450,
                 "kube-apiserver-target": 6446, "capi-webhooks-target": 9460, "capi-health-target": 9470}
DEMO_PROJECT = "demo"
DEMO_USER = "demo"
DEMO_ROLES = ("member", "load-balancer_member")
ADMIN_USER = "admin"
SERVICE_PROJECT = "service"
DEFAULT_MAX_ROUTES = 30  # Neutron's default
EMULATED = "emulated"  # minicloud's own Kubernetes API and CAPI controllers (minicloud.kube)
UPSTREAM = "upstream"  # etcd, kube-apiserver and Cluster API's managers built from their Go modules
KUBERNETES_KINDS = (EMULATED, UPSTREAM)
# the Cluster API release the upstream plane runs (tools/upstream: clusterapi, clusterapi-v1.12); the first is the
# default
CAPI_VERSIONS = ("v1.13", "v1.12")
DEFAULT_CAPI_VERSION = CAPI_VERSIONS[0]


def free_port_offset(rng: random.Random | None = None) -> int:
    """A random port offset whose ports are all free on 127.0.0.1, below the ephemeral range,
    so that several clouds (parallel test runs, say) can be up on one machine."""
    rng = rng or random.Random()
    for offset in rng.sample(range(5000, 22000, 7), 200):
        sockets = []
        try:
            for port in DEFAULT_PORTS.values():
                sock = socket.socket()
                sockets.append(sock)
                sock.bind((HOST, port + offset))
            return offset
        except OSError:
            continue
        finally:
            for sock in sockets:
                sock.close()
    raise RuntimeError("no free ports for a minicloud on this machine")


@dataclass(frozen=True)
class Settings:
    """What the services, the catalog and clouds.yaml agree on."""

    port_offset: int = 0
    password: str = "secret"
    # Neutron's per-router route limit (max_routes before 2026.2, the router_route quota since).
    max_routes: int = DEFAULT_MAX_ROUTES
    # which Kubernetes control plane serves the ``kubernetes`` port (KUBERNETES_KINDS)
    kubernetes: str = EMULATED
    # the Cluster API release of the upstream plane (CAPI_VERSIONS); the emulated plane ignores it
    capi_version: str = DEFAULT_CAPI_VERSION

    @property
    def upstream(self) -> bool:
        return self.kubernetes == UPSTREAM

    def port(self, service_type: str) -> int:
        return DEFAULT_PORTS[service_type] + self.port_offset

    def url(self, service_type: str) -> str:
        return f"http://{HOST}:{self.port(service_type)}"

    @property
    def auth_url(self) -> str:
        return self.url("identity") + "/v3"

    def save(self, state: StateDir) -> None:
        state.root.mkdir(parents=True, exist_ok=True)
        state.settings_file.write_text(json.dumps(asdict(self), indent=2) + "\n")

    @classmethod
    def load(cls, state: StateDir) -> Settings | None:
        if not state.settings_file.exists():
            return None
        saved = json.loads(state.settings_file.read_text())
        if saved.get("kubernetes") == UPSTREAM:  # a folder set up before v1.13 was the default ran v1.12
            saved.setdefault("capi_version", "v1.12")
        return cls(**saved)
