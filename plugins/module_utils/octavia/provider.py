# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a load balancer's provider honours when a member is taken out of rotation (pure).

- ``amphora`` (HAProxy in a VM; ``octavia`` and ``amphorav2`` are Octavia's other names for it, ``minicloud``
  minicloud's old one): a member's ``weight`` is rendered into HAProxy's server line; weight 0 sends it no new
  connection while its established ones go on and its health checks keep running, so it stays ONLINE and the
  weight goes back at once. Its template has no ``on-marked-down shutdown-sessions``: neither weight 0 nor
  ``admin_state_up: false`` closes an established connection.
- ``ovn`` (ovn-octavia-provider): no code reads a member's weight (``helper.py`` builds the OVN load balancer's
  VIP backends from the members that are admin-up); ``admin_state_up: false`` takes the member out of the VIP's
  backends and the member reports OFFLINE; true puts it back (ONLINE, then what OVN's health checks say).
- any other provider: which of weight, admin state or member removal it honours is not known here, so a drain is
  refused before any write, naming the provider (a drain that does nothing is worse than none: the run would
  wait and release a member that still takes new connections).

Serving is judged the same way on both known providers: ACTIVE and ONLINE with a health monitor (amphora's
HAProxy checks, OVN's service monitor, which reports ONLINE or ERROR), NO_MONITOR without one. A member drained
with admin_state_up false is OFFLINE on both, so it never counts as serving while drained.
"""

from __future__ import annotations

from typing import Any, Optional, Union

WEIGHT = "weight"
ADMIN_STATE = "admin_state"

DRAIN_METHODS = {"amphora": WEIGHT, "amphorav2": WEIGHT, "octavia": WEIGHT, "minicloud": WEIGHT, "ovn": ADMIN_STATE}


def drain_method(provider: Optional[str]) -> str | None:
    """The way a member of a load balancer of ``provider`` is taken out of rotation, or None when unknown."""
    return DRAIN_METHODS.get(str(provider or "").strip().lower())


def drain_refusal(provider: Optional[str]) -> str | None:
    """Why a drain cannot be made on ``provider`` (None when it can)."""
    if drain_method(provider) is not None:
        return None
    return (f"drain is not supported on load balancer provider {provider!r}: it is not known to honour a member's "
            f"weight or admin_state_up (known: {', '.join(sorted(DRAIN_METHODS))}); run without drain, or ask for the "
            "provider to be added")


def field_of(method: str) -> str:
    return "weight" if method == WEIGHT else "admin_state_up"


def before_value(method: str, member: dict[str, Any]) -> Union[int, bool]:
    """What the member had before the drain (put back on restore)."""
    if method == WEIGHT:
        weight = member.get("weight")
        return 1 if weight is None else weight
    state = member.get("admin_state_up")
    return True if state is None else bool(state)


def drained_value(method: str) -> Union[int, bool]:
    return 0 if method == WEIGHT else False


def describe(method: str) -> str:
    return "weight 0" if method == WEIGHT else "admin_state_up false"
