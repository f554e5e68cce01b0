# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""cluster_readiness' decisions, pure functions over plain data (no API access, no clock).

Is a Cluster API cluster on OpenStack fit for a control-plane change? Each view (what is installed, ORC, the
load balancer's health monitor and its provider, KubeadmControlPlane's rollout, MachineHealthChecks, v1beta1
writers) gives findings with a severity, the numbers and what to do. A view that could not be read is ``unknown`` (a finding of
its own), never fine. Which findings block is the user's choice (``blocking``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Optional

from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi import topology
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capo import cluster as capo
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia import provider as lb_providers

INFO = "info"
WARNING = "warning"
CRITICAL = "critical"
SEVERITIES = (INFO, WARNING, CRITICAL)

OK = "ok"
FINDINGS = "findings"
UNKNOWN = "unknown"
SKIPPED = "skipped"

VIEWS = ("versions", "orc", "monitor", "load_balancer", "control_plane", "health_checks", "v1beta1_writers")
#: The views read from OpenStack (the API pool and its load balancer): the only ones without a Cluster.
OPENSTACK_VIEWS = ("monitor", "load_balancer")

#: The support table, in one place. Source: the Cluster API release and support policy and the CAPO release
#: notes, checked 2026-11: CAPI v1.10 and v1.11 are out of support, v1beta1 is no longer served from v1.16,
#: CAPO v0.12 and later need ORC (openstack-resource-controller).
SUPPORT = {
    "checked": "2026-11",
    "source": "Cluster API release and support policy; CAPO release notes",
    "capi_oldest_supported": "v1.12",
    "capi_v1beta1_removed_in": "v1.16",
    "capo_needs_orc_from": "v0.12",
}
CAPI_OLDEST_SUPPORTED = (1, 12)
CAPI_V1BETA1_REMOVED = (1, 16)
CAPO_NEEDS_ORC = (0, 12)

#: clusterctl's names: the core provider and CAPO in its inventory, the label on a provider's objects.
CORE_PROVIDER = "CoreProvider"
INFRASTRUCTURE_PROVIDER = "InfrastructureProvider"
CAPO_NAME = "openstack"
PROVIDER_LABEL = "cluster.x-k8s.io/provider"
TYPE_PREFIXES = {"CoreProvider": "", "BootstrapProvider": "bootstrap-", "ControlPlaneProvider": "control-plane-",
                 "InfrastructureProvider": "infrastructure-", "IPAMProvider": "ipam-",
                 "RuntimeExtensionProvider": "runtime-extension-", "AddonProvider": "addon-"}
#: ORC: its API group, and the words its provider and image carry.
ORC_GROUP = "openstack.k-orc.cloud"
ORC_WORDS = ("openstack-resource-controller", "orc")
CAPI_GROUPS = ("cluster.x-k8s.io", "controlplane.cluster.x-k8s.io", "bootstrap.cluster.x-k8s.io")
SKIP_REMEDIATION = "cluster.x-k8s.io/skip-remediation"

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?")

#: A finding: code, severity, view, message, action and numbers (``blocking`` once marked).
Finding = dict[str, Any]
#: What a view's read gave: the API's plain data (objects, records, a check), or an ``Unknown`` saying why none.
Read = Any
#: A view judged: (its data for the result, its findings, its status).
Judged = tuple[Any, list[Finding], str]
#: Each view's status and the reason it is unknown, by the view's name.
Views = dict[str, dict[str, Any]]
Version = tuple[int, int, int]


@dataclass(eq=False)
class Unknown:
    """A view that could not be read, and why (``reason`` names the request and its answer)."""

    reason: str


def is_unknown(value: Any) -> bool:
    return isinstance(value, Unknown)


def parse_version(text: Optional[str]) -> Optional[Version]:
    """``v1.11.3`` -> (1, 11, 3); None when it is no version."""
    found = _VERSION.match(text or "")
    if not found:
        return None
    return (int(found.group(1)), int(found.group(2)), int(found.group(3) or 0))


def image_tag(image: Optional[str]) -> Optional[str]:
    """The tag of an image reference (``...:v1.11.3``), None for a digest or no tag."""
    name = (image or "").split("@")[0]
    last = name.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else None


def finding(code: str, severity: str, view: str, message: str, action: str, **numbers: Any) -> Finding:
    return {"code": code, "severity": severity, "view": view, "message": message, "action": action,
            "numbers": numbers}


