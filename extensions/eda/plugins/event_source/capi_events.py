# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""capi_events: an ansible-rulebook event source for Cluster API control planes on a management cluster."""

from __future__ import annotations

DOCUMENTATION = r"""
---
author:
  - flightcontrol.openstack maintainers (@flightcontrol)
short_description: Cluster API rollouts, deletions, pauses and degraded control planes as events.
description:
  - An ansible-rulebook event source that lists, then watches, the Clusters, KubeadmControlPlanes and Machines
    of a Cluster API management cluster and puts normalised, de-duplicated events on the queue.
  - Events (C(type)) are C(rollout_started) (a control plane whose Machines are no longer all up to date, with
    C(reason) C(version), C(rolloutAfter), C(template), C(remediation) or C(other)), C(machine_deleting),
    C(machine_deletion_stuck) (a Machine held in one deletion phase longer than O(stuck_seconds), naming
    C(phase) and C(hooks)), C(cluster_paused), C(cluster_unpaused) and C(control_plane_degraded).
  - Every event carries C(cluster) (C(namespace), C(name)), C(host) and C(meta.hosts), the host name the
    flightcontrol.openstack.capi_clusters inventory gives the cluster, so a rulebook's C(run_playbook) runs for
    that cluster only.
  - A rollout is reported once (the control plane's uid and generation, or the Machine being remediated), however
    often the watch is cut and listed again. A watch that ends is opened again from the last resourceVersion, a
    410 Gone brings a fresh list, failures are retried with a growing, jittered pause.
  - A kubeconfig that cannot be used, a namespace the credentials may not read and a Cluster API that is not
    installed stop the source with a message (ansible-rulebook reports it). Credentials never appear in events or
    messages.
  - Cluster API v1beta2 and v1beta1 are both read (v1beta2 where served).
options:
  kubeconfig:
    description:
      - Path of the management cluster's kubeconfig, or a kubeconfig as a dict. Env C(K8S_AUTH_KUBECONFIG).
      - Without O(kubeconfig), O(host) and O(api_key), the in-cluster service account (an EDA controller
        activation running in Kubernetes), else C(~/.kube/config).
    type: raw
  context:
    description: The kubeconfig context. Env C(K8S_AUTH_CONTEXT).
    type: str
  host:
    description: The API server URL. Env C(K8S_AUTH_HOST).
    type: str
  api_key:
    description: A bearer token. Env C(K8S_AUTH_API_KEY).
    type: str
  validate_certs:
    description: Verify the API server's certificate. Env C(K8S_AUTH_VERIFY_SSL).
    type: bool
  ca_cert:
    description: CA bundle of the API server. Env C(K8S_AUTH_SSL_CA_CERT).
    type: str
  client_cert:
    description: Client certificate. Env C(K8S_AUTH_CERT_FILE).
    type: str
  client_key:
    description: Client key. Env C(K8S_AUTH_KEY_FILE).
    type: str
  proxy:
    description: HTTP proxy URL. Env C(K8S_AUTH_PROXY).
    type: str
  namespaces:
    description: Namespaces to watch. Empty watches every namespace (the credentials must then list
      cluster-wide).
    type: list
    elements: str
    default: []
  label_selector:
    description: Only Clusters with these labels (and their control planes and Machines) make events.
    type: str
  stuck_seconds:
    description: Seconds a Machine may stay in one deletion phase before C(machine_deletion_stuck).
    type: float
    default: 600
  tick_seconds:
    description: Seconds between two looks at what time alone changes (stuck deletions, a rollout time coming).
    type: float
    default: 5
  hostname_format:
    description: The capi_clusters inventory's O(hostname_format), so that C(meta.hosts) names its hosts.
    type: str
    default: '{namespace}/{name}'
  standing_hook:
    description:
      - The name of a standing pre-drain deletion hook (C(pre-drain.delete.hook.machine.cluster.x-k8s.io/<name>))
        that the source puts on every control-plane Machine of the clusters it follows as soon as it sees the
        Machine, so that an old Machine is held before the control plane can delete it, however fast the
        replacement is provisioned. A Machine being deleted gives it up once the guard's own hook
        (O(guard_hook)) is on it, or at once when its Cluster or control plane is being deleted. A deletion that
        no guard takes over stays held (C(machine_deletion_stuck) names the hook) until a person removes it.
      - Needs the right to patch Machines. Empty (the default) writes nothing.
    type: str
  guard_hook:
    description: The deletion hook name of the guard (the control_plane_rollout role's
      C(control_plane_rollout_hook_name)); the standing hook is handed over to it.
    type: str
    default: flightcontrol-rollout
  topology_rollouts:
    description:
      - On a ClusterClass cluster, report a C(rollout_started) at the Cluster's change (a new
        C(spec.topology.version), or a C(spec.topology.controlPlane.rollout.after) that has come), before the topology
        controller writes it onto the control plane, with C(topology) (class, version, rollout_after); the control
        plane's rollout that follows is the same rollout and is not reported again.
      - Off by default, so that a rulebook written for plain clusters keeps its events as they were. Without it such
        a rollout is reported from the control plane (reason C(version) or C(rolloutAfter)) once KCP shows it; with
        the standing hook it is guarded either way. A guard started at the Cluster's change (follow mode) reads the
        Cluster at each look and holds the old Machines from the start (docs/eda.md).
    type: bool
    default: false
  api_version:
    description: The Cluster API contract version to read (C(v1beta2) or C(v1beta1)). Default, v1beta2 where
      served, else v1beta1.
    type: str
"""

