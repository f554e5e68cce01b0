"""Verbs capi (CAPO's mode, seeded clusters, rollouts) and kube (nodes) on the emulated Kubernetes API.

``kube node ... --cluster NAME`` works on the Nodes of a seeded cluster, in its own API."""

from __future__ import annotations

import argparse
import json

from minicloud.cli.common import label, print_json
from minicloud.kube.capo_mode import MODES as CAPO_MODES
from minicloud.kube.controllers import capo
from minicloud.runtime.control import Minicloud
from minicloud.seeding import drift


def _capi_rollout(cloud: Minicloud, args) -> None:
    if len(args.words) == 2 and args.words[0] == "status":
        print_json(cloud.capi_rollout_status(args.words[1], namespace=args.namespace))
    elif len(args.words) == 1:
        print_json(cloud.capi_rollout(args.words[0], namespace=args.namespace, capo_wait=args.capo_wait))
    else:
        raise ValueError("usage: capi rollout NAME [--capo-wait member|lb] | capi rollout status NAME")


def _capi_cluster(cloud: Minicloud, args) -> None:
    if args.cluster_action == "create":
        print_json(cloud.create_capi_cluster(args.name, control_plane=args.control_plane, workers=args.workers,
                                             api_version=args.api_version, namespace=args.namespace,
                                             openstack=args.openstack, monitor=args.monitor,
                                             load_balancer=not args.no_load_balancer, drift=args.drift,
                                             lb_provider=args.lb_provider, capo_api_version=args.capo_api_version,
                                             class_name=args.cluster_class))
    elif args.cluster_action == "kubeconfig":
        print(cloud.workload_kubeconfig(args.name, namespace=args.namespace), end="")
    elif args.cluster_action == "delete":
        deleted = {"deleted": cloud.delete_capi_cluster(args.name, namespace=args.namespace, target=args.target),
                   "name": args.name}
        if args.openstack:
            deleted["openstack"] = cloud.delete_capi_openstack(args.name, namespace=args.namespace)
        print_json(deleted)
    else:
        print_json(cloud.list_capi_clusters(namespace=args.namespace, target=args.target))


def _capi_fleet(cloud: Minicloud, args) -> None:
    if args.fleet_action == "create":
        print_json(cloud.create_capi_fleet(args.count, prefix=args.prefix, namespaces=args.namespace,
                                           api_versions=args.api_version, control_plane=args.control_plane,
                                           workers=args.workers, load_balancer=not args.no_load_balancer,
                                           drift_every=args.drift_every, drift=args.drift))
    else:
        print_json({"deleted": cloud.delete_capi_fleet(args.prefix, namespaces=args.namespace)})


def cmd_capi(cloud: Minicloud, args) -> int:
    if args.capi_area == "crds":
        print_json(cloud.capo_crds(target=args.target) if args.capo_api_version is None else
                   cloud.install_capo_crds(args.capo_api_version, target=args.target))
        return 0
    if args.capi_area == "provider":
        if args.mode is None:
            print_json(cloud.capi_provider_mode())
        else:
            print_json(cloud.set_capi_provider_mode(args.mode, delay=args.delay))
    elif args.capi_area == "rollout":
        _capi_rollout(cloud, args)
    elif args.capi_area == "fleet":
        _capi_fleet(cloud, args)
    elif args.capi_area == "history":
        if args.summary:
            print_json(cloud.capi_history_summary(args.name, namespace=args.namespace, rollout=args.rollout))
        else:
            print_json(cloud.capi_history(args.name, namespace=args.namespace, rollout=args.rollout))
    else:
        _capi_cluster(cloud, args)
    return 0


def cmd_kube(cloud: Minicloud, args) -> int:
    where = {"cluster": args.cluster, "namespace": args.namespace}
    if args.node_action == "create":
        print_json(cloud.create_node(args.name, args.pod_cidr, args.address, labels=dict(args.label or []), **where))
    elif args.node_action == "delete":
        cloud.delete_node(args.name, **where)
        print(json.dumps({"deleted": args.name}))
    else:
        print_json(cloud.list_nodes(**where))
    return 0


