"""OUT/report.md of the utility study: its sections in order, with the figures and claims."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from batchd_studies.framework.markdown import (
    MISSING,
    discussion_section,
    failures_section,
    figures_section,
    fmt_float,
    fmt_int,
    invocation_lines,
    markdown_table,
    replayed_by,
    runtimes_section,
)
from batchd_studies.framework.results import Entry
from batchd_studies.framework.study import Report
from batchd_studies.utility.charts import all_charts, chart_table, decay_share_table
from batchd_studies.utility.claims import Setting, claims_count, claims_table
from batchd_studies.utility.figures import write_figures
from batchd_studies.utility.index import (
    Index,
    aggregate,
    makespan,
    makespan_log,
    seconds,
    utilization,
    utilization_log,
    wait,
)
from batchd_studies.utility.options import BASE_DEADLINE, BASE_FACTOR, GA, StudyOptions
from batchd_studies.utility.paper import TABLE1, TABLE2
from batchd_studies.utility.plan import (
    EXACT,
    FORMULA,
    PRIORITY,
    START,
    Run,
    Scenario,
    scenario_of,
    scenarios,
)
from batchd_studies.utility.tables import NAMES, aggregate_table, fmt_sci, table_sections
from batchd_studies.utility.text import (
    classes_section,
    fmt_ms,
    ga_table,
    reading_section,
    setup_section,
)
from batchd_studies.utility.workloads import Slice

LOAD_GETTERS = (utilization, utilization_log, makespan, makespan_log, wait(50), wait(75))


def _header(meta: Mapping[str, Any]) -> list[str]:
    lines = [
        "# Utility functions and the GA scheduler: the study of seed 003 on batchd",
        "",
        "After C. B. Lee and A. Snavely, *Precise and Realistic Utility Functions for "
        "User-Centric Performance Analysis of Schedulers* (seed 003, sec. 4-8, Tables 1 and "
        "2, Figs. 5 and 7-10), replayed with `batchd replay` "
        "([scheduling.md](../scheduling.md#utility-aware-policies-seed-003)).",
        "",
        *invocation_lines(meta),
    ]
    return [*lines, ""]


def _scenario_title(s: Scenario) -> str:
    runtimes = "exact runtimes" if s.estimates == EXACT else "users' runtimes"
    values = ", values by priority" if s.values == PRIORITY else ""
    values += ", deadline from the job's start" if s.deadline_from == START else ""
    return f"{runtimes}, inter-arrival factor {s.factor:g}, deadline factor {s.deadline:g}{values}"


def _ga_rows(index: Index, wanted: Sequence[Scenario]) -> list[list[str]]:
    rows = []
    for s in wanted:
        trials = index.trials(s, GA)
        found = [e["summary"]["ga"] for e in trials if e["summary"].get("ga")]
        if not found:
            continue

        def mean(key: str, items: Sequence[Mapping[str, Any]] = found) -> float:
            return statistics.fmean(float(g[key]) for g in items)

        rows.append(
            [
                _scenario_title(s),
                str(len(found)),
                fmt_int(mean("searches")),
                fmt_float(mean("avg_jobs"), 1),
                fmt_ms(mean("search_seconds_mean")),
                fmt_float(max(float(g["search_seconds_max"]) for g in found), 2),
                f"{100.0 * mean('improved_share'):.0f} %",
                fmt_float(index.mean(s, GA, seconds), 1),
            ]
        )
    return rows


def _values_section(
    index: Index, opts: StudyOptions, augmentations: Mapping[str, Mapping[str, Any]]
) -> list[str]:
    """Start values by priority class, and Table 1's scenario with them the other way."""
    lines = [
        "## Start values and priority classes",
        "",
        "The seed draws a job's value per processor-minute around the centre of its "
        "priority's bin, mean (priority + 0.5) / N x globmax, with priority 0 the highest; "
        "taken as written, that gives the highest priority the lowest values, although the "
        'seed wants "higher priority jobs [to] have higher start values". `batchd utility` '
        "follows the formula by default; `--value-order priority` mirrors the bins. The "
        "priority class is also what Priority-FIFO serves first (class 0 first).",
        "",
        *classes_section(augmentations),
    ]
    aligned = Scenario("users", BASE_FACTOR, BASE_DEADLINE, PRIORITY)
    if PRIORITY in opts.value_orders:
        lines += [
            f"Table 1's scenario with values by priority ({_scenario_title(aligned)}); the "
            "seed's columns are its Table 1:",
            "",
            aggregate_table(index, aligned, TABLE1, opts.schedulers),
            "",
        ]
    return lines


