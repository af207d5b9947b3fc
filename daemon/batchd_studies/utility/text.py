"""The fixed text of the utility study's report: the setup and how to read the tables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from batchd_studies.framework.markdown import fmt_float, fmt_int, markdown_table
from batchd_studies.utility.charts import DECAY_TYPES
from batchd_studies.utility.options import BASE_DEADLINE, StudyOptions
from batchd_studies.utility.workloads import Slice


def setup_section(
    opts: StudyOptions, piece: Slice, augmentations: Mapping[str, Mapping[str, Any]]
) -> list[str]:
    first, last = opts.jobs
    skipped = ", ".join(f"{v} {k}" for k, v in piece.skipped.items() if v) or "none"
    loads = ", ".join(
        f"{piece.load / f:.2f} at factor {f:g}" for f in sorted({1.0, *opts.factors}, reverse=True)
    )
    rows = []
    for name, a in augmentations.items():
        decays = a["by_decay"]
        prios = a["by_priority"]
        rows.append(
            [
                f"`{name}`",
                str(a["seed"]),
                f"{a['deadline']:g}",
                a["values"],
                a.get("deadline_from", "submit"),
                " / ".join(fmt_int(decays.get(k, 0)) for k in DECAY_TYPES),
                " / ".join(fmt_int(prios[k]) for k in sorted(prios, key=int)),
                fmt_int(a["unmapped"]),
                f"{a['start_values']:.3e}",
                f"{a['at_once']:.3e}",
                f"{100.0 * a['can_earn']:.1f} %",
            ]
        )
    header = [
        "augmentation",
        "seed",
        "deadline factor",
        "value order",
        "deadline from",
        "linear / exponential / step",
        "job lines by priority, 0 first",
        "other queues (lowest)",
        "start values",
        "earned starting at once",
        "jobs earning anything then",
    ]
    return [
        "## Setup",
        "",
        f"- Workload: the jobs numbered {first:,} to {last:,} of `{Path(opts.trace).name}` "
        f"({fmt_int(piece.lines)} job lines; {fmt_int(piece.jobs)} replayed on "
        f"{fmt_int(piece.nodes)} processors, left out: {skipped}). The first arrives "
        f"{fmt_int(piece.first_submit)} s ({piece.first_submit / 86400:.1f} days) after the "
        f"log's start; arrivals span {piece.span / 86400:.1f} days.",
        f"- Offered load (runtime x width / (processors x arrival span)): {loads}. Inter-"
        "arrival times are scaled as `batchd replay --shrink F` does: `first + (submit - "
        'first) x F`, the seed\'s "inter-arrival times scaled by a factor".',
        "- Utility functions: `batchd utility` on the slice (seed 003, sec. 4; globmax 10 per "
        "processor-minute, four intermediate points, a third of each decay type), with the "
        "queue-to-priority map "
        + ("of `--map`" if opts.queue_map else "built in for SDSC Blue Horizon")
        + f"; {len(opts.seeds)} augmentation(s) per deadline factor, value order and deadline origin:",
        "",
        markdown_table(header, rows, left=1),
        "",
        '"Earned starting at once" is what the jobs would earn if each started at its '
        'submission, the most any schedule can earn; "jobs earning anything then" the share '
        "whose runtime ends before their deadline (max(factor x the job's wait in the log, "
        "10 s)): a job earns its function at its response time, so the others earn nothing "
        "in any schedule.",
        "",
        f"- Schedulers: `{'`, `'.join(opts.schedulers)}`; `ga` with population "
        f"{opts.population}, {opts.generations} generations, seeds "
        f"{', '.join(map(str, opts.ga_seeds))} on each augmentation (the seed's two runs per "
        "augmentation), no time budget (a replay is reproducible); jobs are killed at "
        "their requested time, as in every batchd replay.",
        "",
    ]


def reading_section() -> list[str]:
    return [
        "## Reading the tables",
        "",
        "- Every batchd number is the mean over the trials of a scheduler: one run per "
        "augmentation, and for GA one per GA seed on each (four in all), as the seed "
        "averages them; percentiles are averaged percentile by percentile.",
        "- **Percentile direction.** The replay summary's percentiles ascend. The seed's wait "
        'time and expansion factor columns ascend too ("75 % of jobs had a Wait Time of '
        '73,881 s or less") and are shown as they are. Its "% of start value earned" '
        'columns descend: "25 %ile 78.9 %" means a quarter of the jobs earned at least '
        "78.9 %, and its 100 %ile (0 % in every row) is the least any job earned. batchd's "
        "column q is therefore its ascending (100 - q)th percentile: the seed's 25, 50, 75, "
        "98 and 100 are batchd's ascending 75, 50, 25, 2 and 0 "
        "(`batchd_studies.utility.measures.earned_like_seed`).",
        '- **Bounded slowdown.** The seed computes it "by method in [14], which ignores first '
        'N divided by 101 and last N modulo 100 jobs". batchd follows that note to the '
        "letter (in submit order; for 4,809 jobs the first 47 and the last 9) and also gives "
        "the mean over every job; the two differ little.",
        "- **Utilization and makespan.** batchd measures from the first submission of the "
        "replay to the last end. The seed's makespan runs \"between the start of the "
        'simulation and when the last job completes"; its Table 1 makespans (3.7e6 s) are '
        "what a simulation that starts at the log's second 0, weeks before job 5,000 "
        "arrives, gives, and its utilization of 0.36 is batchd's over that longer span. "
        'The tables show both: "from the log\'s start" adds the first arrival (scaled by '
        "the factor, as the seed scales arrivals) to batchd's makespan and divides the "
        "utilization accordingly. The schedule is the same.",
        "- **Aggregate utility.** Start values are drawn per processor-minute up to an "
        "arbitrary `globmax` the seed does not give, so the sums are in different units: "
        "compare gains and orderings, and the share of the start values earned.",
        "",
    ]


def ga_table(rows: Sequence[Sequence[str]]) -> str:
    header = [
        "scenario",
        "trials",
        "searches",
        "waiting jobs per search",
        "search ms (mean)",
        "longest search s",
        "better than every seed order",
        "replay s (mean)",
    ]
    return markdown_table(header, rows)


def fmt_ms(seconds: float | None) -> str:
    return fmt_float(None if seconds is None else 1e3 * seconds, 1)


def classes_section(augmentations: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Start values by priority class in the first augmentation of each value order."""
    shown: dict[str, Mapping[str, Any]] = {}
    orders: set[str] = set()
    for name, a in augmentations.items():
        if a.get("deadline_from", "submit") != "submit":
            continue
        if a["deadline"] == BASE_DEADLINE and a["values"] not in orders:
            orders.add(a["values"])
            shown[name] = a
    rows = []
    for name, a in shown.items():
        total = a["start_values"] or 1.0
        for cls, f in a["by_class"].items():
            rows.append(
                [
                    f"`{name}`",
                    cls,
                    fmt_int(f["jobs"]),
                    fmt_float(f["per_minute"], 2),
                    f"{100.0 * f['start_values'] / total:.1f} %",
                    f"{100.0 * f['can_earn']:.1f} %",
                ]
            )
    header = [
        "augmentation",
        "priority class",
        "jobs",
        "start value per processor-minute (mean)",
        "of all start values",
        "jobs earning anything starting at once",
    ]
    return [markdown_table(header, rows, left=2), ""]