def unknown_finding(view: str, reason: str, severity: str = WARNING, action: Optional[str] = None) -> Finding:
    return finding(view + "_unknown", severity, view, f"{view.replace('_', ' ')}: unknown ({reason})",
                   action or "give the module read access to what it names, or check that part by hand; an unknown "
                   "view is never reported as fine")


def manifest_label(provider: dict[str, Any]) -> str:
    """clusterctl's ``cluster.x-k8s.io/provider`` label of a provider's objects (``infrastructure-openstack``)."""
    if provider.get("type") == CORE_PROVIDER:
        return "cluster-api"
    return TYPE_PREFIXES.get(provider.get("type") or "", "") + (provider.get("providerName") or "")


def provider_rows(providers: list[dict[str, Any]], deployments: Read) -> list[dict[str, Any]]:
    """One row per clusterctl Provider: name, type, namespace, version, and the images of its controller
    Deployments (``deployments`` records; an Unknown gives ``images: None``)."""
    rows = []
    for provider in providers:
        metadata = provider.get("metadata") or {}
        row = {"name": provider.get("providerName") or metadata.get("name"), "type": provider.get("type"),
               "namespace": metadata.get("namespace"), "version": provider.get("version"), "images": None}
        if not is_unknown(deployments):
            label = manifest_label(provider)
            row["images"] = sorted(set(
                image for d in deployments if d["namespace"] == row["namespace"]
                and d["labels"].get(PROVIDER_LABEL, label) == label for image in d["images"]))
        rows.append(row)
    return sorted(rows, key=lambda r: (r["type"] or "", r["name"] or ""))


def find_provider(rows: list[dict[str, Any]], kind: str, name: Optional[str] = None) -> Optional[dict[str, Any]]:
    for row in rows:
        if row["type"] == kind and (name is None or row["name"] == name):
            return row
    return None


def _capi_findings(core: Optional[dict[str, Any]]) -> list[Finding]:
    view = "versions"
    if core is None:
        return [finding("capi_version_unknown", WARNING, view, "no core provider (cluster-api) in clusterctl's "
                        "inventory: the installed Cluster API version is unknown",
                        "install providers with clusterctl, or check the version of the capi-controller-manager "
                        "image by hand")]
    version = parse_version(core["version"])
    if version is None:
        return [finding("capi_version_unknown", WARNING, view,
                        f"the core provider's version {core['version']!r} is no version",
                        "check the capi-controller-manager image by hand")]
    if version[:2] < CAPI_OLDEST_SUPPORTED:
        oldest = SUPPORT["capi_oldest_supported"]
        return [finding("capi_out_of_support", WARNING, view,
                        f"Cluster API {core['version']} is out of support (the oldest supported minor is {oldest}, "
                        f"as of {SUPPORT['checked']})",
                        f"upgrade Cluster API to {oldest} or later with clusterctl upgrade, one minor at a time",
                        version=core["version"], oldest_supported=oldest)]
    return []


def _image_findings(rows: list[dict[str, Any]]) -> list[Finding]:
    found = []
    for row in rows:
        tags = sorted(set(t for t in (image_tag(i) for i in row["images"] or []) if t))
        if row["version"] and tags and row["version"] not in tags:
            found.append(finding(
                "provider_image_mismatch", WARNING, "versions",
                f"provider {row['name']} ({row['type']}) is recorded at {row['version']} in clusterctl's inventory "
                f"but its controller runs {', '.join(tags)}",
                "finish or repeat the provider's upgrade with clusterctl upgrade, so that the inventory and the "
                "controller agree", provider=row["name"], inventory_version=row["version"], image_tags=tags))
    return found


def judge_versions(providers: Read, deployments: Read) -> Judged:
    """(rows, findings, status) of what is installed: clusterctl's Provider objects (or Unknown) and the
    Deployments' images (or Unknown)."""
    if is_unknown(providers):
        return [], [unknown_finding("versions", providers.reason)], UNKNOWN
    rows = provider_rows(providers, deployments)
    found = _capi_findings(find_provider(rows, CORE_PROVIDER)) + _image_findings(rows)
    if is_unknown(deployments):
        found.append(finding("controller_images_unknown", INFO, "versions",
                             f"the controllers' images are unknown ({deployments.reason}); the versions are "
                             "clusterctl's inventory only", "allow listing Deployments to compare them"))
    return rows, found, FINDINGS if found else OK


