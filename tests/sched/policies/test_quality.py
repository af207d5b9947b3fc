"""The quality of a plan from the submits' sums equals the one from each job's submit."""

from __future__ import annotations

import numpy as np
import pytest

from batchd.sched.policies.quality import SUMMED, plan_quality, summed_quality


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
    assert summed_quality(metric, starts, widths, durations, *sums) == expected
    assert summed_quality(metric, starts[order], widths[order], durations[order], *sums) == expected


def test_summed_quality_of_no_jobs_is_zero() -> None:
    empty = np.zeros(0, dtype=np.int64)
    assert summed_quality("artww", empty, empty, empty, 0, 0) == 0


def test_summed_quality_refuses_a_metric_that_needs_each_submit() -> None:
    one = np.ones(1, dtype=np.int64)
    with pytest.raises(ValueError, match="'sldww' needs each job's submit"):
        summed_quality("sldww", one, one, one, 1, 1)
