#!/usr/bin/env bash
# Builds minicloud's upstream control plane from the Go modules pinned in tools/upstream/*/go.mod
# (etcd, kube-apiserver, Cluster API's managers, clusterctl, CAPD) into a cache outside the repository,
# keyed by the pinned versions: a warm cache rebuilds nothing.
#
#   tools/upstream/build.sh            build what is missing, print the folder of the binaries
#   tools/upstream/build.sh --dir      print that folder only (built or not)
#
# The cache: $FLIGHTCONTROL_UPSTREAM_CACHE, else $XDG_CACHE_HOME/flightcontrol/upstream, else
# ~/.cache/flightcontrol/upstream. Needs Go 1.24 or newer and the Go module proxy.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache_root=${FLIGHTCONTROL_UPSTREAM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/flightcontrol/upstream}

# The version a program reports of itself (kube-apiserver's /version, clusterctl version): what the upstream
# release scripts stamp with -X, here the pinned module version.
version_flags() {  # module-dir package
  local module version major minor
  case "$2" in
    k8s.io/kubernetes/*) module=k8s.io/kubernetes ;;
    sigs.k8s.io/cluster-api*) module=sigs.k8s.io/cluster-api ;;
    *) return 0 ;;
  esac
  version=$(cd "$here/$1" && go list -m -f '{{.Version}}' "$module")
  major=${version#v}; major=${major%%.*}
  minor=${version#v*.}; minor=${minor%%.*}
  if [ "$module" = k8s.io/kubernetes ]; then
    for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      printf -- '-X %s.gitVersion=%s -X %s.gitMajor=%s -X %s.gitMinor=%s -X %s.gitTreeState=clean ' \
        "$pkg" "$version" "$pkg" "$major" "$pkg" "$minor" "$pkg"
    done
  else
    printf -- '-X sigs.k8s.io/cluster-api/version.gitVersion=%s -X sigs.k8s.io/cluster-api/version.gitMajor=%s ' \
      "$version" "$major"
    printf -- '-X sigs.k8s.io/cluster-api/version.gitMinor=%s -X sigs.k8s.io/cluster-api/version.gitTreeState=clean' \
      "$minor"
  fi
}

# name  module-dir  package
targets=(
  "etcd etcd go.etcd.io/etcd/server/v3"
  "kube-apiserver kubernetes k8s.io/kubernetes/cmd/kube-apiserver"
  "kubectl kubernetes k8s.io/kubernetes/cmd/kubectl"
  "cluster-api-manager clusterapi sigs.k8s.io/cluster-api"
  "kubeadm-control-plane-manager clusterapi sigs.k8s.io/cluster-api/controlplane/kubeadm"
  "kubeadm-bootstrap-manager clusterapi sigs.k8s.io/cluster-api/bootstrap/kubeadm"
  "clusterctl clusterapi sigs.k8s.io/cluster-api/cmd/clusterctl"
  "capd-manager clusterapi sigs.k8s.io/cluster-api/test/infrastructure/docker"
)

key=$(cat "$here"/*/go.mod "$here"/*/go.sum "$0" | sha256sum | cut -c1-16)
bin="$cache_root/$key/bin"
if [ "${1:-}" = "--dir" ]; then echo "$bin"; exit 0; fi

if ! command -v go >/dev/null 2>&1; then
  echo "error: no 'go' on PATH: minicloud's upstream control plane is built from Go modules (Go 1.24 or newer)." >&2
  echo "       Install Go, or run minicloud with its emulated Kubernetes (--kubernetes emulated)." >&2
  exit 3
fi
mkdir -p "$bin"
for t in "${targets[@]}"; do
  read -r name dir pkg <<<"$t"
  [ -x "$bin/$name" ] && continue
  start=$SECONDS
  echo "building $name ($pkg, pinned in tools/upstream/$dir/go.mod)" >&2
  if ! (cd "$here/$dir" && go build -mod=readonly -trimpath -ldflags "-s -w $(version_flags "$dir" "$pkg")" -o "$bin/$name.partial" "$pkg"); then
    rm -f "$bin/$name.partial"
    echo "error: building $name failed (above). Is the Go module proxy reachable (GOPROXY=$(go env GOPROXY))?" >&2
    exit 4
  fi
  mv "$bin/$name.partial" "$bin/$name"
  echo "built $name in $((SECONDS - start)) s" >&2
done
echo "$bin"
