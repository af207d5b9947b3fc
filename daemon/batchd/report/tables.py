"""Markdown tables of a dynP study (seed 000, sec. 5: Tables 4, 5, 6 and the shrink series).

Every function here is pure: it takes the study's results list (one dict per
replay: ``trace``, ``shrink``, ``config``, ``params``, ``summary`` and a few
extras such as ``seconds``) and returns markdown text. A value that is missing
from the results (a configuration that was not run) prints as ``-``.

LOC (loss of capacity) is computed as ``1 - UTIL``: the paper uses that identity
for a saturated system (sec. 5.2, "loss of capacity = 1 - utilization"); it is
not the integral definition of its reference [19].
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

Result = Mapping[str, Any]
Summary = Mapping[str, Any]
Key = tuple[str, float, str]

MISSING = "-"
POLICIES = ("SJF", "FCFS", "LJF")  # the paper's row order in Tables 4 and 5
CONS_CONFIGS = ("fcfs-cons", "sjf-cons", "ljf-cons")
BASIC_DYNP = "dynp-basic"
DECIDERS = ("simple", "advanced")
PAPER_QUALITIES = ("artww", "art", "ms")
EXTRA_QUALITIES = ("sldww", "awt")
QUALITY_NAMES = {"artww": "ARTwW", "art": "ART", "ms": "MS", "sldww": "SLDwW", "awt": "AWT"}


def dynp_label(decider: str, quality: str) -> str:
    """Configuration name of self-tuning dynP with a decider and a quality metric."""
    return f"dynp-{decider}-{quality}"


ADVANCED_ARTWW = dynp_label("advanced", "artww")
COMPARISON_CONFIGS = (*CONS_CONFIGS, BASIC_DYNP, ADVANCED_ARTWW)  # Figs. 4, 5, 8

# Table 6: the paper's rows, each a group of Table 1 cases.
CASE_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("case: 1", ("1",)),
    ("cases: 2 & 7", ("2", "7")),
    ("cases: 3 & 9", ("3", "9")),
    ("cases: 4b & 5", ("4b", "5")),
    ("case: 4a", ("4a",)),
    ("case: 4c", ("4c",)),
    ("case: 6a", ("6a",)),
    ("case: 6b", ("6b",)),
    ("case: 6c", ("6c",)),
    ("case: 8a", ("8a",)),
    ("case: 8b", ("8b",)),
    ("case: 8c", ("8c",)),
    ("case: 10a", ("10a",)),
    ("case: 10b", ("10b",)),
    ("case: 10c", ("10c",)),
)
SIMPLE_DIFFERS = ("1", "6b", "8c", "10c")
KEEPS_CURRENT = ("1", "5", "6a", "6b", "8a", "8c", "10b", "10c")


# --------------------------------------------------------------------------- names


def config_title(config: str) -> str:
    """A readable name of a configuration for tables and legends."""
    if config in CONS_CONFIGS:
        return config.split("-")[0].upper() + " cons."
    if config == BASIC_DYNP:
        return "basic dynP"
    parts = config.split("-")
    if len(parts) == 3 and parts[0] == "dynp":
        return f"dynP {parts[1]} {QUALITY_NAMES.get(parts[2], parts[2])}"
    return config


# --------------------------------------------------------------------------- lookups


def _shrink_key(shrink: float) -> float:
    return round(float(shrink), 6)


def index_results(results: Iterable[Result]) -> dict[Key, Summary]:
    """``(trace, shrink, config) -> summary``; a later entry replaces an earlier one."""
    return {(r["trace"], _shrink_key(r["shrink"]), r["config"]): r["summary"] for r in results}


def traces_of(results: Iterable[Result]) -> list[str]:
    """Trace names in order of first appearance."""
    return list(dict.fromkeys(r["trace"] for r in results))


def configs_of(results: Iterable[Result]) -> list[str]:
    """Configuration names in order of first appearance."""
    return list(dict.fromkeys(r["config"] for r in results))


def shrinks_of(results: Iterable[Result], trace: str | None = None) -> list[float]:
    """Shrink factors present (for one trace if given), largest first."""
    values = {_shrink_key(r["shrink"]) for r in results if trace is None or r["trace"] == trace}
    return sorted(values, reverse=True)


def reference_shrink(results: Sequence[Result], preferred: float = 1.0) -> float | None:
    """``preferred`` if some run used it, else the largest shrink factor run."""
    shrinks = shrinks_of(results)
    if not shrinks:
        return None
    return _shrink_key(preferred) if _shrink_key(preferred) in shrinks else shrinks[0]


def loc(utilization: float) -> float:
    """Loss of capacity as the paper equates it for a saturated system: 1 - UTIL."""
    return 1.0 - utilization


def dynp_stats(summary: Summary | None) -> Mapping[str, Any]:
    """The ``dynp`` block of a summary, or an empty mapping."""
    if not summary:
        return {}
    block = summary.get("dynp")
    return block if isinstance(block, Mapping) else {}


def actual_runtime(summary: Summary) -> float:
    """Mean simulated runtime (end - start): ART - AWT, both means over the same jobs."""
    return float(summary["art"]) - float(summary["awt"])


# --------------------------------------------------------------------------- formatting


def fmt_int(value: Any) -> str:
    return MISSING if value is None else f"{int(value):,}"


def fmt_seconds(value: Any) -> str:
    return MISSING if value is None else f"{float(value):,.0f} s"


def fmt_float(value: Any, digits: int = 2) -> str:
    return MISSING if value is None else f"{float(value):,.{digits}f}"


def fmt_percent(fraction: Any) -> str:
    """A fraction (0.7536) as a percentage ("75.36 %")."""
    return MISSING if fraction is None else f"{100.0 * float(fraction):.2f} %"


def fmt_share(count: int, total: int) -> str:
    """``13,218 (= 78.00 %)`` like Table 6's derived rows."""
    share = 100.0 * count / total if total else 0.0
    return f"{count:,} (= {share:.2f} %)"