def _add_capi_cluster(areas) -> None:
    cluster = areas.add_parser("cluster", help="seed, remove or list CAPI clusters")
    actions = cluster.add_subparsers(dest="cluster_action", required=True)
    create = actions.add_parser("create", help="a provisioned cluster: Cluster, KCP, Machines, Nodes, Secrets...")
    create.add_argument("name")
    create.add_argument("--control-plane", type=int, default=1, help="control-plane machines (default 1)")
    create.add_argument("--workers", type=int, default=0, help="worker machines (default 0)")
    create.add_argument("--api-version", choices=("v1beta1", "v1beta2"), default="v1beta2",
                        help="CAPI contract the objects are written in (default v1beta2)")
    create.add_argument("--namespace", default="default")
    create.add_argument("--openstack", action="store_true",
                        help="also what CAPO makes (network, router, security groups, a server per machine, the "
                             "API load balancer with its members: needed by 'capi rollout') and a healthy pod "
                             "network (pod CIDR rules, one route per Node)")
    create.add_argument("--monitor", action=argparse.BooleanOptionalAction, default=True,
                        help="with --openstack: CAPO's TCP health monitor on the API pool (delay 10, timeout 5, "
                             "max retries 5, max retries down 3), as CAPO always makes it (default); --no-monitor: "
                             "none, every member NO_MONITOR")
    create.add_argument("--lb-provider", choices=capo.PROVIDERS,
                        help="with --openstack: the load balancer's Octavia provider, recorded as CAPO's "
                             "spec.apiServerLoadBalancer.provider (default: none named, Octavia's default amphora)")
    create.add_argument("--capo-api-version", choices=("v1beta1", "v1beta2"), default="v1beta1",
                        help="CAPO API the OpenStackCluster and OpenStackMachines are written in: v1beta1 (CAPO "
                             "v0.14, default) or v1beta2 (CAPO v0.15: installs its CRDs first, v1beta2 stored and "
                             "served, v1beta1 served through conversion; emulated plane only)")
    create.add_argument("--class", dest="cluster_class", metavar="CLASS",
                        help="a ClusterClass cluster: the class CLASS (made with its templates in the namespace if "
                             "missing) and a Cluster with spec.topology, reconciled by the real topology controller; "
                             "upstream plane only (up --kubernetes upstream), with --openstack")
    _add_openstack_options(create)
    delete = actions.add_parser("delete", help="remove every object of the cluster, and its own API")
    delete.add_argument("name")
    delete.add_argument("--namespace", default="default")
    delete.add_argument("--openstack", action="store_true",
                        help="also its OpenStack resources (load balancer, servers, router, network, groups)")
    kubeconfig = actions.add_parser("kubeconfig", help="print the kubeconfig of the cluster's own API (its Nodes)")
    kubeconfig.add_argument("name")
    kubeconfig.add_argument("--namespace", default="default")
    listing = actions.add_parser("list", help="clusters as JSON")
    listing.add_argument("--namespace", help="default: all namespaces")
    for action in (delete, listing):
        action.add_argument("--target", action="store_true",
                            help="on the move target API (kubernetes-target) instead of the main one")


def _add_openstack_options(parser, drift_help: str = "with --openstack: leave this drift (repeatable)") -> None:
    parser.add_argument("--no-load-balancer", action="store_true",
                        help="no API load balancer (the endpoint is the first control-plane server; no rollout)")
    parser.add_argument("--drift", action="append", choices=drift.KINDS, help=drift_help)


