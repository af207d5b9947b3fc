"""The quality of a plan from the submits' sums equals the one from each job's submit."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from batchd.model.times import NEVER
from batchd.sched.policies.quality import (
    QUALITIES,
    SUMMED,
    plan_quality,
    queue_terms,
    summed_quality,
)


@pytest.mark.parametrize("metric", SUMMED)
@pytest.mark.parametrize("seed", range(20))
def test_summed_quality_is_plan_quality_in_every_order(metric: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    count = int(rng.integers(1, 400))
    submits = rng.integers(0, 10**9, count)
    starts = submits + rng.integers(0, 10**6, count)
    widths = rng.integers(1, 8193, count)
    durations = rng.integers(1, 10**6, count)
    sums = int(submits.sum()), int((widths * submits).sum())
    expected = plan_quality(metric, starts, widths, durations, submits)
    order = rng.permutation(count)  # another policy's order of the same jobs
    terms = queue_terms(metric, widths, durations, *sums)
    assert queue_terms(metric, widths[order], durations[order], *sums) == terms
    assert summed_quality(metric, starts, widths, durations, terms) == expected
    assert summed_quality(metric, starts[order], widths[order], durations[order], terms) == expected


def test_summed_quality_of_no_jobs_is_zero() -> None:
    empty = np.zeros(0, dtype=np.int64)
    assert (
        summed_quality("artww", empty, empty, empty, queue_terms("artww", empty, empty, 0, 0)) == 0
    )


def test_summed_quality_refuses_a_metric_that_needs_each_submit() -> None:
    one = np.ones(1, dtype=np.int64)
    with pytest.raises(ValueError, match="'sldww' needs each job's submit"):
        summed_quality("sldww", one, one, one, (1, 1))
    with pytest.raises(ValueError, match="'sldww' needs each job's submit"):
        queue_terms("sldww", one, one, 1, 1)


# Three jobs (start, width, duration, submit): (100, 1, 50, 0), (200, 3, 100, 20),
# (5, 2, 10, 0). Ends 150, 300, 15; responses 150, 280, 15; waits 100, 180, 5.
# SLDwW: responses and durations count at least 60 s: 150/60, 280/100, 60/60 =
# 2.5, 2.8, 1, weighted by width (1 + 3 + 2 = 6): 12.9 / 6 = 2.15.
_STARTS, _WIDTHS = np.array([100, 200, 5]), np.array([1, 3, 2])
_DURATIONS, _SUBMITS = np.array([50, 100, 10]), np.array([0, 20, 0])


@pytest.mark.parametrize(
    ("metric", "value"),
    [
        ("ms", 300),
        ("art", Fraction(445, 3)),
        ("artww", 170),
        ("awt", 95),
        ("sldww", pytest.approx(2.15, rel=1e-12)),
    ],
)
def test_plan_quality_by_hand(metric: str, value: object) -> None:
    assert plan_quality(metric, _STARTS, _WIDTHS, _DURATIONS, _SUBMITS) == value


@pytest.mark.parametrize("metric", SUMMED)
def test_summed_quality_by_hand_and_none_for_a_job_without_a_start(metric: str) -> None:
    sums = int(_SUBMITS.sum()), int((_WIDTHS * _SUBMITS).sum())  # 20, 60
    terms = queue_terms(metric, _WIDTHS, _DURATIONS, *sums)
    expected = {"ms": 300, "art": Fraction(445, 3), "artww": 170, "awt": 95}[metric]
    assert summed_quality(metric, _STARTS, _WIDTHS, _DURATIONS, terms) == expected
    for job in range(3):  # sums cannot leave a job out: plan_quality's to do
        unplaced = _STARTS.copy()
        unplaced[job] = NEVER
        assert summed_quality(metric, unplaced, _WIDTHS, _DURATIONS, terms) is None


def test_plan_quality_of_no_jobs_is_zero_and_unknown_metrics_are_refused() -> None:
    empty = np.zeros(0, dtype=np.int64)
    for metric in QUALITIES:
        assert plan_quality(metric, empty, empty, empty, empty) == 0
    with pytest.raises(ValueError, match="unknown quality metric 'speed'; choose one of ms, "):
        plan_quality("speed", _STARTS, _WIDTHS, _DURATIONS, _SUBMITS)
