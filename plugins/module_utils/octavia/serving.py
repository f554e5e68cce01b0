# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a pool member serves, judged by what its load balancer's provider reports and when (pure).

- ``amphora`` (and every provider other than ``ovn``): ACTIVE and ONLINE with a health monitor, NO_MONITOR without
  one. A monitored member starts OFFLINE until the amphora's first health report, so ONLINE is evidence.
- ``ovn`` with a health monitor: ovn-octavia-provider reports a new member ONLINE the moment it is created
  (``helper.py`` ``member_create``: ONLINE once the member's port is found for OVN's service monitor, before any
  check) and turns it ERROR only when OVN's service monitor has failed ``max_retries_down`` checks ``delay``
  seconds apart, each waiting up to ``timeout`` (``hm_update_event``). ONLINE proves nothing until that window has
  passed: the member serves once it is ACTIVE and ONLINE and has been ONLINE in every sample taken since, for
  ``delay x max_retries_down + timeout`` seconds since it was created. Creation is the member's ``created_at``
  (kept within the times this run could have seen the member first: not after the first sample that showed it, not
  before the last one that did not), else the first sample that showed it. A sample that is not ONLINE starts the
  count again at the next ONLINE sample (``admin_state_up`` back to true, or an update, puts ONLINE back without a
  check), and a member judged serving stops serving with the first sample that is not ONLINE.
- ``ovn`` without a health monitor: NO_MONITOR, as everywhere, with a finding: nothing checks the member, so a
  member whose server never answers counts as serving.

