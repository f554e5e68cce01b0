# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The names Cluster API Provider OpenStack (CAPO) gives the OpenStack resources it makes.  Pure.

From CAPO's source (the same in v0.12 to v0.15, both API versions): ``pkg/utils/names`` (the cluster resource
name ``<namespace>-<name>`` and the description), ``pkg/cloud/services/loadbalancer/loadbalancer.go`` (the API load
balancer ``k8s-clusterapi-cluster-<resource>-kubeapi``; its listener, pool and health monitor are all named
``<load balancer>-<port>``, one set per port: the API server port first, then ``additionalPorts``; a member is
``<load balancer>-<port>-<OpenStackMachine name>``), ``pkg/cloud/services/networking`` (network, subnet and
router ``k8s-clusterapi-cluster-<resource>``, security groups ``k8s-cluster-<resource>-secgroup-<role>``).
"""

from __future__ import annotations

#: network, subnet, router and (followed by ``-kubeapi``) the API load balancer
PREFIX = "k8s-clusterapi-cluster-"
LB_SUFFIX = "-kubeapi"
SG_PREFIX = "k8s-cluster-"
SG_INFIX = "-secgroup-"
SG_ROLES = ("controlplane", "worker", "bastion")
DESCRIPTION = "Created by cluster-api-provider-openstack cluster "
#: CAPO's API server port when neither the endpoint nor the spec names one (``getAPIServerPort``)
DEFAULT_API_SERVER_PORT = 6443


def cluster_resource_name(namespace: str, name: str) -> str:
    """CAPO's ``ClusterResourceName``: ``<namespace>-<name>`` of the Cluster."""
    return f"{namespace}-{name}"


def api_load_balancer_name(namespace: str, name: str) -> str:
    """The API load balancer CAPO makes for Cluster ``namespace/name``."""
    return PREFIX + cluster_resource_name(namespace, name) + LB_SUFFIX


def port_objects_name(load_balancer_name: str, port: int | str) -> str:
    """The listener, pool and health monitor of ``port`` on the API load balancer: ``<load balancer>-<port>``."""
    return f"{load_balancer_name}-{int(port)}"


def member_name(load_balancer_name: str, port: int | str, machine: str) -> str:
    """A control-plane machine's member in the pool of ``port``: ``<load balancer>-<port>-<OpenStackMachine>``."""
    return f"{port_objects_name(load_balancer_name, port)}-{machine}"
