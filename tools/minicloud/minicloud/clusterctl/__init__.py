"""minicloud's stand-in for ``clusterctl`` (NOT clusterctl): ``version`` and ``move`` between two
Kubernetes APIs, following the sequence clusterctl documents for ``move``.

It exists so that the collection's cluster_move role, its tests and rehearsals can run the same
command line they run against real management clusters, without the Go binary and its providers.
Every run says on stderr that it is the stand-in. The emulated clusterctl version comes from
``$MINICLOUD_CLUSTERCTL_VERSION`` (default :data:`DEFAULT_VERSION`).

    python -m minicloud.clusterctl version [-o short]
    python -m minicloud.clusterctl move --kubeconfig SRC [--kubeconfig-context C] \\
        --to-kubeconfig DST [--to-kubeconfig-context C] [-n NS] [--dry-run]
"""

DEFAULT_VERSION = "v1.12.0"
VERSION_ENV = "MINICLOUD_CLUSTERCTL_VERSION"
FAIL_ENV = "MINICLOUD_CLUSTERCTL_FAIL"
TIMEOUT_ENV = "MINICLOUD_CLUSTERCTL_BLOCK_MOVE_TIMEOUT"
NOTICE = "minicloud clusterctl stand-in (NOT clusterctl; emulating clusterctl {version})"
