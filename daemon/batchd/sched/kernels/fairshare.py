"""Compiled loops of the fair-share moldable policies (Sabin et al.'s moldable paper, sec. 4.1 and Fig. 1).

Every waiting job is a row of two tables (its range, requested width and estimate,
speedup, square-root weight, and the width decided at its reservation);
a pass hands the rows of the queue, in order, to ``fairshare_pass``, which computes
the limits and then walks the queue as EASY does on the availability profile. The
speedup and the scaling of estimates are those of ``kernels.moldable`` (the model's).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from batchd.model.times import NEVER
from batchd.sched.kernels.moldable import scaled, soonest_width, speedup
from batchd.sched.kernels.profile import add, build, earliest_start

# The columns of a row: integers (the ``fixed`` model is FLAT = 1; DECIDED is the
# width fixed at the job's reservation, 0 until then) ...
LOW, HIGH, WIDTH, ESTIMATE, FLAT, DECIDED = range(6)
# ... and floats: Downey's A and sigma, and the square root of the job's weight.
A, SIGMA, SQRT_WEIGHT = range(3)

# A limit computed as a whole number in exact arithmetic must not lose a node to
# rounding error before the floor (or gain one before the ceiling).
_EPS = 1e-9


@njit(cache=True, nogil=True)
def fair_limits(
    rows: np.ndarray, sqrt_weight: np.ndarray, obf: float, nodes: int, out: np.ndarray
) -> None:
    """Sec. 4.1: ``obf`` x sqrt(weight) / sum of sqrt(weight) over ``rows`` x ``nodes``,
    rounded down, at least 1 node and at most ``nodes``."""
    total = 0.0
    for k in range(len(rows)):
        total += sqrt_weight[rows[k]]
    for k in range(len(rows)):
        share = obf * sqrt_weight[rows[k]] / total * nodes
        if share > nodes:
            share = nodes
        limit = int(math.floor(share + _EPS))
        out[k] = limit if limit > 1 else 1


@njit(cache=True, nogil=True)
def _s(n: int, low: int, high: int, flat: bool, a: float, sigma: float) -> float:
    """The speedup on ``n`` nodes of a job that runs on ``low..high``: flat outside."""
    if n < low:
        n = low
    elif n > high:
        n = high
    return speedup(n, flat, a, sigma)


# The transfer keeps two heaps of queue positions, the losers by what a job loses with
# its last node (smallest first) and the gainers by minus what it gains with one more,
# ties by position: arrays of keys and positions, and where each position sits (-1: not
# in the heap), so a key changes in place.


@njit(cache=True, nogil=True)
def _before(hk: np.ndarray, hid: np.ndarray, i: int, key: float, k: int) -> bool:
    """Slot ``i`` comes before the entry (key, k): a smaller key, or the same and an
    earlier queue position."""
    return bool(hk[i] < key or (hk[i] == key and hid[i] < k))


@njit(cache=True, nogil=True)
def _sift(hk: np.ndarray, hid: np.ndarray, pos: np.ndarray, size: int, i: int) -> None:
    """Restore the heap order around slot ``i``, up or down: the entries it passes move
    into the hole one by one, and it is written once where it stops."""
    # The comparisons are written out: through _before this loop runs half as fast.
    key = hk[i]
    k = hid[i]
    while i > 0:
        parent = (i - 1) >> 1
        if hk[parent] < key or (hk[parent] == key and hid[parent] < k):
            break
        hk[i] = hk[parent]
        hid[i] = hid[parent]
        pos[hid[i]] = i
        i = parent
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        right = child + 1
        if right < size and (
            hk[right] < hk[child] or (hk[right] == hk[child] and hid[right] < hid[child])
        ):
            child = right
        if not (hk[child] < key or (hk[child] == key and hid[child] < k)):
            break
        hk[i] = hk[child]
        hid[i] = hid[child]
        pos[hid[i]] = i
        i = child
    hk[i] = key
    hid[i] = k
    pos[k] = i


@njit(cache=True, nogil=True)
def _push(hk: np.ndarray, hid: np.ndarray, pos: np.ndarray, size: int, k: int, key: float) -> int:
    hk[size] = key
    hid[size] = k
    pos[k] = size
    _sift(hk, hid, pos, size + 1, size)
    return size + 1


@njit(cache=True, nogil=True)
def _drop(hk: np.ndarray, hid: np.ndarray, pos: np.ndarray, size: int, k: int) -> int:
    i = pos[k]
    if i < 0:
        return size
    size -= 1
    pos[k] = -1
    if i != size:
        hk[i] = hk[size]
        hid[i] = hid[size]
        pos[hid[i]] = i
        _sift(hk, hid, pos, size, i)
    return size


@njit(cache=True, nogil=True)
def _rekey(hk: np.ndarray, hid: np.ndarray, pos: np.ndarray, size: int, k: int, key: float) -> None:
    i = pos[k]
    hk[i] = key
    _sift(hk, hid, pos, size, i)


@njit(cache=True, nogil=True)
def _runner_up(hk: np.ndarray, hid: np.ndarray, size: int) -> int:
    """The slot of the second in order (a child of the top), or -1."""
    if size < 2:
        return -1
    if size > 2 and _before(hk, hid, 2, hk[1], hid[1]):
        return 2
    return 1


@njit(cache=True, nogil=True)
def _loss(limit: int, ints: np.ndarray, floats: np.ndarray, r: int) -> float:
    """What the job of row ``r`` loses with the last node of ``limit``."""
    low, high, flat = ints[r, LOW], ints[r, HIGH], ints[r, FLAT] != 0
    a, sigma = floats[r, A], floats[r, SIGMA]
    return _s(limit, low, high, flat, a, sigma) - _s(limit - 1, low, high, flat, a, sigma)


@njit(cache=True, nogil=True)
def _gain(limit: int, ints: np.ndarray, floats: np.ndarray, r: int) -> float:
    """What the job of row ``r`` gains with one node more than ``limit``."""
    low, high, flat = ints[r, LOW], ints[r, HIGH], ints[r, FLAT] != 0
    a, sigma = floats[r, A], floats[r, SIGMA]
    return _s(limit + 1, low, high, flat, a, sigma) - _s(limit, low, high, flat, a, sigma)


@njit(cache=True, nogil=True)
def efficiency_transfer(
    limits: np.ndarray,
    movable: np.ndarray,
    rows: np.ndarray,
    ints: np.ndarray,
    floats: np.ndarray,
    ef: float,
    nodes: int,
) -> int:
    """Fig. 1: move limit nodes, one at a time, from the job whose speedup gains least
    from its last node to the one that gains most from one more, while that raises the
    sum of speedups; returns the number of nodes moved.

    Each job's limit stays within max(1, (1 - ef) x its fair share) and
    min(nodes, (1 + ef) x its fair share), and a job either gains or loses, never both
    (Fig. 1's closing comment). When one job is both the cheapest to take from and the
    best to give to, it is paired with the runner-up on whichever side leaves the
    larger difference. Equal keys go to the job first in the queue.

    A node moves between the two jobs on top of the heaps; their keys change in place,
    and while both stay on top the next node moves without a search.
    """
    count = len(rows)
    lo = np.empty(count, dtype=np.int64)
    hi = np.empty(count, dtype=np.int64)
    way = np.zeros(count, dtype=np.int64)  # -1 lost, +1 gained
    lk = np.empty(count, dtype=np.float64)
    lid = np.empty(count, dtype=np.int64)
    lpos = np.full(count, -1, dtype=np.int64)
    gk = np.empty(count, dtype=np.float64)
    gid = np.empty(count, dtype=np.int64)
    gpos = np.full(count, -1, dtype=np.int64)
    nl = ng = 0
    for k in range(count):
        if not movable[k]:
            continue
        fair = limits[k]
        lo[k] = max(1, int(math.ceil((1.0 - ef) * fair - _EPS)))
        hi[k] = min(nodes, int(math.floor((1.0 + ef) * fair + _EPS)))
        if fair > lo[k]:
            nl = _push(lk, lid, lpos, nl, k, _loss(fair, ints, floats, rows[k]))
        if fair < hi[k]:
            ng = _push(gk, gid, gpos, ng, k, -_gain(fair, ints, floats, rows[k]))
    moved = 0
    while nl > 0 and ng > 0:
        s = lid[0]
        g = gid[0]
        single = s == g
        if single:
            best = 0.0
            pick_s = pick_g = -1
            i = _runner_up(lk, lid, nl)
            if i >= 0 and -gk[0] - lk[i] > best:
                best = -gk[0] - lk[i]
                pick_s, pick_g = lid[i], s
            i = _runner_up(gk, gid, ng)
            if i >= 0 and -gk[i] - lk[0] > best:
                pick_s, pick_g = s, gid[i]
            if pick_s < 0:
                break
            s, g = pick_s, pick_g
        elif -gk[0] <= lk[0]:
            break
        if way[s] == 0:
            way[s] = -1
            ng = _drop(gk, gid, gpos, ng, s)
        if way[g] == 0:
            way[g] = 1
            nl = _drop(lk, lid, lpos, nl, g)
        while True:
            limits[s] -= 1
            limits[g] += 1
            moved += 1
            if limits[s] > lo[s]:
                _rekey(lk, lid, lpos, nl, s, _loss(limits[s], ints, floats, rows[s]))
            else:
                nl = _drop(lk, lid, lpos, nl, s)
            if limits[g] < hi[g]:
                _rekey(gk, gid, gpos, ng, g, -_gain(limits[g], ints, floats, rows[g]))
            else:
                ng = _drop(gk, gid, gpos, ng, g)
            if single or nl == 0 or ng == 0 or lid[0] != s or gid[0] != g:
                break
            if -gk[0] <= lk[0]:
                break
    return moved


@njit(cache=True, nogil=True)
def _duration(w: int, ints: np.ndarray, floats: np.ndarray, r: int) -> int:
    """The job's estimate on ``w`` nodes, at least one second (Job.duration)."""
    d = scaled(ints[r, ESTIMATE], w, ints[r, WIDTH], ints[r, FLAT] != 0, floats[r, A],
               floats[r, SIGMA])  # fmt: skip
    return d if d > 0 else 1


@njit(cache=True, nogil=True)
def _least_free(f: np.ndarray, n: int, out: np.ndarray) -> None:
    """``out[i]``: the fewest free nodes over steps 0..i of the profile."""
    least = f[0]
    for i in range(n):
        if f[i] < least:
            least = f[i]
        out[i] = least


@njit(cache=True, nogil=True)
def _best_now(
    t: np.ndarray, n: int, now: int, least: np.ndarray, lo: int, cap: int,
    ints: np.ndarray, floats: np.ndarray, r: int,
) -> int:  # fmt: skip
    """The width of ``lo..cap`` that ends the job soonest of those that start now (the
    narrowest of equal ends), or 0 if none fits now.

    A width fits now if the fewest free nodes until its estimated end (``least``, over
    the profile's steps) are as many. The widest that fits ends soonest (the estimate
    never grows with the width), and a narrower one of the same estimate as soon.
    """
    w = cap if cap < least[0] else least[0]
    d = 0
    while w >= lo:
        d = _duration(w, ints, floats, r)
        # The last step that begins before now + d (steps begin at now, t[0]).
        j = np.searchsorted(t[:n], now + d) - 1
        if least[j] >= w:
            break
        w -= 1
    if w < lo:
        return 0
    while w > lo and _duration(w - 1, ints, floats, r) == d:
        w -= 1
    return w


@njit(cache=True, nogil=True)
def _sooner_later(
    t: np.ndarray, f: np.ndarray, n: int, now: int, above: int, cap: int, end: int,
    ints: np.ndarray, floats: np.ndarray, r: int,
) -> bool:  # fmt: skip
    """Whether a width of ``above + 1..cap`` (none of which fits now) ends before ``end``.

    Width ``w`` cannot start before the first step with ``w`` nodes free; only a width
    whose estimate from there ends before ``end`` needs its earliest start found.
    """
    i = 0
    for w in range(above + 1, cap + 1):
        while i < n and f[i] < w:
            i += 1
        if i == n:
            return False  # no wider width ever fits
        d = _duration(w, ints, floats, r)
        if t[i] + d < end and earliest_start(t, f, n, w, d, now) + d < end:
            return True
    return False


@njit(cache=True, nogil=True)
def fairshare_pass(
    t: np.ndarray,
    f: np.ndarray,
    capacity: int,
    now: int,
    ends: np.ndarray,
    busy: np.ndarray,
    pending: np.ndarray,
    depth: int,
    nodes: int,
    obf: float,
    ef: float,
    rows: np.ndarray,
    ints: np.ndarray,
    floats: np.ndarray,
    limits: np.ndarray,
    known: bool,
    out_width: np.ndarray,
    out_start: np.ndarray,
    out_started: np.ndarray,
) -> tuple[int, int]:
    """One pass over the queue ``rows`` (in order).

    The profile is built in ``t, f`` from the running jobs (``busy[k]`` nodes until
    ``ends[k]``, ascending) and the advance reservations (``pending``: start, end,
    width). Limits come first, into ``limits`` (``fair_limits``, then
    ``efficiency_transfer`` if ``ef`` > 0, over the moldable jobs whose width is not
    decided yet), unless ``known``: they depend on the queue alone, and ``limits`` holds
    those of this queue from an earlier pass. Then each job in order
    takes the width of ``low..min(high, max(low, limit))`` that ends it soonest on the
    profile (a decided or rigid job its one width); if that width starts now the job
    starts, else the first ``depth`` such jobs are reserved at it (EASY: 1; a full plan:
    all), and the others are passed over. Started and reserved jobs are put in the
    profile, so a job starts now only where it delays no reservation.

    Writes each job's width (0: no width ever fits) and start (NEVER: passed
    over or never fits), and the queue positions of the jobs that start now into
    ``out_started``; returns how many start and the position of the first job reserved
    (-1: none). ``t`` and ``f`` hold room for the running jobs, the reservations and
    two steps per waiting job.
    """
    count = len(rows)
    n = build(t, f, now, capacity, ends, busy)
    for k in range(len(pending)):
        n = add(t, f, n, pending[k, 0], pending[k, 1], -pending[k, 2])
    low = ints[:, LOW]
    high = ints[:, HIGH]
    decided = ints[:, DECIDED]
    sqrt_weight = floats[:, SQRT_WEIGHT]
    if not known:
        fair_limits(rows, sqrt_weight, obf, nodes, limits)
        if ef > 0.0:
            movable = np.zeros(count, dtype=np.bool_)
            movers = 0
            for k in range(count):
                r = rows[k]
                movable[k] = decided[r] == 0 and low[r] < high[r]
                movers += movable[k]
            if movers > 1:  # nodes move between two jobs at least
                efficiency_transfer(limits, movable, rows, ints, floats, ef, nodes)
    out_start[:count] = NEVER
    out_width[:count] = 0
    started = 0
    first_reserved = -1
    reserved = 0
    least = np.empty(len(f), dtype=np.int64)
    least_stale = True
    for k in range(count):
        r = rows[k]
        if decided[r] > 0:
            lo = decided[r]
            cap = lo
        else:
            lo = low[r]
            cap = limits[k]
            if cap < lo:
                cap = lo
            if cap > high[r]:
                cap = high[r]
        w = -1
        if reserved >= depth:
            # Only a start now is left to find: none if not even the narrowest fits now.
            if f[0] == 0:
                break
            if lo > f[0]:
                continue
            if least_stale:
                _least_free(f, n, least)
                least_stale = False
            w = _best_now(t, n, now, least, lo, cap, ints, floats, r)
            if w == 0:
                continue
            # It starts on that width unless a wider one that starts later ends sooner.
            end = now + _duration(w, ints, floats, r)
            if (
                n > 1
                and end > t[1] + _duration(cap, ints, floats, r)
                and _sooner_later(t, f, n, now, w, cap, end, ints, floats, r)
            ):
                continue
        if w < 0:
            w = soonest_width(
                t, f, n, now, lo, cap, ints[r, WIDTH], ints[r, ESTIMATE], ints[r, FLAT] != 0,
                floats[r, A], floats[r, SIGMA],
            )  # fmt: skip
            if w == 0:
                continue  # wider than the nodes in service: it waits without blocking others
        d = _duration(w, ints, floats, r)
        s = earliest_start(t, f, n, w, d, now)
        out_width[k] = w
        if s == now:
            out_started[started] = k
            started += 1
        elif reserved < depth:
            if reserved == 0:
                first_reserved = k
            reserved += 1
        else:
            continue
        out_start[k] = s
        n = add(t, f, n, s, s + d, -w)
        least_stale = True
    return started, first_reserved