def orc_evidence(rows: list[dict[str, Any]], deployments: Read, served_groups: Optional[dict[str, Any]]) -> list[str]:
    """Where ORC was seen: its API group served, a Provider or a Deployment image naming it."""
    seen = []
    if ORC_GROUP in (served_groups or {}):
        seen.append(f"API group {ORC_GROUP} served")
    for row in rows:
        if (row["name"] or "").lower() in ORC_WORDS:
            seen.append(f"provider {row['name']}")
    if not is_unknown(deployments):
        for record in deployments:
            if any(ORC_WORDS[0] in image for image in record["images"]):
                seen.append(f"Deployment {record['namespace']}/{record['name']}")
    return seen


def judge_orc(rows: list[dict[str, Any]], deployments: Read, served_groups: Optional[dict[str, Any]],
              versions_status: str) -> Judged:
    """(orc dict, findings, status): whether CAPO 0.12 or later has ORC beside it."""
    capo = find_provider(rows, INFRASTRUCTURE_PROVIDER, CAPO_NAME)
    seen = orc_evidence(rows, deployments, served_groups)
    capo_version = parse_version(capo["version"]) if capo else None
    data: dict[str, Any] = {"present": True if seen else None, "seen": seen,
                            "capo_version": capo["version"] if capo else None}
    if seen:
        return data, [], OK
    if versions_status == UNKNOWN:
        return data, [unknown_finding("orc", "ORC's API group is not served and the installed providers are "
                                      "unknown")], UNKNOWN
    if capo is None:
        return data, [], SKIPPED  # no CAPO in clusterctl's inventory: nothing here needs ORC
    if capo_version is None:
        return data, [unknown_finding("orc", f"CAPO's version {capo['version']!r} is no version")], UNKNOWN
    if capo_version[:2] < CAPO_NEEDS_ORC:
        return data, [], OK
    if is_unknown(deployments):
        return data, [unknown_finding("orc", "ORC's API group is not served and Deployments could not be listed: "
                                      + deployments.reason)], UNKNOWN
    data["present"] = False
    return data, [finding(
        "orc_missing", CRITICAL, "orc",
        f"CAPO {capo['version']} needs ORC (openstack-resource-controller) from {SUPPORT['capo_needs_orc_from']} on, "
        f"and it is not installed (no API group {ORC_GROUP}, no provider or controller image of it)",
        "install ORC before changing anything: CAPO's controllers cannot resolve images and other OpenStack "
        "resources without it", capo_version=capo["version"])], FINDINGS


def _int_or_none(value: Any) -> Optional[int]:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def kcp_rollout(control_plane: dict[str, Any]) -> dict[str, Any]:
    """replicas, strategy and maxSurge of a KubeadmControlPlane, v1beta2 (``spec.rollout.strategy``) or v1beta1
    (``spec.rolloutStrategy``); an unset maxSurge is KCP's default, 1."""
    spec = control_plane.get("spec") or {}
    strategy = (spec.get("rollout") or {}).get("strategy") or spec.get("rolloutStrategy") or {}
    surge = (strategy.get("rollingUpdate") or {}).get("maxSurge")
    metadata = control_plane.get("metadata") or {}
    return {"kind": control_plane.get("kind"), "name": metadata.get("name"), "replicas": spec.get("replicas"),
            "strategy": strategy.get("type") or "RollingUpdate",
            "max_surge": 1 if surge is None else _int_or_none(surge), "max_surge_set": surge is not None}


