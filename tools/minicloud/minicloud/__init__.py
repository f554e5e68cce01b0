"""minicloud: a local test cloud made of real OpenStack API services.

Keystone, Neutron, Octavia and nova-api run from their pip-installed packages on 127.0.0.1 with
sqlite. What cannot run on one small machine is emulated: the Octavia provider
(:mod:`minicloud.octavia_provider`), a Kubernetes API with small Cluster API controllers
(:mod:`minicloud.kube`) and HTTP faults (:mod:`minicloud.traffic`). Packages by concern:

- :mod:`minicloud.runtime`           the Python API (:class:`minicloud.runtime.control.Minicloud`,
                                     also ``minicloud.Minicloud``), processes, state folder, settings
- :mod:`minicloud.services`          the real services (and the emulated Kubernetes API) and their config
- :mod:`minicloud.traffic`           fault rules and gates, request counts, hidden API extensions
- :mod:`minicloud.seeding`           load balancers, servers, routers created as a client would
- :mod:`minicloud.octavia_provider`  the Octavia provider driver and its emulator
- :mod:`minicloud.kube`              the emulated Kubernetes API, its CAPI controllers, CAPO's mode
- :mod:`minicloud.clusterctl`        the clusterctl stand-in (NOT clusterctl)
- :mod:`minicloud.cli`               the command line, a thin layer over the Python API
"""

__all__ = ["Minicloud", "MinicloudError"]


def __getattr__(name: str):
    # Imported on first use: every process minicloud starts imports this package.
    if name in __all__:
        from minicloud.runtime import control

        return getattr(control, name)
    raise AttributeError(f"module 'minicloud' has no attribute {name!r}")
