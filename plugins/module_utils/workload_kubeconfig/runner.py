# -*- coding: utf-8 -*-
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The runner of workload_kubeconfig: read a workload cluster's kubeconfig Secret from the management cluster,
check it (and, if asked, that the workload API answers with it), and write it to ``dest`` only when the user
asks for a file. The module file gives the argument spec. The kubeconfig's content never reaches the result, an
error or the diff."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import stat

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.module_base import BaseModule
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.secrets import kubeconfig_secrets
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.kubeconfig_secret import (
    read_kubeconfig_secret,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.module_base import (
    check_object_names,
    connect_kubernetes,
    connect_workload,
    describe_kubernetes_error,
    kubernetes_dict_argument_spec,
    secret_ref,
)

FILE_MODE = 0o600
HIDDEN = "(kubeconfig, not shown)"


def secret_options(params):
    """The Secret's reference options: ``secret``, or ``cluster`` and ``namespace`` (Cluster API's
    ``<cluster>-kubeconfig``, key ``value``)."""
    if params.get("secret"):
        return params["secret"], "secret"
    return {"name": "%s-kubeconfig" % params["cluster"], "namespace": params.get("namespace"), "key": "value"}, \
        "cluster"


def file_state(path):
    """``(content, mode)`` of the file at ``path``, ``(None, None)`` when there is none; refuses what is no
    regular file."""
    try:
        info = os.stat(path)
    except OSError:
        return None, None
    if not stat.S_ISREG(info.st_mode):
        raise ModuleFailure("dest %s exists and is no regular file; nothing was written" % path)
    with open(path, "rb") as handle:
        return handle.read(), stat.S_IMODE(info.st_mode)


def file_diff(path, ref, before_content, before_mode, content):
    """What changes in the file, without its content."""
    def lines(state, mode):
        return "" if state is None else "content: %s\nmode: %04o\n" % (state, mode)

    before = None if before_content is None else (HIDDEN if before_content == content else "(another kubeconfig, "
                                                                                           "not shown)")
    return {"before_header": path, "after_header": path, "before": lines(before, before_mode),
            "after": lines("(kubeconfig from %s, not shown)" % ref if before_content != content else HIDDEN,
                           FILE_MODE)}


def write_private_file(path, content):
    """Write ``content`` to ``path`` with mode 0600 from the start (a new file beside it, renamed over it)."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise ModuleFailure("the directory of dest %s does not exist; nothing was written" % path)
    partial = os.path.join(directory, ".%s.%d.partial" % (os.path.basename(path), os.getpid()))
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


class WorkloadKubeconfigRunner(BaseModule):
    @staticmethod
    def connection_argument_spec():
        return dict(kubernetes=dict(type="dict", options=kubernetes_dict_argument_spec()))

    @staticmethod
    def hidden_values(params):
        return kubeconfig_secrets(params.get("kubernetes"))

    def describe_error(self, exc):
        return describe_kubernetes_error(exc)

    def run(self):
        params = self.params
        deadline = self.started + params["timeout"]
        if params.get("cluster"):
            check_object_names(params, dict(cluster="subdomain", namespace="label"))
        options, option = secret_options(params)
        ref = secret_ref(options, option)
        management = connect_kubernetes(self.ansible, params.get("kubernetes") or {}, self.clock, self.clients,
                                        deadline)
        workload = read_kubeconfig_secret(management, ref, deadline)
        self.ansible.no_log_values.update(workload.secret_values)
        result = dict(workload.summary, secret=ref.as_dict(), dest=params.get("dest"), changed=False)
        if params["check_api"]:
            kube = connect_workload(self.ansible, workload, self.clock, params.get("kubernetes") or {}, self.clients)
            result["kubernetes_version"] = self.server_version(kube, deadline)
        if params.get("dest"):
            self.place_file(params["dest"], workload, ref, result)
        self.exit(**result)

    @staticmethod
    def server_version(kube, deadline):
        import kubernetes  # pylint: disable=import-outside-toplevel
        version_api = kubernetes.client.VersionApi(kube.api_client)
        answer = kube.call(lambda: json.loads(version_api.get_code(_preload_content=False).data),
                           "reading the workload cluster's version at %s" % kube.host, deadline)
        return answer.get("gitVersion")

    def place_file(self, path, workload, ref, result):
        before_content, before_mode = file_state(path)
        changed = before_content != workload.content or before_mode != FILE_MODE
        result["changed"] = changed
        if changed and self.ansible._diff:
            result["diff"] = file_diff(path, ref, before_content, before_mode, workload.content)
        if changed and not self.ansible.check_mode:
            try:
                if before_content == workload.content:
                    os.chmod(path, FILE_MODE)
                else:
                    write_private_file(path, workload.content)
            except OSError as exc:
                raise ModuleFailure("cannot write dest %s: %s; nothing was written" % (path, exc.strerror or exc))
