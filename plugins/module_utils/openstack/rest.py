# -*- coding: utf-8 -*-
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The base of every OpenStack service class: one proxy of the connection, every request through
``OpenStackClient.call`` (the retry policy, the deadline, request counting)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ServiceBase:
    """Requests to one service. ``proxy`` names the connection's proxy (``network``, ``compute``,
    ``load_balancer``). Plain REST calls pass ``raise_exc=True``: the proxies do not raise on an HTTP error
    by default, and faults must reach the retry policy."""

    proxy = None

    def __init__(self, client):
        self.client = client

    @property
    def api(self):
        # Touching a proxy authenticates and reads the catalog: only ever do it inside client.call.
        return getattr(self.client.conn, self.proxy)

    def _get(self, path, what, deadline, params=None):
        """One GET, its JSON answer decoded."""
        return self.client.call(lambda: self.api.get(path, params=params, raise_exc=True).json(), what, deadline)
