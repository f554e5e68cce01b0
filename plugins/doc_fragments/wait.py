# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

class ModuleDocFragment:
    # Options of every module that waits
    DOCUMENTATION = r'''
options:
  timeout:
    description:
      - How long to wait, in seconds, before failing. Lookups and retries of transient API faults
        count against it.
    type: int
    default: 300
  poll_interval:
    description:
      - Seconds between two polls.
    type: float
    default: 5
'''
