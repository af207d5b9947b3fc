"""The data of Figs. 5 and 7-10: aggregate utility by decay type, load, deadline, accuracy.

A chart is groups along the x-axis and one series of bars per scheduler (or per
kind of estimate), each value the mean over the trials; ``figures`` draws it and
``chart_table`` prints the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from batchd_studies.framework.markdown import fmt_float, markdown_table
from batchd_studies.utility.index import Getter, Index, aggregate, by_decay, by_decay_share
from batchd_studies.utility.options import BASE_DEADLINE, BASE_FACTOR
from batchd_studies.utility.plan import BASE, EXACT, PRIORITY, USERS, Scenario
from batchd_studies.utility.tables import NAMES, fmt_sci

DECAY_TYPES = ("expected-linear", "expected-exponential", "step")
USERS_LABEL = "users' runtimes (inaccurate)"
EXACT_LABEL = "exact runtimes (accurate)"
FORMULA_LABEL = "values by the seed's formula"
PRIORITY_LABEL = "values by priority"


@dataclass(frozen=True)
class Chart:
    filename: str
    caption: str
    xlabel: str
    groups: tuple[str, ...]
    series: tuple[tuple[str, tuple[float | None, ...]], ...]  # (legend label, one per group)

    def has_data(self) -> bool:
        return any(v is not None for _, values in self.series for v in values)


def _series(
    index: Index, policies: Sequence[str], cells: Sequence[tuple[Scenario, Getter]]
) -> tuple[tuple[str, tuple[float | None, ...]], ...]:
    return tuple((NAMES[p], tuple(index.mean(s, p, get) for s, get in cells)) for p in policies)


def decay_chart(index: Index, policies: Sequence[str]) -> Chart:
    return Chart(
        "fig5_decay.png",
        "Fig. 5: aggregate utility by decay type (users' runtimes, factor 1, deadline factor 2)",
        "decay type",
        DECAY_TYPES,
        _series(index, policies, [(BASE, by_decay(kind)) for kind in DECAY_TYPES]),
    )


def load_chart(index: Index, policies: Sequence[str], factors: Sequence[float]) -> Chart:
    ordered = sorted({BASE_FACTOR, *factors}, reverse=True)
    cells = [(Scenario(USERS, f, BASE_DEADLINE), aggregate) for f in ordered]
    return Chart(
        "fig7_load.png",
        "Fig. 7: aggregate utility by load: inter-arrival times scaled by the factor "
        "(users' runtimes, deadline factor 2)",
        "inter-arrival time factor",
        tuple(f"{f:g}" for f in ordered),
        _series(index, policies, cells),
    )


def deadline_chart(index: Index, policies: Sequence[str], deadlines: Sequence[float]) -> Chart:
    ordered = sorted({BASE_DEADLINE, *deadlines})
    cells = [(Scenario(USERS, BASE_FACTOR, d), aggregate) for d in ordered]
    return Chart(
        "fig8_deadline.png",
        "Fig. 8: aggregate utility by deadline factor (users' runtimes, factor 1); a larger "
        "factor is less urgent",
        "deadline factor",
        tuple(f"{d:g}" for d in ordered),
        _series(index, policies, cells),
    )


def accuracy_chart(index: Index, policies: Sequence[str], factor: float, heavy: bool) -> Chart:
    users = Scenario(USERS, factor, BASE_DEADLINE)
    exact = Scenario(EXACT, factor, BASE_DEADLINE)
    series = tuple(
        (label, tuple(index.mean(s, p, aggregate) for p in policies))
        for label, s in ((USERS_LABEL, users), (EXACT_LABEL, exact))
    )
    load = f"heavy load, factor {factor:g}" if heavy else "factor 1"
    return Chart(
        "fig10_accuracy_heavy.png" if heavy else "fig9_accuracy.png",
        f"Fig. {10 if heavy else 9}: aggregate utility with the users' and with exact "
        f"runtimes ({load}, deadline factor 2)",
        "scheduler",
        tuple(NAMES[p] for p in policies),
        series,
    )


def values_chart(index: Index, policies: Sequence[str]) -> Chart:
    aligned = Scenario(USERS, BASE_FACTOR, BASE_DEADLINE, PRIORITY)
    series = tuple(
        (label, tuple(index.mean(s, p, aggregate) for p in policies))
        for label, s in ((FORMULA_LABEL, BASE), (PRIORITY_LABEL, aligned))
    )
    return Chart(
        "fig_values.png",
        "Aggregate utility with the highest start values on the lowest priority (the seed's "
        "formula) and on the highest (its text) (users' runtimes, factor 1, deadline factor 2)",
        "scheduler",
        tuple(NAMES[p] for p in policies),
        series,
    )


def all_charts(
    index: Index,
    policies: Sequence[str],
    factors: Sequence[float],
    deadlines: Sequence[float],
    heavy: float,
    value_orders: Sequence[str],
) -> list[Chart]:
    charts = [
        decay_chart(index, policies),
        load_chart(index, policies, factors),
        deadline_chart(index, policies, deadlines),
        accuracy_chart(index, policies, BASE_FACTOR, heavy=False),
        accuracy_chart(index, policies, heavy, heavy=True),
    ]
    if PRIORITY in value_orders:
        charts.append(values_chart(index, policies))
    return charts


def chart_table(chart: Chart) -> str:
    """One row per series, one column per group: the mean aggregate utility."""
    rows = [[label, *(fmt_sci(v) for v in values)] for label, values in chart.series]
    return markdown_table([chart.xlabel, *chart.groups], rows)


def decay_share_table(index: Index, policies: Sequence[str]) -> str:
    """Fig. 5 as shares: what each decay type's jobs earned of their start values."""
    rows = [
        [
            NAMES[p],
            *(fmt_float(index.mean(BASE, p, by_decay_share(k)), 1) + " %" for k in DECAY_TYPES),
        ]
        for p in policies
    ]
    return markdown_table(["decay type", *DECAY_TYPES], rows)
