"""A sweep's outputs: OUT/results.csv, OUT/results.parquet and OUT/summary.md.

Each is written to a temporary file and renamed, so a reader never sees half of
one. The values come from the stored records alone, so the files are the same
byte for byte whichever executor ran the runs and in whatever order they ended
(summary.md's header aside: it gives the date and the executor).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from batchd.sweep import SweepError
from batchd.sweep.table import Table

CSV_FILE = "results.csv"
PARQUET_FILE = "results.parquet"
SUMMARY_FILE = "summary.md"
MISSING = "-"
# The summary table's metrics, where the runs report them.
HEADLINE = ("jobs", "utilization", "awt", "art", "artww", "bsld10", "makespan", "killed")


def write_atomic(path: Path, write: Callable[[Path], object]) -> None:
    part = path.with_name(f".{path.name}.part")
    write(part)
    part.replace(path)


def csv_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


def write_csv(path: Path, table: Table) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(table.columns)
    for row in table.rows:
        writer.writerow([csv_text(row[c]) for c in table.columns])
    write_atomic(path, lambda p: p.write_text(buffer.getvalue(), encoding="utf-8"))


def require_parquet() -> None:
    """Fail before any run when results.parquet could not be written at the end."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise SweepError(
            "batchd sweep writes results.parquet with pyarrow: pip install 'batchd[sweep]'"
        ) from None


def write_parquet(path: Path, table: Table) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    kinds = {"bool": pa.bool_(), "int": pa.int64(), "float": pa.float64(), "text": pa.string()}
    arrow = pa.table(
        {c: pa.array(table.column(c), type=kinds[table.types[c]]) for c in table.columns}
    )
    write_atomic(path, lambda p: pq.write_table(arrow, str(p)))


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> str:
    """A GitHub markdown table: the first ``left`` columns left-aligned, the rest right."""
    align = [":--" if i < left else "--:" for i in range(len(header))]
    lines = [header, align, *rows]
    return "\n".join("| " + " | ".join(str(c) for c in line) + " |" for line in lines)


def cell(value: Any) -> str:
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:,.4f}" if abs(value) < 10 else f"{value:,.1f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def summary_lines(
    table: Table, coordinates: Sequence[str], facts: Sequence[str], failures: Sequence[str]
) -> list[str]:
    """summary.md: the facts, the settings all runs share, a row per run, failed runs."""
    lines = ["# Sweep summary", "", *(f"- {f}" for f in facts), ""]
    varying = [c for c in coordinates if len({json.dumps(v) for v in table.column(c)}) > 1]
    shared = [c for c in coordinates if c not in varying and table.rows]
    if shared:
        lines += ["Every run: " + ", ".join(f"{c} {cell(table.rows[0][c])}" for c in shared), ""]
    metrics = [m for m in HEADLINE if m in table.types]
    header = [*varying, *metrics]
    if table.rows:
        rows = [
            [str(row[c]) if c in varying and row[c] is not None else cell(row[c]) for c in header]
            for row in table.rows
        ]
        lines += [markdown_table(header, rows, left=len(varying)), ""]
    if failures:
        lines += ["## Failed runs", "", *(f"- {f}" for f in failures), ""]
    return lines


def write_summary(path: Path, lines: Sequence[str]) -> None:
    write_atomic(path, lambda p: p.write_text("\n".join(lines), encoding="utf-8"))
