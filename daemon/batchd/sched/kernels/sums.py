"""Compiled sums of a plan's starts, with the latest start in the same pass.

A self-tuning step measures a plan of every order of the waiting queue; in numpy,
the sum of width x start (no BLAS for integers) and the latest start (to see that
every job has one) are two passes, several times the cost of one compiled loop.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def weighted_sum_and_max(weights: np.ndarray, values: np.ndarray) -> tuple[int, int]:
    """(sum of weights x values, the largest value) of non-empty, aligned arrays."""
    total = 0
    largest = values[0]
    for i in range(len(values)):
        v = values[i]
        total += weights[i] * v
        if v > largest:
            largest = v
    return total, largest


@njit(cache=True, nogil=True)
def sum_and_max(values: np.ndarray) -> tuple[int, int]:
    """(sum of the values, the largest) of a non-empty array."""
    total = 0
    largest = values[0]
    for i in range(len(values)):
        v = values[i]
        total += v
        if v > largest:
            largest = v
    return total, largest
