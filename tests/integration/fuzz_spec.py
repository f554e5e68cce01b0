# -*- coding: utf-8 -*-
"""Hypothesis strategies drawn from a module's argument spec: valid, boundary and hostile values.

``module_args(spec, hints, fixed)`` draws the arguments of one module call. For each option of the spec
(the module's own options; the connection options are ``fixed``) it either leaves the option out (when it
is not required) or draws a value of its declared type, with the boundaries that break naive code (0,
negative, huge, NaN and infinities, empty and blank strings, very long and non-ASCII strings, empty lists,
duplicated entries), a value of the wrong type now and then, and, from ``hints``, values that name the
real throwaway objects of the test (so that draws get past "not found" and reach the module's logic).
"""

import string

from hypothesis import strategies as st

HOSTILE_STRINGS = ["", " ", "\t", "x" * 300, "ünïcödé-名前", "*", "a/b", "../..", "0", "-1", "None",
                   "00000000-0000-0000-0000-000000000000", "gm[1]", "node-?", "[", "]", "a*b", "[!a]*", "[10.0.0.1]",
                   "default/", "/", "Default/C1"]
BOUNDARY_INTS = [0, 1, -1, 2, 5, 2 ** 31, 2 ** 63, -(2 ** 63), 10 ** 30]
BOUNDARY_FLOATS = [0.0, -0.0, 0.001, 0.5, 1.0, 1.5, -1.0, 1e308, float("nan"), float("inf"), float("-inf")]
# Ansible converts these strings of a float option into NaN, infinities, zero and -1: judged after conversion.
FLOAT_STRINGS = ["nan", "NaN", "inf", "-inf", "0", "-1"]
# Route inputs that make no sense (whole families, host bits, a destination of one family with a nexthop of the
# other, no prefix, not an address): route_audit refuses them before any request.
HOSTILE_CIDRS = ["0.0.0.0/0", "::/0", "198.19.1.5/24", "198.19.0.0", "fd00:9::/64", "10.0.0.0/8", "bogus", "198.19.9.0/33"]
HOSTILE_NEXTHOPS = ["fd00::12", "10.180.0.12", "10.180.0.12/32", "10.180.0", "::", "bogus"]
WRONG_TYPES = st.sampled_from([["a", "b"], {"k": "v"}, 12, 1.5, True])

# Words of Python's, not ours: a message with one of them is a crash dressed as a failure.
PYTHON_WORDS = ("Traceback", "object has no attribute", "unhashable type", "out of range for", "too large to convert",
                "NoneType", "KeyError", "TypeError", "ValueError", "AttributeError", "IndexError",
                "not subscriptable", "object is not iterable", "expected str, bytes", "timestamp out of range",
                "takes no keyword", "positional argument", "invalid literal for int")


def python_words(message):
    """The Python words in ``message`` (empty when it reads as ours)."""
    return [word for word in PYTHON_WORDS if word in message]


def _text():
    return st.one_of(st.sampled_from(HOSTILE_STRINGS), st.text(string.ascii_lowercase + "-.", min_size=1, max_size=12))


def value_of(option, hint=None):
    """A strategy for one option's value."""
    kind = option.get("type", "str")
    if option.get("choices"):
        base = st.sampled_from(list(option["choices"]))
        if kind == "list":
            base = st.lists(base, max_size=3)
        return st.one_of(base, base, base, st.just("bogus"))
    if kind == "list":
        if option.get("options"):
            element = _dicts(option["options"], {})
        else:
            element = value_of(dict(type=option.get("elements", "str")))
        items = hint if hint is not None else st.lists(element, max_size=3)
        dupes = items.map(lambda values: values + values[:1])
        return st.one_of(items, items, st.just([]), dupes, WRONG_TYPES)
    if hint is not None:
        return st.one_of(hint, hint, hint, _plain(kind), WRONG_TYPES)
    if kind == "dict" and option.get("options"):
        return st.one_of(_dicts(option["options"], {}), st.just({}), WRONG_TYPES)
    return st.one_of(_plain(kind), _plain(kind), WRONG_TYPES)


def _plain(kind):
    if kind == "int":
        return st.one_of(st.sampled_from(BOUNDARY_INTS), st.integers(-3, 700))
    if kind == "float":
        return st.one_of(st.sampled_from(BOUNDARY_FLOATS), st.sampled_from(FLOAT_STRINGS), st.floats(0, 10, allow_nan=False))
    if kind == "bool":
        return st.booleans()
    if kind == "dict":
        return st.one_of(st.just({}), st.dictionaries(_text(), _text(), max_size=2))
    if kind == "raw":
        return st.one_of(_text(), st.dictionaries(_text(), _text(), max_size=2), st.lists(_text(), max_size=2))
    return _text()


def _dict_parts(spec, hints):
    required, optional = {}, {}
    for name, option in spec.items():
        strategy = value_of(option, hints.get(name))
        (required if option.get("required") else optional)[name] = strategy
    return required, optional


def _dicts(spec, hints):
    required, optional = _dict_parts(spec, hints)
    return st.fixed_dictionaries(required, optional=optional)


def module_args(spec, hints=None, fixed=None, skip=()):
    """Arguments of one call: ``spec``'s options drawn (``hints``: option -> strategy of realistic values),
    ``fixed`` set as given, ``skip`` left out."""
    hints = hints or {}
    chosen = dict((k, v) for k, v in spec.items() if k not in (fixed or {}) and k not in skip)
    required, optional = _dict_parts(chosen, hints)
    return st.fixed_dictionaries(required, optional=optional).map(lambda args: dict(args, **(fixed or {})))
