"""OUT/report.md of the prime-time study: its text, its sections in order, its figures."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from batchd_studies.framework.markdown import (
    collected_lines,
    discussion_section,
    failures_section,
    figures_section,
    fmt_float,
    from_results,
    markdown_table,
    provenance_lines,
    replayed_by,
    rewritten_lines,
    runtimes_section,
)
from batchd_studies.framework.results import RESULTS_FILE, Entry
from batchd_studies.framework.study import Report
from batchd_studies.framework.traces import TraceFile
from batchd_studies.primetime.figures import FigureOut
from batchd_studies.primetime.options import StudyOptions
from batchd_studies.primetime.rules import rules_section
from batchd_studies.primetime.runs import Run
from batchd_studies.primetime.tables import (
    LimitKey,
    SweepKey,
    discipline_title,
    extras,
    fmt_days,
    fmt_hours,
    fmt_pct,
    grid_section,
    grids,
    table3_section,
)
from batchd_studies.primetime.text import differences_section, setup_section

Facts = Mapping[str, Mapping[int, Mapping[str, Any]]]  # trace -> nodes -> workload facts


def _header(meta: Mapping[str, Any], opts: StudyOptions) -> list[str]:
    """Title and provenance: the command that made the replays, and who wrote the report."""
    made = replayed_by(meta)
    lines = [
        "# Prime time vs non-prime time: the limits study",
        "",
        "After V. Lo and J. Mache, *Job Scheduling for Prime Time vs. Non-prime Time* "
        "(seed 001, sec. 4-5, Figs. 1-6, Table 3), replayed with batchd's `primetime` policy.",
        "",
        *provenance_lines(made),
        f"- Runs: {meta['new'] + meta['reused']}; {made['new']} replayed in {made['workers']} "
        f"worker processes in {made['seconds']:.1f} s of wall time",
        *collected_lines(made),
    ]
    if made is not meta:
        lines += rewritten_lines(meta)
    elif from_results(meta):
        lines.append(f"- {from_results(meta)} of the runs were reused from {RESULTS_FILE}")
    disciplines = ", ".join(discipline_title(d) for d in opts.disciplines)
    jobs = "all" if opts.first is None else f"the first {opts.first:,} lines"
    lines += [
        f"- Limits: {', '.join(f'{x}%' for x in opts.limits)} for both the runtime and the "
        f"jobsize limit; disciplines: {disciplines}; jobs: {jobs} of the trace",
        "",
    ]
    return lines


def _some_span_metrics(
    extra: Mapping[SweepKey, Mapping[LimitKey, Any]], trace: str, nodes: int
) -> Mapping[str, Any]:
    """The span metrics of a run of ``trace`` at ``nodes`` (load and span: any run's)."""
    for (t, n, _), grid in extra.items():
        if t == trace and n == nodes:
            for metrics in grid.values():
                if metrics:
                    found: Mapping[str, Any] = metrics
                    return found
    return {}


def _workload_section(
    spec: TraceFile,
    by_size: Mapping[int, Mapping[str, Any]],
    sizes: Sequence[int],
    extra: Mapping[SweepKey, Mapping[LimitKey, Any]],
) -> list[str]:
    rows = []
    for n in sizes:
        found = _some_span_metrics(extra, spec.name, n)
        need = by_size[n]["weekend_need"]
        load, span = fmt_float(found.get("load")), fmt_days(found.get("submit_span"))
        rows.append([f"{n:,}", f"{by_size[n]['jobs']:,}", load, fmt_float(need), span])
    facts = by_size[max(sizes)]
    j30, w30 = facts["over_30pct"]
    jw, ww = facts["over_weekday"]
    jl, wl = facts["over_longest"]
    header = ["nodes", "jobs", "offered load", "weekend demand", "submission span"]
    return [
        f"### Workload: {spec.name} (`{spec.path}`)",
        "",
        f"{facts['jobs']:,} jobs at the largest size over {facts['span_days']:,.0f} days, time "
        f"zone {facts['timezone']}. Requests against the calendar (share of jobs / of the "
        "node-time they use):",
        "",
        f"- estimate above 30% of the prime slot ({fmt_hours(0.3 * facts['slot'])}): "
        f"{fmt_pct(j30)} of the jobs, {fmt_pct(w30)} of the node-time;",
        f"- estimate above a weekday night ({fmt_hours(facts['weekday_nonprime'])}), so such a "
        f"large job can only start on a weekend: {fmt_pct(jw)} of the jobs, {fmt_pct(ww)} of "
        "the node-time;",
        "- estimate above the longest non-prime window "
        f"({fmt_hours(facts['longest_nonprime'])}): {fmt_pct(jl)} of the jobs (the longest "
        f"request is {fmt_hours(facts['max_estimate'])}).",
        "",
        "Offered load, the paper's static demand: node-seconds of run time / (machine size x "
        "submission span). Weekend demand: the node-time of the jobs asking for more than a "
        "weekday night over the capacity of the weekend windows "
        f"({fmt_pct(facts['weekend_share'])} of the week) in the same span; above 1, with "
        "must_fit, those jobs alone need more than every weekend, whatever the limits, as "
        "soon as the limits make them large:",
        "",
        markdown_table(header, rows),
        "",
    ]


def _runtimes_section(results: Sequence[Entry], meta: Mapping[str, Any]) -> list[str]:
    busy: dict[tuple[str, int, str], list[float]] = {}
    for e in results:
        key = (e["trace"], e["nodes"], e["discipline"])
        busy.setdefault(key, []).append(float(e.get("seconds") or 0.0))
    rows = [
        [
            t,
            f"{n:,}",
            discipline_title(d),
            str(len(s)),
            f"{sum(s):,.1f}",
            f"{statistics.mean(s):,.2f}",
            f"{max(s):,.2f}",
        ]
        for (t, n, d), s in busy.items()
    ]
    total = sum(sum(s) for s in busy.values())
    header = ["trace", "nodes", "discipline", "runs", "total [s]", "mean [s]", "max [s]"]
    return runtimes_section(
        "Wall seconds of the replays in their worker processes: ",
        total,
        meta["seconds"],
        markdown_table(header, rows, left=3),
    )


def _failures_section(failures: Sequence[tuple[Run, str]]) -> list[str]:
    rows = [
        [r.trace, str(r.nodes), r.discipline, f"{r.runtime}-{r.jobsize}", msg]
        for r, msg in failures
    ]
    return failures_section(["trace", "nodes", "discipline", "limits", "error"], rows)


def build_report(
    opts: StudyOptions,
    specs: Sequence[TraceFile],
    nodes: Mapping[str, Sequence[int]],
    results: Sequence[Entry],
    meta: Mapping[str, Any],
    figures: Mapping[str, Sequence[FigureOut]],
    facts: Facts,
    failures: Sequence[tuple[Run, str]] = (),
) -> str:
    gridmap = grids(results)
    extra = extras(results)
    traces = [s.name for s in specs]
    lines = [*_header(meta, opts), *setup_section(opts.must_fit, facts)]
    for spec in specs:
        sizes = nodes[spec.name]
        drawn = [(f.caption, f.path) for f in figures[spec.name]]
        lines += [f"## {spec.name}", ""]
        lines += _workload_section(spec, facts[spec.name], sizes, extra)
        lines += table3_section(spec.name, sizes, opts.disciplines, gridmap, extra)
        lines += figures_section(drawn, heading="### Figures", missing="no data")
        lines += grid_section(spec.name, min(sizes), opts.disciplines, gridmap)
    lines += rules_section(traces, nodes, opts.disciplines, gridmap)
    lines += discussion_section(
        opts.out,
        "_(Write discussion.md in the output directory and rerun with --report-only to put "
        "a discussion here.)_",
        note="Written by hand from the numbers above (discussion.md, kept when the report "
        "is made again).",
    )
    lines += differences_section(opts.must_fit)
    lines += _runtimes_section(results, meta)
    lines += _failures_section(failures)
    return "\n".join(lines)


def make_report(
    opts: StudyOptions,
    specs: Sequence[TraceFile],
    nodes: Mapping[str, Sequence[int]],
    results: Sequence[Entry],
    meta: Mapping[str, Any],
    failures: Sequence[tuple[Run, str]] = (),
) -> Report:
    """Draw the figures into OUT; the report's text and the PNGs written."""
    from batchd_studies.primetime.facts import workload_facts
    from batchd_studies.primetime.figures import write_figures

    gridmap = grids(results)
    extra = extras(results)
    figures = {
        s.name: write_figures(opts.out, s.name, nodes[s.name], opts.disciplines, gridmap, extra)
        for s in specs
    }
    facts = {s.name: {n: workload_facts(s, opts.first, n) for n in nodes[s.name]} for s in specs}
    text = build_report(opts, specs, nodes, results, meta, figures, facts, failures)
    return Report(text, [f.path for figs in figures.values() for f in figs if f.path is not None])
