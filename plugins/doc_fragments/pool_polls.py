# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

class ModuleDocFragment:
    # The result of the modules that poll an Octavia pool (octavia.service.OctaviaService.pool_state), for their
    # RETURN's extends_documentation_fragment.
    RETURN = r'''
polled_with:
  description:
    - How the polls read the pool. C(status tree) is Octavia's status tree, one request per poll whatever the pool's
      size; C(member list) is the members list and the load balancer's GET (two requests), read where the status
      tree is refused (its policy rule, a proxy) or does not show the pool (a pool on no listener).
  returned: when the pool was found
  type: dict
  contains:
    method:
      description: C(status tree) or C(member list).
      type: str
    fallback_reason:
      description: Why the member list was read; null with the status tree.
      type: str
  sample: {method: status tree, fallback_reason: null}
'''
