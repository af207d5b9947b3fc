"""Compiled loops of a compression made from the last one (``KeptCompression``).

A compression (``kernels.profile.compress``) moves each planned job, in queue order,
to its earliest start among all the other jobs' reservations, so no job ever starts
later than planned. Every job of a plan in force was placed at its earliest start
when it was last placed; room for an earlier start can only have opened since, in a
*gain*: where the machine has more free nodes than then (a job ended before its
estimate, one was withdrawn), or the slot a job left when it moved. A job whose
earlier windows meet no gain with room for it keeps its start without the search
for one, which is what a compression of a deep queue spends its time on.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from batchd.model.times import NEVER
from batchd.sched.kernels.profile import add, earliest_start, locate


@njit(cache=True, nogil=True)
def more_room(
    t0: np.ndarray,
    f0: np.ndarray,
    n0: int,
    t1: np.ndarray,
    f1: np.ndarray,
    n1: int,
    now: int,
    ga: np.ndarray,
    gb: np.ndarray,
) -> int:
    """Intervals from ``now`` on where profile 1 has more free nodes than profile 0.

    Written to ``ga``/``gb`` (starts, ends; the last may end at NEVER); returns their
    count. Both arrays need room for ``n0 + n1`` intervals.
    """
    i = locate(t0, n0, now)
    j = locate(t1, n1, now)
    x = now
    count = 0
    open_at = NEVER  # start of the interval being collected, NEVER when none
    while True:
        if f1[j] > f0[i]:
            if open_at == NEVER:
                open_at = x
        elif open_at != NEVER:
            ga[count] = open_at
            gb[count] = x
            count += 1
            open_at = NEVER
        nxt0 = t0[i + 1] if i + 1 < n0 else NEVER
        nxt1 = t1[j + 1] if j + 1 < n1 else NEVER
        x = nxt0 if nxt0 < nxt1 else nxt1
        if x == NEVER:
            break
        if nxt0 == x:
            i += 1
        if nxt1 == x:
            j += 1
    if open_at != NEVER:
        ga[count] = open_at
        gb[count] = NEVER
        count += 1
    return count


@njit(cache=True, nogil=True)
def runs_meeting(
    t: np.ndarray,
    f: np.ndarray,
    n: int,
    x: int,
    y: int,
    width: int,
    dur: int,
    now: int,
    limit: int,
    enough: int,
) -> tuple[int, int, bool]:
    """The runs of steps with ``width`` free nodes that meet [x, y), counted from ``now``.

    Returns the longest one's length (at least ``enough`` when one is that long: it
    is not followed further), the earliest start before ``limit`` of one at least
    ``dur`` long (NEVER if none): the earliest window of the job in these runs, and
    whether a shorter one that begins before ``limit`` reaches it.
    """
    i = locate(t, n, x)
    longest = 0
    first = NEVER
    reach = False
    while i < n and t[i] < y:
        if f[i] < width:
            i += 1
            continue
        low = i
        while low > 0 and t[low] > now and f[low - 1] >= width:
            low -= 1
        begin = t[low] if t[low] > now else now
        high = i + 1
        while high < n and f[high] >= width and t[high] - begin < enough:
            high += 1
        length = enough if high == n else t[high] - begin
        if length > longest:
            longest = length
        if begin < limit:
            if length >= dur:
                if begin < first:
                    first = begin
            elif begin + length >= limit:
                reach = True
        while high < n and f[high] >= width:  # the rest of a run cut short
            high += 1
        i = high
    return longest, first, reach


@njit(cache=True, nogil=True)
def add_gain(
    ga: np.ndarray,
    gb: np.ndarray,
    gw: np.ndarray,
    gl: np.ndarray,
    ng: int,
    a: int,
    b: int,
) -> int:
    """Put [a, b) into the sorted, disjoint gains, merging what it meets; returns the count.

    ``gw``/``gl``: what is known of each gain's room, the longest run (``gl``) of steps
    with ``gw`` free nodes; a merged gain is not known (width 0, length unbounded).
    """
    big = np.iinfo(np.int64).max
    i = 0
    while i < ng and gb[i] < a:
        i += 1
    j = i
    while j < ng and ga[j] <= b:
        if ga[j] < a:
            a = ga[j]
        if gb[j] > b:
            b = gb[j]
        j += 1
    gone = j - i  # gains merged into the new one
    if gone == 0:
        for m in range(ng, i, -1):
            ga[m] = ga[m - 1]
            gb[m] = gb[m - 1]
            gw[m] = gw[m - 1]
            gl[m] = gl[m - 1]
        ng += 1
    elif gone > 1:
        for m in range(j, ng):
            ga[m - gone + 1] = ga[m]
            gb[m - gone + 1] = gb[m]
            gw[m - gone + 1] = gw[m]
            gl[m - gone + 1] = gl[m]
        ng -= gone - 1
    ga[i] = a
    gb[i] = b
    gw[i] = 0
    gl[i] = big
    return ng


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
) -> tuple[int, int]:
    """``profile.compress`` for a plan whose jobs were each placed at their earliest start.

    The profile holds every reservation. Each job, in order, takes the earliest start
    that fits among all the others. Since a job was placed, room can only have opened
    inside a gain ``[ga[g], gb[g])``: a window that fits now and did not then holds a
    gain point before the job's start, in a run of steps with room for the job (one
    that ends in the job's own slot may go on once the job gives it up: then the job
    is searched for with its slot given up). Without one, it keeps its start. The
    slots the movers leave are gains for the jobs after them, and are written to
    ``left_a``/``left_b`` for the next compression (the jobs before them never saw
    them). ``ga``/``gb`` and the ``left`` arrays need room for ``ng + len(widths)``.
    Returns (step count, slots left).
    """
    big = np.iinfo(np.int64).max
    enough = 1
    for k in range(len(durs)):
        if durs[k] > enough:
            enough = durs[k]
    gw = np.empty(len(ga), dtype=np.int64)
    gl = np.empty(len(ga), dtype=np.int64)
    sa = ga[:ng].copy()
    sb = gb[:ng].copy()
    count = 0
    for g in range(ng):
        if sb[g] > now:
            count = add_gain(ga, gb, gw, gl, count, sa[g] if sa[g] > now else now, sb[g])
    ng = count
    moved = 0
    for k in range(len(widths)):
        w = widths[k]
        d = durs[k]
        old = starts[k]
        if old == NEVER:  # held no slot: searched like a newcomer
            s = earliest_start(t, f, n, w, d, now)
            starts[k] = s
            if s != NEVER:
                n = add(t, f, n, s, s + d, -w)
            continue
        best = NEVER
        reach = False
        low = big  # the earliest gain point looked at
        for g in range(ng):
            if ga[g] >= old:
                break
            if w >= gw[g] and d > gl[g] and gb[g] + gl[g] <= old:
                # No run in it long enough, even for a narrower job, nor one reaching
                # the job's own slot, which runs through once the job gives it up.
                continue
            y = gb[g] if gb[g] < old else old
            longest, first, reaches = runs_meeting(t, f, n, ga[g], y, w, d, now, old, enough)
            if y == gb[g] and (w <= gw[g] or gl[g] == big):
                gw[g] = w
                gl[g] = longest
            if first < best:
                best = first
            if reaches:
                reach = True
                if ga[g] < low:
                    low = ga[g]
        if best == NEVER and not reach:
            continue
        n = add(t, f, n, old, old + d, w)
        s = best
        if reach:  # runs that end in its own slot may go on without it
            begin = low - d + 1
            found = earliest_start(t, f, n, w, d, begin if begin > now else now, old)
            if found != NEVER and found < s:
                s = found
        if s == NEVER:
            s = old
        n = add(t, f, n, s, s + d, -w)
        starts[k] = s
        if s != old:
            left_a[moved] = old
            left_b[moved] = old + d
            moved += 1
            ng = add_gain(ga, gb, gw, gl, ng, old, old + d)
    return n, moved
