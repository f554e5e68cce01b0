# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one clock of the collection: every wait, retry and deadline (``monotonic``, ``sleep``) and every
wall-clock time a plan compares with the API's timestamps (``time``, ``utc_now``). Tests pass a fake with
the same methods."""

from __future__ import annotations

import datetime
import time


class Clock:
    """Monotonic time and sleep for waiting; wall-clock time for comparing with the API's timestamps."""

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)

    def time(self) -> float:
        """Wall-clock seconds since the epoch."""
        return time.time()

    def utc_now(self) -> datetime.datetime:
        """The wall-clock time as an aware UTC datetime."""
        return datetime.datetime.now(datetime.timezone.utc)
