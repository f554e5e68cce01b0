"""minicloud: a local test cloud made of real OpenStack API services.

Keystone, Neutron, Octavia and nova-api run from their pip-installed packages on 127.0.0.1 with
sqlite. What cannot run on one small machine is emulated: the Octavia provider
(:mod:`minicloud.octavia_provider`), a Kubernetes API with small Cluster API controllers
(:mod:`minicloud.kube`) and HTTP faults (:mod:`minicloud.traffic`). Packages by layer, from the top (a package
imports only those below it; tests/test_layers.py holds the order):

- :mod:`minicloud.cli`               the command line, a thin layer over the Python API
- :mod:`minicloud.runtime`           the Python API (:class:`minicloud.runtime.control.Minicloud`,
                                     also ``minicloud.Minicloud``), up/down, the processes' entry point
- :mod:`minicloud.upstream`          the real control plane (etcd, kube-apiserver, CAPI controllers)
- :mod:`minicloud.runtime.processes` pid files, start, stop, seeding Nova's instances
- :mod:`minicloud.services`          the real services (and the emulated Kubernetes API) and their config
- :mod:`minicloud.clusterctl`        the clusterctl stand-in (NOT clusterctl)
- :mod:`minicloud.kube`              the emulated Kubernetes API, its CAPI controllers, CAPO's mode
- :mod:`minicloud.dataplane`         HAProxy per load balancer, members' health, servers' API endpoints
- :mod:`minicloud.octavia_provider`  the Octavia provider driver and its emulator
- :mod:`minicloud.seeding`           load balancers, servers, routers created as a client would
- :mod:`minicloud.traffic`           fault rules and gates, request counts, hidden API extensions
- :mod:`minicloud.core`              the base: state folder, settings, WSGI server, clouds.yaml
"""

__all__ = ["Minicloud", "MinicloudError"]


def __getattr__(name: str):
    # Imported on first use: importing any module of minicloud loads this package first, and must not load the
    # layers above that module (tests/test_layers.py).
    if name in __all__:
        from minicloud.runtime import control

        return getattr(control, name)
    raise AttributeError(f"module 'minicloud' has no attribute {name!r}")
