"""An older API on a current service: API extensions hidden as if the service had not loaded them.

Neutron 29 always loads ``extraroute-atomic`` (added in Ussuri); clouds older than that do not have it,
and clients must fall back to a plain router update. Hiding an extension makes the service answer as
such a cloud does, with the answers the real Neutron gives for an extension it has not loaded:
the extension list leaves it out, ``GET /v2.0/extensions/ALIAS`` is a 404 (HTML, as Neutron's),
and the extension's member actions are a 404 ``HTTPNotFound`` NeutronError.

Pure logic; the hidden aliases live in :mod:`minicloud.traffic.store`, the WSGI side in
:mod:`minicloud.traffic.middleware`.
"""

from __future__ import annotations

import fnmatch
import json

# alias -> (service, the paths only that extension serves)
HIDEABLE: dict[str, tuple[str, tuple[str, ...]]] = {
    "extraroute-atomic": ("network", ("/v2.0/routers/*/add_extraroutes", "/v2.0/routers/*/remove_extraroutes")),
}

# services with extensions that can be hidden: the others never look for hidden ones (no store read per request)
SERVICES = frozenset(service for service, _paths in HIDEABLE.values())

EXTENSION_LIST = "/v2.0/extensions"


def check_alias(alias: str) -> str:
    if alias not in HIDEABLE:
        raise ValueError(f"extension {alias!r} cannot be hidden; one of: {', '.join(sorted(HIDEABLE))}")
    return alias


def service_of(alias: str) -> str:
    return HIDEABLE[check_alias(alias)][0]


def _path(path: str) -> str:
    return path.rstrip("/") or "/"


def serves(alias: str, path: str) -> bool:
    """Whether ``path`` exists only because extension ``alias`` is loaded."""
    return any(fnmatch.fnmatchcase(_path(path), pattern) for pattern in HIDEABLE[alias][1])


def hidden_answer(aliases: list[str], method: str, path: str) -> tuple[str, list, bytes] | None:
    """The answer of a service without ``aliases`` when the request needs one of them, else None."""
    path = _path(path)
    for alias in aliases:
        if method == "GET" and path == f"{EXTENSION_LIST}/{alias}":
            body = ("<html>\n <head>\n  <title>404 Not Found</title>\n </head>\n <body>\n  <h1>404 Not Found</h1>\n"
                    f"  The resource could not be found.<br /><br />\nExtension with alias {alias} does not exist\n\n\n"
                    " </body>\n</html>").encode()
            return "404 Not Found", [("Content-Type", "text/html; charset=UTF-8"),
                                     ("Content-Length", str(len(body)))], body
        if serves(alias, path):
            body = json.dumps({"NeutronError": {"type": "HTTPNotFound", "message": "The resource could not be found.",
                                                "detail": ""}}).encode()
            return "404 Not Found", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))], body
    return None


def lists_extensions(method: str, path: str) -> bool:
    return method == "GET" and _path(path) == EXTENSION_LIST


def without_extensions(body: bytes, aliases: list[str]) -> bytes:
    """The extension list answer with ``aliases`` left out (unchanged if it is not a list answer)."""
    try:
        data = json.loads(body)
        data["extensions"] = [e for e in data["extensions"] if e.get("alias") not in aliases]
    except (ValueError, KeyError, TypeError, AttributeError):
        return body
    return json.dumps(data).encode()
