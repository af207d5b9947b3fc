"""OUT/report.md of the dynP study: its sections in order, and the figures they show."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from batchd_studies.dynp import seed, tables
from batchd_studies.dynp.configs import CANDIDATE_QUALITIES, dynp_label
from batchd_studies.dynp.jobsets import TraceSpec
from batchd_studies.dynp.runs import Task
from batchd_studies.framework.markdown import (
    collected_lines,
    discussion_section,
    failures_section,
    figures_section,
    fmt_int,
    from_results,
    markdown_table,
    provenance_lines,
    runtimes_section,
)
from batchd_studies.framework.results import RESULTS_FILE, Entry
from batchd_studies.framework.study import Report

DISCUSSION_PLACEHOLDER = "(to be written from the results above)"


def _header(meta: Mapping[str, Any]) -> list[str]:
    estimates = "perfect (estimate = runtime)" if meta["perfect_estimates"] else "the users'"
    return [
        "# dynP study: self-tuning dynP vs single policies",
        "",
        "After A. Streit, *A Self-Tuning Job Scheduler Family with Dynamic Policy Switching*, "
        "sec. 5 (Tables 4-6, Figs. 2-5 and 8), replayed with batchd.",
        "",
        *provenance_lines(meta),
        f"- Runs: {meta['new'] + meta['reused']} ({meta['new']} run now in {meta['workers']} "
        f"worker processes, {from_results(meta)} reused from {RESULTS_FILE}); "
        f"study wall time {meta['seconds']:.1f} s",
        *collected_lines(meta),
        f"- Configurations: `{meta['configs']}`; runtime estimates: {estimates}; "
        f"synthetic sets: {meta['jobs']:,} jobs, seed {meta['seed']}",
        "",
    ]


def _jobsets_section(specs: Sequence[TraceSpec], results: Sequence[Entry]) -> list[str]:
    from batchd.workload.generate import format_table3

    replayed = {e["trace"]: e["summary"].get("jobs") for e in results}
    rows = [
        [
            s.name,
            f"`{s.source}`",
            f"`{s.jobset}`",
            f"{s.nodes:,}",
            fmt_int(s.generated) if s.generated is not None else "as is",
            fmt_int(replayed.get(s.name)),
        ]
        for s in specs
    ]
    header = ["job set", "--trace", "replayed file", "nodes", "generated", "jobs replayed"]
    lines = ["## Job sets", "", markdown_table(header, rows, left=3), ""]
    generated = [s for s in specs if s.stats is not None]
    if generated:
        stats = [s.stats for s in generated if s.stats is not None]
        lines += [
            "Properties of the synthetic job sets (paper Table 3 shape):",
            "",
            "```",
            format_table3(stats, [s.name for s in generated]),
            "```",
            "",
        ]
    return lines


def _has_dynp(results: Sequence[Entry]) -> bool:
    return any(e["policy"] == "dynp" for e in results)


def _tables_section(results: Sequence[Entry], traces: Sequence[str]) -> list[str]:
    shrink = tables.reference_shrink(results)
    if shrink is None or not _has_dynp(results):
        return [
            "## Tables 4-6",
            "",
            "_No self-tuning dynP runs in this study (configurations without `dynp`)._",
            "",
        ]
    at = f"shrinking factor {tables.fmt_shrink(shrink)}"
    lines = [
        f"## Table 4: simple vs advanced decider ({at})",
        "",
        "LOC is computed as 1 - UTIL, the paper's identity for a saturated system "
        "(sec. 5.2); it is not the integral loss of capacity of its reference [19].",
        "",
    ]
    for trace in traces:
        lines += [f"### {trace}", "", tables.table4(results, trace, shrink), ""]
    lines += [
        f"## Table 5: self-tuning dynP, advanced decider, quality ARTwW ({at})",
        "",
        "Average actual runtime is ART - AWT (the mean of end - start, killed jobs up to "
        "their kill). Switches are in % of the decider calls; 'same policy' is the share of "
        "calls that kept the policy. The last two rows are batchd's own wall time of one "
        "self-tuning step (the paper quotes 0.05 s for 185 jobs).",
        "",
        tables.table5(results, traces, shrink),
        "",
        f"## Table 6: cases of the advanced decider, quality ARTwW ({at})",
        "",
        "Cases of Table 1, grouped as in the paper. Both derived rows follow their formulas "
        "with case 5 alone; the paper's own numbers add its whole '4b & 5' row to the "
        "'taking the current policy' row.",
        "",
        tables.table6(results, traces, shrink),
        "",
    ]
    for candidate, qualities in CANDIDATE_QUALITIES.items():
        lines += _candidate_tables(results, traces, shrink, candidate, qualities)
    lines += _seed_section(results, traces, shrink)
    return lines


def _candidate_tables(
    results: Sequence[Entry],
    traces: Sequence[str],
    shrink: float,
    candidate: str,
    qualities: Sequence[str],
) -> list[str]:
    """Tables 4-6 again for the runs with another FCFS candidate, if there are any."""
    advanced = dynp_label("advanced", "artww", candidate)
    if not any(e["config"] == advanced for e in results):
        return []
    at = f"shrinking factor {tables.fmt_shrink(shrink)}"
    lines = [
        f"## Tables 4-6 with fcfs_candidate={candidate} ({at})",
        "",
        "Self-tuning dynP measuring the FCFS plan of the waiting queue as it stands "
        "(see docs/scheduling.md); the single policies and basic dynP are the runs above.",
        "",
        "### Table 4",
        "",
    ]
    for trace in traces:
        lines += [f"{trace}:", "", tables.table4(results, trace, shrink, qualities, candidate), ""]
    lines += [
        "### Table 5",
        "",
        tables.table5(results, traces, shrink, advanced),
        "",
        "### Table 6",
        "",
        tables.table6(results, traces, shrink, advanced),
        "",
    ]
    return lines


def _seed_section(results: Sequence[Entry], traces: Sequence[str], shrink: float) -> list[str]:
    """Tables 4-6 (quality ARTwW) beside the seed's, for the job sets it reports on."""
    known = [
        t
        for t in seed.seed_traces(traces)
        if any(e["trace"] == t and e["config"] == dynp_label("advanced", "artww") for e in results)
    ]
    if not known:
        return []
    at = f"shrinking factor {tables.fmt_shrink(shrink)}"
    lines = [
        f"## Beside the seed: quality ARTwW, one column per FCFS candidate ({at})",
        "",
        "The seed's column is its Tables 4-6 at shrinking factor 1.00. Its Table 6 total "
        "leaves out case 10b; shares are of the total each column prints.",
        "",
    ]
    for trace in known:
        lines += [
            f"### {trace}",
            "",
            seed.seed_summary_table(results, trace, shrink),
            "",
            seed.seed_case_table(results, trace, shrink),
            "",
        ]
    return lines


