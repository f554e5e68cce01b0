# -*- coding: utf-8 -*-
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Deployments (apps/v1) as plain records: namespace, name, labels and the images of their containers.

One list request (all namespaces, or one namespace), read as JSON through ``KubernetesClient.call`` (retries,
deadline, counting) and the client's ``ApiClient`` (no apps models are built).
"""

import json


def deployment_record(deployment):
    """``{"namespace", "name", "labels", "images"}`` of one Deployment (a dict as the API sends it)."""
    metadata = deployment.get("metadata") or {}
    pod = ((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}
    containers = (pod.get("containers") or []) + (pod.get("initContainers") or [])
    return {"namespace": metadata.get("namespace"), "name": metadata.get("name"),
            "labels": metadata.get("labels") or {},
            "images": sorted(set(c.get("image") for c in containers if isinstance(c, dict) and c.get("image")))}


def list_deployments(kube, deadline, namespace=None):
    """Every Deployment (of ``namespace``, else of all namespaces) as ``deployment_record`` dicts, sorted."""
    path = "/apis/apps/v1/namespaces/%s/deployments" % namespace if namespace else "/apis/apps/v1/deployments"

    def request():
        answer = kube.api_client.call_api(
            path, "GET", header_params={"Accept": "application/json"}, auth_settings=["BearerToken"],
            _preload_content=False, _return_http_data_only=True)
        return json.loads(answer.data)

    found = kube.call(request, "listing Deployments in %s" % (namespace or "all namespaces"), deadline)
    return sorted((deployment_record(d) for d in found.get("items") or []),
                  key=lambda r: (r["namespace"] or "", r["name"] or ""))
