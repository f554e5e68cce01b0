# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

class ModuleDocFragment:
    # The modules that follow Kubernetes objects while they wait (kubernetes.watch.ObjectWatch): the option and the
    # result that says how they followed them.
    DOCUMENTATION = r'''
options:
  use_watch:
    description:
      - Follow the Kubernetes objects by watch where the API serves it (one list and one watch per kind, as
        client-go's informers do) instead of reading them again at every poll. A write is seen when it happens,
        never between two polls, and following the objects costs a few requests however long the wait lasts.
      - A watch the API ends is opened again from the last resourceVersion seen; one the API cut with 410 Gone
        (it no longer holds that resourceVersion) is answered with a fresh list. Where the API, or a proxy in
        front of it, does not serve watch, or a watch keeps failing, the module reads the objects at every poll
        instead and says why in C(observed_with) in the result. C(false) always reads them at every poll.
    type: bool
    default: true
'''

    RETURN = r'''
observed_with:
  description: How the wait followed the Kubernetes objects.
  returned: when the wait started
  type: dict
  contains:
    method:
      description: C(watch), or C(poll) (read at every poll).
      type: str
    fallback_reason:
      description: Why it polled (the API's answer to the watch, C(use_watch is false)); null with a watch.
      type: str
    watches:
      description: Watch requests opened.
      type: int
    relists:
      description: Lists after the API cut a watch with 410 Gone.
      type: int
    events:
      description: Watch events received.
      type: int
  sample: {method: watch, fallback_reason: null, watches: 9, relists: 0, events: 31}
'''
