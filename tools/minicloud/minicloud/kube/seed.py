"""The objects of a provisioned CAPI cluster on OpenStack, and of nodes (pure builders).

A seeded cluster looks like what CAPI, KCP and CAPO leave behind once a cluster is up:
Cluster -> OpenStackCluster and KubeadmControlPlane; control-plane Machines owned by the
KCP; worker Machines owned by a MachineSet owned by a MachineDeployment; per Machine a
KubeadmConfig, an OpenStackMachine and a Node (seeding writes the Nodes into the cluster's own
API, see :mod:`minicloud.kube.workloads`); the ``NAME-ca`` and ``NAME-kubeconfig`` Secrets.
Every object carries ``cluster.x-k8s.io/cluster-name``. Objects are built in the stored
(v1beta2 hub) form; :mod:`minicloud.kube.convert` gives the v1beta1 view.

Every Machine carries CAPI's finalizer and every OpenStackMachine CAPO's, as on a real cluster: a
Machine deleted goes through the controllers (hooks, drain, infrastructure), never at once.
The Machines of a cluster seeded with ``openstack`` have real servers (workers too, when the
resources name them); without it, servers and addresses are made up.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import uuid
from dataclasses import dataclass, field

from minicloud.kube.controllers.paused import CLUSTER_NAME_LABEL
from minicloud.kube.controllers.rollout import KCP_CLEANUP_HOOK
from minicloud.kube.resources import BOOTSTRAP_GROUP, CONTROLPLANE_GROUP, INFRA_GROUP

CONTROL_PLANE_LABEL = "cluster.x-k8s.io/control-plane"
DEPLOYMENT_LABEL = "cluster.x-k8s.io/deployment-name"
SET_LABEL = "cluster.x-k8s.io/set-name"
KUBERNETES_VERSION = "v1.31.4"
POD_NETWORK = ipaddress.ip_network("10.244.0.0/16")
NODE_NETWORK = ipaddress.ip_network("10.6.0.0/16")
FLOATING_NETWORK = ipaddress.ip_network("172.24.4.0/24")
SEED_TIME = "2025-01-01T00:00:00Z"
MACHINE_FINALIZER = "machine.cluster.x-k8s.io"  # CAPI's, on every Machine
OSM_FINALIZER = "openstackmachine.infrastructure.cluster.x-k8s.io"  # CAPO's, on every OpenStackMachine
# What a cluster seeded with real OpenStack resources carries (on its OpenStackCluster).
OPENSTACK_ANNOTATION = "minicloud.test/openstack"
POOL_ANNOTATION = "minicloud.test/pool-id"
# On a seeded KCP and MachineSet while seeding writes their Machines (it writes owners first, for the uids their
# Machines' ownerReferences carry); the controllers create no Machine for an owner that carries it, and seeding
# removes it once the cluster is whole. An owner without it (one applied with kubectl) gets its Machines at once.
SEEDING_ANNOTATION = "minicloud.test/seeding"


@dataclass
class SeedObject:
    """One object to create; ``owner`` is the (kind, name) whose uid goes into ownerReferences."""

    kind: str
    body: dict
    owner: tuple[str, str] | None = None
    status: dict = field(default_factory=dict)


def _suffix(*parts: str, length: int = 5) -> str:
    """A stable suffix like the random ones CAPI generates."""
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    digest = hashlib.sha256("/".join(parts).encode()).digest()
    return "".join(alphabet[b % len(alphabet)] for b in digest[:length])


def _uuid(*parts: str) -> str:
    return str(uuid.UUID(bytes=hashlib.sha256("/".join(parts).encode()).digest()[:16], version=4))


def _meta(name: str, namespace: str | None, cluster: str, **labels: str) -> dict:
    meta = {"name": name, "labels": {CLUSTER_NAME_LABEL: cluster, **labels}}
    if namespace:
        meta["namespace"] = namespace
    return meta


def _ready(*types: str) -> list[dict]:
    """New-style (metav1) conditions, all True."""
    return [{"type": t, "status": "True", "reason": t, "message": "", "lastTransitionTime": SEED_TIME,
             "observedGeneration": 1} for t in types]


def _old_ready(*types: str) -> list[dict]:
    """CAPI's old (v1beta1) conditions, all True."""
    return [{"type": t, "status": "True", "lastTransitionTime": SEED_TIME} for t in types]


def pod_cidr(index: int) -> str:
    return str(list(POD_NETWORK.subnets(new_prefix=24))[index])


