# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

class ModuleDocFragment:
    # The one rule of the options that name objects (servers, members, replace pairs): core/names.py.
    DOCUMENTATION = r'''
options: {}
notes:
  - "Names and patterns, one rule for every option that names objects (I(servers), members, I(replace) pairs).
    An entry that is exactly the name (or the id) of an existing object means that object and only it, whatever
    characters it has: C(gm[1]) names the server called C(gm[1]), never C(gm1). Otherwise an entry with C(*) is a
    glob pattern on names, in which C(?) is one character and C([...]) a character class. Without C(*), C(?), C([)
    and C(]) are ordinary characters: C(node-?) and C(node-[12]) are names, not patterns (list the names, or use
    C(node-*)). A deletion never takes an object that only C(?) or a character class matched: C(gm[1]*) may report
    C(gm1) but never deletes it; an object is deleted only when an entry names it or its C(*) alone matches it."
  - "Kubernetes label selectors (I(node_selector)) are the API server's label selectors: they have no glob
    characters. Octavia members are named by id, exact name or address; an entry that is exactly an existing
    member's name means that member, also when it looks like an address."
'''
