# -*- coding: utf-8 -*-
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The runner of cluster_info: read a Cluster, its control plane, infrastructure and Machines, and return
``cluster_view.build_view`` of them. The module file gives the argument spec."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.cluster_view import build_view
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.objects import (
    CLUSTER_NAME_LABEL,
    CORE_GROUP,
    dig,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.service import CapiService, choose_version
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.module_base import (
    KubernetesModule,
    check_object_names,
)


class ClusterInfoRunner(KubernetesModule):
    def run(self):
        params = self.params
        check_object_names(params, dict(name="subdomain", namespace="label"))
        deadline = self.started + params["timeout"]
        capi = CapiService(self.connect())
        capi.discover(deadline)
        contract = choose_version(capi.served, params["api_version"])
        cluster = capi.get_cluster(params["name"], params["namespace"], contract, deadline)
        namespace = cluster["metadata"]["namespace"]
        where = "of Cluster %s/%s" % (namespace, params["name"])
        control_plane = capi.get_ref(dig(cluster, "spec", "controlPlaneRef"), namespace, contract, deadline,
                                     "controlPlaneRef " + where)
        infrastructure = capi.get_ref(dig(cluster, "spec", "infrastructureRef"), namespace, contract, deadline,
                                      "infrastructureRef " + where)
        machines = capi.list_kind(CORE_GROUP, contract, "Machine", namespace,
                                  "%s=%s" % (CLUSTER_NAME_LABEL, params["name"]), deadline)
        for machine in machines:
            machine.setdefault("apiVersion", "%s/%s" % (CORE_GROUP, contract))
            machine.setdefault("kind", "Machine")
        self.exit(changed=False, **build_view(cluster, control_plane, infrastructure, machines))
