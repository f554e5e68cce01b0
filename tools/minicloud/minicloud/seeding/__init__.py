"""Seeding OpenStack objects as a client would, through the real APIs (as the demo user).

- :mod:`.openstack`        networks, load balancers (listener, pool, monitor, members), servers with ports
- :mod:`.neutron_routers`  a cluster's router, node ports with fixed addresses, (broken) static routes

Seeding the emulated Kubernetes API (CAPI clusters, nodes) stays in :mod:`minicloud.kube`
(:mod:`minicloud.kube.seed`, :mod:`minicloud.kube.admin`): the kube controllers use it too.
"""
