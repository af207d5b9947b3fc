"""The Markdown tables of the moldable study."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import fmean
from typing import Any

from batchd.metrics.moldable import CATEGORIES
from batchd_studies.framework.markdown import (
    MISSING,
    fmt_float,
    fmt_int,
    fmt_percent,
    markdown_table,
)
from batchd_studies.framework.results import Entry
from batchd_studies.moldable.index import Index
from batchd_studies.moldable.plan import Scheduler

A_TITLES = {"system": "A = system size", "random": "A random in 1..2 x the requested width"}


def fmt_hours(seconds: float | None) -> str:
    return MISSING if seconds is None else f"{seconds / 3600:,.2f}"


def effective_loads(facts: Mapping[str, Any], a: str) -> dict[float, float]:
    """Offered load asked for -> the workload's effective load, for scenario ``a``."""
    return {float(f["load"]): float(f["effective"]) for f in facts.values() if f["a"] == a}


def workloads_table(facts: Mapping[str, Any]) -> str:
    rows = [
        [
            name,
            A_TITLES[f["a"]],
            f"{f['load']:g}",
            f"{f['factor']:.4f}",
            fmt_float(f["offered"], 3),
            fmt_float(f["effective"], 3),
            fmt_int(f["moldable"]),
            fmt_int(f["rigid"]),
        ]
        for name, f in sorted(facts.items(), key=lambda nf: (nf[1]["a"] != "system", nf[1]["load"]))
    ]
    header = [
        "file",
        "speedup",
        "load asked",
        "runtimes x",
        "offered",
        "effective",
        "moldable",
        "rigid",
    ]
    return markdown_table(header, rows, left=2)


def turnaround_table(
    index: Index,
    a: str,
    loads: Sequence[float],
    effective: Mapping[float, float],
    scheds: Sequence[Scheduler],
) -> str:
    """Average turnaround in hours by offered load; the lowest of each row in bold."""
    rows = []
    for load in loads:
        values = [index.turnaround(a, load, s.key) for s in scheds]
        known = [v for v in values if v is not None]
        low = min(known) if known else None
        cells = [
            f"**{fmt_hours(v)}**" if v is not None and v == low else fmt_hours(v) for v in values
        ]
        rows.append([f"{load:g}", fmt_float(effective.get(load), 3), *cells])
    means = [index.mean_turnaround(a, loads, s.key) for s in scheds]
    rows.append(["mean", "", *(fmt_hours(v) for v in means)])
    return markdown_table(["offered", "effective", *(s.label for s in scheds)], rows)


def category_table(index: Index, a: str, load: float, scheds: Sequence[Scheduler]) -> str:
    """Average turnaround in hours by job size (processor-seconds on the requested width)."""
    rows = []
    for name, _ in CATEGORIES:
        counts = [
            (index.moldable(a, load, s.key) or {})
            .get("turnaround_by_size", {})
            .get(name, {})
            .get("jobs")
            for s in scheds
        ]
        jobs = next((c for c in counts if c is not None), None)
        rows.append(
            [
                name,
                fmt_int(jobs),
                *(fmt_hours(index.turnaround(a, load, s.key, name)) for s in scheds),
            ]
        )
    return markdown_table(["processor-seconds", "jobs", *(s.label for s in scheds)], rows)


def widths_table(index: Index, a: str, load: float, scheds: Sequence[Scheduler]) -> str:
    """Utilization, effective utilization and the widths chosen against those requested."""
    rows = []
    for s in scheds:
        mold = index.moldable(a, load, s.key)
        if mold is None:
            rows.append([s.label, *([MISSING] * 6)])
            continue
        widths = mold["widths"]
        rows.append(
            [
                s.label,
                fmt_percent(mold["utilization"]),
                fmt_percent(mold["effective_utilization"]),
                fmt_float(widths["mean_ratio"], 2),
                fmt_int(widths["narrower"]),
                fmt_int(widths["as_requested"]),
                fmt_int(widths["wider"]),
            ]
        )
    header = [
        "scheduler",
        "utilization",
        "effective",
        "chosen / requested",
        "narrower",
        "as asked",
        "wider",
    ]
    return markdown_table(header, rows, left=1)


def runtimes_table(results: Sequence[Entry], scheds: Sequence[Scheduler]) -> tuple[float, str]:
    """Seconds per replay by scheduler (mean and most), and the sum over all."""
    rows = []
    total = 0.0
    for s in scheds:
        seconds = [float(e["seconds"]) for e in results if e["scheduler"] == s.key]
        total += sum(seconds)
        if seconds:
            rows.append(
                [s.label, fmt_int(len(seconds)), f"{fmean(seconds):,.1f}", f"{max(seconds):,.1f}"]
            )
    return total, markdown_table(["scheduler", "runs", "mean s", "most s"], rows, left=1)
