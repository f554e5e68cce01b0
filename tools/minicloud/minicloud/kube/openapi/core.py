"""Schemas of the core kinds (core/v1 Namespace, Secret, Node, ConfigMap, Event; events.k8s.io/v1 Event).

Trimmed to what the emulator serves and what clients commonly write; sub-objects are inline.
"""

from __future__ import annotations

from minicloud.kube.openapi.builders import (
    CORE,
    META,
    array,
    boolean,
    date_time,
    free,
    integer,
    kind,
    obj,
    ref,
    string,
    string_map,
    strings,
)

EVENTS = "io.k8s.api.events.v1."


def _core(kind_name: str, description: str, **fields: dict) -> tuple[tuple[str, str, str], str, dict]:
    return ("", "v1", kind_name), CORE + kind_name, kind(description, "", "v1", kind_name, **fields)


NAMESPACE = _core(
    "Namespace", "A scope for names: namespaced objects live in exactly one namespace.",
    spec=obj("What the namespace should be.",
             finalizers=strings("Must be empty before the namespace is removed from storage.")),
    status=obj("What the namespace is.",
               conditions=array(free("A condition of the namespace (type, status, reason, message)."),
                                "Conditions of a terminating namespace."),
               phase=string("Active, or Terminating while its contents are deleted.")),
)

SECRET = _core(
    "Secret", "Holds small secret data (passwords, keys, kubeconfigs), base64-encoded.",
    data=string_map("The secret data: each value base64-encoded.", "byte"),
    immutable=boolean("If true, data cannot be changed any more (only the object deleted)."),
    stringData=string_map("Write-only convenience: plain-text values merged into data on write."),
    type=string("How the data is meant to be used: Opaque, kubernetes.io/tls, cluster.x-k8s.io/secret..."),
)

_NODE_ADDRESS = obj("One address of the node.", ("address", "type"),
                    address=string("The address."), type=string("Hostname, InternalIP, ExternalIP, InternalDNS or "
                                                                 "ExternalDNS."))

NODE = _core(
    "Node", "A worker machine of the cluster, as its kubelet reports it.",
    spec=obj("How the node is to be used.",
             configSource=free("Deprecated dynamic kubelet configuration."),
             externalID=string("Deprecated."),
             podCIDR=string("The pod IP range given to this node."),
             podCIDRs=strings("The pod IP ranges (one per IP family) given to this node."),
             providerID=string("The node's id in the cloud provider (openstack:///SERVER-ID)."),
             taints=array(obj("Repels pods that do not tolerate it.", ("effect", "key"),
                              effect=string("NoSchedule, PreferNoSchedule or NoExecute."), key=string("Taint key."),
                              timeAdded=date_time("When a NoExecute taint was added."),
                              value=string("Taint value.")), "Taints of the node."),
             unschedulable=boolean("If true (cordoned), no new pod is scheduled on the node.")),
    status=obj("What the kubelet last reported.",
               addresses=array(_NODE_ADDRESS, "Addresses of the node."),
               allocatable=string_map("Resources available to pods."),
               capacity=string_map("Total resources of the node."),
               conditions=array(obj("One aspect of the node's state (Ready, MemoryPressure...).", ("status", "type"),
                                    lastHeartbeatTime=date_time("When the kubelet last reported it."),
                                    lastTransitionTime=date_time("When the status last changed."),
                                    message=string("Human-readable details."), reason=string("CamelCase reason."),
                                    status=string("True, False or Unknown."), type=string("The aspect.")),
                                "Conditions of the node."),
               config=free("Status of the kubelet's configuration."),
               daemonEndpoints=free("Ports of the daemons on the node."),
               features=free("Features of the node's kubelet."),
               images=array(free("An image present on the node."), "Images on the node."),
               nodeInfo=obj("Versions and ids of the node's software.",
                            architecture=string("CPU architecture."), bootID=string("Boot id."),
                            containerRuntimeVersion=string("Container runtime and its version."),
                            kernelVersion=string("Kernel version."), kubeProxyVersion=string("Deprecated."),
                            kubeletVersion=string("Kubelet version."), machineID=string("Machine id."),
                            operatingSystem=string("Operating system (linux)."), osImage=string("OS image."),
                            systemUUID=string("System UUID.")),
               phase=string("Deprecated, never set."),
               runtimeHandlers=array(free("A runtime handler."), "Runtime handlers available."),
               volumesAttached=array(free("An attached volume."), "Volumes attached to the node."),
               volumesInUse=strings("Volumes in use on the node.")),
)

CONFIG_MAP = _core(
    "ConfigMap", "Holds non-confidential configuration data as key-value pairs.",
    binaryData=string_map("Binary values, base64-encoded.", "byte"),
    data=string_map("Plain-text values."),
    immutable=boolean("If true, the data cannot be changed any more."),
)

_SERIES = obj("A series of repeated occurrences.", count=integer("Occurrences so far."),
              lastObservedTime=ref(META + "MicroTime", "When the last occurrence was seen."))

EVENT = _core(
    "Event", "A report of something that happened to an object (core/v1 form).",
    action=string("What was done, or what failed, about the object."),
    count=integer("How many times it happened."),
    eventTime=ref(META + "MicroTime", "When it first happened."),
    firstTimestamp=ref(META + "Time", "When it was first recorded."),
    involvedObject=ref(CORE + "ObjectReference", "The object it is about."),
    lastTimestamp=ref(META + "Time", "When it was last recorded."),
    message=string("Human-readable description."),
    reason=string("Short CamelCase reason (Scheduled, Failed...)."),
    related=ref(CORE + "ObjectReference", "A second object it involves."),
    reportingComponent=string("The controller that reported it."),
    reportingInstance=string("The instance of that controller."),
    series=_SERIES,
    source=obj("Who reported it.", component=string("The component."), host=string("The node.")),
    type=string("Normal or Warning."),
)

EVENTS_EVENT = (("events.k8s.io", "v1", "Event"), EVENTS + "Event", kind(
    "A report of something that happened to an object (events.k8s.io/v1 form).", "events.k8s.io", "v1", "Event",
    action=string("What was done, or what failed, about the object."),
    deprecatedCount=integer("How many times it happened (core/v1 compatibility)."),
    deprecatedFirstTimestamp=ref(META + "Time", "When it was first recorded (core/v1 compatibility)."),
    deprecatedLastTimestamp=ref(META + "Time", "When it was last recorded (core/v1 compatibility)."),
    deprecatedSource=obj("Who reported it (core/v1 compatibility).", component=string("The component."),
                         host=string("The node.")),
    eventTime=ref(META + "MicroTime", "When it first happened."),
    note=string("Human-readable description."),
    reason=string("Short CamelCase reason."),
    regarding=ref(CORE + "ObjectReference", "The object it is about."),
    related=ref(CORE + "ObjectReference", "A second object it involves."),
    reportingController=string("The controller that reported it."),
    reportingInstance=string("The instance of that controller."),
    series=_SERIES,
    type=string("Normal or Warning."),
))

KINDS = (NAMESPACE, SECRET, NODE, CONFIG_MAP, EVENT, EVENTS_EVENT)
