"""OUT/report.md of the moldable study: its sections in order, with figures and claims."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from batchd_studies.framework.markdown import (
    discussion_section,
    docs_link,
    failures_section,
    figures_section,
    invocation_lines,
    runtimes_section,
)
from batchd_studies.framework.results import Entry
from batchd_studies.framework.study import Report
from batchd_studies.moldable.claims import Setting, check_claims, claims_count, claims_table
from batchd_studies.moldable.figures import Figure, draw
from batchd_studies.moldable.index import Index
from batchd_studies.moldable.options import StudyOptions
from batchd_studies.moldable.plan import GREEDY, ITERATIVE, RIGID_CONS, RIGID_EASY, Run, Scheduler
from batchd_studies.moldable.tables import (
    A_TITLES,
    category_table,
    effective_loads,
    runtimes_table,
    turnaround_table,
    widths_table,
    workloads_table,
)
from batchd_studies.moldable.workloads import Source

FIG_NUMBERS = {"system": ("2", "3", "7", "8"), "random": ("4", "5", "9", "10")}


def _header(meta: Mapping[str, Any], out: Path) -> list[str]:
    lines = [
        "# Moldable jobs: the study of seed 004 on batchd",
        "",
        "After G. Sabin, M. Lang and P. Sadayappan, *Moldable Parallel Job Scheduling Using "
        "Job Efficiency: An Iterative Approach* (seed 004, sec. 3-6, Figs. 2-5 and 7-10), "
        f"replayed with `batchd replay` ([moldable.md]({docs_link(out, 'moldable.md')})).",
        "",
        *invocation_lines(meta),
    ]
    return [*lines, ""]


def _setup(
    opts: StudyOptions, source: Source, size_note: str | None, scheds: Sequence[Scheduler]
) -> list[str]:
    jobs = "every job" if opts.jobs is None else f"jobs {opts.jobs[0]}-{opts.jobs[1]}"
    lines = [
        "## Set-up",
        "",
        f"- Trace: {source.trace} ({jobs}), on {source.nodes} nodes."
        + (f" {size_note}" if size_note else ""),
        "- Speedups (sec. 3.1, 5.2; `batchd moldable`): Downey's model with sigma uniform in "
        "0..2 and A the system size, or A uniform in 1..2 x the job's requested width; every "
        f"job may run on 1..{source.nodes} nodes; seed {opts.seed}. The trace's runtime is the "
        "runtime on the requested width; on n nodes a job runs ceil(T x S(requested) / S(n)).",
        "- Loads (sec. 3.1): runtimes and estimates multiplied to reach each offered load "
        f"({', '.join(f'{v:g}' for v in opts.loads)}), arrivals as logged. The figures plot the "
        "effective load (each job's work at ideal efficiency, T x S(requested)), as the seed's do.",
        "- Schedulers: " + ", ".join(s.label for s in scheds) + ". Fair share is EASY with "
        "one reservation, each job's width decided when it starts or gets the reservation, "
        "up to ObF x its square-root weight fraction x the system size, moved by EF as "
        "Fig. 1; the iterative scheme is Fig. 6 on conservative backfilling; greedy takes at "
        "submission the width that ends the job soonest; the rigid ones run the requested "
        f"width. Details: [scheduling.md]({docs_link(opts.out, 'scheduling.md')}).",
        "- Turnaround: end - submit, averaged over every finished job; sizes are processor-"
        "seconds on the requested width (the seed's categories, and below 200).",
        "",
    ]
    return lines


def _figure_specs(
    opts: StudyOptions, index: Index, grid: Sequence[Scheduler], others: Sequence[Scheduler]
) -> list[Figure]:
    heavy = max(opts.loads)
    specs: list[Figure] = []
    for a in opts.a:
        f_fs, f_fs_cat, f_it, f_it_cat = FIG_NUMBERS[a]
        title = A_TITLES[a]
        specs.append(
            Figure(
                f"fig{f_fs}_fairshare_{a}.png",
                f"Fig. {f_fs}: fair share by ObF and EF, {title}",
                a,
                tuple(grid),
            )
        )
        specs.append(
            Figure(
                f"fig{f_fs_cat}_fairshare_sizes_{a}.png",
                f"Fig. {f_fs_cat}: fair share by job size at offered load {heavy:g}, {title}",
                a,
                tuple(grid),
                heavy,
            )
        )
        best = index.best(a, opts.loads, grid)
        plain = next((g for g in grid if g.obf == 1.0 and g.ef == 0.0), None)
        chosen = [s for s in others if s.key == ITERATIVE]
        chosen += [g for g in dict.fromkeys([best, plain]) if g is not None]
        chosen += [s for s in others if s.key in (GREEDY, RIGID_EASY, RIGID_CONS)]
        specs.append(
            Figure(
                f"fig{f_it}_iterative_{a}.png",
                f"Fig. {f_it}: the iterative scheme against the best fair-share setting and the baselines, {title}",
                a,
                tuple(chosen),
            )
        )
        specs.append(
            Figure(
                f"fig{f_it_cat}_iterative_sizes_{a}.png",
                f"Fig. {f_it_cat}: the iterative scheme by job size at offered load {heavy:g}, {title}",
                a,
                tuple(chosen),
                heavy,
            )
        )
    return specs


def make_report(
    opts: StudyOptions,
    source: Source,
    size_note: str | None,
    facts: Mapping[str, Any],
    scheds: Sequence[Scheduler],
    results: Sequence[Entry],
    meta: Mapping[str, Any],
    failures: Sequence[tuple[Run, str]],
) -> Report:
    """Draw the figures into OUT; the report's text and the PNGs written."""
    index = Index(results)
    grid = [s for s in scheds if s.fairshare]
    others = [s for s in scheds if not s.fairshare]
    effective = {a: effective_loads(facts, a) for a in opts.a}
    lines = [*_header(meta, opts.out), *_setup(opts, source, size_note, scheds)]
    lines += ["## Workloads", "", workloads_table(facts), ""]
    checked = check_claims(index, Setting(opts.loads, grid))
    lines += ["## The seed's claims", "", claims_count(checked), "", claims_table(checked), ""]
    for a in opts.a:
        lines += [
            f"## Average turnaround (hours), {A_TITLES[a]}",
            "",
            turnaround_table(index, a, opts.loads, effective[a], scheds),
            "",
        ]
    drawn = draw(_figure_specs(opts, index, grid, others), index, opts.loads, effective, opts.out)
    lines += figures_section(drawn, heading="## Figures", missing="no results")
    for a in opts.a:
        lines += [f"## By job size (hours), {A_TITLES[a]}", ""]
        for load in opts.loads:
            lines += [f"Offered load {load:g}:", "", category_table(index, a, load, scheds), ""]
    heavy = max(opts.loads)
    for a in opts.a:
        lines += [
            f"## Widths and utilization at offered load {heavy:g}, {A_TITLES[a]}",
            "",
            widths_table(index, a, heavy, scheds),
            "",
        ]
    busy, table = runtimes_table(results, scheds)
    lines += runtimes_section("Replays took ", busy, float(meta["seconds"]), table)
    lines += failures_section(
        ["run", "error"], [[run.label(), message] for run, message in failures]
    )
    lines += discussion_section(opts.out, "_No discussion yet: write OUT/discussion.md._")
    return Report("\n".join(lines), [p for _, p in drawn if p is not None])
