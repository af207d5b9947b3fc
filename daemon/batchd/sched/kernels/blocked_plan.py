"""``plan_all`` on a long profile held in blocks of steps (``kernels.blocks``).

The starts and the steps are those of ``kernels.profile.plan_all``, which is the same
placement one step at a time; on a long profile a search passes over whole blocks
with no room for the job, or with room at every step of its window, and a
reservation adds to whole blocks.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from batchd.model.times import NEVER
from batchd.sched.kernels.blocks import BLOCK, cut, join, take, window
from batchd.sched.kernels.profile import RECENT, alike


@njit(cache=True, nogil=True)
def plan_all(
    t: np.ndarray,
    f: np.ndarray,
    n: int,
    widths: np.ndarray,
    durs: np.ndarray,
    not_before: int,
    starts: np.ndarray,
    block: int = BLOCK,
    held: np.ndarray | None = None,
) -> int:
    """``kernels.profile.plan_all`` on blocks of at most ``block`` (>= 2) steps; with
    ``held``, -1 at the first job it would start later than that."""
    bt, bf, count, lag, least, most, order, sizes = cut(t, f, n, 2 * len(widths), block)
    big = np.iinfo(np.int64).max
    recent_w = np.full(RECENT, big, dtype=np.int64)
    recent_d = np.zeros(RECENT, dtype=np.int64)
    recent_s = np.zeros(RECENT, dtype=np.int64)
    jobs = len(widths)
    k = 0
    r = 0
    while k < jobs:
        w = widths[k]
        d = durs[k]
        floor = not_before
        for q in range(RECENT):
            if recent_w[q] <= w and recent_d[q] <= d and recent_s[q] > floor:
                floor = recent_s[q]
        s, room = window(bt, bf, count, lag, least, most, order, sizes, w, d, floor)
        if s == NEVER:
            if held is not None and held[k] != NEVER:
                return -1
            starts[k] = NEVER
            k += 1
            continue
        together = 1
        if w > 0 and d > 0:
            if k + 1 < jobs and widths[k + 1] == w and durs[k + 1] == d:
                together = alike(widths, durs, k, room // w)
            take(bt, bf, count, lag, least, most, order, sizes, s, s + d, w * together)
        for x in range(k, k + together):
            if held is not None and s > held[x]:
                return -1
            starts[x] = s
        recent_w[r] = w
        recent_d[r] = d
        recent_s[r] = s
        r = (r + 1) % RECENT
        k += together
    return join(t, f, bt, bf, count, lag, order, sizes)
