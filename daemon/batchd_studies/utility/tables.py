"""Tables 1 and 2 of Lee's utility paper beside batchd's: every column, the seed's numbers first.

Each seed table becomes four Markdown tables: wait time and expansion factor
percentiles; % of start value earned (the seed's direction); slowdown, utilization
and makespan; aggregate utility with GA's gains. Rows are the schedulers, the seed's
row above batchd's; ``utility-easy`` (batchd's cheap baseline) has no seed row.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from batchd_studies.framework.markdown import MISSING, fmt_float, markdown_table
from batchd_studies.utility.index import (
    Getter,
    Index,
    aggregate,
    bsld_all,
    bsld_trimmed,
    earned,
    earned_share,
    expansion,
    gain,
    makespan,
    makespan_log,
    utilization,
    utilization_log,
    wait,
)
from batchd_studies.utility.measures import SEED_PERCENTILES
from batchd_studies.utility.options import GA
from batchd_studies.utility.paper import SeedRow
from batchd_studies.utility.plan import Scenario

NAMES = {
    "fcfs-cons": "Cons",
    "fcfs-easy": "EASY",
    "prio-fifo": "Prio",
    "utility-easy": "UtilEASY",
    "ga": "GA",
}
PCTS = [f"{q} %ile" for q in SEED_PERCENTILES]
Format = Callable[[float | None], str]


def fmt_sci(value: float | None) -> str:
    return MISSING if value is None else f"{value:.3e}"


def fmt_gain(value: float | None) -> str:
    return MISSING if value is None else f"{100.0 * value:+.1f} %"


def fmt_wait(value: float | None) -> str:
    return MISSING if value is None else f"{value:,.0f}"


def fmt_ef(value: float | None) -> str:
    if value is None:
        return MISSING
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def fmt_pct(value: float | None) -> str:
    if value is None:
        return MISSING
    return "0 %" if value == 0 else f"{value:.3g} %"


def _row_pairs(
    index: Index,
    scenario: Scenario,
    seed: Mapping[str, SeedRow],
    schedulers: Sequence[str],
    seed_cells: Callable[[SeedRow], list[str]],
    ours: Sequence[tuple[Getter, Format]],
) -> list[list[str]]:
    """Rows "NAME seed" and "NAME batchd" of one table; ``seed_cells(row)`` gives the
    seed's cells, ``ours`` (getter, format) batchd's."""
    rows = []
    for policy in schedulers:
        name = NAMES[policy]
        if policy in seed:
            rows.append([name, "seed", *seed_cells(seed[policy])])
        cells = [fmt(index.mean(scenario, policy, get)) for get, fmt in ours]
        rows.append([name, "batchd", *cells])
    return rows


def waits_table(
    index: Index, scenario: Scenario, seed: Mapping[str, SeedRow], schedulers: Sequence[str]
) -> str:
    header = ["", "", *(f"wait {p}" for p in PCTS), *(f"EF {p}" for p in PCTS)]
    ours: list[tuple[Getter, Format]] = [(wait(q), fmt_wait) for q in SEED_PERCENTILES]
    ours += [(expansion(q), fmt_ef) for q in SEED_PERCENTILES]

    def seed_cells(row: SeedRow) -> list[str]:
        return [*(fmt_wait(v) for v in row.wait), *(fmt_ef(v) for v in row.expansion)]

    return markdown_table(
        header, _row_pairs(index, scenario, seed, schedulers, seed_cells, ours), left=2
    )


def earned_table(
    index: Index, scenario: Scenario, seed: Mapping[str, SeedRow], schedulers: Sequence[str]
) -> str:
    header = ["", "", *(f"earned {p}" for p in PCTS)]
    ours: list[tuple[Getter, Format]] = [(earned(q), fmt_pct) for q in SEED_PERCENTILES]

    def seed_cells(row: SeedRow) -> list[str]:
        return [fmt_pct(v) for v in row.earned]

    return markdown_table(
        header, _row_pairs(index, scenario, seed, schedulers, seed_cells, ours), left=2
    )


def machine_table(
    index: Index, scenario: Scenario, seed: Mapping[str, SeedRow], schedulers: Sequence[str]
) -> str:
    """Slowdown, utilization and makespan: the seed's beside batchd's two conventions."""
    header = [
        "",
        "BSLD seed",
        "BSLD batchd, trimmed as [14]",
        "BSLD batchd, all jobs",
        "util. seed",
        "util. batchd, from the log's start",
        "util. batchd, from the first submit",
        "makespan seed [s]",
        "makespan batchd, from the log's start [s]",
        "makespan batchd, from the first submit [s]",
    ]
    rows = []
    for policy in schedulers:
        row = seed.get(policy)

        def mean(get: Getter, p: str = policy) -> float | None:
            return index.mean(scenario, p, get)

        rows.append(
            [
                NAMES[policy],
                MISSING if row is None else f"{row.bsld:,.0f}",
                fmt_float(mean(bsld_trimmed), 1),
                fmt_float(mean(bsld_all), 1),
                MISSING if row is None else f"{row.utilization:.3f}",
                fmt_float(mean(utilization_log), 3),
                fmt_float(mean(utilization), 3),
                MISSING if row is None else fmt_sci(row.makespan),
                fmt_sci(mean(makespan_log)),
                fmt_sci(mean(makespan)),
            ]
        )
    return markdown_table(header, rows)


def aggregate_table(
    index: Index, scenario: Scenario, seed: Mapping[str, SeedRow], schedulers: Sequence[str]
) -> str:
    """Aggregate utility, and GA's gain over each scheduler, the seed's and batchd's."""
    seed_ga = seed[GA].aggregate if GA in seed else None
    ours_ga = index.mean(scenario, GA, aggregate)
    rows = []
    for policy in schedulers:
        row = seed.get(policy)
        ours = index.mean(scenario, policy, aggregate)
        rows.append(
            [
                NAMES[policy],
                MISSING if row is None else fmt_sci(row.aggregate),
                MISSING if row is None or policy == GA else fmt_gain(gain(seed_ga, row.aggregate)),
                fmt_sci(ours),
                fmt_float(index.mean(scenario, policy, earned_share), 1) + " %",
                MISSING if policy == GA else fmt_gain(gain(ours_ga, ours)),
                str(len(index.values(scenario, policy, aggregate))),
            ]
        )
    header = [
        "",
        "aggregate utility, seed",
        "GA over it, seed",
        "aggregate utility, batchd",
        "of the start values, batchd",
        "GA over it, batchd",
        "trials",
    ]
    return markdown_table(header, rows)


def table_sections(
    index: Index, scenario: Scenario, seed: Mapping[str, SeedRow], schedulers: Sequence[str]
) -> list[str]:
    return [
        "Wait time (s) and expansion factor (EF) percentiles, ascending in both: the "
        "q %ile is what q % of the jobs waited (or were stretched) at most.",
        "",
        waits_table(index, scenario, seed, schedulers),
        "",
        "% of the job's start value earned, in the seed's direction: the q %ile is what q % "
        "of the jobs earned at least (batchd's ascending (100 - q)th percentile).",
        "",
        earned_table(index, scenario, seed, schedulers),
        "",
        "Average bounded slowdown (10 s), utilization and makespan. The seed's BSLD trims "
        "jobs as its note on [14] says; its utilization and makespan fit a count from the "
        "log's second 0 (see above).",
        "",
        machine_table(index, scenario, seed, schedulers),
        "",
        "Aggregate utility (the seed's units are its own: compare the gains, not the sums).",
        "",
        aggregate_table(index, scenario, seed, schedulers),
        "",
    ]