def node_address(index: int) -> str:
    return str(NODE_NETWORK.network_address + 256 + 10 + index)


def node(name: str, pod_cidr_block: str | None, address: str | None, labels: dict | None = None,
         provider_id: str | None = None) -> dict:
    """A Ready Node with one InternalIP and a pod CIDR (what kube-controller-manager allocates); None leaves
    either out (a Node still being set up, a CIDR allocator lagging)."""
    spec = {"podCIDR": pod_cidr_block, "podCIDRs": [pod_cidr_block]} if pod_cidr_block else {}
    if provider_id:
        spec["providerID"] = provider_id
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                                              **(labels or {})}},
        "spec": spec,
        "status": {
            "addresses": ([{"type": "InternalIP", "address": address}] if address else [])
            + [{"type": "Hostname", "address": name}],
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                            "message": "kubelet is posting ready status", "lastHeartbeatTime": SEED_TIME,
                            "lastTransitionTime": SEED_TIME}],
            "nodeInfo": {"kubeletVersion": KUBERNETES_VERSION, "operatingSystem": "linux", "architecture": "amd64",
                         "containerRuntimeVersion": "containerd://1.7.24", "kernelVersion": "6.8.0",
                         "osImage": "Ubuntu 24.04 LTS", "kubeProxyVersion": KUBERNETES_VERSION,
                         "machineID": "", "systemUUID": "", "bootID": ""},
        },
    }


def _ref(group: str, kind: str, name: str) -> dict:
    return {"apiGroup": group, "kind": kind, "name": name}


def _machine(cluster: str, namespace: str, name: str, labels: dict, owner: tuple[str, str], index: int,
             first_pod_index: int, server: dict | None = None) -> list[SeedObject]:
    """``server``: a real server (``{"id", "address"}``) behind the machine; without it the id and
    address are made up. The Machine carries CAPI's finalizer, the OpenStackMachine CAPO's."""
    server_id = server["id"] if server else _uuid(namespace, cluster, name)
    provider_id = f"openstack:///{server_id}"
    address = server["address"] if server else node_address(first_pod_index + index)
    meta = dict(_meta(name, namespace, cluster, **labels), finalizers=[MACHINE_FINALIZER])
    if owner[0] == "KubeadmControlPlane":  # KCP's own pre-terminate hook, on every Machine it owns
        meta["annotations"] = {KCP_CLEANUP_HOOK: ""}
    machine = SeedObject("Machine", {
        "metadata": meta,
        "spec": {"clusterName": cluster, "version": KUBERNETES_VERSION, "providerID": provider_id,
                 "bootstrap": {"configRef": _ref(BOOTSTRAP_GROUP, "KubeadmConfig", name), "dataSecretName": name},
                 "infrastructureRef": _ref(INFRA_GROUP, "OpenStackMachine", name)},
    }, owner, {
        "phase": "Running",
        "initialization": {"bootstrapDataSecretCreated": True, "infrastructureProvisioned": True},
        "nodeRef": {"name": name},
        "addresses": [{"type": "InternalIP", "address": address}],
        "conditions": _ready("Available", "Ready", "BootstrapConfigReady", "InfrastructureReady", "NodeReady"),
        "deprecated": {"v1beta1": {"conditions": _old_ready("Ready", "BootstrapReady", "InfrastructureReady",
                                                            "NodeHealthy")}},
    })
    config = SeedObject("KubeadmConfig", {
        "metadata": _meta(name, namespace, cluster, **labels), "spec": {},
    }, ("Machine", name), {
        "initialization": {"dataSecretCreated": True}, "dataSecretName": name,
        "conditions": _ready("Ready", "DataSecretAvailable"),
        "deprecated": {"v1beta1": {"conditions": _old_ready("Ready", "DataSecretAvailable")}},
    })
    infra = SeedObject("OpenStackMachine", {
        "apiVersion": f"{INFRA_GROUP}/v1beta1", "kind": "OpenStackMachine",
        "metadata": dict(_meta(name, namespace, cluster, **labels), finalizers=[OSM_FINALIZER]),
        "spec": {"providerID": provider_id, "flavor": "m1.medium", "image": {"filter": {"name": "ubuntu-2404-kube"}}},
    }, ("Machine", name), {
        "ready": True, "instanceID": server_id, "instanceState": "ACTIVE",
        "addresses": [{"type": "InternalIP", "address": address}],
        "conditions": _old_ready("Ready", "InstanceReady"),
    })
    node_labels = {"node-role.kubernetes.io/control-plane": ""} if CONTROL_PLANE_LABEL in labels else {}
    node_labels[CLUSTER_NAME_LABEL] = cluster
    return [machine, config, infra,
            SeedObject("Node", node(name, pod_cidr(first_pod_index + index), address, node_labels, provider_id))]


