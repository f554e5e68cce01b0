# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the collection reads of CAPO's OpenStackCluster, in both of CAPO's API versions.  Pure.

The fields that moved between ``infrastructure.cluster.x-k8s.io/v1beta1`` (CAPO v0.10 to v0.14) and ``v1beta2``
(CAPO v0.15; ``api/v1beta1/conversion.go`` and the book's "v1beta1 to v1beta2" page):

=======================  ===========================================  ==============================================
                         v1beta1                                      v1beta2
=======================  ===========================================  ==============================================
API load balancer        status.apiServerLoadBalancer                 status.apiServerManagedLoadBalancer
load balancer enabled    spec.apiServerLoadBalancer.enabled           spec.apiServer.managedLoadBalancer.enabled
API server port          spec.apiServerPort                           spec.apiServer.port
provisioned              status.initialization.provisioned, else      status.initialization.provisioned
                         status.ready
failure                  status.failureReason / failureMessage        (removed: the conditions say it)
=======================  ===========================================  ==============================================

``status.network`` (with ``subnets``), ``externalNetwork``, ``router``, ``bastion`` and the security groups
(``controlPlaneSecurityGroup``, ``workerSecurityGroup``, ``bastionSecurityGroup``) keep their names and shapes.

An object served by CAPO carries the fields of its own version only. One carrying both names of a field (written
by hand, or by a tool that merged two versions) is read when both say the same thing and refused
(``CapoError``) when they differ: which one CAPO acts on is unknown. An object carrying neither load-balancer
field has no API load balancer (yet): ``api_load_balancer`` is None and ``no_load_balancer`` says why in words.

The API pool is ``<load balancer name>-<port>`` with CAPO's port (``getAPIServerPort`` in
``controllers/openstackcluster_controller.go``): ``spec.controlPlaneEndpoint.port`` when the endpoint is set (a
host and a port), else the API server port of the spec, else 6443.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import PlanError
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capo.names import (
    DEFAULT_API_SERVER_PORT,
    port_objects_name,
)

#: (v1beta2 path, v1beta1 path) of each field that moved
LOAD_BALANCER_STATUS = (("status", "apiServerManagedLoadBalancer"), ("status", "apiServerLoadBalancer"))
LOAD_BALANCER_ENABLED = (("spec", "apiServer", "managedLoadBalancer", "enabled"),
                         ("spec", "apiServerLoadBalancer", "enabled"))
API_SERVER_PORT = (("spec", "apiServer", "port"), ("spec", "apiServerPort"))
SECURITY_GROUPS = (("control_plane", "controlPlaneSecurityGroup"), ("worker", "workerSecurityGroup"),
                   ("bastion", "bastionSecurityGroup"))


#: An OpenStackCluster as the API returned it (a plain dict), or None where the Cluster has none.
Infra = Optional[dict[str, Any]]


class CapoError(PlanError):
    """An OpenStackCluster that cannot be read without guessing (two versions of a field that differ, a port that
    is no port)."""


