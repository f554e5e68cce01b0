# -*- coding: utf-8 -*-
# Copyright: flightcontrol.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Names and patterns: the one rule every option that names objects follows (``servers``, members, nodes).

1. An entry that is exactly the name of an existing object means that object and only it, whatever
   characters the name has (a server called ``gm[1]`` is named by ``gm[1]``, never ``gm1``).
2. Otherwise an entry with ``*`` is a glob pattern on names: ``*`` is any run of characters, and inside such
   a pattern ``?`` is one character and ``[...]`` a character class (case-sensitive).
3. Otherwise the entry is a literal name: ``?``, ``[`` and ``]`` are ordinary characters. ``node-[12]`` and
   ``node-?`` name objects called so; they are no patterns.
4. A destructive action applies only to objects an entry names exactly or matches through its ``*`` alone
   (``?`` and ``[...]`` read as ordinary characters). An object that matched only through ``?`` or a
   character class is reported and left alone.

Pure: names in, no API access.
"""

import fnmatch
import re

WILDCARD = "*"

# How an object matched an entry.
EXACT = "exact"  # the entry is its name (or id)
WILDCARD_MATCH = "wildcard"  # the entry's ``*`` alone matched it
CLASS_MATCH = "class"  # only through ``?`` or ``[...]`` of a pattern: never for a destructive action

RULE = ("an entry that is exactly an existing name means that object only; otherwise an entry with '*' is a "
        "glob pattern; without '*', '?', '[' and ']' are ordinary characters; a deletion never takes an object "
        "that matched only through '?' or '[...]'")


def is_pattern(entry):
    """Whether ``entry`` may be a glob pattern on names: it has ``*`` (rule 2). An entry that is also an existing
    object's name is that name (``how_matched``)."""
    return WILDCARD in str(entry)


def _star_only(entry):
    return re.compile("^" + ".*".join(re.escape(part) for part in str(entry).split(WILDCARD)) + "$", re.DOTALL)


def how_matched(name, entry, existing_names=()):
    """How the object called ``name`` matches ``entry``: EXACT, WILDCARD_MATCH, CLASS_MATCH or None (no match).
    ``existing_names``: every name that exists, so an entry that is one of them means that object only."""
    name, entry = name or "", str(entry)
    if name == entry:
        return EXACT
    if entry in existing_names or not is_pattern(entry):
        return None
    if _star_only(entry).match(name):
        return WILDCARD_MATCH
    if fnmatch.fnmatchcase(name, entry):
        return CLASS_MATCH
    return None


def destructible(how):
    """Whether an object that matched so may be deleted (rule 4)."""
    return how in (EXACT, WILDCARD_MATCH)
