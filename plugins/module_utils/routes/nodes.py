# -*- coding: utf-8 -*-
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where route_audit's nodes come from: the explicit ``nodes`` option, else the Kubernetes API.

Plain data out, one shape for both sources: ``[{"name", "pod_cidrs": [...], "address"}]``
(``address`` a string or one per family); ``route_plan.normalize_nodes`` checks it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes import nodes as k8s_nodes


def node_source(params, deadline, connect_kubernetes=None):
    """(source name, nodes). ``nodes`` given (even empty): that list; omitted: the Kubernetes API,
    through the client ``connect_kubernetes()`` returns.  A Kubernetes node without a pod CIDR yet (it
    just joined) needs no route and is left out."""
    if params.get("nodes") is not None:
        return "nodes", [
            {"name": node.get("name"), "pod_cidrs": node.get("pod_cidr"), "address": node.get("address")}
            for node in params["nodes"]]
    kube = connect_kubernetes()
    records = k8s_nodes.nodes_from_kubernetes(kube, deadline, label_selector=params.get("node_selector"))
    return "kubernetes", [record for record in records if record["pod_cidrs"]]
