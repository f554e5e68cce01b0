"""minicloud's own calls to its Kubernetes API: seeding clusters and nodes, through the
official client over HTTPS like any client (marked internal: never counted or faulted).

A seeded cluster's Nodes go to its own workload API (:mod:`minicloud.kube.workloads`), registered
first through the management API's internal endpoint; its kubeconfig goes into ``NAME-kubeconfig``."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from kubernetes import client, config

from minicloud.kube import capo_convert, capo_crds, convert, seed, workloads
from minicloud.kube.controllers import kcp, paused, rollout
from minicloud.kube.resources import CAPI_CONTRACT, KINDS, Kind, by_kind

INTERNAL_AGENT = "minicloud-internal"


def rest_call(api: client.ApiClient, method: str, path: str, body=None, query: list | None = None,
              content_type: str = "application/json"):
    """One request through the official client's transport; the decoded JSON answer. Answers other
    than 2xx raise ``kubernetes.client.ApiException`` (the client's low-level ``call_api`` does not)."""
    method, url, headers, body, post = api.param_serialize(
        method, path, query_params=query or [], body=body, auth_settings=["BearerToken"],
        header_params={"Content-Type": content_type, "Accept": "application/json"})
    response = api.call_api(method, url, headers, body, post)
    response.read()
    if not 200 <= response.status < 300:
        raise client.ApiException(http_resp=response)
    return json.loads(response.data or b"null")


class KubeAdmin:
    def __init__(self, kubeconfig: Path | dict):
        """``kubeconfig``: a file, or its content (a workload cluster's)."""
        if isinstance(kubeconfig, dict):
            self.api = config.new_client_from_config_dict(kubeconfig)
        else:
            self.api = config.new_client_from_config(config_file=str(kubeconfig))
        self.api.user_agent = INTERNAL_AGENT

    # -- plain REST ------------------------------------------------------------------

    @staticmethod
    def path(kind: Kind, version: str, namespace: str | None = None, name: str | None = None,
             subresource: str | None = None) -> str:
        base = f"/apis/{kind.group}/{version}" if kind.group else f"/api/{version}"
        if kind.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        return "/".join(p for p in (base, kind.plural, name, subresource) if p)

    def call(self, method: str, path: str, body=None, query: list | None = None,
             content_type: str = "application/json"):
        """One request; answers other than 2xx raise ``kubernetes.client.ApiException``."""
        return rest_call(self.api, method, path, body, query, content_type)

    def _version(self, kind: Kind, api_version: str) -> str:
        return api_version if api_version in kind.versions else kind.hub

    # -- clusters ----------------------------------------------------------------------

    def create_cluster(self, name: str, namespace: str = "default", control_plane: int = 1, workers: int = 0,
                       api_version: str = "v1beta2", openstack: dict | None = None,
                       capo_api_version: str = capo_convert.V1BETA1) -> dict:
        """Create every object of a provisioned cluster, writing CAPI kinds at ``api_version`` and CAPO's
        (OpenStackCluster, OpenStackMachines) at ``capo_api_version``: v1beta2 installs CAPO v0.15's CRDs first
        (:meth:`install_capo_crds`). ``openstack``: the real resources behind it, see ``seed.cluster_objects``."""
        if api_version not in CAPI_CONTRACT:
            raise ValueError(f"api_version must be one of {', '.join(CAPI_CONTRACT)}")
        check_capo_api_version(capo_api_version)
        if capo_api_version == capo_convert.V1BETA2:
            self.install_capo_crds(capo_api_version)
        self.ensure_namespace(namespace)
        workload = self.call("POST", _workload_path(namespace, name))
        nodes_api = KubeAdmin(yaml.safe_load(workload["kubeconfig"]))
        first = seed.free_pod_indexes(nodes_api.call("GET", "/api/v1/nodes")["items"], control_plane + workers)
        uids: dict[tuple[str, str], dict] = {}
        created, nodes = [], []
        for item in seed.cluster_objects(name, namespace, control_plane, workers, first, openstack=openstack,
                                         kubeconfig=workload["kubeconfig"]):
            if item.kind == "Node":  # in the cluster's own API, as kubelets register them
                nodes.append(_node_summary(nodes_api.register_node(item.body)))
                continue
            kind = by_kind(item.kind)
            version = capo_api_version if capo_crds.is_capo(kind) else self._version(kind, api_version)
            item = capo_seed_object(item, version) if capo_crds.is_capo(kind) else item
            body = dict(item.body)
            if item.owner:
                owner = uids[item.owner]
                body["metadata"] = dict(body["metadata"], ownerReferences=[owner])
            ns = namespace if kind.namespaced else None
            obj = self.call("POST", self.path(kind, version, ns), self._at(kind, body, version))
            if item.status:
                # unconditional (no resourceVersion): a controller may already have written the new
                # object (a provider adding its block-move annotation), and seeding owns the status
                obj["status"] = self._at(kind, {"status": item.status}, version).get("status", {})
                obj["metadata"] = {k: v for k, v in obj["metadata"].items() if k != "resourceVersion"}
                obj = self.call("PUT", self.path(kind, version, ns, name=obj["metadata"]["name"],
                                                 subresource="status"), obj)
            uids[(item.kind, obj["metadata"]["name"])] = {
                "apiVersion": obj["apiVersion"], "kind": item.kind, "name": obj["metadata"]["name"],
                "uid": obj["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}
            created.append({"kind": item.kind, "name": obj["metadata"]["name"], "apiVersion": obj["apiVersion"]})
        self._seeded(namespace, created)
        return {"name": name, "namespace": namespace, "apiVersion": f"cluster.x-k8s.io/{api_version}",
                "objects": created, "server": workload["server"],
                "nodes": [{k: n[k] for k in ("name", "podCIDR", "internalIP", "providerID")} for n in nodes]}

    def capo_crds(self) -> dict:
        """The CAPO CRDs this plane has (:mod:`minicloud.kube.capo_crds`): apiVersion, release, served, storage."""
        return self.call("GET", capo_crds.ENDPOINT)

    def install_capo_crds(self, api_version: str) -> dict:
        """Install the CRDs of the CAPO release whose newest API is ``api_version`` (v1beta2: v0.15, v1beta1 and
        v1beta2 served; v1beta1: v0.14's, refused while objects are kept at v1beta2); nothing when they are."""
        check_capo_api_version(api_version)
        current = self.capo_crds()
        if current["apiVersion"] == api_version:
            return current
        return self.call("PUT", capo_crds.ENDPOINT, {"apiVersion": api_version})

    def _seeded(self, namespace: str, created: list[dict]) -> None:
        """The cluster is whole: its KCP and MachineSets lose the seeding annotation, and the controllers
        keep their replicas from now on."""
        for item in created:
            if item["kind"] in ("KubeadmControlPlane", "MachineSet"):
                kind = by_kind(item["kind"])
                self.call("PATCH", self.path(kind, item["apiVersion"].rsplit("/", 1)[1], namespace, item["name"]),
                          {"metadata": {"annotations": {seed.SEEDING_ANNOTATION: None}}},
                          content_type="application/merge-patch+json")

    def register_node(self, body: dict) -> dict:
        """Create a seeded Node; one the controllers made first for its Machine (a busy machine) is taken."""
        try:
            return self.call("POST", "/api/v1/nodes", body)
        except client.ApiException as exc:
            if exc.status != 409:
                raise
            return self.call("GET", f"/api/v1/nodes/{body['metadata']['name']}")

    def remove_workload_api(self, name: str, namespace: str = "default") -> bool:
        """Remove cluster ``name``'s own API (served beside this one), its Nodes with it; False if it has none."""
        try:
            self.call("DELETE", _workload_path(namespace, name))
        except client.ApiException as exc:
            if exc.status != 404:
                raise
            return False
        return True

    def workload_kubeconfig(self, name: str, namespace: str = "default") -> str:
        """The kubeconfig (YAML) of cluster ``name``'s own API, as its ``NAME-kubeconfig`` Secret holds it."""
        try:
            return self.call("GET", _workload_path(namespace, name))["kubeconfig"]
        except client.ApiException as exc:
            if exc.status == 404:
                raise LookupError(f"no workload cluster API for {name!r} in namespace {namespace!r}") from None
            raise

    def _nodes_api(self, cluster: str | None, namespace: str) -> KubeAdmin:
        """Where the Nodes are: the API of workload cluster ``cluster``, or this one (None)."""
        if cluster is None:
            return self
        return KubeAdmin(yaml.safe_load(self.workload_kubeconfig(cluster, namespace)))

    def ensure_namespace(self, namespace: str) -> None:
        """Create the namespace unless it exists."""
        try:
            self.call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                     "metadata": {"name": namespace}})
        except client.ApiException as exc:
            if exc.status != 409:
                raise

    @staticmethod
    def _at(kind: Kind, hub_body: dict, version: str) -> dict:
        """A hub-form body in the shape of ``version``."""
        body = dict(hub_body)
        if convert.converts(kind.kind):
            body.setdefault("apiVersion", kind.api_version(convert.HUB))
            body.setdefault("kind", kind.kind)
            body = convert.from_hub(body, kind.kind, version)
        else:
            body.setdefault("apiVersion", kind.api_version(version))
            body.setdefault("kind", kind.kind)
        return body

    def delete_cluster(self, name: str, namespace: str = "default") -> list[str]:
        """Remove every object labelled with the cluster's name, finalizers included (a clean-up, not
        a CAPI deletion), and the cluster's own API (its Nodes with it). Returns ``Kind/name`` of the
        objects removed from this API."""
        removed = []
        selector = [("labelSelector", f"{paused.CLUSTER_NAME_LABEL}={name}")]
        for kind in KINDS:
            if kind.kind == "Namespace":
                continue
            version = kind.hub
            ns = namespace if kind.namespaced else None
            for obj in self.call("GET", self.path(kind, version, ns), query=selector)["items"]:
                item = self.path(kind, version, ns, obj["metadata"]["name"])
                if obj["metadata"].get("finalizers"):
                    self._strip_finalizers(item)
                try:
                    self.call("DELETE", item)
                except client.ApiException as exc:
                    if exc.status != 404:
                        raise
                removed.append(f"{kind.kind}/{obj['metadata']['name']}")
        api_removed = self.remove_workload_api(name, namespace)
        if not removed and not api_removed:
            raise LookupError(f"no cluster named {name!r} in namespace {namespace!r}")
        return removed

    def start_rollout(self, name: str, namespace: str = "default", capo_wait: str = "member") -> dict:
        """Ask KCP to roll every control-plane Machine of cluster ``name`` (seeded with
        ``--openstack``): bump the KCP's rollout annotation and record how CAPO waits."""
        if capo_wait not in rollout.CAPO_WAITS:
            raise ValueError(f"capo_wait must be one of {', '.join(rollout.CAPO_WAITS)}")
        osc = self._get_named(by_kind("OpenStackCluster"), namespace, name)
        if seed.OPENSTACK_ANNOTATION not in (osc["metadata"].get("annotations") or {}):
            if (osc.get("status") or {}).get("network"):  # seeded --openstack --no-load-balancer
                raise ValueError(f"cluster {name!r} has no API load balancer: minicloud rolls only control planes "
                                 "behind one (create it without --no-load-balancer)")
            raise ValueError(f"cluster {name!r} has no OpenStack resources: create it with --openstack")
        kind = by_kind("KubeadmControlPlane")
        current = self._get_named(kind, namespace, seed.kcp_name_of(name))
        number = kcp.rollout_number(current) + 1
        self.call("PATCH", self.path(kind, kind.hub, namespace, seed.kcp_name_of(name)),
                  {"metadata": {"annotations": {kcp.ROLLOUT_ANNOTATION: str(number),
                                                kcp.CAPO_WAIT_ANNOTATION: capo_wait}}},
                  content_type="application/merge-patch+json")
        return {"name": name, "namespace": namespace, "rollout": number, "capoWait": capo_wait}

    def _get_named(self, kind: Kind, namespace: str, name: str) -> dict:
        try:
            return self.call("GET", self.path(kind, kind.hub, namespace, name))
        except client.ApiException as exc:
            if exc.status == 404:
                raise LookupError(f"no {kind.kind} named {name!r} in namespace {namespace!r}") from None
            raise

    def _strip_finalizers(self, path: str) -> None:
        self.call("PATCH", path, {"metadata": {"finalizers": None}}, content_type="application/merge-patch+json")

    def list_clusters(self, namespace: str | None = None) -> list[dict]:
        kind = by_kind("Cluster")
        result = []
        for obj in self.call("GET", self.path(kind, "v1beta2", namespace))["items"]:
            meta = obj["metadata"]
            condition = paused.find_condition(obj.get("status", {}).get("conditions"), paused.PAUSED)
            machines = self.call("GET", self.path(by_kind("Machine"), "v1beta2", meta["namespace"]),
                                 query=[("labelSelector", f"{paused.CLUSTER_NAME_LABEL}={meta['name']}")])["items"]
            result.append({"name": meta["name"], "namespace": meta["namespace"],
                           "paused": bool(obj.get("spec", {}).get("paused")),
                           "pausedCondition": condition, "phase": obj.get("status", {}).get("phase"),
                           "controlPlaneEndpoint": obj.get("spec", {}).get("controlPlaneEndpoint"),
                           "machines": sorted(m["metadata"]["name"] for m in machines)})
        return result

    # -- nodes -------------------------------------------------------------------------

    # ``cluster``: the Nodes of that workload cluster (in ``namespace``), in its own API; None: this API's.

    def create_node(self, name: str, pod_cidr: str | None, address: str | None, labels: dict | None = None,
                    provider_id: str | None = None, cluster: str | None = None, namespace: str = "default") -> dict:
        return _node_summary(self._nodes_api(cluster, namespace).call(
            "POST", "/api/v1/nodes", seed.node(name, pod_cidr, address, labels, provider_id)))

    def delete_node(self, name: str, cluster: str | None = None, namespace: str = "default") -> None:
        try:
            self._nodes_api(cluster, namespace).call("DELETE", f"/api/v1/nodes/{name}")
        except client.ApiException as exc:
            if exc.status == 404:
                raise LookupError(f"no node named {name!r}" + (f" in cluster {cluster!r}" if cluster else "")) from None
            raise

    def list_nodes(self, cluster: str | None = None, namespace: str = "default") -> list[dict]:
        return [_node_summary(n) for n in self._nodes_api(cluster, namespace).call("GET", "/api/v1/nodes")["items"]]


def check_capo_api_version(version: str) -> None:
    if version not in capo_convert.VERSIONS:
        raise ValueError(f"capo_api_version must be one of {', '.join(capo_convert.VERSIONS)}, not {version!r}")


def capo_seed_object(item: seed.SeedObject, version: str) -> seed.SeedObject:
    """A seeded OpenStackCluster or OpenStackMachine (built v1beta1-shaped) as CAPO writes it at ``version``: at
    v1beta2 converted, and ``status.initialization.provisioned`` set where it is ready (CAPO v0.15 sets it)."""
    if version == capo_convert.V1BETA1:
        return item
    whole = capo_convert.convert(dict(item.body, status=item.status), item.kind, version)
    status = whole.pop("status", {})
    if item.status.get("ready"):
        status.setdefault("initialization", {"provisioned": True})
    return seed.SeedObject(item.kind, whole, item.owner, status)


def _workload_path(namespace: str, name: str) -> str:
    return f"{workloads.ENDPOINT}/{namespace}/{name}"


def _node_summary(obj: dict) -> dict:
    addresses = obj.get("status", {}).get("addresses") or []
    return {"name": obj["metadata"]["name"], "podCIDR": obj.get("spec", {}).get("podCIDR"),
            "podCIDRs": obj.get("spec", {}).get("podCIDRs", []),
            "internalIP": next((a["address"] for a in addresses if a["type"] == "InternalIP"), None),
            "providerID": obj.get("spec", {}).get("providerID"), "labels": obj["metadata"].get("labels", {})}
