"""The seed's columns that the replay summary does not give as the seed does.

- **% of start value earned.** The summary's ``earned_percent`` percentiles ascend
  (its p25 is what the worst-off quarter of jobs earned at most). Lee's utility paper's tables
  rank the other way: "25 %ile 78.9 %" means 25 % of the jobs earned at least
  78.9 %, so its 100 %ile is the least any job earned (0 % in every row). The seed's
  q-th percentile is therefore the ascending (100 - q)-th: ``earned_like_seed``
  gives the seed's 25, 50, 75, 98 and 100 from the ascending 75, 50, 25, 2 and 0.
  The seed's wait time and expansion factor columns ascend ("75 % of jobs had a
  Wait Time of 73,881 s or less"), as the summary's do: those are taken as they are.
- **Average bounded slowdown, trimmed.** The seed computes it "by method in [14],
  which ignores first N divided by 101 and last N modulo 100 jobs in the trace";
  ``trimmed_bsld`` does exactly that, in submit order (for N = 4,809 the first 47
  and the last 9 jobs). The summary's ``bsld10`` counts every job.
- **From the log's start.** The seed's makespan runs "between the start of the
  simulation and when the last job completes"; a simulation that starts at the
  trace's second 0 counts the weeks before the first job of the slice, with inter-
  arrival times scaled from there. ``from_log_start`` gives that makespan and the
  utilization over it.

Percentiles interpolate linearly between order statistics, as numpy's (and the
summary's) do.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from batchd.metrics.float_sums import pairwise_sum, percentile
from batchd.model.job import UNSET, Job

T = TypeVar("T")
SEED_PERCENTILES = (25, 50, 75, 98, 100)
BOUND = 10  # seconds: the bounded slowdown's floor on the runtime


def earned_like_seed(percents: Sequence[float]) -> dict[str, float]:
    """The seed's "q %ile" of % of start value earned: q % of the jobs earned at least it."""
    ordered = sorted(percents)
    return {f"p{q}": round(percentile(ordered, 100 - q), 6) for q in SEED_PERCENTILES}


def trimmed(items: Sequence[T]) -> Sequence[T]:
    """``items`` without the first N // 101 and the last N % 100 (the seed's note on [14])."""
    n = len(items)
    return items[n // 101 : n - n % 100]


def bounded_slowdown(job: Job) -> float:
    response = job.end - job.submit
    return max(1.0, response / max(job.end - job.start, BOUND))


def trimmed_bsld(jobs: Sequence[Job]) -> float | None:
    """Average bounded slowdown (10 s) of ``jobs`` in submit order, trimmed as the seed says."""
    ordered = sorted(jobs, key=lambda j: (j.submit, j.id))
    kept = trimmed(ordered)
    if not kept:
        return None
    return round(pairwise_sum([bounded_slowdown(j) for j in kept]) / len(kept), 6)


def earned_percents(jobs: Sequence[Job]) -> list[float]:
    """100 x what each finished job with a function earned / its start value."""
    out = []
    for job in jobs:
        if job.utility is None or job.start == UNSET or job.end == UNSET:
            continue
        first = job.utility.start_value
        value = job.utility.value_at(job.end - job.submit)
        out.append(100.0 * value / first if first > 0 else 100.0)
    return out


def seed_columns(jobs: Sequence[Job]) -> dict[str, Any]:
    """What a run's entry keeps beside its summary: the seed's direction and trimming."""
    ran = [j for j in jobs if j.start != UNSET and j.end != UNSET]
    percents = earned_percents(ran)
    return {
        "earned_like_seed": earned_like_seed(percents) if percents else None,
        "bsld10_trimmed": trimmed_bsld(ran),
        "first_submit": min((j.submit for j in ran), default=0),
    }


def from_log_start(
    makespan: float, utilization: float, first_submit: float, factor: float
) -> tuple[float, float]:
    """(makespan, utilization) measured from the log's second 0, arrivals scaled from there.

    batchd scales inter-arrival times from the first job (``first + (submit - first) x
    F``); scaled from second 0 (``submit x F``) the same schedule comes ``first_submit x
    (1 - F)`` earlier, so it ends ``F x first_submit + makespan`` after second 0.
    """
    span = factor * first_submit + makespan
    return span, (utilization * makespan / span if span > 0 else 0.0)