def _from_start_section(
    index: Index, opts: StudyOptions, augmentations: Mapping[str, Mapping[str, Any]]
) -> list[str]:
    """Table 1's scenario with every function's decay and deadline counted from the start."""
    if START not in opts.deadline_froms:
        return []
    moved = Scenario("users", BASE_FACTOR, BASE_DEADLINE, FORMULA, START)
    made = [a for a in augmentations.values() if a.get("deadline_from") == START]
    can_earn = ", ".join(f"{100.0 * a['can_earn']:.1f} %" for a in made)
    return [
        "## Deadlines counted from the start",
        "",
        "A job earns its function at its response time (wait plus runtime), and the seed's "
        "deadline, max(2 x its wait in the log, 10 s), is counted from its submission, so a "
        "job that runs longer than that earns nothing however soon it starts. "
        "`batchd utility --deadline-from start` counts the decay and the deadline from the "
        "job's start instead: each function is moved later by the job's runtime (the same "
        "draws), so a job earns at its response time what its wait alone gives under the "
        "written function, and every job can earn (jobs earning anything starting at once: "
        f"{can_earn or MISSING}).",
        "",
        f"Scenario: {_scenario_title(moved)}; the seed's rows are its Table 1.",
        "",
        *table_sections(index, moved, TABLE1, opts.schedulers),
    ]


def _load_section(
    index: Index, opts: StudyOptions, estimates: str, schedulers: Sequence[str]
) -> list[str]:
    """Utilization and makespan by inter-arrival factor, both ways of counting, per run mean."""
    rows = []
    for f in sorted({BASE_FACTOR, opts.heavy, *opts.factors}, reverse=True):
        s = Scenario(estimates, f, BASE_DEADLINE)
        cells = [(get, [index.mean(s, p, get) for p in schedulers]) for get in LOAD_GETTERS]
        found = [[v for v in values if v is not None] for _, values in cells]
        if not all(found):
            continue
        util, util_log, span, span_log, wait50, wait75 = (statistics.fmean(v) for v in found)
        rows.append(
            [
                f"{f:g}",
                f"{util:.3f}",
                f"{util_log:.3f}",
                fmt_sci(span),
                fmt_sci(span_log),
                f"{wait50:,.0f}",
                f"{wait75:,.0f}",
            ]
        )
    if not rows:
        return []
    runtimes = "exact runtimes" if estimates == EXACT else "users' runtimes"
    header = [
        "inter-arrival factor",
        "util., from the first submit",
        "util., from the log's start",
        "makespan, from the first submit [s]",
        "makespan, from the log's start [s]",
        "wait 50 %ile [s]",
        "wait 75 %ile [s]",
    ]
    return [
        f"Load by inter-arrival factor ({runtimes}, deadline factor 2; means over the schedulers):",
        "",
        markdown_table(header, rows),
        "",
    ]


def _spread_section(index: Index, schedulers: Sequence[str], base: Scenario) -> list[str]:
    rows = []
    for policy in schedulers:
        values = index.values(base, policy, aggregate)
        if not values:
            continue
        sd = statistics.pstdev(values) / statistics.fmean(values) if len(values) > 1 else 0.0
        rows.append(
            [
                NAMES[policy],
                str(len(values)),
                fmt_sci(min(values)),
                fmt_sci(max(values)),
                f"{100.0 * sd:.2f} %",
            ]
        )
    header = ["", "trials", "lowest", "highest", "standard deviation / mean"]
    return [
        "## Spread of the trials",
        "",
        "Aggregate utility of each trial of Table 1's scenario. The seed reports 10 GA runs on "
        "one workload within 1.32e9 to 1.38e9 (standard deviation 1.27 %); here the spread "
        "mixes the two augmentations, which differ more than GA seeds do.",
        "",
        markdown_table(header, rows),
        "",
    ]


