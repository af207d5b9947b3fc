"""``compression.compress_again`` on a long profile held in blocks of steps
(``kernels.blocks``).

The same starts and steps: the searches for a shape's first window pass over whole
blocks without room, and a job that moves changes whole blocks at once and moves
only the steps of the blocks its slots begin and end in, where one step at a time
every new step moved all the steps after it.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from batchd.model.times import NEVER
from batchd.sched.kernels.blocks import (
    _IN_ORDER,
    BLOCK,
    before,
    cut,
    fewest,
    join,
    locate,
    take,
    value,
    window,
)
from batchd.sched.kernels.compression import (
    add_gain,
    moved_to,
    movers_alike,
    room_opened,
    shape_of,
    shapes,
    starts_before,
)


@njit(cache=True, nogil=True)
def compress_again(
    t: np.ndarray,
    f: np.ndarray,
    n: int,
    widths: np.ndarray,
    durs: np.ndarray,
    now: int,
    starts: np.ndarray,
    ga: np.ndarray,
    gb: np.ndarray,
    ng: int,
    left_a: np.ndarray,
    left_b: np.ndarray,
    block: int = BLOCK,
) -> tuple[int, int]:
    """``compression.compress_again`` on blocks of at most ``block`` (>= 2) steps."""
    bt, bf, count, lag, least, most, order, sizes = cut(t, f, n, 4 * len(widths), block)
    sw, sd, low = shapes()
    moved = 0
    # The last job that kept its start, while no job moved since (a newcomer placed
    # takes room and opens none).
    kept_w = kept_d = kept_s = -1
    jobs = len(widths)
    k = -1
    while k + 1 < jobs:
        k += 1
        w = widths[k]
        d = durs[k]
        old = starts[k]
        if old == NEVER or w == 0 or d == 0:  # searched like a newcomer
            s, _ = window(bt, bf, count, lag, least, most, order, sizes, w, d, now)
            if old == NEVER:
                starts[k] = s
                if s != NEVER and w > 0 and d > 0:
                    take(bt, bf, count, lag, least, most, order, sizes, s, s + d, w)
            elif s < old:
                starts[k] = s
            continue
        if w == kept_w and d == kept_d and old == kept_s:
            continue  # what kept the last one at its start keeps this one there
        limit = starts_before(ga, gb, ng, old)
        if limit == 0:
            continue
        begin = ga[0] - d + 1
        q = shape_of(sw, sd, low, w, d, begin if begin > now else now)
        s = NEVER
        if low[q] < limit:
            s, _ = window(bt, bf, count, lag, least, most, order, sizes, w, d, low[q], limit)
            low[q] = s if s != NEVER else old
        # The run of room that ends at its start (compression.compress_again: only a
        # gain that reaches old - 1 can have opened one).
        if limit == old and old - 1 >= now:
            bk, bi = locate(bt, count, order, sizes[_IN_ORDER], old - 1)
            if value(bf, lag, order, bk, bi) >= w:
                while (bk > 0 or bi > 0) and bt[order[bk], bi] > now:
                    pk, pi = before(count, order, bk, bi)
                    if value(bf, lag, order, pk, pi) < w:
                        break
                    bk, bi = pk, pi
                run = bt[order[bk], bi]
                if run < now:
                    run = now
                if run < s:
                    s = run
        if s == NEVER:
            kept_w, kept_d, kept_s = w, d, old
            continue
        end = s + d
        g = 1
        if k + 1 < jobs and widths[k + 1] == w and durs[k + 1] == d and starts[k + 1] == old:
            room = fewest(bt, bf, count, lag, order, sizes, s, min(end, old))
            g = movers_alike(widths, durs, starts, k, room)
        if end <= old:
            take(bt, bf, count, lag, least, most, order, sizes, old, old + d, -g * w)
            take(bt, bf, count, lag, least, most, order, sizes, s, end, g * w)
        else:
            take(bt, bf, count, lag, least, most, order, sizes, s, old, g * w)
            take(bt, bf, count, lag, least, most, order, sizes, end, old + d, -g * w)
        moved = moved_to(starts, left_a, left_b, moved, k, g, s, d)
        k += g - 1
        kept_w = -1
        opened = end if end > old else old
        ng = add_gain(ga, gb, ng, opened, old + d)
        room_opened(sd, low, opened, now)
    return join(t, f, bt, bf, count, lag, order, sizes), moved
