# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

class ModuleDocFragment:
    # OpenStack connection options, named and behaving as in openstack.cloud
    DOCUMENTATION = r'''
options:
  cloud:
    description:
      - Named cloud or cloud config to operate against.
      - If I(cloud) is a string, it references a named cloud config as defined in an OpenStack
        clouds.yaml file (found through C(OS_CLIENT_CONFIG_FILE) or the usual locations).
      - If I(cloud) is a dict, it contains a complete cloud configuration like a section of clouds.yaml.
      - When neither I(cloud) nor I(auth) is given, the C(OS_*) environment variables are used.
    type: raw
  auth:
    description:
      - Dictionary containing auth information as needed by the cloud's auth plugin strategy.
        For the default C(password) plugin this is C(auth_url), C(username), C(password),
        C(project_name) and the domain names or ids.
    type: dict
  auth_type:
    description:
      - Name of the auth plugin to use. If the cloud uses something other than password
        authentication, its plugin name goes here and the contents of I(auth) change to match.
    type: str
  region_name:
    description:
      - Name of the region.
    type: str
  validate_certs:
    description:
      - Whether or not SSL API requests should be verified.
      - Defaults to C(true) unless the cloud's configuration says otherwise.
    type: bool
    aliases: [verify]
  ca_cert:
    description:
      - A path to a CA Cert bundle that can be used as part of verifying SSL API requests.
    type: str
    aliases: [cacert]
  client_cert:
    description:
      - A path to a client certificate to use as part of the SSL transaction.
    type: str
    aliases: [cert]
  client_key:
    description:
      - A path to a client key to use as part of the SSL transaction.
    type: str
    aliases: [key]
  api_timeout:
    description:
      - How long, in seconds, one HTTP request to an OpenStack API may take (1 to 3600).
      - When not set, 30 seconds. Either way a request never waits past the module's own deadline
        (I(timeout) of a waiting module) by more than one second.
    type: int
  interface:
    description:
      - Endpoint URL type to fetch from the service catalog.
      - With a O(cloud) dict it applies too, unless the dict has an C(interface) of its own; a dict's
        C(interface) that differs from a non-default O(interface) is refused before any request.
    type: str
    choices: [admin, internal, public]
    default: public
    aliases: [endpoint_type]
  wait:
    description:
      - Accepted so that C(module_defaults) written for openstack.cloud carry over, and ignored with a
        warning naming it (a waiting module here always waits, up to its I(timeout)).
    type: bool
  sdk_log_path:
    description:
      - Accepted so that C(module_defaults) written for openstack.cloud carry over, and ignored with a
        warning naming it (the module writes no SDK log).
    type: str
  sdk_log_level:
    description:
      - Accepted so that C(module_defaults) written for openstack.cloud carry over, and ignored with a
        warning naming it.
    type: str
    choices: [INFO, DEBUG]
requirements:
  - python >= 3.9
  - openstacksdk >= 1.0.0
notes:
  - The standard OpenStack environment variables, such as C(OS_USERNAME) and C(OS_CLIENT_CONFIG_FILE),
    may be used instead of providing explicit values.
  - Auth information is driven by openstacksdk, which means that values can come from a yaml config
    file in /etc/ansible/openstack.yaml, /etc/openstack/clouds.yaml or ~/.config/openstack/clouds.yaml,
    then from standard environment variables, then finally by explicit parameters in plays.
  - Transient API faults (HTTP 429 honouring Retry-After, 502, 503, 504, connection errors) are retried
    with jittered exponential backoff inside the module's deadline; an expired token is renewed once
    (by keystoneauth). Other errors fail at once.
  - When I(cloud) is a dict, values under keys that look secret (password, secret, token, key,
    credential) are masked in the output, and the other connection options must not be given.
  - Every result carries C(api_calls), the number of HTTP requests the module sent (token requests included).
'''
