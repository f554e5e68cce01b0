# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The base class of the modules: spec, number ranges, the run's one ``Deadline``, results and error mapping.

A runner subclasses ``OpenStackModule`` (``openstack.module_base``), ``KubernetesModule``
(``kubernetes.module_base``) or ``OpenStackKubernetesModule`` (``kubernetes.openstack_module_base``), all built on
``BaseModule``; the module file adds ``argument_spec`` / ``number_ranges`` / ``module_kwargs``. ``run()`` calls
``self.exit(...)`` or ``self.fail(...)``; the collection's errors (``core.errors``) become ``fail_json`` with a
message a person can act on, never a traceback.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.clock import Clock
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.deadline import Deadline
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.options import (
    LARGEST_NUMBER,
    MAX_SECONDS,
    number_problem,
    NumberRange,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.results import complete
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import (
    FlightcontrolError,
    ModuleFailure,
)


#: The waits and ages (``member_timeout``, ``registration_timeout``, ``quiet_period``...): zero (one look, no
#: waiting) up to 30 days.
SECONDS = NumberRange(minimum=0, maximum=MAX_SECONDS, unit=" seconds")
#: ``timeout``, the whole task's time: a second up to 30 days (a task that sends a request cannot end in zero
#: seconds). Every module's ``timeout`` is judged by this one range (``SHARED_RANGES``).
TIMEOUT = NumberRange(minimum=1, maximum=MAX_SECONDS, unit=" seconds",
                      hint="the whole task's time, its requests included")
#: ``poll_interval``: above zero (zero would busy-poll) up to an hour.
POLL_SECONDS = NumberRange(above=0, maximum=3600, unit=" seconds")
#: ``api_timeout``, how long one request may take: a second up to an hour.
REQUEST_SECONDS = NumberRange(minimum=1, maximum=3600, unit=" seconds")
#: Ranges of the connection options, checked in every module (a module's ``number_ranges`` add to them).
CONNECTION_RANGES = dict(api_timeout=REQUEST_SECONDS)
#: Ranges of the options every module has, whatever its ``number_ranges`` say.
SHARED_RANGES = dict(timeout=TIMEOUT)
#: ``max_removal_share``'s default wherever a module has it (route_audit: the routed pod CIDRs a repair may
#: leave without a route; secgroup_ensure: the group's rules ``exclusive`` may remove in one run).
DEFAULT_MAX_REMOVAL_SHARE = 0.5

#: Options of openstack.cloud and kubernetes.core that the connection specs accept so that ``module_defaults``
#: written for those collections carry over, and that the modules ignore (with a warning naming the option):
#: option name -> the collection it comes from.
IGNORED_COMPAT_OPTIONS = {
    "wait": "openstack.cloud",
    "sdk_log_path": "openstack.cloud",
    "sdk_log_level": "openstack.cloud",
    "persist_config": "kubernetes.core",
}


def ignored_option_warnings(connection_spec: Mapping[str, Any], own_spec: Mapping[str, Any],
                            params: Mapping[str, Any] | None) -> list[str]:
    """A warning for each option of ``IGNORED_COMPAT_OPTIONS`` that ``params`` sets, where the connection spec
    (not the module's own ``own_spec``) declares it: at the top level or in a ``kubernetes`` dictionary."""
    places: list[tuple[str, Mapping[str, Any], Mapping[str, Any]]] = [("", connection_spec, params or {})]
    kube = (params or {}).get("kubernetes")
    if isinstance(kube, dict) and "kubernetes" in connection_spec:
        places.append(("kubernetes.", connection_spec["kubernetes"].get("options") or {}, kube))
    warnings = []
    for prefix, spec, values in places:
        for name, source in sorted(IGNORED_COMPAT_OPTIONS.items()):
            if name in spec and not (prefix == "" and name in own_spec) and values.get(name) is not None:
                warnings.append(f"{prefix}{name} is accepted for module_defaults compatibility with {source} and ignored")
    return warnings


def option_ranges(number_ranges: Mapping[str, NumberRange]) -> dict[str, NumberRange]:
    """The ranges a module's numbers are judged by: the connection options', the module's own
    (``number_ranges``), and ``SHARED_RANGES`` over both."""
    ranges = dict(CONNECTION_RANGES)
    ranges.update(number_ranges)
    ranges.update(SHARED_RANGES)
    return ranges


def number_problems(spec: Mapping[str, Any], params: Mapping[str, Any] | None, ranges: Mapping[str, NumberRange],
                    prefix: str = "") -> list[str]:
    """Every refusal of a number in ``params`` (options of ``spec``, suboptions included): NaN and
    infinities, anything beyond +-LARGEST_NUMBER and what ``ranges`` (option name -> NumberRange) refuses
    (``core.options.number_problem``)."""
    problems: list[str] = []
    for name, option in spec.items():
        value = (params or {}).get(name)
        if value is None:
            continue
        label = prefix + name
        kind = option.get("type", "str")
        values = value if kind == "list" and isinstance(value, list) else [value]
        if option.get("options") and kind in ("list", "dict"):
            for index, item in enumerate(values):
                if isinstance(item, dict):
                    where = f"{label}[{index}]." if kind == "list" else label + "."
                    problems += number_problems(option["options"], item, ranges, where)
            continue
        if kind not in ("int", "float") and option.get("elements") not in ("int", "float"):
            continue
        for number in values:
            if isinstance(number, (int, float)) and not isinstance(number, bool):
                problems += [p for p in [number_problem(label, number, ranges.get(name))] if p]
    return problems


class _MaskingAnsibleModule(AnsibleModule):
    """An AnsibleModule that adds the secrets inside raw options (``hidden_values(params)``) to the values it
    masks before it logs its invocation (syslog or the journal): AnsibleModule logs the parameters while it
    is made, with only the ``no_log`` options masked."""

    def __init__(self, hidden_values: Callable[[Mapping[str, Any]], set[str]], **kwargs: Any) -> None:
        self._hidden_values = hidden_values
        super().__init__(**kwargs)

    def _log_invocation(self) -> None:
        self.no_log_values.update(self._hidden_values(self.params))
        super()._log_invocation()

    def _set_internal_properties(self) -> None:
        """After the parameters are read and before ansible-core validates them: an option with suboptions given
        a value of another shape fails here with a message, not with a traceback from ansible-core's fallbacks."""
        super()._set_internal_properties()
        problems = suboption_shape_problems(self.argument_spec, self.params)
        if problems:
            self.fail_json(msg="; ".join(problems))


def suboption_shape_problems(spec: Mapping[str, Any], params: Any) -> list[str]:
    """The options with suboptions in ``spec`` whose value in ``params`` (under the name or an alias) is neither
    a dictionary nor a string Ansible could read as one (a list of those for ``type: list``). Pure."""
    problems = []
    for name, option in spec.items():
        if not option.get("options"):
            continue
        for key in [name] + list(option.get("aliases") or []):
            value = params.get(key) if isinstance(params, dict) else None
            items = value if option.get("type") == "list" and isinstance(value, list) else [value]
            if value is not None and not all(isinstance(item, (dict, str)) for item in items):
                problems.append(f'{key} must be {"a list of dictionaries" if option.get("type") == "list" else "a dictionary"}, got {type(value).__name__}')
    return problems


#: How many writes a failure message names before it says "and N more" (the result's ``writes`` has them all).
MESSAGE_WRITES = 5
#: How many writes a failed result lists in ``writes`` (``writes_total`` counts them all when there are more).
RESULT_WRITES = 200


def describe_writes(writes: list[dict[str, str]]) -> str:
    """The writes in words: each call, marked when its answer was lost."""
    words = [f"{w['call']}{' (answer lost: may or may not be done)' if w['outcome'] != 'done' else ''}"
             for w in writes[:MESSAGE_WRITES]]
    if len(writes) > MESSAGE_WRITES:
        words.append(f"and {len(writes) - MESSAGE_WRITES} more")
    return "; ".join(words)


def written_result(data: dict[str, Any], writes: list[dict[str, str]], written: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` of a failure, with ``changed: true``, ``writes`` and ``written``'s fields (``data`` wins) when
    ``writes`` holds a write that was done or may have been."""
    if not writes:
        return data
    result = dict(written, **data)
    result["changed"] = True
    if "writes" not in result:
        result["writes"] = writes[:RESULT_WRITES]
        if len(writes) > RESULT_WRITES:
            result["writes_total"] = len(writes)
    return result


def run_deadline(clock: Clock, started: float, timeout: Any) -> Deadline:
    """The run's ``Deadline``: ``timeout`` seconds after ``started``. A ``timeout`` that is not a finite number
    in range is refused by ``check_numbers`` before ``run()``; until then the deadline is the furthest one."""
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not abs(timeout) <= LARGEST_NUMBER:
        timeout = MAX_SECONDS
    return Deadline.after(clock, timeout, started)


class BaseModule:
    """Spec, clock, deadline, results and error mapping shared by every module.

    Subclasses give the connection options (``connection_argument_spec``), register each client they
    connect in ``self.clients`` (anything with ``api_calls`` and ``policy.retried``), and map the
    errors of their client libraries in ``describe_error``.
    """

    argument_spec: dict[str, Any] = {}
    module_kwargs: dict[str, Any] = {}
    #: option name -> NumberRange, checked (with NaN, infinities and magnitude for every number) before run()
    number_ranges: dict[str, NumberRange] = {}

    def __init__(self, clock: Clock | None = None) -> None:
        spec = self.connection_argument_spec()
        spec.update(self.argument_spec)
        self.spec = spec
        self.ansible = _MaskingAnsibleModule(self.hidden_values, argument_spec=spec, supports_check_mode=True,
                                             **self.module_kwargs)
        self.ansible.no_log_values.update(self.hidden_values(self.ansible.params))
        self.params = self.ansible.params
        for warning in ignored_option_warnings(self.connection_argument_spec(), self.argument_spec, self.params):
            self.ansible.warn(warning)
        self.clock = clock or Clock()
        self.started = self.clock.monotonic()
        #: the run's one deadline, from ``timeout`` (every module has it) counted from now: handed to the runner,
        #: and through it to every service, wait and request (``core.deadline``)
        self.deadline = run_deadline(self.clock, self.started, self.params.get("timeout"))
        self.clients: list[Any] = []
        #: result fields that describe what this run has written so far (a runner sets them as it writes): a
        #: failure reports them unless the failure gives its own
        self.written: dict[str, Any] = {}

    @staticmethod
    def connection_argument_spec() -> dict[str, Any]:
        return {}

    @staticmethod
    def hidden_values(params: Mapping[str, Any]) -> set[str]:
        """Secrets inside options that are not ``no_log`` as a whole (``core.secrets``): masked in the
        invocation log and in results."""
        return set()

    def _complete(self, data: dict[str, Any]) -> dict[str, Any]:
        api_calls = sum(client.api_calls for client in self.clients)
        # every result carries retried_faults, also a refusal before any client was made (then empty)
        retried = [fault for client in self.clients for fault in client.policy.retried]
        return complete(data, self.started, self.clock.monotonic(), api_calls, retried)

    def exit(self, **data: Any) -> None:
        self.ansible.exit_json(**self._complete(data))

    def warn(self, message: str) -> None:
        """A warning in the result (Ansible shows it with the task)."""
        self.ansible.warn(message)

    def writes(self) -> list[dict[str, str]]:
        """Every write the registered clients made so far, in order (``core.retry``: ``call`` and ``outcome``)."""
        policies: list[Any] = []
        for client in self.clients:
            if all(client.policy is not known for known in policies):
                policies.append(client.policy)
        return [write for policy in policies for write in getattr(policy, "writes", [])]

    def fail(self, msg: str, **data: Any) -> None:
        """Fail with ``msg``. Once anything was written (or may have been: a write whose answer was lost), the
        result says ``changed: true``, lists the writes (``writes``) and carries ``self.written``, whatever
        the failure: the reads that follow a write fail like any other."""
        writes = self.writes()
        if writes and data.get("changed") is not True:  # the failure does not account for the writes itself
            msg = f'{msg.rstrip(".")} (written before this failure: {describe_writes(writes)})'
        data = written_result(data, writes, self.written)
        self.ansible.fail_json(msg=msg, **self._complete(data))

    def run(self) -> None:
        raise NotImplementedError

    def describe_error(self, exc: Exception) -> str | None:
        """A message for an exception of a client library, or None to let it propagate."""
        return None

    def check_numbers(self) -> None:
        problems = number_problems(self.spec, self.params, option_ranges(self.number_ranges))
        if problems:
            raise ModuleFailure("; ".join(problems) + "; nothing was changed")

    def __call__(self) -> None:
        try:
            self.check_numbers()
            self.run()
        except FlightcontrolError as exc:
            self.fail(str(exc), **exc.data)
        except Exception as exc:  # pylint: disable=broad-except
            message = self.describe_error(exc)
            if message is None:
                raise
            self.fail(message)
