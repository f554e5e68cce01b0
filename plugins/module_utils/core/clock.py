# -*- coding: utf-8 -*-
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The clock every wait, retry and deadline uses; tests pass a fake with the same two methods."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time


class Clock:
    """Monotonic time and sleep."""

    def monotonic(self):
        return time.monotonic()

    def sleep(self, seconds):
        if seconds > 0:
            time.sleep(seconds)
