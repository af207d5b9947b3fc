"""Markdown tables of ``batchd report primetime`` (seed 001, Table 3).

A grid maps (runtime limit %, jobsize limit %) to a replay summary holding the
``primetime`` object (batchd.metrics.primetime). Classes: "prime" = small jobs
(within the limits, run any time), "nonprime" = large jobs, "all".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from batchd.report.framework.markdown import MISSING, fmt_float, markdown_table

Summary = Mapping[str, Any]
# limits, run any time), "nonprime" = large jobs, "all".

LimitKey = tuple[int, int]
PT_CLASSES = {"all": "all", "prime": "prime", "non": "nonprime"}
# Table 3, upper half: ratios to the best value of the sweep (smaller is better).
PT_RATIO_ROWS: tuple[tuple[str, str, str], ...] = (
    ("avg resptime-all", "all", "art"),
    ("avg resptime-prime", "prime", "art"),
    ("avg resptime-non", "nonprime", "art"),
    ("slowdown-all", "all", "slowdown"),
    ("slowdown-prime", "prime", "slowdown"),
    ("slowdown-non", "nonprime", "slowdown"),
)
# Table 3, lower half: percentages.
PT_PERCENT_ROWS = (
    "success-prime",
    "overflow",
    "utilization-all",
    "utilization-prime",
    "utilization-non",
)
# The paper's Table 3 (EASY, NAS SP/2 at 80 nodes): 30-100, 80-100, 100-100.
PAPER_TABLE3: dict[str, tuple[float, float, float]] = {
    "avg resptime-all": (1.81, 5.17, 6.37),
    "avg resptime-prime": (1.73, 18.87, 23.91),
    "avg resptime-non": (4.55, 2.58, 5.19),
    "slowdown-all": (1.24, 12.80, 16.09),
    "slowdown-prime": (1.77, 18.55, 23.16),
    "slowdown-non": (6.74, 2.32, 1.47),
    "success-prime": (98, 72, 69),
    "overflow": (16, 4, 0),
    "utilization-all": (69, 75, 76),
    "utilization-prime": (57, 78, 80),
    "utilization-non": (79, 73, 73),
}
TABLE3_COLUMNS: tuple[LimitKey, ...] = ((30, 100), (80, 100), (100, 100))


def pt_block(summary: Summary | None) -> Mapping[str, Any]:
    """The ``primetime`` object of a summary, or an empty mapping."""
    if not summary:
        return {}
    block = summary.get("primetime")
    return block if isinstance(block, Mapping) else {}


def pt_value(summary: Summary | None, cls: str, metric: str) -> float | None:
    """A class metric (art, awt, slowdown, utilization, ...); None if the class has no jobs."""
    stats = pt_block(summary).get(cls)
    if not isinstance(stats, Mapping) or metric not in stats:
        return None
    if metric != "utilization" and not stats.get("jobs"):
        return None
    return float(stats[metric])


def pt_percent(summary: Summary | None, row: str) -> float | None:
    """A percentage row of Table 3 as a fraction (0.98), None if missing."""
    block = pt_block(summary)
    if not block:
        return None
    if row == "success-prime":
        rate = block.get("success_rate", {}).get("prime")
        return None if rate is None else float(rate)
    if row == "overflow":
        share = block.get("overflow_share_all")
        return None if share is None else float(share)
    cls = PT_CLASSES[row.removeprefix("utilization-")]
    return pt_value(summary, cls, "utilization")


def pt_best(grid: Mapping[LimitKey, Summary], cls: str, metric: str) -> float | None:
    """The smallest value of a metric over the sweep (classes without jobs left out)."""
    values = [v for s in grid.values() if (v := pt_value(s, cls, metric)) is not None]
    return min(values) if values else None


def pt_ratio(
    grid: Mapping[LimitKey, Summary], key: LimitKey, cls: str, metric: str
) -> float | None:
    """Value at ``key`` divided by the best value of the sweep (Table 3's ratios)."""
    value = pt_value(grid.get(key), cls, metric)
    best = pt_best(grid, cls, metric)
    if value is None or best is None:
        return None
    return value / best if best > 0 else (1.0 if value == 0 else float("inf"))


def limit_label(key: LimitKey) -> str:
    """(30, 100) -> "30-100": runtime limit - jobsize limit, in % (the paper's naming)."""
    return f"{key[0]}-{key[1]}"


def pt_table3(
    grid: Mapping[LimitKey, Summary],
    columns: Sequence[LimitKey] = TABLE3_COLUMNS,
    paper: bool = True,
) -> str:
    """Table 3 of the paper for one sweep: ratios to the best value, then percentages.

    Columns are (runtime limit, jobsize limit) pairs; ``paper`` adds the paper's
    values (EASY, NAS SP/2, 80 nodes) in brackets where it has them. A ratio is
    ``-`` when the run is missing and ``n/a`` when the class has no jobs there
    (no large jobs at 100-100).
    """
    paper_cols = {c: i for i, c in enumerate(TABLE3_COLUMNS)}

    def cell(text: str, row: str, column: LimitKey) -> str:
        if paper and column in paper_cols and row in PAPER_TABLE3:
            return f"{text} ({PAPER_TABLE3[row][paper_cols[column]]:g})"
        return text

    header = ["metric", *(f"{limit_label(c)} ratio" for c in columns)]
    rows: list[list[str]] = []
    for name, cls, metric in PT_RATIO_ROWS:
        cells = []
        for column in columns:
            if column not in grid:
                text = MISSING
            else:
                ratio = pt_ratio(grid, column, cls, metric)
                text = "n/a" if ratio is None else f"{ratio:,.2f}"
            cells.append(cell(text, name, column))
        rows.append([name, *cells])
    rows.append(["**metric**", *(f"**{limit_label(c)} percent**" for c in columns)])
    for name in PT_PERCENT_ROWS:
        cells = []
        for column in columns:
            value = pt_percent(grid.get(column), name) if column in grid else None
            cells.append(cell(MISSING if value is None else f"{100 * value:.1f}", name, column))
        rows.append([name, *cells])
    return markdown_table(header, rows)


def pt_grid_table(
    grid: Mapping[LimitKey, Any],
    fmt: Any = fmt_float,
) -> str:
    """Values over the sweep: rows runtime limit, columns jobsize limit (``fmt`` per cell)."""
    runtimes = sorted({rt for rt, _ in grid})
    jobsizes = sorted({js for _, js in grid})
    header = ["runtime \\ jobsize", *(f"{js}%" for js in jobsizes)]
    rows = [
        [f"{rt}%", *(MISSING if grid.get((rt, js)) is None else fmt(grid[(rt, js)])
                     for js in jobsizes)]
        for rt in runtimes
    ]  # fmt: skip
    return markdown_table(header, rows)
