"""What the jobs' utility functions earned in a schedule (Lee's utility paper, sec. 3 and 5).

Over the finished jobs that carry a function: the aggregate utility (the sum of what
each earned, ending ``end - submit`` seconds after submission) beside the sum of start
values; the percent of its start value each earned, its wait and its expansion factor
((wait + runtime) / runtime) at the 25th, 50th, 75th, 98th and 100th percentiles
(numpy's linear interpolation); and the bounded slowdown (10 s). The same figures by
decay type when the trace names one (``utility_decay=`` tokens, as ``batchd utility``
writes them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from batchd.metrics.float_sums import pairwise_sum, percentile
from batchd.model.job import UNSET, Job

PERCENTILES = (25, 50, 75, 98, 100)
BOUND = 10  # seconds: the bounded slowdown's floor on the runtime
DECAY_TOKEN = "utility_decay="


def decay_type(job: Job) -> str | None:
    for token in job.trace_tokens:
        if token.startswith(DECAY_TOKEN):
            return token[len(DECAY_TOKEN) :]
    return None


def utility_summary(jobs: Sequence[Job]) -> dict[str, Any] | None:
    """The summary's ``utility`` object, or None when no finished job has a function."""
    rated = [j for j in jobs if j.utility is not None and j.start != UNSET and j.end != UNSET]
    if not rated:
        return None
    out = _figures(rated)
    types: dict[str, list[Job]] = {}
    for job in rated:
        kind = decay_type(job)
        if kind is not None:
            types.setdefault(kind, []).append(job)
    if types:
        out["by_decay"] = {kind: _figures(types[kind]) for kind in sorted(types)}
    return out


def _at_percentiles(values: list[float]) -> dict[str, float]:
    values.sort()
    return {f"p{p}": round(percentile(values, p), 6) for p in PERCENTILES}


def _figures(jobs: Sequence[Job]) -> dict[str, Any]:
    earned: list[float] = []
    start: list[float] = []
    percent: list[float] = []
    waits: list[float] = []
    expansion: list[float] = []
    slowdowns: list[float] = []
    for job in jobs:
        assert job.utility is not None
        response = job.end - job.submit
        run = job.end - job.start
        value = job.utility.value_at(response)
        first = job.utility.start_value
        earned.append(value)
        start.append(first)
        percent.append(100.0 * value / first if first > 0 else 100.0)
        waits.append(job.start - job.submit)
        expansion.append(response / max(run, 1))
        slowdowns.append(max(1.0, response / max(run, BOUND)))
    total, possible = pairwise_sum(earned), pairwise_sum(start)
    return {
        "jobs": len(jobs),
        "aggregate": round(total, 6),
        "start_values": round(possible, 6),
        "earned_percent": _at_percentiles(percent),
        "wait": _at_percentiles(waits),
        "expansion": _at_percentiles(expansion),
        "bsld10": round(pairwise_sum(slowdowns) / len(jobs), 6),
    }
