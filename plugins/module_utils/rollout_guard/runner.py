# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The runner of rollout_guard: checks the input, then runs mode=capi (``capi_runner``) or mode=direct
(``direct_runner``). The module file gives the argument spec and builds the runners' options
(``RolloutOptions``) from its parameters."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, cast

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.options import ModuleOptions, ModuleRunner
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


@dataclass(frozen=True)
class RolloutOptions(ModuleOptions):
    """What rollout_guard was asked (its options, with check mode): the runners read nothing else."""

    mode: str
    cluster: Optional[str]
    namespace: str
    api_version: Optional[str]
    pool: Optional[str]
    loadbalancer: Optional[str]
    min_healthy_members: Optional[int]
    hook_name: str
    start: bool
    replace: Optional[list[dict[str, str]]]
    drain: bool
    drain_timeout: int
    drain_stop_server: bool
    drain_stop_timeout: int
    drain_stop_timeout_action: str
    member_timeout: int
    timeout: int
    poll_interval: float
    use_watch: bool
    check_mode: bool = False


class RolloutGuardRunner(ModuleRunner):
    """rollout_guard's work. ``module`` is the module base it runs in (an ``OpenStackKubernetesModule``: the
    connections, the clock and start time, exit and fail); ``options`` what was asked."""

    module: OpenStackKubernetesModule
    options: RolloutOptions

    def validate(self) -> Optional[list[plan.Pair]]:
        """Check the input before any request; the (old, new) selector pairs in mode=direct, else None."""
        options = self.options
        if not options.hook_name or "/" in options.hook_name:
            raise ModuleFailure(f"hook_name must be a non-empty name without '/', got {options.hook_name!r}")
        check_object_names(dict(cluster=options.cluster, namespace=options.namespace, hook_name=options.hook_name),
                           dict(cluster="subdomain", namespace="label", hook_name="qualified"))
        if options.mode != "direct":
            if options.replace:
                raise ModuleFailure("replace applies to mode=direct only")
            return None
        if options.start:
            raise ModuleFailure("start applies to mode=capi only")
        try:
            replace = cast("list[dict[str, str]]", options.replace)  # mode=direct needs it (the module's required_if)
            pairs = [(parse_selector(p["old"]), parse_selector(p["new"])) for p in replace]
        except ValueError as exc:
            raise ModuleFailure(str(exc))
        if not pairs:
            raise ModuleFailure("replace is empty; give the members to replace, each {old, new}")
        refuse_pairs(plan.pair_problems(pairs))
        return pairs

    def run(self) -> None:
        pairs = self.validate()
        module = self.module
        deadline = self.deadline
        log = RolloutLog(self.clock, self.started)
        if self.options.mode == "direct":
            # validate gives the pairs in mode=direct
            return DirectRollout(module, self.options, log, cast("list[plan.Pair]", pairs)).run(deadline)
        return CapiRollout(module, self.options, log).run(deadline)
