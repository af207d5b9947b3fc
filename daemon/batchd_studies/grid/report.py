"""OUT/report.md of the grid study: its sections in order, with the figures and claims."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from batchd_studies.framework.markdown import (
    discussion_section,
    failures_section,
    figures_section,
    invocation_lines,
    replayed_by,
    runtimes_section,
)
from batchd_studies.framework.results import Entry
from batchd_studies.framework.study import Report
from batchd_studies.grid.claims import claims_table
from batchd_studies.grid.figures import write_figures
from batchd_studies.grid.jobsets import Config, JobSet
from batchd_studies.grid.runs import Run
from batchd_studies.grid.tables import (
    central_rows,
    counts_table,
    decentral_rows,
    doubled_rows,
    hierarchical_rows,
    index_results,
    jobsets_table,
    metric_table,
    multisite_rows,
    pool_rows,
    runtime_table,
    traces_of,
)

SECTIONS = (
    (
        "Central, single-site",
        "One queue for the grid; FCFS, Random or Backfill (EASY) picks the job, the "
        "strategy the machine among those that can start it now (M_free).",
        central_rows,
    ),
    (
        "Central, multi-site",
        "FCFS with BestFit_Free; a job no machine can start is split over machines "
        "(parts of at least min_part nodes, most free first) and stretched by overhead "
        "model 1-4 (docs/grid.md). Jobs wider than the widest machine run here (split) and "
        "are rejected by every other structure. Models 2 and 4 as written count r_i in "
        "nodes; the normalized rows count it in the job's mean part (R / f nodes), so that "
        "an even split costs 1 + p (a sensitivity run, docs/grid.md).",
        multisite_rows,
    ),
    (
        "Hierarchical",
        "The meta-scheduler hands each job at arrival to a machine (M_max strategy); "
        "each machine runs FCFS or Backfill (EASY) on its own queue.",
        hierarchical_rows,
    ),
    (
        "Decentral, direct communication",
        "Each job has a home machine (uniformly drawn among the machines wide enough, or "
        "weighted by size); a job its home cannot start moves to a machine that can start "
        "it at once, its runtime times the migration factor.",
        decentral_rows,
    ),
    (
        "Decentral, job pool",
        "Blocked jobs (or every job) go to a central pool; machines with free nodes pull "
        "from it with FCFS or Backfill (EASY). Homes drawn uniformly. Push overflow is the "
        "paper's pool (sec. 5.2): a machine keeps waiting jobs up to its own nodes' worth "
        "and sends the rest to the pool; Backfill machines backfill from their own queue "
        "first and pull only what does not delay their own first waiting job, FCFS "
        "machines pull for the nodes their pass leaves idle.",
        pool_rows,
    ),
    (
        "Doubled job sets (more backlog)",
        "Half as many jobs drawn, each doubled (every job twice, at the same second): the "
        "same number of jobs at twice the offered load.",
        doubled_rows,
    ),
)


def _header(meta: Mapping[str, Any], models: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Title and provenance: the command that made the replays, and who wrote the report."""
    lines = [
        "# Grid scheduling structures: the study of seed 002 on batchd",
        "",
        "After V. Hamscher, U. Schwiegelshohn, A. Streit and R. Yahyapour, *Evaluation of "
        "Scheduling Structures* (seed 002, sec. 5, Tables 1 and 2), replayed with `batchd "
        "replay --grid` (docs/grid.md) on the four configurations of Table 1.",
        "",
        *invocation_lines(meta),
    ]
    lines.append(
        f"- Job sets: {meta['jobs_per_node']} jobs per node of each grid, seed {meta['seed']}"
    )
    for name, m in models.items():
        lines.append(
            f"- `{name}`: drawn from the model of `{m['trace']}` ({m['jobs']:,} jobs, "
            f"{m['nodes']} nodes by its header)"
            + (
                ""
                if m.get("estimates", True)
                else "; the log has no requested times, so every estimate is the exact runtime"
            )
        )
    return [*lines, ""]


def _jobsets_section(sets: Sequence[JobSet]) -> list[str]:
    return [
        "## Job sets",
        "",
        "Each set is drawn from its trace's model (`batchd analyze`, `batchd generate`) with "
        "`--scale-to-nodes` the grid's total nodes: job shapes as in the trace, inter-arrival "
        "times times trace nodes / grid nodes, so the offered load per node is the trace's "
        "(the rows differ by the draw). Jobs wider than every machine are rejected by every "
        "structure but multi-site. The files are in `jobsets/` (not kept in git; the same "
        "command writes the same bytes).",
        "",
        jobsets_table(sets),
        "",
    ]


def make_report(
    out: Path,
    configs: Sequence[Config],
    sets: Sequence[JobSet],
    models: Mapping[str, Mapping[str, Any]],
    results: Sequence[Entry],
    meta: Mapping[str, Any],
    failures: Sequence[tuple[Run, str]],
) -> Report:
    """Draw the figures into OUT; the report's text and the PNGs written."""
    names = [c.name for c in configs]
    index = index_results(results)
    traces = traces_of(results)
    lines = _header(meta, models)
    lines += [
        "Configurations: "
        + "; ".join(
            f"`{c.name}` {', '.join(str(n) for _, n in c.machines)} ({c.nodes} nodes)"
            for c in configs
        ),
        "",
    ]
    lines += _jobsets_section(sets)
    lines += discussion_section(
        out,
        "_No discussion yet: write OUT/discussion.md from the tables and claims below._",
        note="Written by hand from the numbers of this report (discussion.md, kept when the report is made again).",
    )
    lines += ["## Claims of sec. 5.2", ""]
    for trace in traces:
        lines += [f"### {trace}", "", claims_table(index, trace, names), ""]
    figures = write_figures(results, names, out)
    lines += figures_section(figures, heading="## Figures", missing="no data")
    for title, text, rows in SECTIONS:
        lines += [f"## {title}", "", text, ""]
        for trace in traces:
            lines += [f"### {title}: {trace}", "", metric_table(index, trace, names, rows()), ""]
    lines += ["## Migrations, pool pulls, multi-site jobs", ""]
    for trace in traces:
        lines += [f"### {trace}", "", counts_table(index, trace, names), ""]
    lines += failures_section(
        ["job set", "grid", "variant", "error"],
        [[r.trace, r.config, r.variant, msg] for r, msg in failures],
    )
    busy = sum(float(r.get("seconds") or 0.0) for r in results)
    made = replayed_by(meta)
    lines += runtimes_section(
        "Replay wall time of every run, summed: ",
        busy,
        float(made["seconds"]),
        runtime_table(results, names),
    )
    return Report("\n".join(lines).rstrip() + "\n", [p for _, p in figures if p is not None])
