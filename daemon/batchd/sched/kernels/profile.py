"""Compiled inner loops of the availability profile.

A profile is a step function of free nodes over time, held in two int64 arrays:
``t[i]`` is where step ``i`` begins and ``f[i]`` the free nodes from there until
``t[i + 1]``; the last step lasts for ever. Only ``t[:n]``/``f[:n]`` are live;
callers keep at least two spare slots so a reservation can split two steps.

These loops run for every placement of every planned job (a saturated trace
places millions), so they are compiled with numba; the pure-Python
``ListProfile`` in ``profile.py`` is the reference they are tested against.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from batchd.model.times import NEVER  # earliest_start of a width the machine can never hold

RECENT = 64  # placements a plan's search takes its floor from


@njit(cache=True, nogil=True)
def locate(t: np.ndarray, n: int, x: int) -> int:
    """Index of the step that contains time ``x`` (0 when x is before the origin)."""
    lo = 0
    hi = n
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        if t[mid] <= x:
            lo = mid
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def window(
    t: np.ndarray, f: np.ndarray, n: int, width: int, dur: int, not_before: int, limit: int = NEVER
) -> tuple[int, int, int]:
    """(start, i, j): the first time >= not_before at which ``width`` nodes stay free
    for ``dur`` seconds, step ``i`` holding it and steps ``i`` to ``j - 1`` covering
    [start, start + dur); (NEVER, 0, 0) if there is none before ``limit``."""
    i = locate(t, n, not_before)
    while True:
        while f[i] < width:
            i += 1
            if i == n:
                return NEVER, 0, 0
        start = t[i] if t[i] > not_before else not_before
        if start >= limit:
            return NEVER, 0, 0
        end = start + dur
        j = i + 1
        while j < n and t[j] < end:
            if f[j] < width:
                break
            j += 1
        else:
            return start, i, j
        i = j  # no start before the end of the first step short of room


@njit(cache=True, nogil=True)
def earliest_start(
    t: np.ndarray, f: np.ndarray, n: int, width: int, dur: int, not_before: int, limit: int = NEVER
) -> int:
    """First time >= not_before at which ``width`` nodes stay free for ``dur`` seconds;
    NEVER if there is none before ``limit``."""
    return window(t, f, n, width, dur, not_before, limit)[0]


@njit(cache=True, nogil=True)
def _insert(t: np.ndarray, f: np.ndarray, n: int, at: int, time: int, free: int) -> int:
    for k in range(n, at, -1):
        t[k] = t[k - 1]
        f[k] = f[k - 1]
    t[at] = time
    f[at] = free
    return n + 1


@njit(cache=True, nogil=True)
def _delete(t: np.ndarray, f: np.ndarray, n: int, at: int) -> int:
    for k in range(at, n - 1):
        t[k] = t[k + 1]
        f[k] = f[k + 1]
    return n - 1


@njit(cache=True, nogil=True)
def add(t: np.ndarray, f: np.ndarray, n: int, start: int, end: int, delta: int) -> int:
    """Add ``delta`` free nodes over [start, end); returns the new step count.

    Reserving is ``delta = -width``, releasing ``+width``; ``end`` NEVER changes every
    step from ``start`` on (a profile has no step at NEVER). Equal neighbours are
    merged so the profile stays as short as the schedule allows; only the two
    boundaries can create them, because every step inside changes by the same delta.
    """
    if start < t[0]:
        start = t[0]  # the past is gone
    if end <= start:
        return n
    i = locate(t, n, start)
    if t[i] < start:
        n = _insert(t, f, n, i + 1, start, f[i])
        i += 1
    if end == NEVER:
        k = n - 1
    else:
        k = locate(t, n, end)
        if t[k] < end:
            n = _insert(t, f, n, k + 1, end, f[k])
        else:
            k -= 1
    for m in range(i, k + 1):
        f[m] += delta
    if k + 1 < n and f[k + 1] == f[k]:
        n = _delete(t, f, n, k + 1)
    if i > 0 and f[i - 1] == f[i]:
        n = _delete(t, f, n, i)
    return n


@njit(cache=True, nogil=True)
def advance(t: np.ndarray, f: np.ndarray, n: int, now: int) -> int:
    """Forget the past: the profile starts at ``now``."""
    i = locate(t, n, now)
    if i > 0:
        for k in range(i, n):
            t[k - i] = t[k]
            f[k - i] = f[k]
        n -= i
    if t[0] < now:
        t[0] = now
    return n


@njit(cache=True, nogil=True)
def take(
    t: np.ndarray, f: np.ndarray, n: int, i: int, j: int, start: int, end: int, width: int
) -> int:
    """Reserve ``width`` > 0 nodes over [start, end) found by ``window`` (step ``i``
    holds start, ``j`` is the first step at or after end); returns the new step count.

    ``add`` without its two searches: the steps are known, and whether a boundary
    merges with its neighbour is known before the splits move them.
    """
    split_right = j == n or t[j] > end
    split_left = t[i] < start
    merge_left = not split_left and i > 0 and f[i - 1] == f[i] - width
    merge_right = not split_right and j < n and f[j] == f[j - 1] - width
    if split_right:
        n = _insert(t, f, n, j, end, f[j - 1])
    if split_left:
        n = _insert(t, f, n, i + 1, start, f[i])
        i += 1
        j += 1
    for m in range(i, j):
        f[m] -= width
    if merge_right:
        n = _delete(t, f, n, j)
    if merge_left:
        n = _delete(t, f, n, i)
    return n


@njit(cache=True, nogil=True)
def place(
    t: np.ndarray, f: np.ndarray, n: int, width: int, dur: int, not_before: int
) -> tuple[int, int]:
    """Reserve the earliest fitting slot; returns (start, new step count)."""
    start, i, j = window(t, f, n, width, dur, not_before)
    if start == NEVER:
        return NEVER, n
    if width > 0 and dur > 0:
        n = take(t, f, n, i, j, start, start + dur, width)
    return start, n


@njit(cache=True, nogil=True)
def build(
    t: np.ndarray, f: np.ndarray, now: int, capacity: int, ends: np.ndarray, widths: np.ndarray
) -> int:
    """The profile of running jobs: ``widths[k]`` nodes busy until ``ends[k]`` (ascending)."""
    busy = 0
    for k in range(len(widths)):
        busy += widths[k]
    t[0] = now
    f[0] = capacity - busy
    n = 1
    for k in range(len(ends)):
        e = ends[k]
        if e <= now:
            f[0] += widths[k]
            continue
        if t[n - 1] == e:
            f[n - 1] += widths[k]
        else:
            t[n] = e
            f[n] = f[n - 1] + widths[k]
            n += 1
    return n


@njit(cache=True, nogil=True)
def plan_all(
    t: np.ndarray,
    f: np.ndarray,
    n: int,
    widths: np.ndarray,
    durs: np.ndarray,
    not_before: int,
    starts: np.ndarray,
    held: np.ndarray | None = None,
) -> int:
    """Place jobs one after the other, each at its earliest start; the conservative plan.

    With ``held`` (a start for each job), the plan stops at the first job it would
    start later than that, and returns -1: the profile is then left half planned.

    The profile only loses room as jobs are placed, so a job finds none before the
    start of a job placed before it that is no wider and no longer: each search
    begins at the latest such start among the last ``RECENT`` placements.

    A deep queue repeats a few shapes, often side by side in the order. The jobs of
    one shape right behind a job start where it starts, as many as the narrowest
    step of its window holds besides it (none can start earlier, and there they
    fit), so one search and one reservation place them all.
    """
    big = np.iinfo(np.int64).max
    recent_w = np.full(RECENT, big, dtype=np.int64)
    recent_d = np.zeros(RECENT, dtype=np.int64)
    recent_s = np.zeros(RECENT, dtype=np.int64)
    count = len(widths)
    k = 0
    while k < count:
        w = widths[k]
        d = durs[k]
        floor = not_before
        for q in range(RECENT):
            if recent_w[q] <= w and recent_d[q] <= d and recent_s[q] > floor:
                floor = recent_s[q]
        s, i, j = window(t, f, n, w, d, floor)
        if held is not None and s > held[k]:
            return -1
        starts[k] = s
        if s == NEVER:
            k += 1
            continue
        together = 1
        if w > 0 and d > 0:
            # A second job of this shape next, and room for two where the window begins
            # (on a full machine, mostly not: then nothing more is looked at).
            if f[i] >= 2 * w and k + 1 < count and widths[k + 1] == w and durs[k + 1] == d:
                together = alike(widths, durs, k, _held(f, i, j, w))
                for x in range(k + 1, k + together):
                    if held is not None and s > held[x]:
                        return -1
                    starts[x] = s
            n = take(t, f, n, i, j, s, s + d, w * together)
        r = k % RECENT
        recent_w[r] = w
        recent_d[r] = d
        recent_s[r] = s
        k += together
    return n


@njit(cache=True, nogil=True)
def _held(f: np.ndarray, i: int, j: int, width: int) -> int:
    """How many jobs of ``width`` steps ``i`` to ``j - 1`` hold side by side (they hold
    one); the walk stops where one more would not fit, as on a full machine."""
    least: int = f[i]
    for x in range(i + 1, j):
        if f[x] < least:
            least = f[x]
            if least < 2 * width:
                break
    return least // width


@njit(cache=True, nogil=True)
def alike(widths: np.ndarray, durs: np.ndarray, k: int, most: int) -> int:
    """How many jobs from ``k`` on have job k's shape, counting at most ``most``."""
    w = widths[k]
    d = durs[k]
    e = k + 1
    end = min(len(widths), k + most)
    while e < end and widths[e] == w and durs[e] == d:
        e += 1
    return e - k