def fmt_shrink(shrink: float) -> str:
    return f"{shrink:.2f}"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> str:
    """A GitHub markdown table: the first ``left`` columns left-aligned, the rest right."""
    align = [":--" if i < left else "--:" for i in range(len(header))]
    lines = [header, align, *rows]
    return "\n".join("| " + " | ".join(str(c) for c in line) + " |" for line in lines)


def _get(summary: Summary | None, key: str) -> Any:
    return None if not summary else summary.get(key)


# --------------------------------------------------------------------------- Table 4


def table4_columns(qualities: Sequence[str] = PAPER_QUALITIES) -> list[tuple[str, str]]:
    """(quality, decider) pairs in the paper's column order."""
    return [(q, d) for q in qualities for d in DECIDERS]


def table4(
    results: Sequence[Result],
    trace: str,
    shrink: float,
    qualities: Sequence[str] = PAPER_QUALITIES,
) -> str:
    """Paper Table 4 for one trace: simple vs advanced decider for each quality metric."""
    index = index_results(results)
    columns = table4_columns(qualities)
    summaries = [index.get((trace, _shrink_key(shrink), dynp_label(d, q))) for q, d in columns]
    header = ["", *(f"{QUALITY_NAMES.get(q, q)} {d}" for q, d in columns)]

    rows = [
        ["ARTwW", *(fmt_seconds(_get(s, "artww")) for s in summaries)],
        ["UTIL", *(fmt_percent(_get(s, "utilization")) for s in summaries)],
        ["LOC (1 - UTIL)", *(_fmt_loc(_get(s, "utilization")) for s in summaries)],
    ]
    for policy in POLICIES:
        counts = [dynp_stats(s).get("jobs_started", {}).get(policy) for s in summaries]
        rows.append([f"jobs started with {policy}", *(fmt_int(c) for c in counts)])
    return markdown_table(header, rows)


def _fmt_loc(utilization: Any) -> str:
    return MISSING if utilization is None else f"{loc(float(utilization)):.5f}"


# --------------------------------------------------------------------------- Table 5


def _switch_share(stats: Mapping[str, Any], policy: str) -> float | None:
    calls = stats.get("decider_calls")
    switches = stats.get("switches", {}).get(policy)
    if calls is None or switches is None:
        return None
    return switches / calls if calls else 0.0


def table5_column(summary: Summary | None) -> list[str]:
    """One trace's column of Table 5 (the row order of ``TABLE5_ROWS``)."""
    if not summary:
        return [MISSING] * len(TABLE5_ROWS)
    stats = dynp_stats(summary)
    started = stats.get("jobs_started", {})
    return [
        fmt_seconds(actual_runtime(summary)),
        fmt_seconds(summary.get("awt")),
        fmt_seconds(summary.get("art")),
        fmt_seconds(summary.get("artww")),
        fmt_percent(summary.get("utilization")),
        _fmt_loc(summary.get("utilization")),
        *(fmt_int(started.get(p)) for p in POLICIES),
        fmt_int(stats.get("decider_calls")),
        *(fmt_percent(_switch_share(stats, p)) for p in POLICIES),
        fmt_percent(stats.get("kept_share")),
        fmt_float(stats.get("avg_backlog")),
        fmt_float(stats.get("tuning_seconds_mean"), 4),
        fmt_float(stats.get("tuning_seconds_max"), 4),
    ]


TABLE5_ROWS = (
    "average actual runtime (ART - AWT)",
    "average wait time",
    "ART",
    "ARTwW",
    "utilization",
    "LOC (1 - UTIL)",
    *(f"jobs started with {p}" for p in POLICIES),
    "total tries of switches (decider calls)",
    *(f"switches to {p}" for p in POLICIES),
    "same policy",
    "average backlog at start of self-tuning",
    "self-tuning step, mean wall time [s]",
    "self-tuning step, max wall time [s]",
)


