# -*- coding: utf-8 -*-
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a module was asked, and the runner it is handed to: each runner declares a frozen dataclass of the
options it reads (``ModuleOptions``), and the module file builds it from its parameters and hands it, with
itself, to the runner (a ``ModuleRunner``). The runner reads nothing else of the module's parameters."""

from dataclasses import fields
from typing import Any, Mapping, Type, TypeVar

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.clock import Clock

OptionsT = TypeVar("OptionsT", bound="ModuleOptions")


class ModuleOptions:
    """A base of the options dataclasses: ``check_mode`` and ``diff`` fields, where a runner has them, come from
    the module's run, every other field from the parameter of its name."""

    @classmethod
    def from_params(cls: Type[OptionsT], params: Mapping[str, Any], **run: Any) -> OptionsT:
        names = [f.name for f in fields(cls) if f.name not in run]
        return cls(**dict(((name, params[name]) for name in names), **run))


class ModuleRunner:
    """A base of the runners: the module (its connections, exit, fail and warn), the options it built, and the
    module's clock and start time, from which each runner's ``run()`` sets its deadline
    (``self.started + options.timeout``)."""

    def __init__(self, module, options: ModuleOptions):
        self.module = module
        self.options = options
        self.clock: Clock = module.clock
        self.started: float = module.started