def _dig(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def identity(infra: Infra) -> str:
    """``OpenStackCluster namespace/name``, the way messages name it."""
    metadata = (infra or {}).get("metadata") or {}
    return f"{(infra or {}).get('kind') or 'OpenStackCluster'} {metadata.get('namespace')}/{metadata.get('name')}"


def _where(path: Sequence[str]) -> str:
    return ".".join(path)


def _either(infra: Infra, paths: Sequence[Sequence[str]], key: Callable[[Any], Any] = lambda value: value) -> Any:
    """The value of a field that moved: at its v1beta2 path or its v1beta1 one.  Both present and different
    (compared by ``key``): CapoError."""
    found = [(path, _dig(infra, *path)) for path in paths]
    found = [(path, value) for path, value in found if value is not None]
    if len(found) == 2 and key(found[0][1]) != key(found[1][1]):
        raise CapoError(f"{identity(infra)} carries both {_where(found[0][0])} ({key(found[0][1])}, CAPO's v1beta2 "
                        f"API) and {_where(found[1][0])} ({key(found[1][1])}, v1beta1) and they differ: CAPO writes "
                        "one of them, so which one it acts on is unknown; correct the object")
    return found[0][1] if found else None


def _lb_key(value: Any) -> str:
    return f"id {value.get('id')}, name {value.get('name')}" if isinstance(value, dict) else repr(value)


def _reported(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) and (value.get("id") or value.get("name")) else None


def api_load_balancer(infra: Infra) -> dict[str, Any] | None:
    """``{id, name, ip, internal_ip, allowed_cidrs}`` of the API load balancer the OpenStackCluster reports (either
    version), or None when it reports none.  CapoError when both fields name different load balancers."""
    if not infra:
        return None
    reported = dict(infra, status=dict((k, _reported(v)) for k, v in ((infra.get("status") or {}).items())))
    lb = _either(reported, LOAD_BALANCER_STATUS, _lb_key)
    if lb is None:
        return None
    return {"id": lb.get("id"), "name": lb.get("name"), "ip": lb.get("ip"), "internal_ip": lb.get("internalIP"),
            "allowed_cidrs": list(lb.get("allowedCIDRs") or [])}


def api_load_balancer_enabled(infra: Infra) -> bool | None:
    """Whether the spec asks CAPO for an API load balancer: True, False, or None when it does not say."""
    enabled = _either(infra, LOAD_BALANCER_ENABLED)
    return None if enabled is None else bool(enabled)


def no_load_balancer(infra: Infra) -> str:
    """Why there is no API load balancer to read, in words (for an OpenStackCluster ``api_load_balancer`` gives
    None for)."""
    if not infra:
        return "the Cluster has no infrastructure cluster (OpenStackCluster) to report an API load balancer"
    words = (f"{identity(infra)} reports no API load balancer (status.apiServerManagedLoadBalancer in CAPO's v1beta2 "
             "API, status.apiServerLoadBalancer in v1beta1)")
    if api_load_balancer_enabled(infra) is False:
        words += (f": its spec turns CAPO's API load balancer off ({_where(LOAD_BALANCER_ENABLED[0])} or "
                  f"{_where(LOAD_BALANCER_ENABLED[1])} is false)")
    return words


def _port(infra: Infra, path: Sequence[str], value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 65535:
        raise CapoError(f"{identity(infra)}: {_where(path)} is {value!r}, no port")
    return value or None


def api_server_port(infra: Infra) -> int:
    """The port CAPO serves the API on, and names the API pool after: ``getAPIServerPort``."""
    endpoint = _dig(infra, "spec", "controlPlaneEndpoint") or {}
    port = _port(infra, ("spec", "controlPlaneEndpoint", "port"), endpoint.get("port"))
    if endpoint.get("host") and port:
        return port
    port = _port(infra, API_SERVER_PORT[0], _either(infra, API_SERVER_PORT))
    return port or DEFAULT_API_SERVER_PORT


def api_pool_name(infra: Infra) -> str | None:
    """CAPO's pool of the API server port on the API load balancer, ``<load balancer name>-<port>``; None when the
    OpenStackCluster reports no load balancer name."""
    lb = api_load_balancer(infra)
    if not lb or not lb.get("name"):
        return None
    return port_objects_name(lb["name"], api_server_port(infra))


def provisioned(infra: Infra) -> bool | None:
    """``status.initialization.provisioned`` (both versions), else v1beta1's ``status.ready``; None unknown."""
    status = (infra or {}).get("status") or {}
    value = _dig(status, "initialization", "provisioned")
    if value is None:
        value = status.get("ready")
    return None if value is None else bool(value)


def failure(infra: Infra) -> dict[str, Any] | None:
    """v1beta1's terminal ``failureReason``/``failureMessage`` (v1beta2 has none), or None."""
    status = (infra or {}).get("status") or {}
    if not status.get("failureReason") and not status.get("failureMessage"):
        return None
    return {"reason": status.get("failureReason"), "message": status.get("failureMessage")}


def named(value: Any, *extra: str) -> dict[str, Any] | None:
    """``{id, name, ...}`` of a status reference, or None."""
    if not isinstance(value, dict) or not (value.get("id") or value.get("name")):
        return None
    result = {"id": value.get("id"), "name": value.get("name")}
    for field in extra:
        result[field] = value.get(field)
    return result


def network(infra: Infra) -> dict[str, Any] | None:
    return named(_dig(infra, "status", "network"))


def subnets(infra: Infra) -> list[dict[str, Any]]:
    return [{"id": s.get("id"), "name": s.get("name"), "cidr": s.get("cidr")}
            for s in _dig(infra, "status", "network", "subnets") or [] if isinstance(s, dict)]


def external_network(infra: Infra) -> dict[str, Any] | None:
    return named(_dig(infra, "status", "externalNetwork"))


def router(infra: Infra) -> dict[str, Any] | None:
    found = named(_dig(infra, "status", "router"), "ips")
    if found is not None:
        found["ips"] = list(found["ips"] or [])
    return found


def security_groups(infra: Infra) -> dict[str, dict[str, Any] | None]:
    """``{control_plane, worker, bastion}``, each ``{id, name}`` or None."""
    return dict((name, named(_dig(infra, "status", field))) for name, field in SECURITY_GROUPS)
