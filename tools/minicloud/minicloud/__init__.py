"""minicloud: a local test cloud made of real OpenStack API services.

Keystone, Neutron and Octavia run from their pip-installed packages on 127.0.0.1 with
sqlite. What cannot run on one small machine is emulated: the Octavia provider
(see :mod:`minicloud.provider`) and HTTP faults (see :mod:`minicloud.traffic`).
:mod:`minicloud.control` is the Python API; the command line is a thin layer
over it.
"""
