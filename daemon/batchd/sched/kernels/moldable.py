"""Compiled loops of the moldable policies: Downey's speedup and the best width on a plan.

``speedup`` is the same formula as :meth:`batchd.model.moldable.Speedup.at` and
``scaled`` the same rounding as ``Moldable.estimate_on`` (tests compare them), so a
width chosen here is planned with the duration the model gives.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from batchd.model.times import NEVER
from batchd.sched.kernels.profile import earliest_start


@njit(cache=True, nogil=True)
def speedup(n: int, fixed: bool, a: float, sigma: float) -> float:
    """S(n) of Downey's model (sec. 3.2), or 1 for a fixed-runtime job."""
    if fixed:
        return 1.0
    if sigma <= 1.0:
        if n <= a:
            return a * n / (a + sigma * (n - 1) / 2.0)
        if n <= 2.0 * a - 1.0:
            return a * n / (sigma * (a - 0.5) + n * (1.0 - sigma / 2.0))
        return a
    if n <= a + a * sigma - sigma:
        return n * a * (sigma + 1.0) / (sigma * (n + a - 1.0) + a)
    return a


@njit(cache=True, nogil=True)
def scaled(seconds: int, n: int, width: int, fixed: bool, a: float, sigma: float) -> int:
    """``seconds`` on ``width`` nodes scaled to ``n`` nodes: ceil(seconds S(width) / S(n))."""
    if n == width or fixed or seconds <= 0:
        return seconds
    ratio = speedup(width, fixed, a, sigma) / speedup(n, fixed, a, sigma)
    return int(math.ceil(round(seconds * ratio, 6)))


@njit(cache=True, nogil=True)
def soonest_width(
    t: np.ndarray,
    f: np.ndarray,
    n: int,
    now: int,
    low: int,
    high: int,
    width: int,
    estimate: int,
    fixed: bool,
    a: float,
    sigma: float,
) -> int:
    """The width in low..high whose planned end (earliest start on the profile plus the
    scaled estimate) is soonest; the narrowest among equals; 0 if none ever fits.

    Widths are tried from the widest down: the duration only grows as the width
    shrinks, so once ``now`` plus the duration passes the best end, no narrower
    width can end sooner.
    """
    best = 0
    best_end = NEVER
    for w in range(high, low - 1, -1):
        d = scaled(estimate, w, width, fixed, a, sigma)
        if d <= 0:
            d = 1  # Job.duration
        if now + d > best_end:
            break
        start = earliest_start(t, f, n, w, d, now)
        if start == NEVER:
            continue
        if start + d <= best_end:
            best_end = start + d
            best = w
    return best