def kcp_name_of(cluster: str) -> str:
    return f"{cluster}-control-plane"


def control_plane_machine_names(name: str, namespace: str = "default", control_plane: int = 1) -> list[str]:
    """The names the seeded control-plane Machines get (stable, CAPI-like suffixes)."""
    return [f"{kcp_name_of(name)}-{_suffix(namespace, name, 'cp', str(i))}" for i in range(control_plane)]


def machine_set_name(name: str, namespace: str = "default") -> str:
    return f"{name}-md-0-{_suffix(namespace, name, 'ms', length=10)}"


def worker_machine_names(name: str, namespace: str = "default", workers: int = 0) -> list[str]:
    """The names the seeded worker Machines get (stable, CAPI-like suffixes)."""
    machine_set = machine_set_name(name, namespace)
    return [f"{machine_set}-{_suffix(namespace, name, 'w', str(i))}" for i in range(workers)]


def cluster_objects(name: str, namespace: str = "default", control_plane: int = 1, workers: int = 0,
                    first_pod_index: int = 0, openstack: dict | None = None,
                    kubeconfig: str | None = None) -> list[SeedObject]:
    """Everything of cluster ``name``, owners before what they own. Nodes get pod CIDRs
    ``10.244.(first_pod_index + i).0/24``. ``kubeconfig``: what the ``NAME-kubeconfig`` Secret holds
    (its key ``value``, as CAPI writes it); without it, one naming the endpoint and nothing more.

    ``openstack``: the real resources behind the cluster (see ``controllers.capo.seed_networks``):
    ``network`` (id, name, subnets), ``router``, ``externalNetwork``, ``securityGroups`` (controlPlane,
    worker), ``loadbalancer`` (id, name, ip, internalIP) and ``pool_id`` (None: no load balancer), and
    ``servers`` (machine name -> id, address). Without it, ids and addresses are made up.
    """
    kcp_name = kcp_name_of(name)
    lb_ip = _endpoint_host(name, openstack)
    infra = _openstack_cluster(name, namespace, lb_ip)
    if openstack:
        _with_openstack(infra, openstack)
    objects = [_cluster(name, namespace, kcp_name, lb_ip), infra,
               _control_plane(name, namespace, kcp_name, control_plane)]
    for i, machine in enumerate(control_plane_machine_names(name, namespace, control_plane)):
        server = openstack["servers"][machine] if openstack else None
        objects += _machine(name, namespace, machine, {CONTROL_PLANE_LABEL: ""}, ("KubeadmControlPlane", kcp_name),
                            i, first_pod_index, server)
    if workers:
        objects += _workers(name, namespace, workers, control_plane, first_pod_index, openstack)
    return objects + _secrets(name, namespace, kcp_name, lb_ip, kubeconfig)


def _endpoint_host(name: str, openstack: dict | None) -> str:
    """The control plane endpoint's host: the load balancer's address (made up without ``openstack``)."""
    if openstack:
        lb = openstack.get("loadbalancer")
        # without a load balancer CAPO's endpoint is the first control-plane machine's address
        return lb["ip"] if lb else next(iter(openstack["servers"].values()))["address"]
    return str(FLOATING_NETWORK.network_address + 100 + int(_suffix(name, length=2).encode().hex(), 16) % 100)


def _cluster(name: str, namespace: str, kcp_name: str, lb_ip: str) -> SeedObject:
    return SeedObject("Cluster", {
        "metadata": _meta(name, namespace, name),
        "spec": {"paused": False,
                 "clusterNetwork": {"pods": {"cidrBlocks": [str(POD_NETWORK)]},
                                    "services": {"cidrBlocks": ["10.96.0.0/12"]}},
                 "controlPlaneEndpoint": {"host": lb_ip, "port": 6443},
                 "infrastructureRef": _ref(INFRA_GROUP, "OpenStackCluster", name),
                 "controlPlaneRef": _ref(CONTROLPLANE_GROUP, "KubeadmControlPlane", kcp_name)},
    }, None, {
        "phase": "Provisioned",
        "initialization": {"infrastructureProvisioned": True, "controlPlaneInitialized": True},
        "conditions": _ready("Available", "InfrastructureReady", "ControlPlaneAvailable",
                             "ControlPlaneInitialized", "WorkersAvailable"),
        "deprecated": {"v1beta1": {"conditions": _old_ready("Ready", "ControlPlaneReady", "InfrastructureReady",
                                                            "ControlPlaneInitialized")}},
    })


