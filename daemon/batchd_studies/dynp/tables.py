"""Markdown tables of the dynP study (Streit's dynP paper, sec. 5: Tables 4, 5, 6 and the shrink series).

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

from batchd_studies.dynp.configs import (
    ADVANCED_ARTWW,
    CANDIDATES,
    COMPARISON_CONFIGS,
    DECIDERS,
    PAPER_QUALITIES,
    POLICIES,
    QUALITY_NAMES,
    SORTED,
    config_title,
    dynp_label,
)
from batchd_studies.framework.markdown import (
    MISSING,
    fmt_float,
    fmt_int,
    fmt_percent,
    fmt_seconds,
    markdown_table,
)

Result = Mapping[str, Any]
Summary = Mapping[str, Any]
Key = tuple[str, float, str]

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


def fmt_share(count: int, total: int) -> str:
    """``13,218 (= 78.00 %)`` like Table 6's derived rows."""
    share = 100.0 * count / total if total else 0.0
    return f"{count:,} (= {share:.2f} %)"


def fmt_shrink(shrink: float) -> str:
    return f"{shrink:.2f}"


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
    candidate: str = SORTED,
) -> str:
    """Paper Table 4 for one trace: simple vs advanced decider for each quality metric."""
    index = index_results(results)
    columns = table4_columns(qualities)
    at = _shrink_key(shrink)
    summaries = [index.get((trace, at, dynp_label(d, q, candidate))) for q, d in columns]
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


def decider_table(results: Sequence[Result], trace: str) -> str:
    """ARTwW of the simple and the advanced decider (quality ARTwW) and their ratio over
    the shrink factors, one block of rows per FCFS candidate that was run; last, SJF
    cons. against FCFS cons., the most a decider that prefers SJF can gain on one that
    prefers FCFS (roughly)."""
    index = index_results(results)
    shrinks = shrinks_of(results, trace)
    rows: list[list[str]] = []
    for candidate in CANDIDATES:
        artww = {
            d: [
                _get(index.get((trace, s, dynp_label(d, "artww", candidate))), "artww")
                for s in shrinks
            ]
            for d in DECIDERS
        }
        if not any(v is not None for values in artww.values() for v in values):
            continue
        for d in DECIDERS:
            rows.append([candidate, f"ARTwW {d}", *(fmt_seconds(v) for v in artww[d])])
        rows.append(
            [candidate, "advanced / simple", *map(_ratio, artww["advanced"], artww["simple"])]
        )
    fcfs, sjf = ([_get(index.get((trace, s, c)), "artww") for s in shrinks] for c in CONS_PAIR)
    if any(v is not None for v in fcfs + sjf):
        rows.append(["-", "SJF cons. / FCFS cons.", *map(_ratio, sjf, fcfs)])
    header = ["FCFS candidate", "", *(f"shrink {fmt_shrink(s)}" for s in shrinks)]
    return markdown_table(header, rows, left=2)


CONS_PAIR = ("fcfs-cons", "sjf-cons")


def _ratio(a: Any, b: Any) -> str:
    return MISSING if a is None or not b else f"{float(a) / float(b):.3f}"


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
