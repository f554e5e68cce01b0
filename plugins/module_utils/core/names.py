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

Kubernetes names (``name_problem``) and Cluster API clusters (``cluster_problems``, ``cluster_reference_problem``,
``check_cluster``): the one rule every module that takes a cluster refuses a value with, before any request.

Pure: names in, no API access.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Collection

from ansible_collections.flightcontrol.openstack.plugins.module_utils.core.errors import ModuleFailure

WILDCARD = "*"

# How an object matched an entry.
EXACT = "exact"  # the entry is its name (or id)
WILDCARD_MATCH = "wildcard"  # the entry's ``*`` alone matched it
CLASS_MATCH = "class"  # only through ``?`` or ``[...]`` of a pattern: never for a destructive action

RULE = ("an entry that is exactly an existing name means that object only; otherwise an entry with '*' is a "
        "glob pattern; without '*', '?', '[' and ']' are ordinary characters; a deletion never takes an object "
        "that matched only through '?' or '[...]'")


def is_pattern(entry: object) -> bool:
    """Whether ``entry`` may be a glob pattern on names: it has ``*`` (rule 2). An entry that is also an existing
    object's name is that name (``how_matched``)."""
    return WILDCARD in str(entry)


def _star_only(entry: object) -> re.Pattern[str]:
    return re.compile("^" + ".*".join(re.escape(part) for part in str(entry).split(WILDCARD)) + "$", re.DOTALL)


def how_matched(name: str | None, entry: object, existing_names: Collection[str] = ()) -> str | None:
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


def destructible(how: str | None) -> bool:
    """Whether an object that matched so may be deleted (rule 4)."""
    return how in (EXACT, WILDCARD_MATCH)


_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_QUALIFIED_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_NAME_KINDS = dict(
    subdomain=(253, _DNS_SUBDOMAIN, "lower-case letters, digits, '-' and '.', starting and ending with a letter or "
                                    "digit"),
    label=(63, _DNS_LABEL, "lower-case letters, digits and '-', starting and ending with a letter or digit"),
    qualified=(63, _QUALIFIED_NAME, "letters, digits, '-', '_' and '.', starting and ending with a letter or digit"),
)


def name_problem(option: str, value: object, kind: str = "subdomain") -> str | None:
    """Why ``value`` can never name a Kubernetes object (the API server's own rules), or None (also for None: not
    given). ``kind``: ``subdomain`` (most objects, 253 characters), ``label`` (namespaces, 63) or ``qualified``
    (the name part of an annotation key, 63, upper case and ``_`` allowed)."""
    if value is None:
        return None
    limit, pattern, words = _NAME_KINDS[kind]
    value = str(value)
    if len(value) > limit or not pattern.match(value):
        return f"{option} {value!r} is no valid Kubernetes name: at most {limit} characters of {words}"
    return None


def cluster_problems(name: str | None, namespace: str | None, name_option: str = "name",
                     namespace_option: str = "namespace") -> list[str]:
    """Why a Cluster API cluster ``name`` (None: not given) in ``namespace`` can never exist: a list, empty when
    both are valid Kubernetes names (a name, a namespace)."""
    found = [name_problem(name_option, name), name_problem(namespace_option, namespace, "label")]
    return [p for p in found if p]


def cluster_reference_problem(option: str, text: str | None) -> str | None:
    """Why ``text`` names no Cluster API cluster, or None: ``namespace/name``, or CAPO's cluster resource name
    ``namespace-name`` (valid when some ``-`` of it splits it into a valid namespace and name)."""
    text = "" if text is None else str(text)
    if "/" in text:
        namespace, _slash, name = text.partition("/")
        return "; ".join(cluster_problems(name, namespace, f"{option} {text!r}: the name",
                                          f"{option} {text!r}: the namespace")) or None
    if any(not cluster_problems(text[i + 1:], text[:i]) for i, char in enumerate(text) if char == "-"):
        return None
    return (f"{option} {text!r} names no Cluster API cluster: give namespace/name (a namespace of lower-case letters, digits and "
            "'-', a name of lower-case letters, digits, '-' and '.'), or CAPO's resource name namespace-name")


def check_cluster(name: str | None, namespace: str | None, name_option: str = "name",
                  namespace_option: str = "namespace") -> None:
    """Refuse, before any request, a cluster that can never exist (``cluster_problems``)."""
    problems = cluster_problems(name, namespace, name_option, namespace_option)
    if problems:
        raise ModuleFailure("; ".join(problems) + "; nothing was changed")
