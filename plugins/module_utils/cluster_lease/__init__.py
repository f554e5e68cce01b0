# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# PRIVATE to flightcontrol.openstack: not a public API. What this package holds may change in any release without
# notice; only this collection's own plugins import it (docs/architecture.md, "Private to the collection").
