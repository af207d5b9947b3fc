"""The compiled sums against numpy's."""

from __future__ import annotations

import numpy as np
import pytest

from batchd.sched.kernels.sums import sum_and_max, weighted_sum_and_max


@pytest.mark.parametrize("seed", range(8))
def test_the_sums_and_the_largest_value_are_numpys(seed: int) -> None:
    rng = np.random.default_rng(seed)
    count = int(rng.integers(1, 300))
    values = rng.integers(-(10**9), 10**9, count)
    weights = rng.integers(1, 10**5, count)
    assert sum_and_max(values) == (int(values.sum()), int(values.max()))
    assert weighted_sum_and_max(weights, values) == (
        int(np.dot(weights, values)),
        int(values.max()),
    )


def test_the_largest_value_may_be_the_first_or_the_last() -> None:
    ones = np.ones(3, dtype=np.int64)
    assert sum_and_max(np.array([9, 1, 2])) == (12, 9)
    assert weighted_sum_and_max(ones, np.array([1, 2, 9])) == (12, 9)
