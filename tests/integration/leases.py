# -*- coding: utf-8 -*-
"""The cluster's Lease (flightcontrol-<cluster>) on one of minicloud's Kubernetes APIs, for the role tests: read it,
or make another actor hold it."""

import datetime

from kubernetes import client as k8s_client
from kubernetes import config as k8s_config


def coordination(cloud, kubeconfig="kubeconfig"):
    return k8s_client.CoordinationV1Api(k8s_config.new_client_from_config(
        config_file=str(cloud.state_dir / kubeconfig)))


def lease(cloud, name, namespace="default", kubeconfig="kubeconfig"):
    """The Lease flightcontrol-<name>, or None."""
    try:
        return coordination(cloud, kubeconfig).read_namespaced_lease("flightcontrol-" + name, namespace)
    except k8s_client.ApiException as exc:
        if exc.status == 404:
            return None
        raise


def hold_lease(cloud, name, namespace="default", kubeconfig="kubeconfig"):
    """Another actor (AWX job 12 on host awx-ee-1, holder other-run) holds the Lease for an hour, renewed now."""
    now = datetime.datetime.now(datetime.timezone.utc)
    coordination(cloud, kubeconfig).create_namespaced_lease(namespace, k8s_client.V1Lease(
        metadata=k8s_client.V1ObjectMeta(name="flightcontrol-" + name, annotations={
            "flightcontrol.openstack/job-id": "12", "flightcontrol.openstack/host": "awx-ee-1"}),
        spec=k8s_client.V1LeaseSpec(holder_identity="other-run", lease_duration_seconds=3600, acquire_time=now,
                                    renew_time=now)))


def drop_lease(cloud, name, namespace="default", kubeconfig="kubeconfig"):
    """The other actor is gone: its Lease deleted by hand."""
    coordination(cloud, kubeconfig).delete_namespaced_lease("flightcontrol-" + name, namespace)
