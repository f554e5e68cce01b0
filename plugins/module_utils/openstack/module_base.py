# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The base of the modules that talk to OpenStack: openstack.cloud's connection options, the connection,
and the words for the OpenStack libraries' errors."""

from __future__ import annotations

from typing import Any, Mapping

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.clock import Clock
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.module_base import BaseModule
from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.secrets import secret_values
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.connection import (
    OpenStackClient,
    cloud_dict_problem,
    openstack_argument_spec,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.http import (
    describe_fault,
    is_sdk_error,
    service_message,
)
from ansible_collections.flightcontrol.openstack.plugins.module_utils.openstack.sdk import (
    SDK_IMPORT_ERROR,
    ksa_exceptions,
    sdk_exceptions,
    sdk_version_error,
)


class OpenStackModule(BaseModule):
    """A module that talks to OpenStack with openstack.cloud's connection options."""

    def __init__(self, clock: Clock | None = None) -> None:
        super().__init__(clock=clock)
        self.client: OpenStackClient | None = None

    @staticmethod
    def hidden_values(params: Mapping[str, Any]) -> set[str]:
        # Secrets inside a ``cloud`` dict (a raw option) are masked like the no_log options.
        return secret_values(params.get("cloud"))

    @staticmethod
    def connection_argument_spec() -> dict[str, Any]:
        return openstack_argument_spec()

    def connect(self) -> OpenStackClient:
        problem = cloud_dict_problem(self.params)
        if problem:
            raise ModuleFailure(problem)
        if SDK_IMPORT_ERROR is not None:
            raise ModuleFailure(missing_required_lib("openstacksdk"), exception=SDK_IMPORT_ERROR)
        version_error = sdk_version_error()
        if version_error:
            raise ModuleFailure(version_error)
        try:
            self.client = OpenStackClient(self.params, clock=self.clock)
        except sdk_exceptions.ConfigException as exc:
            raise ModuleFailure(f"OpenStack connection settings are invalid: {exc}")
        self.clients.append(self.client)
        return self.client

    def describe_error(self, exc: Exception) -> str | None:
        if ksa_exceptions is not None and isinstance(exc, ksa_exceptions.SSLError):
            return (f"TLS verification of the OpenStack API failed: {exc}. Check ca_cert (or cacert in clouds.yaml) and "
                    "the endpoints' host names; validate_certs: false skips the check (test clouds only)")
        if describe_fault(exc) is None and not is_sdk_error(exc):
            return None
        return f"OpenStack API error: {service_message(exc)}"