def _openstack_cluster(name: str, namespace: str, lb_ip: str) -> SeedObject:
    return SeedObject("OpenStackCluster", {
        "apiVersion": f"{INFRA_GROUP}/v1beta1", "kind": "OpenStackCluster",
        "metadata": _meta(name, namespace, name),
        "spec": {"identityRef": {"cloudName": "openstack", "name": f"{name}-cloud-config"},
                 "apiServerLoadBalancer": {"enabled": True}, "externalNetwork": {"filter": {"name": "public"}},
                 "managedSecurityGroups": {"allowAllInClusterTraffic": True}},
    }, ("Cluster", name), {
        "ready": True,
        "apiServerLoadBalancer": {"id": _uuid(namespace, name, "lb"),
                                  "name": f"k8s-clusterapi-cluster-{namespace}-{name}-kubeapi",
                                  "ip": lb_ip, "internalIP": str(NODE_NETWORK.network_address + 256 + 3),
                                  "tags": []},
        "network": {"id": _uuid(namespace, name, "net"), "name": f"k8s-clusterapi-cluster-{namespace}-{name}"},
        "conditions": _old_ready("Ready", "APIServerIngressReadyCondition", "NetworkReady", "SecurityGroupsReady"),
    })


def _with_openstack(infra: SeedObject, openstack: dict) -> None:
    """The OpenStackCluster's status names the real resources (``openstack``, see :func:`cluster_objects`)."""
    if openstack.get("loadbalancer"):
        # the controllers roll (and delete the servers of) clusters with a load balancer only
        infra.body["metadata"]["annotations"] = {OPENSTACK_ANNOTATION: "true",
                                                 POOL_ANNOTATION: openstack["pool_id"]}
        infra.status["apiServerLoadBalancer"] = dict(openstack["loadbalancer"], tags=[])
        if openstack.get("loadBalancerProvider"):  # as CAPO's spec names it (Octavia's default when omitted)
            infra.body["spec"]["apiServerLoadBalancer"]["provider"] = openstack["loadBalancerProvider"]
    else:
        infra.body["spec"]["apiServerLoadBalancer"] = {"enabled": False}
        del infra.status["apiServerLoadBalancer"]
    infra.status["network"] = dict(openstack["network"], tags=[],
                                   subnets=[dict(s, tags=[]) for s in openstack["network"]["subnets"]])
    if openstack.get("router"):
        infra.status["router"] = dict(openstack["router"], tags=[])
    if openstack.get("externalNetwork"):
        infra.status["externalNetwork"] = dict(openstack["externalNetwork"], tags=[])
    else:
        del infra.body["spec"]["externalNetwork"]
    for field, role in (("controlPlaneSecurityGroup", "controlPlane"), ("workerSecurityGroup", "worker")):
        if (openstack.get("securityGroups") or {}).get(role):
            infra.status[field] = dict(openstack["securityGroups"][role])


def _control_plane(name: str, namespace: str, kcp_name: str, control_plane: int) -> SeedObject:
    return SeedObject("KubeadmControlPlane", {
        "metadata": dict(_meta(kcp_name, namespace, name), annotations={SEEDING_ANNOTATION: "true"}),
        "spec": {"replicas": control_plane, "version": KUBERNETES_VERSION,
                 "machineTemplate": {"spec": {"infrastructureRef": _ref(INFRA_GROUP, "OpenStackMachineTemplate",
                                                                        f"{name}-control-plane")}},
                 "kubeadmConfigSpec": {}},
    }, ("Cluster", name), {
        "initialization": {"controlPlaneInitialized": True},
        "replicas": control_plane, "readyReplicas": control_plane, "availableReplicas": control_plane,
        "upToDateReplicas": control_plane, "version": KUBERNETES_VERSION,
        "selector": f"{CLUSTER_NAME_LABEL}={name},{CONTROL_PLANE_LABEL}",
        "conditions": _ready("Available", "Initialized", "MachinesReady", "EtcdClusterHealthy"),
        "deprecated": {"v1beta1": {"conditions": _old_ready("Ready", "Available", "MachinesReady"),
                                   "readyReplicas": control_plane, "updatedReplicas": control_plane,
                                   "unavailableReplicas": 0}},
    })