def _series_section(results: Sequence[Entry], traces: Sequence[str]) -> list[str]:
    lines = [
        "## Performance at different workloads",
        "",
        "ARTwW, SLDwW60 and UTIL of the single policies, basic dynP (7200 s / 9000 s) and "
        "self-tuning dynP (advanced decider, quality ARTwW) over the shrinking factors.",
        "",
    ]
    for trace in traces:
        lines += [f"### {trace}", "", tables.shrink_table(results, trace), ""]
    if _has_dynp(results):
        lines += [
            "### Advanced vs simple decider",
            "",
            "ARTwW of self-tuning dynP with quality ARTwW, per FCFS candidate, and of SJF "
            "against FCFS with conservative backfilling.",
            "",
        ]
        for trace in traces:
            lines += [f"{trace}:", "", tables.decider_table(results, trace), ""]
    return lines


def _runtimes_section(results: Sequence[Entry], meta: Mapping[str, Any]) -> list[str]:
    busy = sum(float(e.get("seconds") or 0.0) for e in results)
    return runtimes_section(
        "Wall seconds of each replay in its worker process (loading the job set included); ",
        busy,
        meta["seconds"],
        tables.runtime_table(results),
    )


def _failures_section(failures: Sequence[tuple[Task, str]]) -> list[str]:
    rows = [[t.trace, tables.fmt_shrink(t.shrink), t.config.name, msg] for t, msg in failures]
    return failures_section(["job set", "shrink", "configuration", "error"], rows)


def build_report(
    out: Path,
    specs: Sequence[TraceSpec],
    results: Sequence[Entry],
    meta: Mapping[str, Any],
    figures: Sequence[tuple[str, Path | None]],
    failures: Sequence[tuple[Task, str]] = (),
) -> str:
    """The report's text; ``figures`` are (caption, PNG or None when not drawn)."""
    traces = [s.name for s in specs]
    lines = [
        *_header(meta),
        *_jobsets_section(specs, results),
        *_tables_section(results, traces),
        *_series_section(results, traces),
        *figures_section(figures, heading="## Figures", missing="no runs of these configurations"),
        *_runtimes_section(results, meta),
        *_failures_section(failures),
        *discussion_section(out, DISCUSSION_PLACEHOLDER),
    ]
    return "\n".join(lines)


def make_report(
    out: Path,
    specs: Sequence[TraceSpec],
    results: Sequence[Entry],
    meta: Mapping[str, Any],
    failures: Sequence[tuple[Task, str]] = (),
) -> Report:
    """Draw the figures into OUT; the report's text and the PNGs written."""
    from batchd_studies.dynp.figures import write_figures

    drawn = write_figures(results, out, [s.name for s in specs])
    figures = [(spec.caption, path) for spec, path in drawn]
    text = build_report(out, specs, results, meta, figures, failures)
    return Report(text, [p for _, p in figures if p is not None])
