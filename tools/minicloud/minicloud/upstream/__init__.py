"""The real Kubernetes control plane of ``python -m minicloud up --kubernetes upstream``.

``binaries`` (built from the Go modules pinned in tools/upstream), ``manifests`` (Cluster API's CRDs and
webhooks for managers on loopback), ``control_plane`` (start, check, stop), ``capo_lb`` (CAPO's load-balancer
part against the real API), ``clusters`` (a cluster's objects and its OpenStack side).
"""