def table5(
    results: Sequence[Result],
    traces: Sequence[str],
    shrink: float,
    config: str = ADVANCED_ARTWW,
) -> str:
    """Paper Table 5: detailed results of one dynP configuration, one column per trace."""
    index = index_results(results)
    columns = [table5_column(index.get((t, _shrink_key(shrink), config))) for t in traces]
    rows = [[name, *(col[i] for col in columns)] for i, name in enumerate(TABLE5_ROWS)]
    return markdown_table(["", *traces], rows)


# --------------------------------------------------------------------------- Table 6


def case_rows(cases: Mapping[str, int]) -> list[tuple[str, str]]:
    """Table 6 rows of one trace: grouped counts, total, and the two derived shares."""
    counts = {k: int(v) for k, v in cases.items()}
    total = sum(counts.values())
    rows = [(label, fmt_int(sum(counts.get(c, 0) for c in group))) for label, group in CASE_GROUPS]
    rows.append(("total", fmt_int(total)))
    differs = sum(counts.get(c, 0) for c in SIMPLE_DIFFERS)
    keeps = sum(counts.get(c, 0) for c in KEEPS_CURRENT)
    rows.append(("differences to the simple decider (1+6b+8c+10c)", fmt_share(differs, total)))
    rows.append(("taking the current policy (1+5+6a+6b+8a+8c+10b+10c)", fmt_share(keeps, total)))
    return rows


TABLE6_LABELS = (
    *(label for label, _ in CASE_GROUPS),
    "total",
    "differences to the simple decider (1+6b+8c+10c)",
    "taking the current policy (1+5+6a+6b+8a+8c+10b+10c)",
)


def table6(
    results: Sequence[Result],
    traces: Sequence[str],
    shrink: float,
    config: str = ADVANCED_ARTWW,
) -> str:
    """Paper Table 6: how often each Table 1 case occurred, one column per trace."""
    index = index_results(results)
    columns: list[list[str]] = []
    for trace in traces:
        cases = dynp_stats(index.get((trace, _shrink_key(shrink), config))).get("cases")
        if cases is None:
            columns.append([MISSING] * len(TABLE6_LABELS))
        else:
            columns.append([value for _, value in case_rows(cases)])
    rows = [[label, *(col[i] for col in columns)] for i, label in enumerate(TABLE6_LABELS)]
    return markdown_table(["", *traces], rows)


# --------------------------------------------------------------------------- shrink series

SERIES_METRICS: tuple[tuple[str, str], ...] = (
    ("artww", "ARTwW"),
    ("sldww60", "SLDwW60"),
    ("utilization", "UTIL"),
)


def _metric_cell(summary: Summary | None, metric: str) -> str:
    value = _get(summary, metric)
    if metric == "utilization":
        return fmt_percent(value)
    if metric in ("artww", "art", "awt"):
        return fmt_seconds(value)
    return fmt_float(value)


def shrink_table(
    results: Sequence[Result],
    trace: str,
    configs: Sequence[str] = COMPARISON_CONFIGS,
    metrics: Sequence[tuple[str, str]] = SERIES_METRICS,
) -> str:
    """One trace over its shrink factors: rows (metric, configuration), columns shrink."""
    index = index_results(results)
    shrinks = shrinks_of(results, trace)
    rows: list[list[str]] = []
    for metric, name in metrics:
        for config in configs:
            cells = [_metric_cell(index.get((trace, s, config)), metric) for s in shrinks]
            if any(c != MISSING for c in cells):
                rows.append([name, config_title(config), *cells])
    header = ["metric", "configuration", *(f"shrink {fmt_shrink(s)}" for s in shrinks)]
    return markdown_table(header, rows, left=2)


# --------------------------------------------------------------------------- run times


def runtime_table(results: Sequence[Result]) -> str:
    """Wall time of each replay: rows configuration, columns (trace, shrink)."""
    keys = [(t, s) for t in traces_of(results) for s in shrinks_of(results, t)]
    seconds = {
        (r["trace"], _shrink_key(r["shrink"]), r["config"]): r.get("seconds") for r in results
    }
    rows = []
    for config in configs_of(results):
        cells = [seconds.get((t, s, config)) for t, s in keys]
        total = sum(c for c in cells if c is not None)
        rows.append([config, *(fmt_float(c) for c in cells), fmt_float(total)])
    header = ["configuration", *(f"{t} {fmt_shrink(s)}" for t, s in keys), "total"]
    return markdown_table(header, rows)


# --------------------------------------------------------------------------- primetime study
# Tables of ``batchd report primetime`` (seed 001, Table 3). A grid maps
# (runtime limit %, jobsize limit %) to a replay summary holding the ``primetime``
# object (batchd.metrics.primetime). Classes: "prime" = small jobs (within the
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
