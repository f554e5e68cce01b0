"""Command line of the clusterctl stand-in: clusterctl's own flags for ``version`` and ``move``."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable

from minicloud.clusterctl import DEFAULT_VERSION, FAIL_ENV, NOTICE, TIMEOUT_ENV, VERSION_ENV, sequence, versions
from minicloud.clusterctl.sequence import MoveError, ref

FAIL_POINTS = ("after-pause", "after-copy")
DEFAULT_BLOCK_MOVE_TIMEOUT = 60.0
POLL = 0.5


def emulated_version() -> str:
    version = os.environ.get(VERSION_ENV) or DEFAULT_VERSION
    sequence.parse_version(version)  # fail early on nonsense
    return version if version.startswith("v") else "v" + version


def log(text: str) -> None:
    print(text, flush=True)


def injected(point: str) -> None:
    wanted = os.environ.get(FAIL_ENV, "")
    if wanted and wanted not in FAIL_POINTS:
        raise MoveError(f"{FAIL_ENV}={wanted!r} is not one of {', '.join(FAIL_POINTS)}")
    if wanted == point:
        raise MoveError(f"failure injected {point} by the stand-in ({FAIL_ENV}={wanted})")


class Mover:
    """One ``clusterctl move`` of a namespace from ``source`` to ``target`` (KubeApi-like objects)."""

    def __init__(self, source, target, version: str, block_move_timeout: float = DEFAULT_BLOCK_MOVE_TIMEOUT,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep,
                 fail: Callable[[str], None] = injected, say: Callable[[str], None] = log):
        self.source, self.target = source, target
        self.version = sequence.parse_version(version)
        self.block_move_timeout = block_move_timeout
        self.clock, self.sleep, self.fail, self.say = clock, sleep, fail, say

    def move(self, namespace: str, dry_run: bool = False) -> list[dict]:
        self.say("Performing move...")
        if dry_run:
            self.say("********************************************************")
            self.say("This is a dry-run move, will not interact with the target cluster")
            self.say("********************************************************")
        self.say("Discovering Cluster API objects")
        objects = sequence.select(self.source.list_namespace(namespace), namespace)
        clusters = [o for o in objects if o["kind"] == "Cluster"]
        if not clusters:
            raise MoveError(f"no Cluster found in namespace {namespace!r} of {self.source.where}")
        problems = sequence.provisioning_problems(objects)
        if problems:
            raise MoveError(problems[0])
        if sequence.refuses_paused(self.version):
            refusal = sequence.paused_refusal(clusters)
            if refusal:
                raise MoveError(refusal)
        for line in sequence.summary(objects):
            self.say(f"Moving Cluster API objects {line}")
        if dry_run:
            for obj in objects:
                self.say(f"  {ref(obj)}")
            return objects
        self.say("Pausing the source cluster")
        for cluster in clusters:
            if not sequence.is_paused(cluster):
                self.source.merge_patch("Cluster", namespace, cluster["metadata"]["name"], {"spec": {"paused": True}})
        self.fail("after-pause")
        if sequence.waits_for_block_move(self.version):
            self.say("Waiting for all resources to be ready to move")
            self._wait_block_move(namespace, objects)
        self.say("Creating objects in the target cluster")
        objects = sequence.select(self.source.list_namespace(namespace), namespace)  # as paused
        self.target.ensure_namespace(namespace)
        new_uids: dict[str, str] = {}
        for obj in objects:
            created = self.target.create(sequence.for_target(obj, new_uids), obj.get("status"))
            new_uids[obj["metadata"]["uid"]] = created["metadata"]["uid"]
        self.fail("after-copy")
        self.say("Deleting objects from the source cluster")
        for obj in sequence.deletion_order(objects):
            meta = obj["metadata"]
            self.source.merge_patch(obj["kind"], namespace, meta["name"], {"metadata": {
                "finalizers": None, "annotations": {sequence.DELETE_FOR_MOVE_ANNOTATION: ""}}})
            self.source.delete(obj["kind"], namespace, meta["name"])
        self.say("Resuming the target cluster")
        for cluster in clusters:
            self.target.merge_patch("Cluster", namespace, cluster["metadata"]["name"], {"spec": {"paused": False}})
        return objects

    def _wait_block_move(self, namespace: str, objects: list[dict]) -> None:
        deadline = self.clock() + self.block_move_timeout
        wanted = {sequence.ref(o) for o in objects}
        while True:
            current = [o for o in sequence.select(self.source.list_namespace(namespace), namespace)
                       if sequence.ref(o) in wanted]
            blocking = sequence.blocking_move(current)
            if not blocking:
                return
            if self.clock() >= deadline:
                names = ", ".join(str(b) for b in blocking)
                raise MoveError(f"resource is not ready to move: {names} still carries the "
                                f"{sequence.BLOCK_MOVE_ANNOTATION} annotation after "
                                f"{self.block_move_timeout:g} s")
            self.sleep(POLL)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="clusterctl", description="minicloud's stand-in for clusterctl (NOT "
                                     "clusterctl): version and move only")
    parser.add_argument("-v", "--v", type=int, default=0, help="log level (accepted, ignored)")
    parser.add_argument("--config", help="accepted, ignored")
    verbs = parser.add_subparsers(dest="verb", required=True)
    version = verbs.add_parser("version", help="the emulated clusterctl version")
    version.add_argument("-o", "--output", choices=("short", "yaml", "json"))
    move = verbs.add_parser("move", help="move Cluster API objects to another management cluster")
    move.add_argument("--kubeconfig", default=os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config"))
    move.add_argument("--kubeconfig-context")
    move.add_argument("--to-kubeconfig")
    move.add_argument("--to-kubeconfig-context")
    move.add_argument("-n", "--namespace")
    move.add_argument("--dry-run", action="store_true")
    return parser


def _version_info(version: str) -> dict:
    major, minor, _ = sequence.parse_version(version)
    return {"major": str(major), "minor": str(minor), "gitVersion": version, "platform": "minicloud-standin"}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        version = emulated_version()
    except ValueError as exc:
        print(f"Error: {exc} (from {VERSION_ENV})", file=sys.stderr)
        return 1
    print(NOTICE.format(version=version), file=sys.stderr, flush=True)
    if args.verb == "version":
        info = _version_info(version)
        if args.output == "short":
            print(version)
        elif args.output == "json":
            print(json.dumps({"clusterctl": info}, indent=2))
        elif args.output == "yaml":
            print("clusterctl:\n" + "".join(f"  {k}: {v}\n" for k, v in info.items()), end="")
        else:
            print("clusterctl version: &version.Info{" + ", ".join(
                f'{k[0].upper() + k[1:]}:"{v}"' for k, v in info.items()) + "}")
        return 0
    try:
        return _move(args, version)
    except MoveError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1


def _move(args, version: str) -> int:
    from kubernetes.client import ApiException
    from urllib3.exceptions import HTTPError

    from minicloud.clusterctl.kubeapi import KubeApi

    if not args.to_kubeconfig and not args.dry_run:
        raise MoveError("please specify a target cluster using the --to-kubeconfig flag")
    namespace = args.namespace or _current_namespace(args.kubeconfig, args.kubeconfig_context)
    try:
        timeout = float(os.environ.get(TIMEOUT_ENV) or DEFAULT_BLOCK_MOVE_TIMEOUT)
        source = KubeApi(args.kubeconfig, args.kubeconfig_context)
        target = KubeApi(args.to_kubeconfig, args.to_kubeconfig_context) if args.to_kubeconfig else None
        use_storage_versions(source, None if args.dry_run else target)
        Mover(source, target, version, block_move_timeout=timeout).move(namespace, dry_run=args.dry_run)
    except ApiException as exc:
        raise MoveError(f"the Kubernetes API answered {exc.status} {exc.reason}: {exc.body}") from None
    except (HTTPError, OSError) as exc:
        raise MoveError(f"cannot reach the Kubernetes API: {exc}") from None
    except Exception as exc:  # a kubeconfig the client cannot load, say
        if type(exc).__name__ == "ConfigException":
            raise MoveError(f"invalid kubeconfig: {exc}") from None
        raise
    return 0


def use_storage_versions(source, target) -> dict[str, str]:
    """clusterctl's discovery of the types to move: each kind at the version the source's CRD stores it at, read
    and written there on both sides; refused (MoveError, nothing written) when ``target`` (None: a dry run) does
    not serve one of them (:func:`versions.choose`)."""
    chosen = versions.choose(source.crds(), target.crds() if target is not None else None)
    for api in (source, target):
        if api is not None:
            api.use(chosen)
    return chosen


def _current_namespace(kubeconfig: str, context: str | None) -> str:
    """clusterctl's default: the namespace of the kubeconfig's context, else ``default``."""
    from kubernetes import config

    try:
        contexts, current = config.list_kube_config_contexts(config_file=kubeconfig)
    except Exception:  # noqa: BLE001 - the client reports a bad kubeconfig better later
        return "default"
    chosen = next((c for c in contexts if c["name"] == context), None) if context else current
    return ((chosen or {}).get("context") or {}).get("namespace") or "default"