def reserve_all(
    t: np.ndarray, f: np.ndarray, n: int, widths: np.ndarray, durs: np.ndarray, starts: np.ndarray
) -> int:
    """Put existing reservations into a profile (jobs planned at NEVER hold nothing).

    All at once: the profile's changes and each reservation's two ends, in time order,
    summed into the steps that one ``add`` after the other leaves, at a cost of sorting
    them rather than a pass over the profile's steps per reservation. Not compiled:
    numpy's stable sort (a merge sort that finds runs already in order) takes the
    profile's steps, the starts (a plan's are mostly in order already) and the ends as
    three runs.
    """
    times, deltas = reservation_events(t, f, n, widths, durs, starts)
    return int(sum_events(times, deltas, np.argsort(times, kind="stable"), t, f))


@njit(cache=True, nogil=True)
def reservation_events(
    t: np.ndarray, f: np.ndarray, n: int, widths: np.ndarray, durs: np.ndarray, starts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The profile's steps as changes of its free nodes, then the reservations' starts,
    then their ends, as more changes: (times, changes), not sorted."""
    origin = t[0]
    jobs = len(widths)
    times = np.empty(n + 2 * jobs, dtype=np.int64)
    deltas = np.empty(len(times), dtype=np.int64)
    for i in range(n):
        times[i] = t[i]
        deltas[i] = f[i] - f[i - 1] if i > 0 else f[0]
    m = 0  # reservations that hold nodes: starts from n on, ends from n + jobs on
    for k in range(jobs):
        s = starts[k]
        if s == NEVER:
            continue
        end = s + durs[k]
        if s < origin:
            s = origin  # the past is gone
        if end <= s or widths[k] == 0:
            continue
        times[n + m] = s
        deltas[n + m] = -widths[k]
        times[n + jobs + m] = end
        deltas[n + jobs + m] = widths[k]
        m += 1
    for x in range(m):  # the ends moved down to right after the starts
        times[n + m + x] = times[n + jobs + x]
        deltas[n + m + x] = deltas[n + jobs + x]
    return times[: n + 2 * m], deltas[: n + 2 * m]


@njit(cache=True, nogil=True)
def sum_events(
    times: np.ndarray, deltas: np.ndarray, order: np.ndarray, t: np.ndarray, f: np.ndarray
) -> int:
    """The steps of the changes taken in ``order`` (by time), written to ``t``/``f``
    with equal neighbours merged; returns their count."""
    steps = 0
    value = 0
    x = 0
    m = len(order)
    while x < m:
        time = times[order[x]]
        while x < m and times[order[x]] == time:
            value += deltas[order[x]]
            x += 1
        if steps == 0 or value != f[steps - 1]:
            t[steps] = time
            f[steps] = value
            steps += 1
    return steps


@njit(cache=True, nogil=True)
def release_all(
    t: np.ndarray, f: np.ndarray, n: int, widths: np.ndarray, durs: np.ndarray, starts: np.ndarray
) -> int:
    """Take reservations out of a profile again (jobs planned at NEVER held nothing).

    Last first: taken out in the reverse of the order they were made, the profile
    passes back through the (short) profiles the plan passed through. Jobs side by
    side with one start and one duration are taken out together.
    """
    k = len(widths) - 1
    while k >= 0:
        s = starts[k]
        d = durs[k]
        width = widths[k]
        e = k - 1
        while e >= 0 and starts[e] == s and durs[e] == d:
            width += widths[e]
            e -= 1
        if s != NEVER:
            n = add(t, f, n, s, s + d, width)
        k = e
    return n


@njit(cache=True, nogil=True)
def compress(
    t: np.ndarray,
    f: np.ndarray,
    n: int,
    widths: np.ndarray,
    durs: np.ndarray,
    not_before: int,
    starts: np.ndarray,
) -> int:
    """Move each reserved job, in the given order, to its earliest start.

    The profile holds every reservation. A job gives up its own slot and takes
    the earliest one that fits among all the others, so it never moves later.
    """
    for k in range(len(widths)):
        w = widths[k]
        d = durs[k]
        old = starts[k]
        if old != NEVER:
            n = add(t, f, n, old, old + d, w)
        s = earliest_start(t, f, n, w, d, not_before)
        starts[k] = s
        if s != NEVER:
            n = add(t, f, n, s, s + d, -w)
    return n
