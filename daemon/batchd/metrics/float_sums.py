"""Sums and percentiles of floats that equal numpy's to the last bit, without numpy.

A replay's summary used to be computed with numpy; committed studies and
recorded digests hold those figures bit for bit. Summing in another order
changes the last digit, so these follow numpy's algorithms exactly:
``add.reduce`` of a contiguous float64 array is a pairwise sum over blocks of at
most 128 with eight running partial sums, and ``percentile`` with the default
"linear" method interpolates between order statistics as ``_lerp`` does. Not
loading numpy saves a tenth of a second on every replay.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

_BLOCK = 128  # numpy's PW_BLOCKSIZE


def pairwise_sum(values: Sequence[float]) -> float:
    """``numpy.add.reduce`` of ``values`` as a float64 array."""
    return _pairwise(values, 0, len(values))


def _pairwise(a: Sequence[float], lo: int, n: int) -> float:
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    if n <= _BLOCK:
        r0, r1, r2, r3, r4, r5, r6, r7 = a[lo : lo + 8]
        stop = lo + n - n % 8
        i = lo + 8
        while i < stop:
            r0 += a[i]
            r1 += a[i + 1]
            r2 += a[i + 2]
            r3 += a[i + 3]
            r4 += a[i + 4]
            r5 += a[i + 5]
            r6 += a[i + 6]
            r7 += a[i + 7]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < lo + n:
            res += a[i]
            i += 1
        return res
    half = n // 2
    half -= half % 8
    return _pairwise(a, lo, half) + _pairwise(a, lo + half, n - half)


def percentile(ordered: Sequence[float], percent: int) -> float:
    """``numpy.percentile(values, percent)`` of numbers already sorted ascending."""
    n = len(ordered)
    index = (n - 1) * (percent / 100)
    if index >= n - 1:
        return float(ordered[-1])
    below = math.floor(index)
    gamma = index - below
    a, b = ordered[below], ordered[below + 1]
    step = b - a
    if gamma >= 0.5:
        return b - step * (1 - gamma)
    return a + step * gamma