def judge_control_plane(control_plane: Read) -> Judged:
    """(rollout dict, findings, status) of the control plane object (None: the Cluster names none; Unknown)."""
    view = "control_plane"
    if is_unknown(control_plane):
        return None, [unknown_finding(view, control_plane.reason)], UNKNOWN
    if control_plane is None or control_plane.get("kind") != "KubeadmControlPlane":
        what = "the Cluster's control plane is not there" if control_plane is None else (
            f"the control plane is a {control_plane.get('kind')}, whose rollout is not judged here")
        return None, [unknown_finding(view, what)], UNKNOWN
    rollout = kcp_rollout(control_plane)
    replicas, surge = rollout["replicas"], rollout["max_surge"]
    numbers = dict(replicas=replicas, max_surge=surge, strategy=rollout["strategy"])
    if replicas is None or surge is None:
        return rollout, [unknown_finding(view, f"replicas {replicas!r}, maxSurge {surge!r}")], UNKNOWN
    if replicas == 1 and surge == 0:
        found = [finding("kcp_single_replica_no_surge", CRITICAL, view,
                         f"KubeadmControlPlane {rollout['name']} has a single replica and maxSurge 0: a rollout "
                         "deletes the only control-plane Machine before its replacement exists, the API is down in "
                         "between", "set the rollout strategy's maxSurge to 1 (or scale to 3 replicas) before the "
                         "rollout", **numbers)]
    elif replicas == 1:
        found = [finding("kcp_single_replica", INFO, view,
                         f"KubeadmControlPlane {rollout['name']} has a single replica: the rollout surges to 2 and "
                         "back, with one etcd member and no redundancy before and after",
                         "scale to 3 replicas for a control plane that survives the loss of a Machine", **numbers)]
    elif surge == 0:
        found = [finding("kcp_no_surge", INFO, view,
                         f"KubeadmControlPlane {rollout['name']} rolls with maxSurge 0: each step runs on "
                         f"{replicas - 1} of {replicas} control-plane Machines",
                         "set maxSurge to 1 to keep every replica during the rollout", **numbers)]
    else:
        found = []
    return rollout, found, FINDINGS if found else OK


def judge_topology(cluster: dict[str, Any], control_plane: Read) -> tuple[dict[str, Any], list[Finding]]:
    """(topology view, findings) of a ClusterClass cluster, in the control_plane view: that it is topology-managed
    and by which class (info: the topology controller owns the control plane's spec, so a change starts through
    the Cluster), and an upgrade under way (warning: the Cluster asks for another version than the control plane
    runs). A plain cluster gives no finding."""
    view = "control_plane"
    control_plane = None if is_unknown(control_plane) else control_plane
    data = topology.topology_view(cluster, control_plane)
    if not data["managed"]:
        return data, []
    metadata = cluster.get("metadata") or {}
    name = f"{metadata.get('namespace')}/{metadata.get('name')}"
    numbers = dict(cluster_class=data["class"], class_namespace=data["class_namespace"], version=data["version"],
                   control_plane_version=data["control_plane_version"])
    found = [finding("topology_managed", INFO, view,
                     f"Cluster {name} is managed by ClusterClass {data['class_namespace']}/{data['class']}: the "
                     "topology controller owns its control plane's spec",
                     f"start a rollout through the Cluster ({topology.ROLLOUT_AFTER_FIELD}, Cluster API "
                     f"{topology.ROLLOUT_AFTER_SINCE} and later; rollout_guard does so) and an upgrade through "
                     "spec.topology.version, never by editing the control plane", **numbers)]
    if data["upgrading"]:
        found.append(finding("topology_upgrading", WARNING, view,
                             f"Cluster {name} asks for Kubernetes {data['version']}, its control plane runs "
                             f"{data['control_plane_version']}: the topology controller is upgrading it",
                             "guard the upgrade (control_plane_rollout with follow) or wait until it is done before "
                             "another change", **numbers))
    return data, found


def selector_matches(selector: Optional[dict[str, Any]], labels: dict[str, str]) -> bool:
    """A label selector (matchLabels, matchExpressions) against ``labels``; an empty selector matches all."""
    selector = selector or {}
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = expression.get("key"), expression.get("operator"), expression.get("values") or []
        if operator == "In" and labels.get(key) not in values:
            return False
        if operator == "NotIn" and key in labels and labels[key] in values:
            return False
        if operator == "Exists" and key not in labels:
            return False
        if operator == "DoesNotExist" and key in labels:
            return False
    return True


def covered_machines(health_check: dict[str, Any], machines: list[dict[str, Any]], cluster: str) -> list[str]:
    """Names of the control-plane ``machines`` of ``cluster`` the MachineHealthCheck may remediate (its
    selector matches, no skip-remediation annotation)."""
    if (health_check.get("spec") or {}).get("clusterName") != cluster:
        return []
    names: list[Any] = []  # the Machines' names, as the API gave them
    for machine in machines:
        metadata = machine.get("metadata") or {}
        labels = metadata.get("labels") or {}
        if "cluster.x-k8s.io/control-plane" not in labels or SKIP_REMEDIATION in (metadata.get("annotations") or {}):
            continue
        if selector_matches((health_check.get("spec") or {}).get("selector"), labels):
            names.append(metadata.get("name"))
    return sorted(names)