``ServingRule`` is the rule of one pool; ``ServingHistory`` keeps, per member, what a run saw (``observe`` once per
sample) and answers ``serving(member)`` with when and why a member was judged serving.
"""

from __future__ import annotations

import datetime
from typing import Any, Optional

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.times import parse_utc

OVN = "ovn"
ONLINE = "ONLINE"
NO_MONITOR = "NO_MONITOR"


def failure_window(monitor: Optional[dict[str, Any]]) -> float | None:
    """Seconds OVN may take to report a new member that never answers: ``delay x max_retries_down + timeout``;
    None without a monitor."""
    if not monitor:
        return None
    return float(monitor.get("delay") or 0) * int(monitor.get("max_retries_down") or 0) + float(
        monitor.get("timeout") or 0)


def provider_name(provider: Optional[str]) -> str | None:
    return str(provider).strip().lower() or None if provider else None


def plain_serving(member: Optional[dict[str, Any]], has_monitor: bool) -> bool:
    """ACTIVE, and ONLINE with a monitor or NO_MONITOR without one (the rule of every provider but ovn's)."""
    if member is None or member.get("provisioning_status") != "ACTIVE":
        return False
    return member.get("operating_status") == (ONLINE if has_monitor else NO_MONITOR)


class ServingRule:
    """What serving means for one pool: its load balancer's ``provider`` and its health ``monitor`` (the API's
    fields, None without one; ``has_monitor`` when the pool names a monitor that could not be read)."""

    def __init__(self, provider: Optional[str], monitor: Optional[dict[str, Any]],
                 has_monitor: Optional[bool] = None) -> None:
        self.provider = provider_name(provider)
        self.monitor = monitor
        self.has_monitor = bool(monitor) if has_monitor is None else bool(has_monitor)
        self.window = failure_window(monitor) if self.provider == OVN and self.has_monitor else None

    @property
    def finding(self) -> str:
        """A warning for a pool where nothing proves a member serves (ovn without a monitor); "" otherwise."""
        if self.provider == OVN and not self.has_monitor:
            return ("the pool's load balancer is of the ovn provider and the pool has no health monitor: its members "
                    "report NO_MONITOR whether their server answers or not, so a member counts as serving as soon "
                    "as it is ACTIVE; give the pool a health monitor (CAPO makes one) to have OVN check them")
        if self.provider == OVN and self.monitor is None:
            return ("the pool's health monitor could not be read, so OVN's check window is unknown: an ONLINE "
                    "member of this ovn load balancer counts as serving only after it is seen ONLINE")
        return ""

    def describe(self) -> str:
        """The rule in words, for results and messages."""
        if self.window is not None:
            monitor = self.monitor or {}
            return (f"ovn: ACTIVE and ONLINE for a full monitor window since creation, {_seconds(self.window)} s "
                    f"(delay {monitor.get('delay')} s x max_retries_down {monitor.get('max_retries_down')} + timeout "
                    f"{monitor.get('timeout')} s): ovn-octavia-provider reports a new member ONLINE before OVN has "
                    "checked it")
        if self.has_monitor:
            return (f"{self.provider or 'provider unknown'}: ACTIVE and ONLINE (a monitored member starts OFFLINE "
                    "until its first health check)")
        return f"{self.provider or 'provider unknown'}: ACTIVE and NO_MONITOR (the pool has no health monitor)"

    def view(self) -> dict[str, Any]:
        return {"provider": self.provider, "health_monitor": bool(self.has_monitor), "window": self.window,
                "rule": self.describe(), "finding": self.finding or None}


def _seconds(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


class Seen:
    """One member as a run saw it: ``anchor`` (epoch seconds it was created, as far as the run can tell) and
    where that came from, ``online_since`` (start of its current run of ONLINE samples), ``serving_at`` and
    ``serving_after`` (when and why it was judged serving; None while it is not)."""

    def __init__(self, anchor: float, anchor_source: str) -> None:
        self.anchor = anchor
        self.anchor_source = anchor_source
        self.online_since: float | None = None
        self.first_online = True  # online_since is the anchor: ONLINE in every sample since the first
        self.serving_at: float | None = None
        self.serving_after: str | None = None


def member_key(member: dict[str, Any]) -> str:
    return member.get("id") or f"{member.get('address')}:{member.get('protocol_port')}"


def anchor_of(created_at: Any, now: float, absent_at: float | None) -> tuple[float, str]:
    """(epoch seconds, source) of a member first seen at ``now``: its ``created_at`` kept between ``absent_at`` (the
    last sample without it, None when it was there at the run's first sample) and ``now``, else ``now``."""
    created = parse_utc(created_at) if created_at else None
    if created is None:
        return now, "first seen"
    stamp = min(created.timestamp(), now)
    if absent_at is not None and stamp < absent_at:
        return absent_at, "created_at, not before the last sample without it"
    return stamp, "created_at"


class ServingHistory:
    """Each member's history in one run, under ``rule``; ``observe`` once per sample, then ``serving``."""

    def __init__(self, rule: ServingRule) -> None:
        self.rule = rule
        self.seen: dict[str, Seen] = {}
        self.last_sample: float | None = None

    def missing_created(self, members: list[dict[str, Any]]) -> bool:
        """Whether a member not seen before has no ``created_at`` while the rule needs it (ovn with a monitor)."""
        return self.rule.window is not None and any(
            member_key(m) not in self.seen and not m.get("created_at") for m in members)

    def observe(self, members: list[dict[str, Any]], now: float,
                created: Optional[dict[Any, Any]] = None) -> None:
        """Take one sample at ``now`` (epoch seconds); ``created``: member id -> created_at where the sample's
        members lack it (a status-tree read)."""
        for member in members:
            key = member_key(member)
            entry = self.seen.get(key)
            if entry is None:
                stamp = member.get("created_at") or (created or {}).get(member.get("id"))
                entry = self.seen[key] = Seen(*anchor_of(stamp, now, self.last_sample))
            self._sample(entry, member, now)
        self.last_sample = now

    def _sample(self, entry: Seen, member: dict[str, Any], now: float) -> None:
        if not plain_serving(member, self.rule.has_monitor):
            entry.online_since, entry.first_online = None, False
            entry.serving_at = entry.serving_after = None
            return
        if entry.online_since is None:
            entry.online_since = entry.anchor if entry.first_online else now
        if entry.serving_at is None and self._proven(entry, now):
            entry.serving_at = now
            entry.serving_after = self._why(entry, now)

    def _proven(self, entry: Seen, now: float) -> bool:
        window = self.rule.window
        return window is None or now - (entry.online_since or now) >= window

    def _why(self, entry: Seen, now: float) -> str:
        rule = self.rule
        if rule.window is None:
            return rule.describe()
        since = f"since creation ({entry.anchor_source})" if entry.first_online else \
            "since it was seen ONLINE again"
        return (f"ONLINE for {_seconds(now - (entry.online_since or now))} s {since}, the full monitor window of "
                f"{_seconds(rule.window)} s (ovn: delay x max_retries_down + timeout)")

    def serving(self, member: Optional[dict[str, Any]]) -> bool:
        """Whether ``member`` (as in the last sample) serves under the rule."""
        if member is None or not plain_serving(member, self.rule.has_monitor):
            return False
        if self.rule.window is None:
            return True
        entry = self.seen.get(member_key(member))
        return entry is not None and entry.serving_at is not None

    def waiting(self, member: Optional[dict[str, Any]], now: Optional[float] = None) -> str:
        """Why an ONLINE member does not serve yet ("" when it serves or is not ONLINE); ``now`` defaults to the
        last sample."""
        if member is None or self.serving(member) or not plain_serving(member, self.rule.has_monitor):
            return ""
        now = self.last_sample if now is None else now
        if now is None:
            return "not observed yet"
        entry = self.seen.get(member_key(member))
        online = now - (entry.online_since if entry and entry.online_since is not None else now)
        return (f"ONLINE for {_seconds(max(online, 0.0))} s of the {_seconds(self.rule.window or 0)} s monitor window "
                "(ovn reports ONLINE before its first check)")

    def judged(self, member: dict[str, Any]) -> dict[str, Any]:
        """``serving_since`` (UTC time, or None) and ``serving_after`` of a member, for results."""
        entry = self.seen.get(member_key(member))
        if entry is None or entry.serving_at is None or not self.serving(member):
            return {"serving_since": None, "serving_after": None}
        when = datetime.datetime.fromtimestamp(entry.serving_at, datetime.timezone.utc)
        return {"serving_since": when.strftime("%Y-%m-%dT%H:%M:%SZ"), "serving_after": entry.serving_after}
