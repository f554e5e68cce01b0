"""The real OpenStack services minicloud runs, one module each, and the emulated Kubernetes APIs.

Each is a :class:`minicloud.services.base.Service`: it knows how to write its configuration, initialise its
data offline (in a process of its own, since oslo.config is global), build its WSGI application, and which
files make up its data (for the template snapshot). A service imports its project's own code (keystone,
neutron...) only in the process that runs it.
"""

from __future__ import annotations

from minicloud.core.paths import StateDir
from minicloud.core.settings import Settings
from minicloud.services.base import Service
from minicloud.services.glance import Glance
from minicloud.services.keystone import Keystone
from minicloud.services.kubernetes import Kubernetes
from minicloud.services.kubernetes_target import KubernetesTarget
from minicloud.services.neutron import Neutron
from minicloud.services.nova import Nova
from minicloud.services.octavia import Octavia


def all_services(state: StateDir, settings: Settings) -> list[Service]:
    openstack = [Keystone(state, settings), Neutron(state, settings), Octavia(state, settings), Nova(state, settings),
                 Glance(state, settings)]
    if settings.upstream:  # the real control plane is not a service of minicloud's: minicloud.upstream starts it
        return openstack
    return [*openstack, Kubernetes(state, settings), KubernetesTarget(state, settings)]


def get_service(name: str, state: StateDir, settings: Settings) -> Service:
    for service in all_services(state, settings):
        if service.name == name:
            return service
    raise KeyError(f"unknown service {name!r}")