def judge_health_checks(health_checks: Read, machines: Read, cluster: str) -> Judged:
    """(rows, findings, status): MachineHealthChecks that cover control-plane Machines of ``cluster``."""
    view = "health_checks"
    for value in (health_checks, machines):
        if is_unknown(value):
            return [], [unknown_finding(view, value.reason)], UNKNOWN
    rows: list[dict[str, Any]] = []
    found: list[Finding] = []
    for check in health_checks:
        name = (check.get("metadata") or {}).get("name")
        covered = covered_machines(check, machines, cluster)
        rows.append({"name": name, "control_plane_machines": covered})
        if covered:
            found.append(finding(
                "mhc_covers_control_plane", WARNING, view,
                f"MachineHealthCheck {name} covers {len(covered)} control-plane Machine(s) ({', '.join(covered)}): it "
                "may remediate (delete) one in the middle of a guarded rollout",
                f"for the rollout's time annotate the control-plane Machines with {SKIP_REMEDIATION}, or narrow the "
                "check's selector to worker Machines", machine_health_check=name, machines=covered))
    return rows, found, FINDINGS if found else OK


def last_write(obj: dict[str, Any]) -> Optional[dict[str, Any]]:
    """The newest managedFields entry of an object (by time), None when it has none."""
    entries = [e for e in (obj.get("metadata") or {}).get("managedFields") or [] if isinstance(e, dict)]
    if not entries:
        return None
    return sorted(entries, key=lambda e: e.get("time") or "")[-1]


def judge_writers(objects: Read) -> Judged:
    """(rows, findings, status): the objects of CAPI's own groups whose last write was in v1beta1
    (``objects``: plain objects read, or Unknown)."""
    view = "v1beta1_writers"
    if is_unknown(objects):
        return [], [unknown_finding(view, objects.reason, INFO)], UNKNOWN
    rows: list[dict[str, Any]] = []
    visible = 0
    for obj in objects:
        entry = last_write(obj)
        if entry is None:
            continue
        visible += 1
        version = entry.get("apiVersion") or ""
        if version.rsplit("/", 1)[0] in CAPI_GROUPS and version.endswith("/v1beta1"):
            metadata = obj.get("metadata") or {}
            rows.append({"object": f"{obj.get('kind')} {metadata.get('namespace')}/{metadata.get('name')}",
                         "manager": entry.get("manager"), "operation": entry.get("operation"),
                         "time": entry.get("time"), "api_version": version})
    if not visible:
        return [], [unknown_finding(view, "no object read carries managedFields", INFO,
                                    "read the objects' managers by hand (kubectl get --show-managed-fields)")], UNKNOWN
    if not rows:
        return rows, [], OK
    managers = sorted(set(r["manager"] or "?" for r in rows))
    removed_in = SUPPORT["capi_v1beta1_removed_in"]
    return rows, [finding(
        "v1beta1_writers", WARNING, view,
        f"{len(rows)} object(s) were last written in v1beta1, by {', '.join(managers)}: Cluster API stops serving "
        f"v1beta1 in {removed_in}",
        f"move these clients (GitOps tools, scripts, older providers) to v1beta2 before upgrading to {removed_in}",
        objects=len(rows), managers=managers)], FINDINGS


def api_pool(pool: Optional[str], infrastructure: Read) -> tuple[Optional[str], Optional[str]]:
    """(the pool to judge, why there is none): ``pool`` as given, else CAPO's API pool of the infrastructure
    cluster, ``<load balancer name>-<CAPO's API server port>`` read in either CAPO API version (``capo.cluster``)."""
    if pool:
        return pool, None
    if is_unknown(infrastructure):
        return None, f"no pool: {infrastructure.reason}; set pool"
    try:
        name = capo.api_pool_name(infrastructure)
    except capo.CapoError as exc:
        return None, f"no pool: {exc}; set pool"
    if name:
        return name, None
    lb = capo.api_load_balancer(infrastructure)
    if lb:
        return None, (f"no pool: {capo.identity(infrastructure)} reports its API load balancer (id {lb.get('id')}) "
                      "without a name; set pool")
    return None, f"no pool: {capo.no_load_balancer(infrastructure)}; set pool"


