"""An emulation of cloud-provider-openstack's route controller (``python -m minicloud route-controller``).

``reconcile`` holds its decisions (pure), ``controller`` one reconcile period against Neutron, its record and its
background loop. See docs/minicloud.md ("The cloud controller's route controller").
"""
