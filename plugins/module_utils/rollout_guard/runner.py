# -*- coding: utf-8 -*-
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The runner of rollout_guard: checks the input, then runs mode=capi (``capi_runner``) or mode=direct
(``direct_runner``). The module file gives the argument spec."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.module_base import check_object_names
from ansible_collections.flightcontrol.openstack.plugins.module_utils.kubernetes.openstack_module_base import (
    OpenStackKubernetesModule,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.octavia.members import parse_selector
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard import plan
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.capi_runner import CapiRollout
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.direct_runner import DirectRollout
from ansible_collections.flightcontrol.openstack.plugins.module_utils.rollout_guard.report import RolloutLog, refuse_pairs


class RolloutGuardRunner(OpenStackKubernetesModule):
    def validate(self):
        """Check the input before any request; the (old, new) selector pairs in mode=direct, else None."""
        params = self.params
        if not params["hook_name"] or "/" in params["hook_name"]:
            raise ModuleFailure("hook_name must be a non-empty name without '/', got %r" % params["hook_name"])
        check_object_names(params, dict(cluster="subdomain", namespace="label", hook_name="qualified"))
        if params["mode"] != "direct":
            if params["replace"]:
                raise ModuleFailure("replace applies to mode=direct only")
            return None
        if params["start"]:
            raise ModuleFailure("start applies to mode=capi only")
        try:
            pairs = [(parse_selector(p["old"]), parse_selector(p["new"])) for p in params["replace"]]
        except ValueError as exc:
            raise ModuleFailure(str(exc))
        if not pairs:
            raise ModuleFailure("replace is empty; give the members to replace, each {old, new}")
        refuse_pairs(plan.pair_problems(pairs))
        return pairs

    def run(self):
        pairs = self.validate()
        deadline = self.started + self.params["timeout"]
        log = RolloutLog(self.clock, self.started)
        if self.params["mode"] == "direct":
            return DirectRollout(self, log, pairs).run(deadline)
        return CapiRollout(self, log).run(deadline)
