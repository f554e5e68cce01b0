# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a failed connection says about whether the request went out.

Both clients (requests under openstacksdk and keystoneauth, and the kubernetes client) send through
urllib3. A connection that was refused or timed out while connecting never carried the request: the
service cannot have done it. Anything else (reset, closed without an answer, a read timeout) may have
come after the service did the work. keystoneauth re-raises requests' errors as its own, so the
original is found along the exception chain.
"""

from __future__ import annotations

from typing import Tuple, Type

BeforeSending = Tuple[Type[BaseException], ...]

try:
    import urllib3
    BEFORE_SENDING: BeforeSending = (urllib3.exceptions.ConnectTimeoutError, ConnectionRefusedError)  # NewConnectionError too
except ImportError:  # pragma: no cover - both clients need it
    BEFORE_SENDING = (ConnectionRefusedError,)

try:
    import requests
    BEFORE_SENDING += (requests.exceptions.ConnectTimeout,)
except ImportError:  # pragma: no cover
    pass

_LONGEST_CHAIN = 10


def failed_before_sending(exc: BaseException | None) -> bool:
    """True when ``exc`` (or an error it was raised from) says the connection failed before the request was
    sent."""
    seen: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo and len(seen) < _LONGEST_CHAIN:
        current = todo.pop(0)
        if current is None or any(current is s for s in seen):
            continue
        seen.append(current)
        if isinstance(current, BEFORE_SENDING):
            return True
        todo.extend([current.__cause__, current.__context__, getattr(current, "reason", None)])
        todo.extend(arg for arg in getattr(current, "args", ()) if isinstance(arg, BaseException))
    return False