def _workers(name: str, namespace: str, workers: int, control_plane: int, first_pod_index: int,
             openstack: dict | None) -> list[SeedObject]:
    """The MachineDeployment ``NAME-md-0``, its MachineSet and their Machines (after the control plane's)."""
    deployment = f"{name}-md-0"
    machine_set = machine_set_name(name, namespace)
    selector = {CLUSTER_NAME_LABEL: name, DEPLOYMENT_LABEL: deployment}
    template = {"clusterName": name, "version": KUBERNETES_VERSION,
                "bootstrap": {"configRef": _ref(BOOTSTRAP_GROUP, "KubeadmConfigTemplate", deployment)},
                "infrastructureRef": _ref(INFRA_GROUP, "OpenStackMachineTemplate", deployment)}
    counts = {"replicas": workers, "readyReplicas": workers, "availableReplicas": workers,
              "upToDateReplicas": workers,
              "deprecated": {"v1beta1": {"readyReplicas": workers, "availableReplicas": workers,
                                         "updatedReplicas": workers, "unavailableReplicas": 0,
                                         "conditions": _old_ready("Ready", "Available")}}}
    objects = [SeedObject("MachineDeployment", {
        "metadata": _meta(deployment, namespace, name),
        "spec": {"clusterName": name, "replicas": workers, "selector": {"matchLabels": selector},
                 "template": {"metadata": {"labels": selector}, "spec": template}},
    }, ("Cluster", name), {"phase": "Running", "conditions": _ready("Available", "MachinesReady"), **counts})]
    set_labels = {**selector, SET_LABEL: machine_set}
    objects.append(SeedObject("MachineSet", {
        "metadata": dict(_meta(machine_set, namespace, name, **{DEPLOYMENT_LABEL: deployment}),
                         annotations={SEEDING_ANNOTATION: "true"}),
        "spec": {"clusterName": name, "replicas": workers, "selector": {"matchLabels": set_labels},
                 "template": {"metadata": {"labels": set_labels}, "spec": template}},
    }, ("MachineDeployment", deployment), {"conditions": _ready("MachinesReady"), **counts}))
    for i, machine in enumerate(worker_machine_names(name, namespace, workers)):
        server = openstack["servers"].get(machine) if openstack else None
        objects += _machine(name, namespace, machine, {DEPLOYMENT_LABEL: deployment, SET_LABEL: machine_set},
                            ("MachineSet", machine_set), control_plane + i, first_pod_index, server)
    return objects


def _secrets(name: str, namespace: str, kcp_name: str, lb_ip: str, kubeconfig: str | None) -> list[SeedObject]:
    """The cluster's CA and kubeconfig Secrets (a kubeconfig naming the endpoint only, without ``kubeconfig``)."""
    ca = base64.b64encode(f"seeded CA of {name}".encode()).decode()
    if kubeconfig is None:
        kubeconfig = (f"apiVersion: v1\nkind: Config\nclusters:\n- name: {name}\n  cluster:\n"
                      f"    server: https://{lb_ip}:6443\n")
    return [SeedObject("Secret", {
        "apiVersion": "v1", "kind": "Secret", "type": "cluster.x-k8s.io/secret",
        "metadata": _meta(secret, namespace, name), "data": data,
    }, ("KubeadmControlPlane", kcp_name))
        for secret, data in ((f"{name}-ca", {"tls.crt": ca, "tls.key": ca}),
                             (f"{name}-kubeconfig", {"value": base64.b64encode(kubeconfig.encode()).decode()}))]


def free_pod_indexes(nodes: list[dict], count: int) -> int:
    """The first index of ``count`` consecutive /24s of 10.244.0.0/16 that no node uses."""
    used = set()
    for item in nodes:
        for block in item.get("spec", {}).get("podCIDRs") or [item.get("spec", {}).get("podCIDR")]:
            try:
                network = ipaddress.ip_network(block)
            except (TypeError, ValueError):
                continue
            if network.subnet_of(POD_NETWORK):
                used.add(int(network.network_address) - int(POD_NETWORK.network_address) >> 8)
    start = 0
    while any(start + i in used for i in range(count)):
        start += 1
    return start
