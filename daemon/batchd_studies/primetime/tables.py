"""Markdown tables of the prime-time study (Lo and Mache's prime-time paper, Table 3 and the sweeps behind it).

A grid maps (runtime limit %, jobsize limit %) to a replay summary holding the
``primetime`` object (batchd.metrics.primetime). Classes: "prime" = small jobs
(within the limits, run any time), "nonprime" = large jobs, "all". The entries'
``extra`` holds the metrics over the submission span (``replays.span_metrics``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from batchd_studies.framework.markdown import MISSING, fmt_float, fmt_int, markdown_table
from batchd_studies.framework.results import RESULTS_FILE, Entry
from batchd_studies.primetime.paper import PAPER_TABLE3, TABLE3_COLUMNS

DAY = 86400.0
EXTRA_COLUMN = (100, 30)  # the other reading of "one at 30%, the other at 100%"

Summary = Mapping[str, Any]

LimitKey = tuple[int, int]
Grid = dict[LimitKey, Summary]
SweepKey = tuple[str, int, str]  # (trace, nodes, discipline)


# --------------------------------------------------------------------------- lookups


def discipline_title(name: str) -> str:
    return name.upper() if name in ("fcfs", "easy") else name


def easy_first(disciplines: Iterable[str]) -> list[str]:
    """The order of disciplines in tables and figures: EASY, then the others by name."""
    return sorted(disciplines, key=lambda d: (d != "easy", d))


def grids(results: Iterable[Entry]) -> dict[SweepKey, Grid]:
    """(trace, nodes, discipline) -> {(runtime limit, jobsize limit): summary}."""
    out: dict[SweepKey, Grid] = {}
    for e in results:
        key = (e["trace"], e["nodes"], e["discipline"])
        out.setdefault(key, {})[(e["runtime_limit"], e["jobsize_limit"])] = e["summary"]
    return out


def extras(results: Iterable[Entry]) -> dict[SweepKey, dict[LimitKey, Any]]:
    """(trace, nodes, discipline) -> {(runtime limit, jobsize limit): span metrics}."""
    out: dict[SweepKey, dict[LimitKey, Any]] = {}
    for e in results:
        key = (e["trace"], e["nodes"], e["discipline"])
        out.setdefault(key, {})[(e["runtime_limit"], e["jobsize_limit"])] = e.get("extra") or {}
    return out


def metric_grid(grid: Grid, cls: str, metric: str) -> dict[LimitKey, float | None]:
    return {k: pt_value(s, cls, metric) for k, s in grid.items()}


def large_share(summary: Summary | None) -> float | None:
    block = pt_block(summary)
    counts = block.get("jobs") if block else None
    if not counts:
        return None
    total = counts.get("prime", 0) + counts.get("nonprime", 0)
    return counts.get("nonprime", 0) / total if total else None


def fmt_pct(value: float | None, digits: int = 1) -> str:
    return MISSING if value is None else f"{100 * value:.{digits}f} %"


def fmt_times(value: float | None) -> str:
    return MISSING if value is None else f"{value:,.2f}x"


def fmt_hours(seconds: float | None) -> str:
    return MISSING if seconds is None else f"{seconds / 3600:,.1f} h"


def fmt_days(seconds: float | None) -> str:
    return MISSING if seconds is None else f"{seconds / DAY:,.1f} d"


# --------------------------------------------------------------------------- Table 3

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
        [
            f"{rt}%",
            *(MISSING if grid.get((rt, js)) is None else fmt(grid[(rt, js)]) for js in jobsizes),
        ]
        for rt in runtimes
    ]
    return markdown_table(header, rows)


# --------------------------------------------------------------------------- sections


def _context_table(grid: Grid, extra: Mapping[LimitKey, Any], columns: Sequence[LimitKey]) -> str:
    def span_util(key: LimitKey, win: str) -> str:
        e = extra.get(key) or {}
        return fmt_pct((e.get("utilization_submit_span") or {}).get(win))

    def span(key: LimitKey, field: str) -> Any:
        return (extra.get(key) or {}).get(field)

    def overflow(key: LimitKey) -> str:
        return fmt_pct(pt_block(grid.get(key)).get("overflow_rate"))

    rows = [
        ["large jobs (% of jobs)", *(fmt_pct(large_share(grid.get(c))) for c in columns)],
        ["overflow (% of large jobs)", *(overflow(c) for c in columns)],
        ["utilization-all, submission span", *(span_util(c, "all") for c in columns)],
        ["utilization-prime, submission span", *(span_util(c, "prime") for c in columns)],
        ["utilization-non, submission span", *(span_util(c, "nonprime") for c in columns)],
        [
            "jobs waiting at the last submission",
            *(fmt_int(span(c, "backlog_at_last_submit")) for c in columns),
        ],
        ["drain after the last submission", *(fmt_days(span(c, "drain")) for c in columns)],
        [
            "avg resptime-prime",
            *(fmt_hours(pt_value(grid.get(c), "prime", "art")) for c in columns),
        ],
        [
            "avg resptime-non",
            *(fmt_days(pt_value(grid.get(c), "nonprime", "art")) for c in columns),
        ],
    ]
    return markdown_table(["context", *(limit_label(c) for c in columns)], rows)


def table3_section(
    trace: str,
    sizes: Sequence[int],
    disciplines: Sequence[str],
    gridmap: Mapping[SweepKey, Grid],
    extra: Mapping[SweepKey, Mapping[LimitKey, Any]],
) -> list[str]:
    """Table 3 with its context at the smallest size; Table 3 alone at the other sizes."""
    columns = (*TABLE3_COLUMNS, EXTRA_COLUMN)
    smallest = min(sizes)
    order = easy_first(disciplines)
    lines = [
        f"### Table 3: {trace} at {smallest} nodes (the smallest size, the heaviest load)",
        "",
        "Ratios are the value divided by the best (smallest) value of the whole sweep for "
        "that discipline; percentages as they are. In brackets: the paper's Table 3 (EASY, "
        "NAS SP/2 at 80 nodes). `n/a`: no large jobs at that setting.",
        "",
    ]
    for d in order:
        grid = gridmap.get((trace, smallest, d), {})
        context = _context_table(grid, extra.get((trace, smallest, d), {}), columns)
        lines += [f"**{discipline_title(d)}**", "", pt_table3(grid, columns), ""]
        lines += ["Context:", "", context, ""]
    others = [n for n in sizes if n != smallest]
    if others:
        lines += [f"#### {trace}: Table 3 at the other sizes", ""]
        for n in others:
            for d in order:
                grid = gridmap.get((trace, n, d), {})
                table = pt_table3(grid, columns, paper=False)
                lines += [f"**{discipline_title(d)}, {n} nodes**", "", table, ""]
    return lines


def grid_section(
    trace: str, n: int, disciplines: Sequence[str], gridmap: Mapping[SweepKey, Grid]
) -> list[str]:
    """Small and large jobs' response times and success-prime over every pair of limits."""
    lines = [
        f"### {trace} at {n} nodes over all limits",
        "",
        "Rows: runtime limit, columns: jobsize limit. Exact values of every run are in "
        f"{RESULTS_FILE}.",
        "",
    ]
    for d in easy_first(disciplines):
        grid = gridmap.get((trace, n, d), {})
        title = discipline_title(d)
        success = {k: pt_percent(s, "success-prime") for k, s in grid.items()}
        lines += [
            f"{title}: average response time of small jobs (prime), hours",
            "",
            pt_grid_table(metric_grid(grid, "prime", "art"), lambda v: f"{v / 3600:.2f}"),
            "",
            f"{title}: average response time of large jobs (non-prime), days",
            "",
            pt_grid_table(metric_grid(grid, "nonprime", "art"), lambda v: f"{v / DAY:.1f}"),
            "",
            f"{title}: success-prime, %",
            "",
            pt_grid_table(success, lambda v: f"{100 * v:.0f}"),
            "",
        ]
    return lines