#: What a missing monitor's action asks for, per provider: ovn-octavia-provider takes TCP and UDP-CONNECT monitors
#: only (``_validate_hm_support``), amphora also HTTP(S).
MONITOR_EXAMPLES = {"ovn": "a TCP monitor (ovn takes TCP or UDP-CONNECT only), e.g. delay 5, max_retries_down 2, "
                           "as CAPO makes one"}
MONITOR_EXAMPLE = "e.g. HTTPS GET /readyz, delay 5, max_retries_down 2"


def monitor_words(check: dict[str, Any], provider: Optional[str]) -> tuple[str, str]:
    """(message, action) of a monitor finding; on ovn the checks are OVN's own service monitor, which
    ovn-octavia-provider gives the monitor's delay as ``interval`` and max_retries_down as ``failure_count``."""
    monitor, message = check["health_monitor"], check["finding"]
    ovn = lb_providers.drain_method(provider) == lb_providers.ADMIN_STATE
    if monitor and ovn:
        message += (f" (on ovn the checks are OVN's own service monitor, run every interval {monitor.get('delay')} s "
                    f"with failure_count {monitor.get('max_retries_down')}: the same window)")
    if not monitor:
        example = MONITOR_EXAMPLES.get("ovn") if ovn else MONITOR_EXAMPLE
        return message, f"create a health monitor on the pool ({example})"
    return message, ("lower the monitor's delay or max_retries_down so that delay x max_retries_down is at most "
                     f"{check['limit']} s")


def judge_monitor(check: Read, asked: bool = True, provider: Optional[str] = None) -> Judged:
    """(check, findings, status) of the pool's health monitor (``health_monitor.window_check`` or Unknown; not
    ``asked``: no OpenStack connection was given, an info-level unknown); ``provider``: the load balancer's, when
    read (its words on ovn)."""
    view = "monitor"
    if is_unknown(check):
        action = None if asked else "give an OpenStack connection (cloud or auth) to judge the API pool's monitor"
        return None, [unknown_finding(view, check.reason, WARNING if asked else INFO, action)], UNKNOWN
    monitor = check["health_monitor"]
    if not check["finding"]:
        return check, [], OK
    message, action = monitor_words(check, provider)
    numbers = dict(window=check["window"], limit=check["limit"])
    if monitor:
        numbers.update(delay=monitor.get("delay"), max_retries_down=monitor.get("max_retries_down"),
                       timeout=monitor.get("timeout"))
    code = "monitor_window_long" if monitor else "monitor_missing"
    return check, [finding(code, WARNING, view, message, action, **numbers)], FINDINGS


#: Whether a provider can fail its load balancer over: amphora replaces its amphora VM; ovn-octavia-provider refuses
#: (``loadbalancer_failover`` raises UnsupportedOptionError); any other provider: not known here (None).
FAILOVER: dict[Optional[str], bool] = {lb_providers.WEIGHT: True, lb_providers.ADMIN_STATE: False}


def provider_words(name: Optional[str], provider: Optional[str], method: Optional[str]) -> tuple[str, str, str, str]:
    """(code, severity, message, action) of the load balancer's provider finding."""
    if method == lb_providers.WEIGHT:
        return "lb_provider", INFO, (
            f"API load balancer {name} runs provider {provider}: rollout_guard's drain (drain: true) sets an old "
            "member's weight to 0 (no new connection; its checks go on, it stays ONLINE) and puts the weight back on "
            "a stopped run; the amphora can be failed over"), (
            "nothing to change; use drain: true where clients do not retry (control_plane_rollout_drain)")
    if method == lb_providers.ADMIN_STATE:
        return "lb_provider", INFO, (
            f"API load balancer {name} runs provider {provider} (ovn-octavia-provider), which ignores a member's "
            "weight: rollout_guard's drain sets an old member's admin_state_up false (it shows OFFLINE while drained) "
            "and back to true on a stopped run; the provider refuses a failover (there is no amphora: OVN serves the "
            "VIP itself); a new member reports ONLINE as soon as it is created, before OVN's first check"), (
            "know that a failover is no remedy here: `openstack loadbalancer failover` is refused, so a load "
            "balancer left in ERROR is repaired on the OVN side or recreated; keep min_healthy_members at the "
            "control plane's replicas, as a new member counts as serving before OVN has checked it")
    return "lb_provider_drain_refused", WARNING, (
        f"API load balancer {name} runs provider {provider!r}, not known to honour a member's weight or "
        f"admin_state_up (known: {', '.join(sorted(lb_providers.DRAIN_METHODS))}): rollout_guard refuses drain: true "
        "before any write, so a rollout cannot take old members out of rotation"), (
        "run the rollout without drain (old Machines are still held until their replacements serve), or have the "
        "provider added to what the guard knows")


