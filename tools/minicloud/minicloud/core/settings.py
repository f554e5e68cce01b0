"""Settings fixed when a state folder is first brought up: ports, region, credentials."""

from __future__ import annotations

import fcntl
import itertools
import json
import os
import random
import socket
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

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


# how many consecutive ports from its DEFAULT_PORTS entry a cloud takes: one per Cluster API manager
PORT_RUNS = {"capi-webhooks": 4, "capi-health": 4, "capi-webhooks-target": 4, "capi-health-target": 4}
EPHEMERAL_PORTS_START = 32768  # Linux's; the data plane's listeners and outgoing connections take ports from there


def cloud_ports(offset: int) -> list[int]:
    """Every port a cloud at ``offset`` listens on, on 127.0.0.1."""
    return [port + offset + step for name, port in DEFAULT_PORTS.items() for step in range(PORT_RUNS.get(name, 1))]


def _offset_step() -> int:
    """The smallest step no two of a cloud's ports are apart by a multiple of: clouds whose offsets are multiples of
    it never share a port."""
    ports = cloud_ports(0)
    gaps = {abs(a - b) for a in ports for b in ports if a != b}
    return next(step for step in itertools.count(2) if all(gap % step for gap in gaps))


OFFSET_STEP = _offset_step()
# CAPD's in-memory backend (the real planes' infrastructure) serves each workload cluster's API server on a port it
# counts up from 20000, on its plane's own address; the managers' webhook servers listen on every address, so no
# cloud takes a port there
CAPD_PORTS = range(20000, 20200)
OFFSET_CHOICES = tuple(offset for offset in range(-(-5000 // OFFSET_STEP) * OFFSET_STEP,
                                                  EPHEMERAL_PORTS_START - max(cloud_ports(0)), OFFSET_STEP)
                       if not any(port in CAPD_PORTS for port in cloud_ports(offset)))
# offset -> the open lock file that reserves it for as long as this process lives
_reserved: dict[int, int] = {}


def _offset_lock(offset: int) -> int | None:
    """An exclusive lock on ``offset``'s file in the machine's temporary folder (one folder per user), or None when
    another process holds it: a cloud being set up there has chosen that offset and may not have bound its ports
    yet."""
    folder = Path(tempfile.gettempdir()) / f"minicloud-port-offsets-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    fd = os.open(folder / f"{offset}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _ports_free(offset: int) -> bool:
    sockets = []
    try:
        for port in cloud_ports(offset):
            sock = socket.socket()
            sockets.append(sock)
            sock.bind((HOST, port))
        return True
    except OSError:
        return False
    finally:
        for sock in sockets:
            sock.close()


def free_port_offset(rng: random.Random | None = None) -> int:
    """A random port offset whose ports are all free on 127.0.0.1, so that several clouds (parallel test runs, say)
    can be up on one machine. The offset stays reserved while this process lives, so that clouds chosen at the same
    moment by other processes take other offsets before any of them has bound its ports."""
    rng = rng or random.Random()
    for offset in rng.sample(OFFSET_CHOICES, len(OFFSET_CHOICES)):
        if offset in _reserved:
            continue
        fd = _offset_lock(offset)
        if fd is None:
            continue
        if _ports_free(offset):
            _reserved[offset] = fd
            return offset
        os.close(fd)
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
