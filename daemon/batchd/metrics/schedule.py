"""Offline metrics of a finished schedule (Streit's dynP paper, sec. 5.1, and common extras)."""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter, mul, sub

from batchd.metrics.float_sums import pairwise_sum, percentile
from batchd.model.job import Job

SUMMARY_KEYS = (
    "jobs",
    "skipped",
    "killed",
    "utilization",
    "makespan",
    "awt",
    "art",
    "artww",
    "sldww60",
    "sldww300",
    "bsld10",
    "wait_p50",
    "wait_p90",
    "wait_p99",
    "policy",
    "nodes",
    "wall_seconds",
)


def _weighted_slowdown(w: list[int], resp: list[int], run: list[int], bound: int) -> float:
    b = bound
    sld = [
        wi * ((r if r > b else b) / (x if x > b else b))
        for wi, r, x in zip(w, resp, run, strict=True)
    ]
    return pairwise_sum(sld) / sum(w)


def schedule_metrics(jobs: Sequence[Job], nodes: int) -> dict[str, float | int]:
    """UTIL, ART, ARTwW, SLDwW (60 s and 300 s bounds), bounded slowdown and waits.

    UTIL = sum(width * run) / (nodes * (last end - first submit)); run = end - start
    as simulated (killed jobs count up to their kill). Makespan is last end - first
    submit. Wait percentiles use linear interpolation between order statistics.
    Sums of whole numbers are exact; sums of fractions are numpy's pairwise sums
    (see float_sums), so the figures are those numpy gave.
    """
    if not jobs:
        return {
            "jobs": 0,
            "killed": 0,
            "utilization": 0.0,
            "makespan": 0,
            "awt": 0.0,
            "art": 0.0,
            "artww": 0.0,
            "sldww60": 0.0,
            "sldww300": 0.0,
            "bsld10": 0.0,
            "wait_p50": 0.0,
            "wait_p90": 0.0,
            "wait_p99": 0.0,
        }
    n = len(jobs)
    w = list(map(attrgetter("width"), jobs))
    submit = list(map(attrgetter("submit"), jobs))
    start = list(map(attrgetter("start"), jobs))
    end = list(map(attrgetter("end"), jobs))
    wait = list(map(sub, start, submit))
    resp = list(map(sub, end, submit))
    run = list(map(sub, end, start))
    span = max(end) - min(submit)
    width_sum = sum(w)
    util = sum(map(mul, w, run)) / (nodes * span) if span > 0 else 0.0
    ordered = sorted(wait)
    # Bounded slowdown: response over run time (at least 10 s), at least 1.
    bsld = [
        s if (s := r / (x if x > 10 else 10)) > 1.0 else 1.0 for r, x in zip(resp, run, strict=True)
    ]
    return {
        "jobs": n,
        "killed": sum(map(attrgetter("result.killed"), jobs)),
        "utilization": util,
        "makespan": span,
        "awt": sum(wait) / n,
        "art": sum(resp) / n,
        "artww": sum(map(mul, w, resp)) / width_sum,
        "sldww60": _weighted_slowdown(w, resp, run, 60),
        "sldww300": _weighted_slowdown(w, resp, run, 300),
        "bsld10": pairwise_sum(bsld) / n,
        "wait_p50": percentile(ordered, 50),
        "wait_p90": percentile(ordered, 90),
        "wait_p99": percentile(ordered, 99),
    }
