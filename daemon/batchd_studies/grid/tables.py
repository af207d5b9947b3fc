"""Markdown tables of the grid study: one per structure, rows the variants, columns the grids.

Pure functions of the results list (one entry per replay: ``trace``, ``config``,
``variant``, ``summary``, ``seconds``). A run that is missing prints as ``-``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from batchd_studies.framework.markdown import (
    MISSING,
    fmt_float,
    fmt_int,
    fmt_percent,
    markdown_table,
)
from batchd_studies.grid.variants import (
    BACKLOG_SENSITIVITY,
    DISCIPLINES,
    FREE_STRATEGIES,
    HOMES,
    LOCALS,
    MAX_STRATEGIES,
    MEAN_PART,
    MIGRATION,
    MIN_PART_SERIES,
    MIN_PARTS,
    NORMALIZED_MODELS,
    OVERFLOW,
    P_VALUES,
    PUSHES,
    SCHEDULER_NAMES,
    SCHEDULERS,
    STRATEGY_NAMES,
    central,
    decentral,
    doubled,
    hierarchical,
    multisite,
    pool,
)

Entry = Mapping[str, Any]
Summary = Mapping[str, Any]
Index = dict[tuple[str, str, str], Summary]


def index_results(results: Iterable[Entry]) -> Index:
    return {(r["trace"], r["config"], r["variant"]): r["summary"] for r in results}


def traces_of(results: Iterable[Entry]) -> list[str]:
    return list(dict.fromkeys(r["trace"] for r in results))


def metric(index: Index, trace: str, config: str, variant: str, key: str) -> float | None:
    summary = index.get((trace, config, variant))
    if summary is None or summary.get(key) is None:
        return None
    return float(summary[key])


def fmt_art(value: float | None) -> str:
    """ART in seconds; astronomic values (overhead models 2 and 4) in powers of ten."""
    if value is None:
        return MISSING
    return f"{value:,.0f}" if value < 1e9 else f"{value:.2e}"


FORMATS: dict[str, Callable[[float | None], str]] = {
    "art": fmt_art,
    "makespan": fmt_art,
    "utilization": fmt_percent,
}
METRIC_NAMES = {"art": "ART [s]", "makespan": "makespan [s]", "utilization": "utilization"}

Row = tuple[str, str]  # (label, variant key)


def metric_table(
    index: Index,
    trace: str,
    configs: Sequence[str],
    rows: Sequence[Row],
    metrics: Sequence[str] = ("art", "makespan", "utilization"),
) -> str:
    """Rows (label) x columns (metric per configuration)."""
    header = ["variant", *(f"{METRIC_NAMES[m]} {c}" for m in metrics for c in configs)]
    body = []
    for label, key in rows:
        cells = [FORMATS[m](metric(index, trace, c, key, m)) for m in metrics for c in configs]
        body.append([label, *cells])
    return markdown_table(header, body)


def central_rows() -> list[Row]:
    rows = [
        (f"{SCHEDULER_NAMES[s]} {STRATEGY_NAMES[sel]}", central(s, sel).key)
        for s in SCHEDULERS
        for sel in FREE_STRATEGIES
    ]
    rows.append(("Backfill Earliest (for comparison)", central("easy", "earliest").key))
    return rows


def multisite_rows() -> list[Row]:
    rows = [(f"model {m}, p = {p}", multisite(m, p).key) for m in "1234" for p in P_VALUES]
    rows += [
        (f"model {m} normalized (r_i in mean parts), p = {p}", multisite(m, p, 1, MEAN_PART).key)
        for m in NORMALIZED_MODELS
        for p in P_VALUES
    ]
    for i, (m, p) in enumerate(MIN_PART_SERIES):
        ks = MIN_PARTS if i == 0 else (1, *MIN_PARTS)
        rows += [(f"model {m}, p = {p}, min_part {k}", multisite(m, p, k).key) for k in ks]
    return rows


def hierarchical_rows() -> list[Row]:
    return [
        (f"{SCHEDULER_NAMES[loc]} {STRATEGY_NAMES[sel]}", hierarchical(loc, sel).key)
        for loc in LOCALS
        for sel in MAX_STRATEGIES
    ]


def decentral_rows() -> list[Row]:
    return [
        (
            f"{SCHEDULER_NAMES[loc]}, migration x{mig}, home {home}",
            decentral(loc, mig, home).key,
        )
        for loc in LOCALS
        for home in HOMES
        for mig in ("1", MIGRATION)
    ]


def pool_rows() -> list[Row]:
    return [
        (
            f"{SCHEDULER_NAMES[d]}, push {push}, migration x{mig}",
            pool(d, push, mig).key,
        )
        for d in DISCIPLINES
        for push in (*PUSHES, OVERFLOW)
        for mig in ("1", MIGRATION)
    ]


def doubled_rows() -> list[Row]:
    rows = [
        (f"central {SCHEDULER_NAMES[s]} BestFit_Free", doubled(central(s, "bestfit-free")).key)
        for s in ("fcfs", "easy")
    ]
    rows += [
        (f"pool {SCHEDULER_NAMES[d]}, push {push}", doubled(pool(d, push, "1")).key)
        for d in DISCIPLINES
        for push in (*PUSHES, OVERFLOW)
    ]
    rows += [
        (
            f"pool {SCHEDULER_NAMES[d]}, push {OVERFLOW}, backlog {b}",
            doubled(pool(d, OVERFLOW, "1", b)).key,
        )
        for d in DISCIPLINES
        for b in BACKLOG_SENSITIVITY
    ]
    return rows


def counts_table(index: Index, trace: str, configs: Sequence[str]) -> str:
    """Migrations, pool traffic and multi-site jobs of the variants that have them."""
    rows: list[list[str]] = []
    picks: list[tuple[str, str, str]] = [
        (label, key, "migrations") for label, key in decentral_rows() if "x1," not in label
    ]
    picks += [(label, key, "pool_pulls") for label, key in pool_rows() if label.endswith("x1")]

    picks += [(label, key, "multisite_jobs") for label, key in multisite_rows()[:4]]
    for label, key, field in picks:
        cells = []
        for c in configs:
            summary = index.get((trace, c, key))
            grid = summary.get("grid", {}) if summary else {}
            jobs = summary.get("jobs") if summary else None
            value = grid.get(field)
            if value is None or not jobs:
                cells.append(MISSING)
            else:
                cells.append(f"{fmt_int(value)} ({100.0 * value / jobs:.1f} %)")
        rows.append([f"{label}: {field.replace('_', ' ')}", *cells])
    return markdown_table(["variant", *configs], rows)


def jobsets_table(sets: Sequence[Any]) -> str:
    """One row per job set: its size, load and what a grid cannot take."""
    rows = []
    for js in sets:
        s = js.stats
        rows.append(
            [
                js.trace,
                js.config,
                "yes" if js.doubled else "no",
                fmt_int(js.jobs),
                fmt_float(s["load"], 3),
                fmt_float(s["span_days"], 1),
                fmt_float(s["mean_width"], 2),
                f"{s['mean_runtime']:,.0f} s",
                fmt_int(s["widest_job"]),
                fmt_int(s["too_wide"]),
            ]
        )
    header = [
        "job set",
        "grid",
        "doubled",
        "jobs",
        "offered load per node",
        "submit span [days]",
        "mean width",
        "mean runtime",
        "widest job",
        "wider than every machine",
    ]
    return markdown_table(header, rows, left=3)


def runtime_table(results: Sequence[Entry], configs: Sequence[str]) -> str:
    """Replay wall time summed by structure, per job set and configuration."""
    totals: dict[tuple[str, str, str], float] = {}
    for r in results:
        key = (r["trace"], r["structure"] + (" (doubled set)" if r["doubled"] else ""), r["config"])
        totals[key] = totals.get(key, 0.0) + float(r.get("seconds") or 0.0)
    rows = []
    for trace in traces_of(results):
        names = list(dict.fromkeys(k[1] for k in totals if k[0] == trace))
        for name in names:
            cells = [totals.get((trace, name, c)) for c in configs]
            rows.append(
                [
                    trace,
                    name,
                    *(fmt_float(v, 1) for v in cells),
                    fmt_float(sum(filter(None, cells)), 1),
                ]
            )
    return markdown_table(["job set", "structure", *configs, "total [s]"], rows, left=2)
