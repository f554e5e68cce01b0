"""Schemas of the OpenStack infrastructure provider's kinds (CAPO v1beta1): OpenStackCluster, OpenStackMachine.

Trimmed to what the emulator seeds and the fields operators commonly set; filters, ports, rules and
bastions are free-form. ``status.lastReconcileTime`` is the emulator's own (its provider stand-in writes
it while a paused cluster's reconcile is still in flight).
"""

from __future__ import annotations

from minicloud.kube.openapi.builders import array, boolean, date_time, free, integer, kind, obj, string, strings
from minicloud.kube.openapi.capi import ADDRESSES, ENDPOINT, definition_name, failure, old_conditions
from minicloud.kube.resources import INFRA_GROUP

VERSION = "v1beta1"

IDENTITY_REF = obj("The Secret with the clouds.yaml to use, and the cloud in it.", ("cloudName", "name"),
                   cloudName=string("The cloud's name in clouds.yaml."),
                   name=string("Name of the Secret, in the same namespace."),
                   region=string("The region to use, if not the cloud's default."))

RESOURCE_FILTER = free("Selects an existing OpenStack resource by id or by a filter (name, tags, ...).",
                       filter=free("Filter fields (name, description, tags, ...)."), id=string("The id."))

NETWORK_STATUS = obj("A network the cluster uses.", ("id", "name"),
                     id=string("Network id."), name=string("Network name."),
                     subnets=array(obj("A subnet.", ("cidr", "id", "name"), cidr=string("CIDR."), id=string("Id."),
                                       name=string("Name."), tags=strings("Tags.")), "Its subnets."),
                     tags=strings("Tags."))

LOAD_BALANCER = obj("The API server's load balancer.", ("id", "ip", "name"),
                    allowedCIDRs=strings("CIDRs allowed to reach it."), id=string("Load balancer id."),
                    internalIP=string("Its VIP on the cluster network."), ip=string("Its reachable (floating) IP."),
                    loadBalancerNetwork=free("The network it sits on."), name=string("Load balancer name."),
                    provider=string("Octavia provider."), tags=strings("Tags."))

LAST_RECONCILE = date_time("When the provider last wrote the object while reconciling (this emulator's own field).")


def openstack_cluster() -> dict:
    spec = obj(
        "The desired OpenStack infrastructure of a cluster.", ("identityRef",),
        apiServerFixedIP=string("Fixed IP of the API server load balancer."),
        apiServerFloatingIP=string("Floating IP of the API server."),
        apiServerLoadBalancer=free("The API server load balancer.", enabled=boolean("Whether CAPO makes one."),
                                   provider=string("Octavia provider.")),
        apiServerPort=integer("Port of the API server."),
        bastion=free("A bastion host for break-glass access."),
        controlPlaneAvailabilityZones=strings("Availability zones of control-plane machines."),
        controlPlaneEndpoint=ENDPOINT,
        controlPlaneOmitAvailabilityZone=boolean("Do not set an availability zone on control-plane machines."),
        disableAPIServerFloatingIP=boolean("Do not give the API server a floating IP."),
        disableExternalNetwork=boolean("Make no use of an external network."),
        disablePortSecurity=boolean("Disable port security on the cluster's ports."),
        externalNetwork=RESOURCE_FILTER,
        externalRouterIPs=array(free("A fixed IP of the router on the external network."), "Router IPs."),
        identityRef=IDENTITY_REF,
        managedSecurityGroups=free("Security groups CAPO manages.",
                                   allowAllInClusterTraffic=boolean("Allow all traffic between the nodes.")),
        managedSubnets=array(free("A subnet CAPO creates (cidr, dnsNameservers, ...)."), "Subnets CAPO creates."),
        network=RESOURCE_FILTER,
        networkMTU=integer("MTU of the network CAPO creates."),
        router=RESOURCE_FILTER,
        subnets=array(RESOURCE_FILTER, "Existing subnets to use."),
        tags=strings("Tags put on the resources CAPO creates."),
    )
    status = obj(
        "The OpenStack resources of the cluster, as CAPO found or made them.", ("ready",),
        apiServerLoadBalancer=LOAD_BALANCER,
        bastion=free("The bastion host."),
        bastionSecurityGroup=free("The bastion's security group."),
        conditions=old_conditions(),
        controlPlaneSecurityGroup=free("The control plane's security group."),
        externalNetwork=NETWORK_STATUS,
        failureDomains=free("Availability zones, by name."),
        initialization=obj("Provisioning milestones.", provisioned=boolean("The infrastructure is ready.")),
        lastReconcileTime=LAST_RECONCILE,
        network=NETWORK_STATUS,
        ready=boolean("The infrastructure is ready for machines."),
        router=free("The cluster's router (id, name, ips)."),
        workerSecurityGroup=free("The workers' security group."),
        **failure("OpenStackCluster"),
    )
    return kind("The OpenStack side of a cluster: network, router, security groups, API load balancer.",
                INFRA_GROUP, VERSION, "OpenStackCluster", spec=spec, status=status)


def openstack_machine() -> dict:
    spec = obj(
        "The desired OpenStack server of a machine.",
        additionalBlockDevices=array(free("A block device."), "Extra block devices."),
        configDrive=boolean("Give the server a config drive."),
        flavor=string("Name of the flavor."),
        flavorID=string("Id of the flavor."),
        floatingIPPoolRef=free("Where a floating IP comes from."),
        identityRef=IDENTITY_REF,
        image=free("The image: by id, filter or an image object.", filter=free("Filter (name, tags)."),
                   id=string("Image id.")),
        ports=array(free("A port of the server."), "Ports of the server (default: one on the cluster network)."),
        providerID=string("The server's id as CAPI knows it (openstack:///SERVER-ID)."),
        rootVolume=free("A root volume instead of local disk."),
        schedulerHintAdditionalProperties=array(free("A scheduler hint."), "Nova scheduler hints."),
        securityGroups=array(free("A security group by id or filter."), "Extra security groups."),
        serverGroup=free("The server group to place the server in."),
        serverMetadata=array(free("A key and value."), "Nova metadata of the server."),
        sshKeyName=string("Name of the SSH key pair."),
        tags=strings("Tags of the server."),
        trunk=boolean("Make the ports trunks."),
    )
    status = obj(
        "The machine's server, as CAPO found or made it.", ("ready",),
        addresses=ADDRESSES,
        conditions=old_conditions(),
        initialization=obj("Provisioning milestones.", provisioned=boolean("The server is ready.")),
        instanceID=string("Nova id of the server."),
        instanceState=string("Nova state of the server (BUILD, ACTIVE, ERROR, ...)."),
        lastReconcileTime=LAST_RECONCILE,
        ready=boolean("The server is ready."),
        resolved=free("The spec with names resolved to ids."),
        resources=free("The OpenStack resources made for the machine."),
        **failure("OpenStackMachine"),
    )
    return kind("The OpenStack server of one machine.", INFRA_GROUP, VERSION, "OpenStackMachine", spec=spec,
                status=status)


KINDS = tuple(((INFRA_GROUP, VERSION, name), definition_name(INFRA_GROUP, VERSION, name), build())
              for name, build in (("OpenStackCluster", openstack_cluster), ("OpenStackMachine", openstack_machine)))
