"""Compiled loops of a compression made from the last one (``KeptCompression``).

A compression (``kernels.profile.compress``) moves each planned job, in queue order,
to its earliest start among all the other jobs' reservations, so no job ever starts
later than planned. Every job of a plan in force was placed at its earliest start
when it was last placed; room for an earlier start can only have opened since, in a
*gain*: where the machine has more free nodes than then (a job ended before its
estimate, one was withdrawn), or the slot a job left when it moved. A window before
a job's start that fits now and did not then holds a point of a gain before that
start: a job with no gain before its start keeps it, and a window that could move
it begins after the first gain's start less ``duration`` and before the end of the
last gain that begins before the job's start.

The jobs of a deep queue repeat a few shapes, and room only opens where a job
moves: what one search found for a shape (its first window, or none before the
job's start) is where the next job of that shape looks from, until a move opens
room before it; so most jobs keep their start with one comparison. A job without
a window before its start can still move if there is room for it in the second
before its start: it then starts where that run of room begins, running on into
its own slot. A job that moves changes only the steps where its old and new slots
differ.

A job of the width, duration and start of the last one that kept its start, no
job having moved since, keeps its own without a look: nothing that kept the first
has changed (a job placed afresh takes room and opens none). A deep queue holds
long runs of such jobs side by side.
Jobs alike side by side that follow one that moved go with it, as many as the
room before their start holds (``movers_alike``): one search and one change of
the profile for all of them.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from batchd.model.times import NEVER
from batchd.sched.kernels.profile import add, earliest_start, locate

SHAPES = 64  # slots of the shapes whose first window a compression remembers (a power of 2)


@njit(cache=True, nogil=True)
def add_gain(ga: np.ndarray, gb: np.ndarray, ng: int, a: int, b: int) -> int:
    """Put [a, b) into the sorted, disjoint gains, merging what it meets or touches;
    returns their count (the arrays need room for one more)."""
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
        ng += 1
    elif gone > 1:
        for m in range(j, ng):
            ga[m - gone + 1] = ga[m]
            gb[m - gone + 1] = gb[m]
        ng -= gone - 1
    ga[i] = a
    gb[i] = b
    return ng


@njit(cache=True, nogil=True)
def starts_before(ga: np.ndarray, gb: np.ndarray, ng: int, old: int) -> int:
    """The time before which a window that holds a point of a gain before ``old``
    begins: the end of the last gain that begins before ``old``, or ``old`` if that
    gain reaches it; 0 if no gain begins before ``old``."""
    lo = 0
    hi = ng
    while lo < hi:  # the gains that begin before old: [0, lo)
        mid = (lo + hi) >> 1
        if ga[mid] < old:
            lo = mid + 1
        else:
            hi = mid
    if lo == 0:
        return 0
    end: int = gb[lo - 1]
    return end if end < old else old


@njit(cache=True, nogil=True)
def room_opened(sd: np.ndarray, low: np.ndarray, at: int, now: int) -> None:
    """Room opened from ``at`` on: a window that meets it begins ``duration - 1``
    seconds before at the earliest (an empty slot's bound is never read)."""
    for q in range(SHAPES):
        begin = at - sd[q] + 1
        if begin < now:
            begin = now
        if begin < low[q]:
            low[q] = begin


@njit(cache=True, nogil=True)
def shapes() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An empty memory of shapes: (widths, durations, bounds) by slot; width -1: empty."""
    return (
        np.full(SHAPES, -1, dtype=np.int64),
        np.zeros(SHAPES, dtype=np.int64),
        np.zeros(SHAPES, dtype=np.int64),
    )


@njit(cache=True, nogil=True)
def shape_of(sw: np.ndarray, sd: np.ndarray, low: np.ndarray, w: int, d: int, begin: int) -> int:
    """The slot of shape (w, d): the one its width and duration pick. A shape not in it
    takes it, with the bound ``begin``; the one it held is forgotten (a forgotten
    shape's search begins afresh, at its first possible window: the same start)."""
    h = d * 40503 + w * 2654435761
    h ^= h >> 13
    h ^= h >> 7
    q: int = h & (SHAPES - 1)
    if sw[q] != w or sd[q] != d:
        sw[q] = w
        sd[q] = d
        low[q] = begin
    return q


@njit(cache=True, nogil=True)
def fewest(t: np.ndarray, f: np.ndarray, n: int, a: int, b: int) -> int:
    """The fewest free nodes over [a, b) (a < b)."""
    i = locate(t, n, a)
    low: int = f[i]
    i += 1
    while i < n and t[i] < b:
        if f[i] < low:
            low = f[i]
        i += 1
    return low


@njit(cache=True, nogil=True)
def moved_to(
    starts: np.ndarray,
    left_a: np.ndarray,
    left_b: np.ndarray,
    moved: int,
    k: int,
    g: int,
    s: int,
    d: int,
) -> int:
    """Jobs ``k`` to ``k + g`` start at ``s``: the slots they leave are written after
    the ``moved`` already left; returns the count left now."""
    old = starts[k]
    for x in range(g):
        starts[k + x] = s
        left_a[moved + x] = old
        left_b[moved + x] = old + d
    return moved + g


@njit(cache=True, nogil=True)
def movers_alike(
    widths: np.ndarray, durs: np.ndarray, starts: np.ndarray, k: int, room: int
) -> int:
    """How many jobs from ``k`` on, of its width, duration and start side by side,
    move with it to its new start, where ``room`` nodes are free before their start.

    The next one of them can start no earlier than ``k`` (the room it sees differs
    from what ``k`` saw only by ``k``'s new slot and its old one, which is after
    ``k``'s new start) and starts there too if the room before their start holds it
    beside those that moved: past their start, they run on into slots they hold.
    """
    w = widths[k]
    d = durs[k]
    old = starts[k]
    most = room // w
    g = 1
    while (
        g < most
        and k + g < len(widths)
        and widths[k + g] == w
        and durs[k + g] == d
        and starts[k + g] == old
    ):
        g += 1
    return g


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
    that fits among all the others, where room opened in the gains ``[ga[g], gb[g])``
    (sorted, disjoint, none before now) and in the slots the movers before it leave;
    jobs held at NEVER are placed like newcomers. For each shape, no window begins
    before ``low``. ``ga``/``gb`` need room for ``ng + len(widths)``; the slots the
    movers leave are written to ``left_a``/``left_b``. Returns (step count, slots
    left).
    """
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
            s = earliest_start(t, f, n, w, d, now)
            if old == NEVER:
                starts[k] = s
                if s != NEVER and w > 0 and d > 0:
                    n = add(t, f, n, s, s + d, -w)
            elif s < old:  # holds no nodes, leaves no room
                starts[k] = s
            continue
        if w == kept_w and d == kept_d and old == kept_s:
            continue  # what kept the last one at its start keeps this one there
        limit = starts_before(ga, gb, ng, old)
        if limit == 0:  # no gain before its start
            continue
        begin = ga[0] - d + 1
        q = shape_of(sw, sd, low, w, d, begin if begin > now else now)
        s = NEVER
        if low[q] < limit:
            s = earliest_start(t, f, n, w, d, low[q], limit)
            low[q] = s if s != NEVER else old
        # Or it starts in the run of steps with room for it that ends at its start,
        # and goes on into its own slot. (A run that began d seconds or more before
        # old holds a window before old: the search found one no later.) There was
        # no room for it in the second before old when it was placed (it would have
        # started then): only a gain that reaches that second (limit == old) made some.
        if limit == old and old - 1 >= now:
            i = locate(t, n, old - 1)
            if f[i] >= w:
                while i > 0 and t[i] > now and f[i - 1] >= w:
                    i -= 1
                run = t[i] if t[i] > now else now
                if run < s:
                    s = run
        if s == NEVER:
            kept_w, kept_d, kept_s = w, d, old
            continue
        end = s + d
        g = 1
        if k + 1 < jobs and widths[k + 1] == w and durs[k + 1] == d and starts[k + 1] == old:
            g = movers_alike(widths, durs, starts, k, fewest(t, f, n, s, min(end, old)))
        if end <= old:
            n = add(t, f, n, old, old + d, g * w)
            n = add(t, f, n, s, end, -g * w)
        else:  # the slots overlap: only their differences change
            n = add(t, f, n, s, old, -g * w)
            n = add(t, f, n, end, old + d, g * w)
        moved = moved_to(starts, left_a, left_b, moved, k, g, s, d)
        k += g - 1
        kept_w = -1
        opened = end if end > old else old
        ng = add_gain(ga, gb, ng, opened, old + d)
        room_opened(sd, low, opened, now)
    return n, moved
