# -*- coding: utf-8 -*-
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cluster's nodes as the Kubernetes API sees them: every node's ``spec.podCIDRs`` and InternalIP.

Placeholder: the Kubernetes connection (``k8s_client``, doc fragment ``kubernetes_auth``) replaces the
body of ``nodes_from_kubernetes``; until then a module that needs it fails with a clear message.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.flightcontrol.openstack.plugins.module_utils.module_base import ModuleFailure

NOT_AVAILABLE = "the Kubernetes node source is not available yet; give nodes"


def nodes_from_kubernetes(params, deadline, clock=None):
    """The nodes of the cluster ``params`` connects to, as plain data:
    ``[{"name": str, "pod_cidrs": [str, ...], "address": str or [str, ...]}]`` (one InternalIP per
    address family). ``deadline`` is a ``clock.monotonic()`` value the listing must finish by."""
    raise ModuleFailure(NOT_AVAILABLE)
