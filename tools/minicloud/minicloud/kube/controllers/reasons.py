"""The reasons and components of the Events the controllers record (see :mod:`.events`).

Where CAPI or CAPO record an Event for the same step, the reason, message and component are
theirs; the others are minicloud's own, named so (their step has no Event upstream):

- CAPI's MachineSet controller: ``SuccessfulCreate`` "Created Machine %q", ``SuccessfulDelete``
  "Deleted Machine %q". The real KCP records only warnings when it creates or deletes a Machine;
  minicloud records the MachineSet's reasons on the KCP, so a replacement shows up there too.
- CAPI's Machine controller: ``SuccessfulDrainNode`` "success draining Machine's node %q".
- CAPO: ``SuccessfulCreateServer`` "Created server %s with id %s", ``SuccessfulDeleteServer``
  "Deleted server %s with id %s". CAPO records nothing for load-balancer members: the
  ``LoadBalancerMember*`` reasons are minicloud's own.
- A pause: CAPI only sets the Paused condition and CAPO reports nothing; ``Paused`` and
  ``Unpaused`` are minicloud's own (on CAPI core objects when their Paused condition flips, and on
  the provider's objects when a block-move provider drops or puts back its annotation).
"""

from __future__ import annotations

# components (the controller managers' event recorders)
MACHINESET_CONTROLLER = "machineset-controller"
KCP_CONTROLLER = "kubeadmcontrolplane-controller"
MACHINE_CONTROLLER = "machine-controller"
CAPO_CONTROLLER = "openstackmachine-controller"
CAPI_CONTROLLER = "cluster-api-controller-manager"
CAPO_MANAGER = "capo-controller-manager"

# CAPI's
SUCCESSFUL_CREATE = "SuccessfulCreate"
SUCCESSFUL_DELETE = "SuccessfulDelete"
SUCCESSFUL_DRAIN_NODE = "SuccessfulDrainNode"
# CAPO's
SUCCESSFUL_CREATE_SERVER = "SuccessfulCreateServer"
SUCCESSFUL_DELETE_SERVER = "SuccessfulDeleteServer"
# minicloud's own
MEMBER_CREATED = "LoadBalancerMemberCreated"
MEMBER_ACTIVE = "LoadBalancerMemberActive"
MEMBER_DELETED = "LoadBalancerMemberDeleted"
PAUSED = "Paused"
UNPAUSED = "Unpaused"


def created_machine(name: str) -> str:
    return f'Created Machine "{name}"'


def deleted_machine(name: str) -> str:
    return f'Deleted Machine "{name}"'


def drained_node(node: str) -> str:
    return f'success draining Machine\'s node "{node}"'