EXAMPLES = r"""
- name: Guard every control-plane rollout
  hosts: all
  sources:
    - flightcontrol.openstack.capi_events:
        kubeconfig: /runner/kubeconfig
        namespaces: [clusters]
        stuck_seconds: 900
  rules:
    - name: Follow the rollout
      condition: event.type == "rollout_started"
      action:
        run_playbook:
          name: flightcontrol.openstack.control_plane_rollout
"""

import asyncio
import logging
import os
import sys
import threading
import time
from typing import Any, Callable, Mapping


def _importable_collection() -> None:
    """ansible-rulebook runs a source as a plain file: make the collections folder this file is installed in
    importable (``ansible_collections.flightcontrol.openstack``), as ansible-core's loader does for modules."""
    try:
        import ansible_collections.flightcontrol.openstack.plugins.module_utils  # noqa: F401 pylint: disable=unused-import
        return
    except ImportError:
        pass
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.abspath(os.path.join(here, *([os.pardir] * 7)))  # the folder that holds ansible_collections/
    if os.path.isdir(os.path.join(root, "ansible_collections")) and root not in sys.path:
        sys.path.insert(0, root)
    for name in [n for n in sys.modules if n == "ansible_collections" or n.startswith("ansible_collections.")]:
        del sys.modules[name]  # a failed import may have left a namespace of another folder


_importable_collection()

