#!/usr/bin/env bash
# Builds minicloud's upstream control plane from the Go modules pinned in tools/upstream/*/go.mod
# (etcd, kube-apiserver, Cluster API's managers, clusterctl, CAPD) into a cache outside the repository.
# Each wrapper module is cached on its own, keyed by its go.mod, go.sum and the build recipe: a warm cache
# rebuilds nothing, and a change to one module rebuilds that module's programs only.
#
#   tools/upstream/build.sh [--capi VERSION]          build what is missing, print the folder of the binaries
#   tools/upstream/build.sh [--capi VERSION] --dir    print that folder only (built or not)
#
# VERSION is the Cluster API minor release: v1.13 (the default, tools/upstream/clusterapi) or v1.12
# (tools/upstream/clusterapi-v1.12, built only when asked for). etcd and kube-apiserver are the same for both.
# The folder printed holds links to the programs of the three modules a plane runs.
#
# The cache: $FLIGHTCONTROL_UPSTREAM_CACHE, else $XDG_CACHE_HOME/flightcontrol/upstream, else
# ~/.cache/flightcontrol/upstream. Needs Go 1.26 or newer (etcd's pin asks for it) and the Go module proxy.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache_root=${FLIGHTCONTROL_UPSTREAM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/flightcontrol/upstream}

capi=v1.13
dir_only=
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir_only=1 ;;
    --capi) capi=${2:-}; shift ;;
    --capi=*) capi=${1#--capi=} ;;
    *) echo "error: unknown argument '$1' (usage: build.sh [--capi v1.13|v1.12] [--dir])" >&2; exit 2 ;;
  esac
  shift
done
case "$capi" in
  v1.13) capi_dir=clusterapi ;;
  v1.12) capi_dir=clusterapi-v1.12 ;;
  *) echo "error: --capi '$capi': this plane builds Cluster API v1.13 (the default) or v1.12" >&2; exit 2 ;;
esac

# What the compiler is told; part of each module's cache key.
recipe='go build -mod=readonly -trimpath -ldflags "-s -w <version flags>" [capd: its listeners on POD_IP] (recipe 4)'

# CAPD's in-memory backend binds each workload cluster's API server to every address, on ports it counts up from
# 20000 without checking that they are free (its "TODO: check the port is actually free"), and v1.13 binds its debug
# server (fixed port 19000) to every address too, where v1.12 bound that one to POD_IP. Two CAPDs on one machine
# (a cloud's move target beside its main plane, or the planes of two clouds side by side) then take each other's
# ports: the second cannot start ("listen tcp :19000: bind: address already in use"), or a cluster's first Machine
# never gets its Node because its port answers with another CAPD's certificate ("certificate is valid for ...,
# not <POD_IP>"). CAPD is built from a copy of the pinned test module whose listeners bind POD_IP (the mux's host),
# as v1.12.5's debug server does (a -modfile beside the copy replaces the module by it; go build takes no overlay
# of the module cache). Nothing else of CAPD changes.
capd_flags() {  # module-dir out-dir: prints the -modfile flag
  local src mux
  src=$(cd "$here/$1" && go list -mod=readonly -m -f '{{.Dir}}' sigs.k8s.io/cluster-api/test)
  rm -rf "$2/capd-src" && cp -r "$src" "$2/capd-src" && chmod -R u+w "$2/capd-src"
  mux="$2/capd-src/infrastructure/inmemory/pkg/server/mux.go"
  sed -i \
    -e 's|net.Listen("tcp", fmt.Sprintf(":%d", options.DebugPort))|net.Listen("tcp", net.JoinHostPort(host, fmt.Sprintf("%d", options.DebugPort)))|' \
    -e 's|net.Listen("tcp", fmt.Sprintf(":%d", wcl.Port()))|net.Listen("tcp", net.JoinHostPort(m.host, fmt.Sprintf("%d", wcl.Port())))|' \
    "$mux"
  if grep -n 'net.Listen("tcp", fmt.Sprintf(":' "$mux" >&2; then
    echo "error: CAPD's in-memory mux ($src) has a listener on every address (above) that this build does not move to POD_IP" >&2
    return 1
  fi
  cp "$here/$1/go.mod" "$2/capd.mod" && cp "$here/$1/go.sum" "$2/capd.sum"
  printf '\nreplace sigs.k8s.io/cluster-api/test => %s\n' "$2/capd-src" >> "$2/capd.mod"
  printf -- '-modfile=%s' "$2/capd.mod"
}

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
  "cluster-api-manager $capi_dir sigs.k8s.io/cluster-api"
  "kubeadm-control-plane-manager $capi_dir sigs.k8s.io/cluster-api/controlplane/kubeadm"
  "kubeadm-bootstrap-manager $capi_dir sigs.k8s.io/cluster-api/bootstrap/kubeadm"
  "clusterctl $capi_dir sigs.k8s.io/cluster-api/cmd/clusterctl"
  "capd-manager $capi_dir sigs.k8s.io/cluster-api/test/infrastructure/docker"
)

module_key() {  # module-dir
  { cat "$here/$1/go.mod" "$here/$1/go.sum"; echo "$recipe"; } | sha256sum | cut -c1-16
}
module_bin() {  # module-dir
  echo "$cache_root/modules/$1-$(module_key "$1")"
}
plane_key=$(for dir in etcd kubernetes "$capi_dir"; do module_key "$dir"; done | sha256sum | cut -c1-16)
bin="$cache_root/plane-$capi-$plane_key/bin"
if [ -n "$dir_only" ]; then echo "$bin"; exit 0; fi

if ! command -v go >/dev/null 2>&1; then
  echo "error: no 'go' on PATH: minicloud's upstream control plane is built from Go modules (Go 1.26 or newer)." >&2
  echo "       Install Go, or run minicloud with its emulated Kubernetes (--kubernetes emulated)." >&2
  exit 3
fi
mkdir -p "$bin"
for t in "${targets[@]}"; do
  read -r name dir pkg <<<"$t"
  out=$(module_bin "$dir")
  if [ ! -x "$out/$name" ]; then
    mkdir -p "$out"
    start=$SECONDS
    echo "building $name ($pkg, pinned in tools/upstream/$dir/go.mod)" >&2
    extra=
    if [ "$name" = capd-manager ]; then extra=$(capd_flags "$dir" "$out"); fi
    if ! (cd "$here/$dir" && go build -mod=readonly -trimpath -ldflags "-s -w $(version_flags "$dir" "$pkg")" \
          ${extra:+"$extra"} -o "$out/$name.partial" "$pkg"); then
      rm -f "$out/$name.partial"
      echo "error: building $name failed (above). Is the Go module proxy reachable (GOPROXY=$(go env GOPROXY))?" >&2
      exit 4
    fi
    mv "$out/$name.partial" "$out/$name"
    echo "built $name in $((SECONDS - start)) s" >&2
  fi
  ln -sfn "$out/$name" "$bin/$name"
done
echo "$bin"
