# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a module was asked, and the runner it is handed to: each runner declares a frozen dataclass of the
options it reads (``ModuleOptions``), and the module file builds it from its parameters and hands it, with
itself, to the runner (a ``ModuleRunner``). The runner reads nothing else of the module's parameters.

The one judgement of a number option (``number_problem``: NaN, infinities, magnitude, the option's
``NumberRange``) is here too, for the modules (``module_base.number_problems``) and the event source alike."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Mapping, Type, TypeVar

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.clock import Clock
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline

if TYPE_CHECKING:
    from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.module_base import BaseModule

OptionsT = TypeVar("OptionsT", bound="ModuleOptions")

# The largest number any option takes: ten times a year in seconds, far above any sensible value, far below
# what makes time arithmetic overflow. Options of their own have tighter ranges (``number_ranges``).
LARGEST_NUMBER = 10 ** 9
# The longest wait or age any seconds option takes: 30 days.
MAX_SECONDS = 30 * 24 * 3600


@dataclass(eq=False)
class NumberRange:
    """The values a number option accepts: ``minimum`` (inclusive) or ``above`` (exclusive), ``maximum``,
    and a ``hint`` added to the refusal."""

    minimum: float | None = None
    maximum: float | None = None
    above: float | None = None
    hint: str | None = None
    unit: str = ""

    def problem(self, name: str, value: float) -> str | None:
        """The refusal of ``value`` for option ``name`` in words, or None when it is accepted."""
        if self.above is not None and not value > self.above:
            wanted = f"more than {_amount(self.above)}{self.unit}"
        elif self.minimum is not None and value < self.minimum:
            wanted = f"{_amount(self.minimum)} or more{self.unit}"
        elif self.maximum is not None and value > self.maximum:
            wanted = f"at most {_amount(self.maximum)}{self.unit}"
        else:
            return None
        return f"{name} must be {wanted}, got {value}{f' ({self.hint})' if self.hint else ''}"


def _amount(number: float) -> str:
    return "zero" if number == 0 else str(number)


def number_problem(label: str, number: float, number_range: NumberRange | None = None) -> str | None:
    """The refusal of ``number`` (an int or float, after conversion: Ansible's float options take 'nan' and
    'inf') for option ``label``, or None: NaN and infinities, anything beyond +-LARGEST_NUMBER, and what
    ``number_range`` refuses."""
    if isinstance(number, float) and (math.isnan(number) or math.isinf(number)):
        return f"{label} must be a finite number, got {number}"
    if abs(number) > LARGEST_NUMBER:
        return f"{label} is out of range: {number} (the largest accepted is {LARGEST_NUMBER})"
    return number_range.problem(label, number) if number_range is not None else None


class ModuleOptions:
    """A base of the options dataclasses: ``check_mode`` and ``diff`` fields, where a runner has them, come from
    the module's run, every other field from the parameter of its name."""

    @classmethod
    def from_params(cls: Type[OptionsT], params: Mapping[str, Any], **run: Any) -> OptionsT:
        names = [f.name for f in fields(cls) if f.name not in run]  # type: ignore[arg-type]  # subclasses are dataclasses
        return cls(**dict(((name, params[name]) for name in names), **run))


class ModuleRunner:
    """A base of the runners: the module (its connections, exit, fail and warn), the options it built, the
    module's clock and start time, and the run's one deadline the module made from ``timeout``
    (``core.deadline.Deadline``): a runner hands it on, it never computes one."""

    def __init__(self, module: BaseModule, options: ModuleOptions) -> None:
        self.module = module
        self.options = options
        self.clock: Clock = module.clock
        self.started: float = module.started
        self.deadline: Deadline = module.deadline
