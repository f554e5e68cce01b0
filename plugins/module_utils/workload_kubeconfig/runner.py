# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The runner of workload_kubeconfig: read a workload cluster's kubeconfig Secret from the management cluster,
check it (and, if asked, that the workload API answers with it), and write it to ``dest`` only when the user
asks for a file. The module file gives the argument spec. The kubeconfig's content never reaches the result, an
error or the diff."""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.names import check_cluster
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.options import ModuleOptions, ModuleRunner
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.client import KubernetesClient
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.kubeconfig_secret import (
    SecretRef,
    WorkloadKubeconfig,
    read_kubeconfig_secret,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.module_base import (
    KubernetesDictModule,
    secret_ref,
)

FILE_MODE = 0o600
HIDDEN = "(kubeconfig, not shown)"


def secret_options(params: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """The Secret's reference options: ``secret``, or ``cluster`` and ``namespace`` (Cluster API's
    ``<cluster>-kubeconfig``, key ``value``)."""
    if params.get("secret"):
        return params["secret"], "secret"
    return {"name": f'{params["cluster"]}-kubeconfig', "namespace": params.get("namespace"), "key": "value"}, \
        "cluster"


def file_state(path: str) -> tuple[bytes | None, int | None]:
    """``(content, mode)`` of the file at ``path``, ``(None, None)`` when there is none; refuses what is no
    regular file."""
    try:
        info = os.stat(path)
    except OSError:
        return None, None
    if not stat.S_ISREG(info.st_mode):
        raise ModuleFailure(f"dest {path} exists and is no regular file; nothing was written")
    with open(path, "rb") as handle:
        return handle.read(), stat.S_IMODE(info.st_mode)


def file_diff(path: str, ref: SecretRef, before_content: bytes | None, before_mode: int | None,
              content: bytes) -> dict[str, str]:
    """What changes in the file, without its content."""
    def lines(state: str | None, mode: Any) -> str:
        return "" if state is None else f"content: {state}\nmode: {mode:04o}\n"

    before = None if before_content is None else (HIDDEN if before_content == content else "(another kubeconfig, "
                                                                                           "not shown)")
    return {"before_header": path, "after_header": path, "before": lines(before, before_mode),
            "after": lines(f"(kubeconfig from {ref}, not shown)" if before_content != content else HIDDEN,
                           FILE_MODE)}


def write_private_file(path: str, content: bytes) -> None:
    """Write ``content`` to ``path`` with mode 0600 from the start (a new file beside it, renamed over it)."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise ModuleFailure(f"the directory of dest {path} does not exist; nothing was written")
    partial = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(partial, FILE_MODE)  # whatever the umask
        os.replace(partial, path)
    except BaseException:
        if os.path.exists(partial):
            os.unlink(partial)
        raise


@dataclass(frozen=True)
class WorkloadKubeconfigOptions(ModuleOptions):
    """What workload_kubeconfig was asked (with check mode and diff): the runner reads nothing else."""

    cluster: Optional[str]
    namespace: str
    secret: Optional[dict[str, Any]]
    check_api: bool
    dest: Optional[str]
    timeout: int
    check_mode: bool = False
    diff: bool = False


class WorkloadKubeconfigRunner(ModuleRunner):
    """workload_kubeconfig's work. ``module`` is the module base it runs in (a ``KubernetesDictModule``: the
    connections, the start time, masking, exit and fail); ``options`` what was asked."""

    module: KubernetesDictModule
    options: WorkloadKubeconfigOptions

    def run(self) -> None:
        options = self.options
        deadline = self.deadline
        given = dict(cluster=options.cluster, namespace=options.namespace, secret=options.secret)
        if options.cluster is not None:
            check_cluster(options.cluster, options.namespace, "cluster")
        ref = secret_ref(*secret_options(given))
        workload = read_kubeconfig_secret(self.module.connect_kubernetes(), ref, deadline)
        self.module.hide(workload.secret_values)
        result = dict(workload.summary, secret=ref.as_dict(), dest=options.dest, changed=False)
        if options.check_api:
            kube = self.module.connect_workload(workload)
            result["kubernetes_version"] = self.server_version(kube, deadline)
        if options.dest:
            self.place_file(options.dest, workload, ref, result)
        self.module.exit(**result)

    @staticmethod
    def server_version(kube: KubernetesClient, deadline: Deadline) -> str | None:
        import kubernetes  # pylint: disable=import-outside-toplevel
        version_api = kubernetes.client.VersionApi(kube.api_client)
        answer = kube.call(lambda: json.loads(version_api.get_code(_preload_content=False).data),
                           f"reading the workload cluster's version at {kube.host}", deadline)
        return answer.get("gitVersion")

    def place_file(self, path: str, workload: WorkloadKubeconfig, ref: SecretRef, result: dict[str, Any]) -> None:
        before_content, before_mode = file_state(path)
        changed = before_content != workload.content or before_mode != FILE_MODE
        result["changed"] = changed
        if changed and self.options.diff:
            result["diff"] = file_diff(path, ref, before_content, before_mode, workload.content)
        if changed and not self.options.check_mode:
            try:
                if before_content == workload.content:
                    os.chmod(path, FILE_MODE)
                else:
                    write_private_file(path, workload.content)
            except OSError as exc:
                raise ModuleFailure(f"cannot write dest {path}: {exc.strerror or exc}; nothing was written")
