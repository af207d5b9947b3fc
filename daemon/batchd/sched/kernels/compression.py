"""Compiled loops of a compression made from the last one (``KeptCompression``).

A compression (``kernels.profile.compress``) moves each planned job, in queue order,
to its earliest start among all the other jobs' reservations, so no job ever starts
later than planned. Every job of a plan in force was placed at its earliest start
when it was last placed; room for an earlier start can only have opened since, in a
*gain*: where the machine has more free nodes than then (a job ended before its
estimate, one was withdrawn), or the slot a job left when it moved. A window before
a job's start that fits now and did not then holds a point of a gain before that
start; so a job whose start is no later than the first gain keeps it, and no window
begins ``duration - 1`` seconds or more before the first gain.

The jobs of a deep queue repeat a few shapes, and room only opens where a job
moves: what one search found for a shape (its first window, or none before the
job's start) is where the next job of that shape looks from, until a move opens
room before it; so most jobs keep their start with one comparison. A job without
a window before its start can still move if there is room for it in the second
before its start: it then starts where that run of room begins, running on into
its own slot.
A job that moves changes only the steps where its old and new slots differ.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from batchd.model.times import NEVER
from batchd.sched.kernels.profile import add, earliest_start, locate

SHAPES = 64  # shapes whose first window a compression remembers


@njit(cache=True, nogil=True)
def first_more_room(
    t0: np.ndarray, f0: np.ndarray, n0: int, t1: np.ndarray, f1: np.ndarray, n1: int, now: int
) -> int:
    """The first time from ``now`` on where profile 1 has more free nodes than
    profile 0; NEVER if there is none."""
    i = locate(t0, n0, now)
    j = locate(t1, n1, now)
    x = now
    while True:
        if f1[j] > f0[i]:
            return x
        nxt0 = t0[i + 1] if i + 1 < n0 else NEVER
        nxt1 = t1[j + 1] if j + 1 < n1 else NEVER
        x = nxt0 if nxt0 < nxt1 else nxt1
        if x == NEVER:
            return NEVER
        if nxt0 == x:
            i += 1
        if nxt1 == x:
            j += 1


@njit(cache=True, nogil=True)
def room_opened(sd: np.ndarray, low: np.ndarray, used: int, at: int, now: int) -> None:
    """Room opened from ``at`` on: a window that meets it begins ``duration - 1``
    seconds before at the earliest."""
    for q in range(used):
        begin = at - sd[q] + 1
        if begin < now:
            begin = now
        if begin < low[q]:
            low[q] = begin


@njit(cache=True, nogil=True)
def compress_again(
    t: np.ndarray,
    f: np.ndarray,
    n: int,
    widths: np.ndarray,
    durs: np.ndarray,
    now: int,
    starts: np.ndarray,
    first_gain: int,
    left_a: np.ndarray,
    left_b: np.ndarray,
) -> tuple[int, int]:
    """``profile.compress`` for a plan whose jobs were each placed at their earliest start.

    The profile holds every reservation. Each job, in order, takes the earliest start
    that fits among all the others, where room opened from ``first_gain`` on (NEVER:
    nowhere) and in the slots the movers before it leave; jobs held at NEVER are
    placed like newcomers. For each shape, no window begins before ``low``. The
    slots the movers leave
    are written to ``left_a``/``left_b`` (room for ``len(widths)``). Returns (step
    count, slots left).
    """
    first = first_gain if first_gain > now else now
    sw = np.empty(SHAPES, dtype=np.int64)
    sd = np.empty(SHAPES, dtype=np.int64)
    low = np.empty(SHAPES, dtype=np.int64)
    used = 0
    oldest = 0  # the shape replaced next once SHAPES are remembered
    moved = 0
    for k in range(len(widths)):
        w = widths[k]
        d = durs[k]
        old = starts[k]
        if old == NEVER or w == 0 or d == 0:  # searched like a newcomer
            s = earliest_start(t, f, n, w, d, now)
            if old == NEVER:
                starts[k] = s
                if s != NEVER and w > 0 and d > 0:
                    n = add(t, f, n, s, s + d, -w)
            elif s < old:  # holds no nodes, leaves no room
                starts[k] = s
            continue
        if old <= first:
            continue
        begin = first - d + 1
        if begin < now:
            begin = now
        q = -1
        for x in range(used):
            if sw[x] == w and sd[x] == d:
                q = x
                break
        if q < 0:
            if used < SHAPES:
                q = used
                used += 1
            else:
                q = oldest
                oldest = (oldest + 1) % SHAPES
            sw[q] = w
            sd[q] = d
            low[q] = begin
        s = NEVER
        if low[q] < old:
            s = earliest_start(t, f, n, w, d, low[q], old)
            low[q] = s if s != NEVER else old
        # Or it starts in the run of steps with room for it that ends at its start,
        # and goes on into its own slot. (A run that began d seconds or more before
        # old holds a window before old: the search found one no later.)
        if old - 1 >= now:
            i = locate(t, n, old - 1)
            if f[i] >= w:
                while i > 0 and t[i] > now and f[i - 1] >= w:
                    i -= 1
                run = t[i] if t[i] > now else now
                if run < s:
                    s = run
        if s == NEVER:
            continue
        end = s + d
        if end <= old:
            n = add(t, f, n, old, old + d, w)
            n = add(t, f, n, s, end, -w)
        else:  # the slots overlap: only their differences change
            n = add(t, f, n, s, old, -w)
            n = add(t, f, n, end, old + d, w)
        starts[k] = s
        left_a[moved] = old
        left_b[moved] = old + d
        moved += 1
        room_opened(sd, low, used, end if end > old else old, now)
    return n, moved
