"""Server-side printing: a list or an object as a ``meta.k8s.io/v1`` Table (pure).

``kubectl get`` asks ``Accept: application/json;as=Table;v=v1;g=meta.k8s.io`` (with fallbacks after
commas) and prints the server's columns. Built-in kinds use kube-apiserver's printers
(:mod:`.printers`); custom resources their printer columns (:mod:`.printcolumns`), after a NAME
column; a kind with neither gets NAME and AGE. Each row carries the object as
PartialObjectMetadata (``includeObject=Metadata``, the default), whole (``Object``) or not (``None``).
"""

from __future__ import annotations

import datetime

from minicloud.kube import jsonpath, printcolumns, printers
from minicloud.kube.durations import parse_time, since
from minicloud.kube.errors import bad_request
from minicloud.kube.resources import Kind

TABLE_GROUP, TABLE_VERSION = "meta.k8s.io", "v1"
INCLUDE = ("None", "Metadata", "Object")


def _media(entry: str) -> tuple[str, dict[str, str]]:
    media, *params = [part.strip() for part in entry.split(";")]
    values = {}
    for param in params:
        key, _, value = param.partition("=")
        values[key.strip().lower()] = value.strip()
    return media.lower(), values


def wants_table(accept: str | None) -> bool:
    """Whether the client prefers a v1 Table to the object: the first entry of ``accept`` this server can
    answer decides (a Table of another version, or another ``as=``, is passed over)."""
    for entry in (accept or "").split(","):
        media, params = _media(entry)
        if media not in ("application/json", "application/*", "*/*"):
            continue
        if "as" not in params:
            return False
        if params["as"] == "Table" and params.get("g") == TABLE_GROUP and params.get("v") == TABLE_VERSION:
            return True
    return False


def include_object(value: str | None) -> str:
    """The ``includeObject`` query parameter (default Metadata)."""
    if not value:
        return "Metadata"
    if value not in INCLUDE:
        raise bad_request(f'includeObject: Unsupported value: "{value}": supported values: "None", "Metadata", '
                          '"Object"')
    return value


def _definition(name: str, type_: str, priority: int, description: str, fmt: str = "") -> dict:
    return {"name": name, "type": type_, "format": fmt, "description": description, "priority": priority}


def cell(type_: str, values: list, now: datetime.datetime):
    """A printer column's cell from the values its JSONPath found (the first counts), as the CRD printer."""
    if not values:
        return None
    value = values[0]
    if type_ == "string":
        return None if value is None else jsonpath.text(value)
    if type_ == "integer" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    if type_ == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    if type_ == "boolean" and isinstance(value, bool):
        return value
    if type_ == "date" and isinstance(value, str):
        return since(value, now) if parse_time(value) else "<invalid>"
    return None


def _columns(kind: Kind, version: str):
    """(column definitions, function of (object, now) -> cells)."""
    builtin = printers.printer(kind.group, kind.kind)
    if builtin is not None:
        definitions = [_definition(n, t, p, d, "name" if n == "Name" and i == 0 else "")
                       for i, (n, t, p, d) in enumerate(builtin.columns)]
        return definitions, builtin.cells
    custom = printcolumns.columns(kind.group, version, kind.kind) or [printcolumns.AGE]
    definitions = [_definition("Name", "string", 0, printers.NAME_DESCRIPTION, "name")]
    definitions += [_definition(c.name, c.type, c.priority, c.description) for c in custom]

    def cells(obj: dict, now: datetime.datetime) -> list:
        return [obj.get("metadata", {}).get("name", "")] + [cell(c.type, jsonpath.find(obj, c.path), now)
                                                             for c in custom]

    return definitions, cells


def _row_object(obj: dict, include: str) -> dict | None:
    if include == "Object":
        return obj
    if include == "Metadata":
        return {"kind": "PartialObjectMetadata", "apiVersion": f"{TABLE_GROUP}/{TABLE_VERSION}",
                "metadata": obj.get("metadata", {})}
    return None


def table(kind: Kind, version: str, objects: list[dict], list_metadata: dict, include: str = "Metadata",
          now: datetime.datetime | None = None) -> dict:
    """The Table of ``objects`` (served views of ``kind`` at ``version``)."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    definitions, cells = _columns(kind, version)
    rows = []
    for obj in objects:
        row = {"cells": cells(obj, now)}
        shown = _row_object(obj, include)
        if shown is not None:
            row["object"] = shown
        rows.append(row)
    return {"kind": "Table", "apiVersion": f"{TABLE_GROUP}/{TABLE_VERSION}", "metadata": dict(list_metadata),
            "columnDefinitions": definitions, "rows": rows}