def judge_load_balancer(loadbalancer: Read, asked: bool = True) -> Judged:
    """(row, findings, status) of the API pool's load balancer (plain ``id``, ``name``, ``provider``, or Unknown;
    not ``asked``: no OpenStack connection was given): one finding, the provider and what it means for a rollout,
    the drain method from ``octavia/provider.py``."""
    view = "load_balancer"
    if is_unknown(loadbalancer):
        action = None if asked else "give an OpenStack connection (cloud or auth) to read the API load balancer"
        return None, [unknown_finding(view, loadbalancer.reason, WARNING if asked else INFO, action)], UNKNOWN
    provider = loadbalancer.get("provider")
    method = lb_providers.drain_method(provider)
    name = loadbalancer.get("name") or loadbalancer.get("id")
    row = {"id": loadbalancer.get("id"), "name": loadbalancer.get("name"), "provider": provider,
           "drain_method": method, "failover": FAILOVER.get(method)}
    code, severity, message, action = provider_words(name, provider, method)
    return row, [finding(code, severity, view, message, action, provider=provider, load_balancer=name,
                         drain_method=method, drain=lb_providers.describe(method) if method else None,
                         failover=row["failover"])], FINDINGS


#: Every finding code, so that a code given as blocking that no finding has is refused (a typo would block
#: nothing); ``unknown`` stands for every ``*_unknown``.
CODES = ("capi_out_of_support", "capi_version_unknown", "provider_image_mismatch", "controller_images_unknown",
         "orc_missing", "kcp_single_replica_no_surge", "kcp_single_replica", "kcp_no_surge",
         "mhc_covers_control_plane", "v1beta1_writers", "monitor_missing", "monitor_window_long", "lb_provider",
         "lb_provider_drain_refused", "topology_managed", "topology_upgrading", "unknown") + tuple(
    view + "_unknown" for view in VIEWS)


def unknown_codes(fail_on: Optional[Iterable[str]]) -> list[str]:
    return sorted(set(code for code in fail_on or () if code not in CODES))


def mark_blocking(findings: list[Finding], fail_on: Optional[Iterable[str]], fail_on_severity: Optional[str]) -> list[str]:
    """Each finding with ``blocking``: its code is in ``fail_on`` (``unknown``: every view that could not be read),
    or its severity is at least ``fail_on_severity``. The blocking findings' codes."""
    codes = set(fail_on or ())
    rank = SEVERITIES.index(fail_on_severity) if fail_on_severity else None
    for item in findings:
        item["blocking"] = bool(item["code"] in codes or ("unknown" in codes and item["code"].endswith("_unknown"))
                                or (rank is not None and SEVERITIES.index(item["severity"]) >= rank))
    return [item["code"] for item in findings if item["blocking"]]


def summary(title: str, findings: list[Finding], views: Views) -> list[str]:
    """One line for a person, then one line per finding, most severe first."""
    counts = dict((severity, sum(1 for f in findings if f["severity"] == severity)) for severity in SEVERITIES)
    unknown = sorted(name for name, view in views.items() if view["status"] == UNKNOWN)
    blocking = [f["code"] for f in findings if f.get("blocking")]
    counted = (f"{len(findings)} finding(s): {counts[CRITICAL]} critical, {counts[WARNING]} warning, "
               f"{counts[INFO]} info")
    head = f"{title}: {'ready' if not findings else counted}"
    if unknown:
        head += f"; unknown: {', '.join(unknown)}"
    head += f"; blocking: {', '.join(blocking) if blocking else 'none'}"
    ordered = sorted(findings, key=lambda f: -SEVERITIES.index(f["severity"]))
    return [head] + [f"{f['severity'].upper()}{' (blocking)' if f.get('blocking') else ''}: {f['message']}. "
                     f"To do: {f['action']}" for f in ordered]