def _add_capi_fleet(areas) -> None:
    fleet = areas.add_parser("fleet", help="seed or remove many clusters with OpenStack resources")
    actions = fleet.add_subparsers(dest="fleet_action", required=True)
    create = actions.add_parser("create", help="COUNT clusters PREFIX-1..COUNT; prints them, seconds, requests")
    create.add_argument("count", type=int)
    create.add_argument("--prefix", default="fleet")
    create.add_argument("--namespace", action="append", help="namespaces, round-robin (repeatable; default default)")
    create.add_argument("--api-version", action="append", choices=("v1beta1", "v1beta2"),
                        help="CAPI contracts, round-robin (repeatable; default v1beta2)")
    create.add_argument("--control-plane", type=int, default=1, help="control-plane machines each (default 1)")
    create.add_argument("--workers", type=int, default=0, help="worker machines each (default 0)")
    create.add_argument("--drift-every", type=int, default=0, help="every Nth cluster drifts (default 0: none)")
    _add_openstack_options(create, "the drift of those clusters (repeatable; default every kind)")
    delete = actions.add_parser("delete", help="remove the clusters PREFIX-<number> and their OpenStack resources")
    delete.add_argument("--prefix", default="fleet")
    delete.add_argument("--namespace", action="append", help="only in these namespaces (default all)")


def _add_capi_rollout_and_history(areas) -> None:
    rolling = areas.add_parser("rollout", help="roll a control plane (cluster created with --openstack)")
    rolling.add_argument("words", nargs="+", metavar="[status] NAME",
                         help="NAME starts a rollout and returns at once; 'status NAME' shows it (JSON)")
    rolling.add_argument("--namespace", default="default")
    rolling.add_argument("--capo-wait", choices=("member", "lb"), default="member",
                         help="member: CAPO waits for the new member to be ACTIVE; lb: only for the load "
                              "balancer (CAPO before v0.14)")
    recorded = areas.add_parser("history", help="pool members and machines sampled during the last rollout")
    recorded.add_argument("name")
    recorded.add_argument("--namespace", default="default")
    recorded.add_argument("--rollout", type=int, help="which rollout (default: the latest)")
    recorded.add_argument("--summary", action="store_true", help="min serving, min active... instead of samples")


def add_capi_verb(verbs) -> None:
    p = verbs.add_parser("capi", help="CAPI on the emulated Kubernetes API: provider mode, seeded clusters")
    areas = p.add_subparsers(dest="capi_area", required=True)
    # 'provider': the emulated infrastructure provider (CAPO), see minicloud.kube.capo_mode
    provider = areas.add_parser("provider", help="show or set how the infrastructure provider reacts to a pause")
    provider.add_argument("mode", nargs="?", choices=CAPO_MODES)
    provider.add_argument("--delay", type=float, help="seconds after the pause (default 2)")
    crds = areas.add_parser("crds", help="show or install CAPO's CRDs on the emulated management cluster")
    crds.add_argument("--capo-api-version", choices=("v1beta1", "v1beta2"),
                      help="install the CRDs of CAPO v0.15 (v1beta2; v1beta1 served too) or back to v0.14's "
                           "(v1beta1; refused while objects are kept at v1beta2)")
    crds.add_argument("--target", action="store_true",
                      help="on the move target API (kubernetes-target) instead of the main one")
    _add_capi_cluster(areas)
    _add_capi_fleet(areas)
    _add_capi_rollout_and_history(areas)
    p.set_defaults(func=cmd_capi)


def add_kube_verb(verbs) -> None:
    p = verbs.add_parser("kube", help="objects of the emulated Kubernetes API")
    areas = p.add_subparsers(dest="kube_area", required=True)
    node = areas.add_parser("node", help="create, delete or list nodes")
    actions = node.add_subparsers(dest="node_action", required=True)
    create = actions.add_parser("create", help="a Ready node with a pod CIDR and an InternalIP")
    create.add_argument("name")
    create.add_argument("--pod-cidr", help="spec.podCIDR (omitted: none yet)")
    create.add_argument("--address", help="InternalIP (omitted: none)")
    create.add_argument("--label", type=label, action="append", help="KEY=VALUE (repeatable)")
    delete = actions.add_parser("delete")
    delete.add_argument("name")
    listing = actions.add_parser("list", help="nodes with pod CIDRs and InternalIPs")
    for action in (create, delete, listing):
        action.add_argument("--cluster", help="a seeded cluster: its Nodes, in its own API (default: the "
                                              "management API's)")
        action.add_argument("--namespace", default="default", help="the seeded cluster's namespace")
    p.set_defaults(func=cmd_kube)


def add_verbs(verbs) -> None:
    add_capi_verb(verbs)
    add_kube_verb(verbs)
