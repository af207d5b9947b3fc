"""The rows of a sweep's results: one per finished run, flat columns, fixed types.

A row holds the run's coordinates (``params`` flattened to ``params.KEY``), every
summary field (nested objects flattened with dotted names; a field named like a
coordinate is ``summary.NAME``), then ``key``, ``batchd_version`` and
``trace_sha256``. Columns appear in the order first met, rows in the sweep's
declaration order. Each column gets one type: bool, int, float (a mix of ints and
floats) or text (other values as JSON).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from batchd.sweep.store import Record

TRAILER = ("key", "batchd_version", "trace_sha256")


def flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            out.update(flatten(value, name + "."))
        elif isinstance(value, Mapping):
            continue  # an empty object has no fields
        else:
            out[name] = value
    return out


def record_row(record: Record) -> dict[str, Any]:
    coordinates = flatten(record["coordinates"])
    summary = {
        (f"summary.{k}" if k in record["coordinates"] else k): v
        for k, v in flatten(record["summary"]).items()
    }
    trailer = {
        "key": record["key"],
        "batchd_version": record["batchd"],
        "trace_sha256": record["trace_sha256"],
    }
    return {**coordinates, **summary, **trailer}


def column_type(values: Sequence[Any]) -> str:
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return "bool"
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return "int"
    if present and all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return "float"
    return "text"


def typed(value: Any, kind: str) -> Any:
    if value is None:
        return None
    if kind == "float":
        return float(value)
    if kind == "text" and not isinstance(value, str):
        return json.dumps(value, sort_keys=True)
    return value


@dataclass
class Table:
    columns: list[str]
    coordinates: list[str]  # the columns that place a run in the sweep
    types: dict[str, str]
    rows: list[dict[str, Any]]  # every column, values of the column's type or None

    def column(self, name: str) -> list[Any]:
        return [row[name] for row in self.rows]


def results_table(records: Sequence[Record]) -> Table:
    raw = [record_row(r) for r in records]
    coordinates = coordinate_columns(records)
    columns = dict.fromkeys(coordinates)
    for row in raw:
        columns.update(dict.fromkeys(c for c in row if c not in TRAILER))
    names = [*columns, *TRAILER]
    types = {c: column_type([row.get(c) for row in raw]) for c in names}
    rows = [{c: typed(row.get(c), types[c]) for c in names} for row in raw]
    return Table(names, coordinates, types, rows)


def coordinate_columns(records: Sequence[Record]) -> list[str]:
    """The coordinates' columns in their order, every run's parameters where params is."""
    columns: dict[str, None] = {}
    for record in records:
        columns.update(dict.fromkeys(record["coordinates"]))
    params: dict[str, None] = {}
    for record in records:
        params.update(dict.fromkeys(f"params.{k}" for k in record["coordinates"]["params"]))
    out: list[str] = []
    for name in columns:
        out += list(params) if name == "params" else [name]
    return out
