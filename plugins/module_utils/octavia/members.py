# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure decisions for waiting on Octavia pool members: no API access, plain dicts in and out.

An observation is ``{"loadbalancer": {...}, "pool": {...}, "members": [{...}, ...]}`` with the
fields Octavia returns (id, name, address, protocol_port, provisioning_status, operating_status).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Any, Iterable, Optional

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.identifiers import (
    is_uuid,
    normalize_address,
    normalize_uuid,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.waiter import (
    DONE,
    FAILED,
    WAITING,
    Verdict,
)

OPERATING_STATUSES = ("ONLINE", "DRAINING", "OFFLINE", "DEGRADED", "ERROR", "NO_MONITOR")
HEALTHY = "HEALTHY"
PENDING_PREFIX = "PENDING_"

_DOTTED_RE = re.compile(r"^\d{1,3}(\.\d{1,3}){3}(:\d*)?$")


@dataclass(eq=False, repr=False)
class Selector:
    """One way of naming members: by id, by name, or by address with an optional port."""

    text: str
    kind: str
    value: str
    port: Optional[int] = None

    def matches(self, member: dict[str, Any]) -> bool:
        if self.kind == "id":
            return normalize_uuid(member.get("id")) == self.value
        if self.kind == "name":
            return member.get("name") == self.value
        address = normalize_address(member.get("address"))
        if address != self.value:
            return False
        return self.port is None or member.get("protocol_port") == self.port

    def __repr__(self) -> str:
        return f"Selector({self.kind}={self.value!r}{'' if self.port is None else f':{self.port}'})"


def _parse_port(text: str, original: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise ValueError(f"member {original!r}: port {text!r} is not a number from 1 to 65535")
    return int(text)


def parse_selector(text: str) -> Selector:
    """Parse one ``members`` entry.  Raises ValueError with a message naming the entry."""
    original = text
    text = str(text).strip()
    if not text:
        raise ValueError("members: an entry is empty")
    if is_uuid(text):
        return Selector(original, "id", normalize_uuid(text))
    # [v6]:port
    bracketed = re.match(r"^\[([^\]]+)\](?::(.*))?$", text)
    if bracketed:
        host, port = bracketed.group(1), bracketed.group(2)
        try:
            address = str(ipaddress.IPv6Address(host))
        except ValueError:
            raise ValueError(f"member {original!r}: {host!r} is not a valid IPv6 address")
        return Selector(original, "address", address, _parse_port(port, original) if port is not None else None)
    try:
        return Selector(original, "address", str(ipaddress.ip_address(text)))
    except ValueError:
        pass
    if _DOTTED_RE.match(text):
        host, _sep, port = text.partition(":")
        try:
            address = str(ipaddress.IPv4Address(host))
        except ValueError:
            raise ValueError(f"member {original!r}: {host!r} is not a valid IPv4 address")
        return Selector(original, "address", address, _parse_port(port, original))
    if text.count(":") >= 2:
        raise ValueError(f"member {original!r} looks like an IPv6 address but is not one; write [address]:port "
                         "for an address with a port")
    return Selector(original, "name", text)


def bind(selector: Selector, members: list[dict[str, Any]]) -> Selector:
    """``selector`` read against the members that exist, by the rule of ``core.names``: an entry that is exactly an
    existing member's name means the members of that name, whatever the entry looks like (an address, an id);
    otherwise it keeps its kind. Bind once, on the first read of a run: a name that leaves the pool must not turn
    into an address that names another member."""
    text = str(selector.text).strip()
    if selector.kind != "name" and any(m.get("name") == text for m in members):
        return Selector(selector.text, "name", text)
    return selector


def parse_selectors(entries: Iterable[str] | None) -> list[Selector]:
    return [parse_selector(entry) for entry in (entries or [])]


def resolve_accepted(requested: list[str] | None, has_monitor: bool, pool_label: str) -> frozenset[str] | None:
    """The set of accepted operating statuses, or raise ValueError when it can never be met.

    None means any operating status is accepted.  ``HEALTHY`` means ONLINE when the pool has a
    health monitor and NO_MONITOR when it has none (Octavia only reports ONLINE with a monitor).
    """
    if not requested:
        return None
    accepted = set()
    for status in requested:
        status = str(status).upper()
        if status == HEALTHY:
            accepted.add("ONLINE" if has_monitor else "NO_MONITOR")
        elif status in OPERATING_STATUSES:
            accepted.add(status)
        else:
            raise ValueError(f"operating_status {status!r} is not one of {', '.join(OPERATING_STATUSES + (HEALTHY,))}")
    if not has_monitor and not accepted & {"NO_MONITOR", "OFFLINE"}:
        raise ValueError(
            f"pool {pool_label} has no health monitor, so Octavia reports operating_status NO_MONITOR for its members "
            f"and never {'/'.join(sorted(accepted))}; accept HEALTHY (or NO_MONITOR), or add a health monitor to the "
            "pool")
    if has_monitor and accepted == {"NO_MONITOR"}:
        raise ValueError(
            f"pool {pool_label} has a health monitor, so its members never report NO_MONITOR; accept HEALTHY (or "
            "ONLINE)")
    return frozenset(accepted)


def label(obj: dict[str, Any] | None) -> str:
    """A human name for an Octavia object: ``name (id)`` or the id alone."""
    if not obj:
        return "?"
    name, oid = obj.get("name"), obj.get("id")
    return f"{name} ({oid})" if name else str(oid)


def member_label(member: dict[str, Any]) -> str:
    return f"{member.get('name') or member.get('id')} {member.get('address')}:{member.get('protocol_port')}"


def member_states(member: dict[str, Any]) -> str:
    return f"provisioning_status={member.get('provisioning_status')} operating_status={member.get('operating_status')}"


@dataclass(eq=False)
class WaitSpec:
    """What the user asked for."""

    state: str
    selectors: list[Selector]
    accepted: Optional[frozenset[str]]
    wait_for_loadbalancer: bool
    #: ``serving.ServingHistory`` of the pool where ONLINE must be proven (an ovn pool with a monitor), else None.
    history: Optional[Any] = None


def select(members: list[dict[str, Any]], selectors: list[Selector]) -> tuple[list[dict[str, Any]], list[Selector]]:
    """Members chosen by the selectors (all members when there are none) and the selectors that matched nothing."""
    if not selectors:
        return list(members), []
    chosen: list[dict[str, Any]] = []
    unmatched: list[Selector] = []
    for selector in selectors:
        hits = [m for m in members if selector.matches(m)]
        if not hits:
            unmatched.append(selector)
        for member in hits:
            if all(member is not c for c in chosen):
                chosen.append(member)
    return chosen, unmatched


def member_ready(member: dict[str, Any], accepted: frozenset[str] | None,
                 history: Optional[Any] = None) -> tuple[bool, str]:
    """Whether one member is where ``state: present`` wants it, and if not, why. With ``history`` (a
    ``serving.ServingHistory``), an ONLINE member is ready only once the history judges it serving (on ovn: a full
    monitor window since its creation)."""
    status = member.get("provisioning_status")
    if status != "ACTIVE":
        return False, f"provisioning_status is {status}"
    if accepted is not None and member.get("operating_status") not in accepted:
        return False, (f"operating_status is {member.get('operating_status')}, waiting for "
                       f"{' or '.join(sorted(accepted))}")
    if history is not None and accepted is not None and member.get("operating_status") == "ONLINE":
        unproven = history.waiting(member)
        if unproven:
            return False, unproven
    return True, ""


def judge(observation: dict[str, Any], spec: WaitSpec) -> Verdict:
    """The verdict on one observation.  ERROR anywhere relevant fails at once."""
    lb = observation.get("loadbalancer") or {}
    pool = observation.get("pool") or {}
    members = observation.get("members") or []
    if lb.get("provisioning_status") == "ERROR":
        return Verdict(FAILED, f"load balancer {label(lb)} is in provisioning_status ERROR")
    if pool.get("provisioning_status") == "ERROR":
        return Verdict(FAILED, f"pool {label(pool)} is in provisioning_status ERROR")
    chosen, unmatched = select(members, spec.selectors)
    errored = [m for m in chosen if m.get("provisioning_status") == "ERROR"]
    if errored:
        return Verdict(FAILED, f"{'member is' if len(errored) == 1 else 'members are'} in provisioning_status ERROR: "
                               f"{'; '.join(f'{member_label(m)} ({member_states(m)})' for m in errored)}")
    waiting: list[str] = []
    if spec.state == "present":
        waiting.extend(f"no member matches {s.text!r} yet" for s in unmatched)
        if not spec.selectors and not members:
            waiting.append(f"pool {label(pool)} has no members")
        for member in chosen:
            ready, why = member_ready(member, spec.accepted, spec.history)
            if not ready:
                waiting.append(f"{member_label(member)}: {why}")
    else:
        waiting.extend(f"{member_label(m)} still exists ({member_states(m)})" for m in chosen)
    if not waiting and spec.wait_for_loadbalancer and lb.get("provisioning_status") != "ACTIVE":
        waiting.append(f"load balancer {label(lb)} is {lb.get('provisioning_status')}")
    if waiting:
        return Verdict(WAITING, "; ".join(waiting))
    if spec.state == "present":
        return Verdict(DONE, f"{len(chosen)} member(s) ready")
    return Verdict(DONE, "the chosen members are gone" if spec.selectors else "the pool has no members left")


def advice(observation: dict[str, Any], spec: WaitSpec) -> list[str]:
    """What a person should check, one line per stuck object, for a timeout or failure message."""
    lb = observation.get("loadbalancer") or {}
    pool = observation.get("pool") or {}
    members = observation.get("members") or []
    chosen, unmatched = select(members, spec.selectors)
    lb_status = lb.get("provisioning_status")
    lines = []
    for selector in unmatched if spec.state == "present" else []:
        lines.append(f"no member of pool {label(pool)} matches {selector.text!r}: check that it was created in this "
                     "pool (and with the address and port you expect)")
    for member in chosen:
        status = member.get("provisioning_status")
        if spec.state == "absent":
            if status == "ERROR":
                lines.append(f"{member_label(member)}: the delete failed; check the Octavia worker logs, then delete "
                             "the member again")
            elif lb_status == "ACTIVE" and str(status).startswith(PENDING_PREFIX):
                lines.append(f"{member_label(member)} is {status} while the load balancer is ACTIVE: the provider lost "
                             "track of it; check the Octavia worker logs for this member")
            else:
                lines.append(f"{member_label(member)} is still there ({member_states(member)})")
            continue
        if status == "ERROR":
            lines.append(f"{member_label(member)}: Octavia failed to configure this member (provisioning_status "
                         "ERROR); check the Octavia worker and amphora logs, then delete and re-create the member")
        elif str(status).startswith(PENDING_PREFIX) and lb_status == "ACTIVE":
            lines.append(f"{member_label(member)} is still {status} although the load balancer is ACTIVE: the provider "
                         "lost track of it (the amphora v2 failure) and Octavia will not finish it by itself; check "
                         "the Octavia worker logs for this member, then delete and re-create it")
        elif str(status).startswith(PENDING_PREFIX):
            lines.append(f"{member_label(member)} is {status} while the load balancer is {lb_status}: the provider is "
                         "still working; check the Octavia worker if this lasts")
        elif status == "ACTIVE":
            if not member_ready(member, spec.accepted, spec.history)[0]:
                lines.append(
                    f"{member_label(member)} is provisioned but not serving (operating_status "
                    f"{member.get('operating_status')}): check the backend at "
                    f"{member.get('address')}:{member.get('protocol_port')} and the pool's health monitor")
    if spec.state == "present" and not spec.selectors and not members:
        lines.append(f"pool {label(pool)} has no members at all: check what should have added them")
    if spec.wait_for_loadbalancer and lb_status != "ACTIVE" and lb_status != "ERROR":
        lines.append(f"load balancer {label(lb)} is still {lb_status}: an operation is in flight; mutations get HTTP "
                     "409 until it is ACTIVE")
    return lines


def failure_message(verdict: Verdict, observation: dict[str, Any], spec: WaitSpec, elapsed: float, timed_out: bool,
                    timeout: float) -> str:
    """The whole failure text: what is stuck, the LB's own state, how long, what to check."""
    lb = observation.get("loadbalancer") or {}
    pool = observation.get("pool") or {}
    if timed_out:
        head = (f"Timed out after {elapsed:.0f} s (timeout {timeout} s) waiting for members of pool {label(pool)} to "
                f"be {spec.state}")
    else:
        head = (f"Failed after {elapsed:.0f} s waiting for members of pool {label(pool)} to be {spec.state}: "
                f"{verdict.message}")
    parts = [head + "."]
    if timed_out and verdict.message:
        parts.append(f"Still waiting on: {verdict.message}.")
    parts.append(f"Load balancer {label(lb)}: provisioning_status={lb.get('provisioning_status')} "
                 f"operating_status={lb.get('operating_status')}.")
    lines = advice(observation, spec)
    if lines:
        parts.append("Check: " + " | ".join(lines))
    return " ".join(parts)


def member_view(member: dict[str, Any], spec: WaitSpec) -> dict[str, Any]:
    """A member as the module returns it."""
    view = dict((k, member.get(k)) for k in (
        "id", "name", "address", "protocol_port", "provisioning_status", "operating_status", "admin_state_up",
        "weight", "backup", "monitor_address", "monitor_port", "subnet_id"))
    if spec.state == "present":
        view["ready"], view["waiting_for"] = member_ready(member, spec.accepted, spec.history)
        if spec.history is not None:
            view.update(spec.history.judged(member))
    else:
        view["ready"], view["waiting_for"] = False, "still exists"
    if spec.selectors:
        view["selected_by"] = [s.text for s in spec.selectors if s.matches(member)]
    return view
