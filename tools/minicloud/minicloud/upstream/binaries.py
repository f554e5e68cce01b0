"""Where the upstream programs come from: built from their Go modules by ``tools/upstream/build.sh`` (versions
pinned in ``tools/upstream/*/go.mod``) into a cache outside the repository, and the module folders whose
manifests (CRDs, webhooks) the managers need. Each Cluster API release the plane can run has its own wrapper
module (``CAPI_MODULES``); etcd and kube-apiserver are the same for all.

``MINICLOUD_UPSTREAM_BIN`` names a folder of binaries built elsewhere (then nothing is built here).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from minicloud.core.settings import DEFAULT_CAPI_VERSION

BIN_ENV = "MINICLOUD_UPSTREAM_BIN"
BUILD_TIMEOUT = 3600.0
# the repository's tools/upstream, seen from tools/minicloud/minicloud/upstream/
UPSTREAM_DIR = Path(__file__).resolve().parents[3] / "upstream"
PROGRAMS = ("etcd", "kube-apiserver", "cluster-api-manager", "kubeadm-control-plane-manager",
            "kubeadm-bootstrap-manager", "clusterctl", "capd-manager")
# Cluster API release -> the wrapper module of tools/upstream that pins it (build.sh --capi)
CAPI_MODULES = {"v1.13": "clusterapi", "v1.12": "clusterapi-v1.12"}
# module -> the wrapper module of tools/upstream that pins it (None: the Cluster API release's)
PINNED = {"go.etcd.io/etcd/server/v3": "etcd", "k8s.io/kubernetes": "kubernetes",
          "sigs.k8s.io/cluster-api": None, "sigs.k8s.io/cluster-api/test": None}


class UpstreamError(RuntimeError):
    """The upstream control plane cannot be built or found; the message says how to fix it."""


@dataclass(frozen=True)
class Binaries:
    folder: Path

    def path(self, program: str) -> str:
        return str(self.folder / program)


def capi_module(capi_version: str) -> str:
    """The wrapper module of a Cluster API release; a release this plane does not build raises UpstreamError."""
    try:
        return CAPI_MODULES[capi_version]
    except KeyError:
        raise UpstreamError(f"Cluster API {capi_version!r}: the upstream plane builds "
                            f"{' or '.join(CAPI_MODULES)}") from None


def versions(capi_version: str = DEFAULT_CAPI_VERSION, upstream_dir: Path = UPSTREAM_DIR) -> dict[str, str]:
    """module -> pinned version, read from the wrapper modules' go.mod files."""
    found = {}
    for module, wrapper in PINNED.items():
        text = (upstream_dir / (wrapper or capi_module(capi_version)) / "go.mod").read_text()
        match = re.search(rf"^\s*{re.escape(module)} (v\S+)", text, re.MULTILINE)
        if match:
            found[module] = match.group(1)
    return found


def _go() -> str:
    go = shutil.which("go")
    if go is None:
        raise UpstreamError("no 'go' on PATH: the real control plane (--kubernetes upstream) is built from Go "
                            "modules with Go 1.24 or newer; install Go, or use --kubernetes emulated")
    return go


def build(capi_version: str = DEFAULT_CAPI_VERSION, upstream_dir: Path = UPSTREAM_DIR, log=None) -> Binaries:
    """The folder of built binaries: ``MINICLOUD_UPSTREAM_BIN``, else what build.sh builds for that Cluster API
    release (nothing when its cache is warm). A failed build raises UpstreamError with the end of its output."""
    given = os.environ.get(BIN_ENV)
    if given:
        missing = [p for p in PROGRAMS if not (Path(given) / p).is_file()]
        if missing:
            raise UpstreamError(f"{BIN_ENV}={given} lacks {', '.join(missing)}")
        return Binaries(Path(given))
    capi_module(capi_version)
    _go()
    try:
        proc = subprocess.run(["bash", str(upstream_dir / "build.sh"), "--capi", capi_version],
                              capture_output=True, text=True,
                              timeout=BUILD_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise UpstreamError(f"building the upstream control plane took over {BUILD_TIMEOUT:.0f} s; "
                            f"run {upstream_dir / 'build.sh'} by hand to see where it stops") from None
    if log is not None:
        log.write(proc.stderr)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.splitlines()[-25:])
        raise UpstreamError(f"building the upstream control plane failed (exit {proc.returncode}):\n{tail}")
    return Binaries(Path(proc.stdout.strip().splitlines()[-1]))


def module_folders(capi_version: str = DEFAULT_CAPI_VERSION, upstream_dir: Path = UPSTREAM_DIR) -> dict[str, Path]:
    """module path -> its folder in the Go module cache (downloaded if it is not there), for the modules
    whose manifests minicloud applies, at the versions that Cluster API release's wrapper module pins."""
    wanted = ["sigs.k8s.io/cluster-api", "sigs.k8s.io/cluster-api/test"]
    proc = subprocess.run([_go(), "mod", "download", "-json", *wanted], cwd=upstream_dir / capi_module(capi_version),
                          capture_output=True, text=True, timeout=600, check=False)
    if proc.returncode != 0:
        raise UpstreamError(f"go mod download of {', '.join(wanted)} failed: {proc.stderr.strip()[-2000:]}")
    decoder, text, folders = json.JSONDecoder(), proc.stdout.strip(), {}
    while text:
        entry, end = decoder.raw_decode(text)
        folders[entry["Path"]] = Path(entry["Dir"])
        text = text[end:].lstrip()
    return folders