def _runtimes(
    results: Sequence[Entry], meta: Mapping[str, Any], wanted: Sequence[Scenario]
) -> list[str]:
    """Replay seconds by scenario and scheduler, in the order the results are kept."""
    busy: dict[tuple[Scenario, str], list[float]] = {}
    for e in results:
        busy.setdefault((scenario_of(e), e["policy"]), []).append(float(e.get("seconds") or 0))
    rank = {s: i for i, s in enumerate(wanted)}
    rows = [
        [_scenario_title(s), NAMES.get(p, p), str(len(v)), f"{sum(v):,.1f}", f"{max(v):,.1f}"]
        for (s, p), v in sorted(busy.items(), key=lambda kv: rank.get(kv[0][0], len(rank)))
    ]
    made = replayed_by(meta)
    total = sum(sum(v) for v in busy.values())
    return runtimes_section(
        "Wall seconds of the replays in their worker processes: ",
        total,
        float(made["seconds"]),
        markdown_table(["scenario", "scheduler", "runs", "total [s]", "longest [s]"], rows, left=2),
    )


def make_report(
    opts: StudyOptions,
    piece: Slice,
    augmentations: Mapping[str, Mapping[str, Any]],
    results: Sequence[Entry],
    meta: Mapping[str, Any],
    failures: Sequence[tuple[Run, str]],
) -> Report:
    """Draw the figures into OUT; the report's text and the PNGs written."""
    index = Index(results)
    wanted = scenarios(
        opts.factors, opts.deadlines, opts.heavy, opts.value_orders, opts.deadline_froms
    )
    base = Scenario("users", BASE_FACTOR, BASE_DEADLINE)
    exact = Scenario(EXACT, BASE_FACTOR, BASE_DEADLINE)
    lines = _header(meta) + setup_section(opts, piece, augmentations) + reading_section()
    lines += discussion_section(
        opts.out,
        "_No discussion yet: write OUT/discussion.md from the tables below._",
        note="Written by hand from the numbers of this report (discussion.md, kept when the "
        "report is made again).",
    )
    lines += [
        "## Table 1: the users' requested runtimes",
        "",
        f"Scenario: {_scenario_title(base)}.",
        "",
    ]
    lines += table_sections(index, base, TABLE1, opts.schedulers)
    lines += ["## Table 2: exact runtimes", "", f"Scenario: {_scenario_title(exact)}.", ""]
    lines += table_sections(index, exact, TABLE2, opts.schedulers)
    setting = Setting(opts.factors, opts.deadlines, opts.heavy)
    lines += [
        "## The seed's claims",
        "",
        "What the seed says of its Table 1 and figures, as tests on batchd's means (its "
        "figures print no numbers: only orderings and shapes can be compared). "
        + claims_count(index, setting),
        "",
        claims_table(index, setting),
        "",
    ]
    charts = all_charts(
        index, opts.schedulers, opts.factors, opts.deadlines, opts.heavy, opts.value_orders
    )
    figures = write_figures(charts, opts.out)
    lines += figures_section(figures, heading="## Figures", missing="no runs")
    lines += ["## The figures' numbers", ""]
    for chart in charts:
        lines += [f"{chart.caption}.", "", chart_table(chart), ""]
        if chart is charts[0]:
            lines += [
                "The same as shares of the start values of each type's jobs (which jobs drew "
                "which type is random, and a few large jobs weigh much in a sum):",
                "",
                decay_share_table(index, opts.schedulers),
                "",
            ]
    lines += _values_section(index, opts, augmentations)
    lines += _from_start_section(index, opts, augmentations)
    lines += ["## Load", ""]
    lines += _load_section(index, opts, "users", opts.schedulers)
    lines += _load_section(index, opts, EXACT, opts.schedulers)
    lines += _spread_section(index, opts.schedulers, base)
    ga_rows = _ga_rows(index, wanted)
    if ga_rows:
        lines += ["## The GA's searches", "", ga_table(ga_rows), ""]
    lines += failures_section(
        ["run", "error"], [[run.label(), message] for run, message in failures]
    )
    lines += _runtimes(results, meta, wanted)
    return Report("\n".join(lines).rstrip() + "\n", [p for _, p in figures if p is not None])