from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.hostnames import (  # noqa: E402
    check_hostname_format,
    DEFAULT_HOSTNAME_FORMAT,
    HostnameError,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi.service import CapiService, choose_version  # noqa: E402
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi_events.event_feed import (  # noqa: E402
    DELETE,
    EventFeed,
    FeedError,
    RELIST,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.capi_events.events import (  # noqa: E402
    DEFAULT_GUARD_HOOK,
    EventState,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline  # noqa: E402
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import FlightcontrolError  # noqa: E402
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.options import (  # noqa: E402
    MAX_SECONDS,
    number_problem,
    NumberRange,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.retry import IDEMPOTENT  # noqa: E402
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.client import (  # noqa: E402
    auth_settings,
    CONFIG_ERRORS,
    K8S_IMPORT_ERROR,
    KubernetesClient,
    status_message,
)

LOG = logging.getLogger(__name__)
CONNECTION_OPTIONS = ("kubeconfig", "context", "host", "api_key", "validate_certs", "ca_cert", "client_cert",
                      "client_key", "proxy")
KNOWN_OPTIONS = CONNECTION_OPTIONS + ("namespaces", "label_selector", "stuck_seconds", "tick_seconds",
                                      "hostname_format", "api_version", "standing_hook", "guard_hook",
                                      "topology_rollouts")
DISCOVERY_SECONDS = 60
# How long one standing-hook write (with its retries) may take.
HOOK_WRITE_SECONDS = 30
# A threshold or a pause: above zero (zero would mean "stuck at once" or a busy loop), up to 30 days or an hour.
SECONDS_RANGES = dict(stuck_seconds=NumberRange(above=0, maximum=MAX_SECONDS, unit=" seconds"),
                      tick_seconds=NumberRange(above=0, maximum=3600, unit=" seconds"))
CONTROL_PLANE_GROUP = "controlplane.cluster.x-k8s.io"


class SourceError(Exception):
    """The source cannot run; the message says why (and never quotes a credential)."""


def parse_args(args: Mapping[str, Any] | None) -> dict[str, Any]:
    """The options, checked: unknown ones and wrong values are refused before any request."""
    unknown = sorted(set(args or {}) - set(KNOWN_OPTIONS))
    if unknown:
        raise SourceError(f"capi_events: unknown option(s) {', '.join(unknown)} (known: {', '.join(KNOWN_OPTIONS)})")
    options = dict(args or {})
    namespaces = options.get("namespaces") or []
    if isinstance(namespaces, str):
        namespaces = [namespaces]
    options["namespaces"] = list(namespaces)
    for name, default in (("stuck_seconds", 600.0), ("tick_seconds", 5.0)):
        options[name] = seconds_option(name, options.get(name, default))
    options["hostname_format"] = options.get("hostname_format") or DEFAULT_HOSTNAME_FORMAT
    topology_rollouts = options.get("topology_rollouts", False)
    if isinstance(topology_rollouts, str) and topology_rollouts.lower() in ("true", "false", "yes", "no"):
        topology_rollouts = topology_rollouts.lower() in ("true", "yes")
    if not isinstance(topology_rollouts, bool):
        raise SourceError(f"capi_events: topology_rollouts must be true or false, got {topology_rollouts!r}")
    options["topology_rollouts"] = topology_rollouts
    try:
        check_hostname_format(options["hostname_format"])
    except HostnameError as exc:
        raise SourceError(f"capi_events: {exc}")
    return options


def seconds_option(name: str, value: Any) -> float:
    """``value`` of the seconds option ``name`` as a float, judged as the modules judge their numbers
    (``core.options.number_problem``: NaN and infinities refused, then the range), or SourceError."""
    try:
        if isinstance(value, bool):
            raise TypeError(value)
        number = float(value)
    except (TypeError, ValueError):
        raise SourceError(f"capi_events: {name} must be a number of seconds, got {value!r}")
    problem = number_problem(name, number, SECONDS_RANGES[name])
    if problem:
        raise SourceError(f"capi_events: {problem}")
    return number


def connect(options: Mapping[str, Any]) -> KubernetesClient:
    """A KubernetesClient from the options (and K8S_AUTH_*); a kubeconfig that cannot be used is refused
    with its kind of fault and position only (a parser's message may quote the file: credentials)."""
    if K8S_IMPORT_ERROR is not None:
        raise SourceError("capi_events needs the Python library kubernetes (pip install kubernetes)")
    settings = auth_settings(dict((k, options.get(k)) for k in CONNECTION_OPTIONS))
    try:
        return KubernetesClient(settings)
    except CONFIG_ERRORS as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        reason = getattr(exc, "problem", None) if mark is not None else str(exc)
        for secret in (settings.get("api_key"), settings.get("password")):
            if secret and reason and secret in reason:
                reason = type(exc).__name__
        raise SourceError("capi_events: the Kubernetes connection settings cannot be used: "
                          f"{reason or type(exc).__name__}{where}")


def make_feeds(kube: KubernetesClient, options: Mapping[str, Any]) -> list[EventFeed]:
    """The feeds to follow (Clusters first, so that the objects of a cluster find it), after discovery."""
    deadline = Deadline.after(kube.clock, DISCOVERY_SECONDS)
    capi = CapiService(kube)
    try:
        served = capi.discover(deadline)
        contract = choose_version(served, options.get("api_version"))
        kcp_version = capi.version_for(CONTROL_PLANE_GROUP, contract)
        if kcp_version is None:
            raise SourceError(f"capi_events: the Kubernetes API at {kube.host} does not serve {CONTROL_PLANE_GROUP}: "
                              "the KubeadmControlPlane CRD is not installed")
        kinds = [("cluster.x-k8s.io", contract, "Cluster"), (CONTROL_PLANE_GROUP, kcp_version, "KubeadmControlPlane"),
                 ("cluster.x-k8s.io", contract, "Machine")]
        plurals = [(g, v, capi.plural(g, v, k, deadline), k) for g, v, k in kinds]
    except FlightcontrolError as exc:
        raise SourceError(f"capi_events: {exc}")
    except SourceError:
        raise
    except Exception as exc:  # pylint: disable=broad-except
        raise SourceError(f"capi_events: discovering Cluster API at {kube.host} failed: {_words(exc)}")
    namespaces = options["namespaces"] or [None]
    return [EventFeed(kube, g, v, p, k, namespace, options.get("label_selector") if k == "Cluster" else None)
            for g, v, p, k in plurals for namespace in namespaces]


def _words(exc: BaseException) -> str:
    status = getattr(exc, "status", None)
    if status:
        return f"HTTP {status}: {status_message(exc)}"
    return str(exc) or type(exc).__name__


class Runner:
    """The lists, the watch threads and the state; ``run`` puts the events on the queue."""

    def __init__(self, queue: asyncio.Queue[dict[str, Any]], options: Mapping[str, Any], feeds: list[EventFeed],
                 clock: Callable[[], float] = time.time) -> None:
        self.queue = queue
        self.options = options
        self.feeds = feeds
        self.clock = clock
        self.state = EventState(options["hostname_format"], options["stuck_seconds"],
                                standing_hook=options.get("standing_hook") or None,
                                guard_hook=options.get("guard_hook") or DEFAULT_GUARD_HOOK,
                                topology_rollouts=bool(options.get("topology_rollouts")))
        self.stop = threading.Event()
        self.inbox: asyncio.Queue[tuple[EventFeed, str, Any]] | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    def _running(self) -> tuple[asyncio.AbstractEventLoop, asyncio.Queue[tuple[EventFeed, str, Any]]]:
        """The loop and the inbox ``start`` made."""
        if self.loop is None or self.inbox is None:
            raise RuntimeError("Runner.start() must run before the events are followed")
        return self.loop, self.inbox

    async def put(self, events: list[dict[str, Any]]) -> None:
        for event in events:
            LOG.info("capi_events: %s %s/%s", event["type"], event["cluster"]["namespace"], event["cluster"]["name"])
            await self.queue.put(event)
        for action in self.state.hook_actions():
            await self._running()[0].run_in_executor(None, self.write_hook, action)

    def write_hook(self, action: dict[str, Any]) -> None:
        """Put the standing hook on a Machine (or take it off); a Machine already gone is no error."""
        feed = [f for f in self.feeds if f.kind == "Machine"][0]
        body = {"metadata": {"annotations": {action["annotation"]: action["value"]}}}
        kube = feed.kube
        try:
            kube.call(lambda: kube.custom.patch_namespaced_custom_object(
                feed.group, feed.version, action["namespace"], feed.plural, action["name"], body),
                f"{action['action']} of Machine {action['namespace']}/{action['name']}",
                Deadline.after(kube.clock, HOOK_WRITE_SECONDS), kind=IDEMPOTENT)
        except Exception as exc:  # pylint: disable=broad-except
            if getattr(exc, "status", None) == 404:
                return
            verb = action["action"].replace("_", " ")
            hint = "; the credentials need the right to patch machines" if getattr(exc, "status", None) == 403 else ""
            raise SourceError(f"capi_events: could not {verb} the standing hook of Machine "
                              f"{action['namespace']}/{action['name']}: {_words(exc)}{hint}")
        LOG.info("capi_events: %s Machine %s/%s (%s)", action["action"], action["namespace"], action["name"],
                 action["annotation"])

    async def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.inbox = asyncio.Queue()
        for feed in self.feeds:
            items = await self.loop.run_in_executor(None, _guarded_list, feed)
            await self.put(self.state.relisted(feed.kind, feed.namespace, items, self.clock()))
        for feed in self.feeds:
            thread = threading.Thread(target=self.follow, args=(feed,), name=f"capi-events-{feed.plural}")
            thread.daemon = True
            thread.start()
        LOG.info("capi_events: following %d feeds: %s", len(self.feeds), ", ".join(f.describe() for f in self.feeds))

    def follow(self, feed: EventFeed) -> None:
        loop, inbox = self._running()

        def emit(effect: str, value: Any) -> None:
            loop.call_soon_threadsafe(inbox.put_nowait, (feed, effect, value))
        try:
            feed.follow(emit, self.stop)
        except Exception as exc:  # pylint: disable=broad-except
            if not self.stop.is_set():
                loop.call_soon_threadsafe(inbox.put_nowait, (feed, "error", exc))

    async def run(self) -> None:
        await self.start()
        inbox = self._running()[1]
        while True:
            try:
                feed, effect, value = await asyncio.wait_for(inbox.get(), self.options["tick_seconds"])
            except asyncio.TimeoutError:
                await self.put(self.state.tick(self.clock()))
                continue
            now = self.clock()
            if effect == "error":
                raise SourceError(f"capi_events: {value if isinstance(value, FeedError) else _words(value)}")
            if effect == RELIST:
                events = self.state.relisted(feed.kind, feed.namespace, value, now)
            elif effect == DELETE:
                events = self.state.forget(value)
            else:
                events = self.state.observe(value, now)
            await self.put(events + self.state.tick(now))

    def close(self) -> None:
        self.stop.set()
        for feed in self.feeds:
            feed.abort()


def _guarded_list(feed: EventFeed) -> list[dict[str, Any]]:
    try:
        return feed.list()
    except FeedError:
        raise
    except Exception as exc:  # pylint: disable=broad-except
        raise FeedError(f"listing {feed.describe()} failed: {_words(exc)}")


async def main(queue: asyncio.Queue[dict[str, Any]], args: Mapping[str, Any] | None) -> None:
    """Follow the management cluster until cancelled; raises SourceError when it cannot."""
    options = parse_args(args)
    loop = asyncio.get_running_loop()
    kube = await loop.run_in_executor(None, connect, options)
    feeds = await loop.run_in_executor(None, make_feeds, kube, options)
    runner = Runner(queue, options, feeds)
    try:
        await runner.run()
    except FeedError as exc:
        raise SourceError(f"capi_events: {exc}")
    finally:
        runner.close()


if __name__ == "__main__":

    class MockQueue(asyncio.Queue):
        """Print the events."""

        async def put(self, item: Any) -> None:
            print(item)  # noqa: T201

    asyncio.run(main(MockQueue(), {}))
