"""Compiled loops of the what-if simulator (``batchd.sched.core.whatif``).

A search over schedules (a genetic algorithm over queue orders, widening
moldable jobs, choosing a grid's machine) evaluates thousands of candidate
orders per scheduling step, so one simulation must cost tens of microseconds.
Everything here runs on int64 arrays with plain loops and no Python objects:

``easy``
    the engine's EASY pass (``EasyPolicy.schedule``) replayed at every event
    time, jobs running exactly their estimates and nobody else arriving;
``conservative``
    each job, in order, at its earliest start on the profile of the running
    jobs, the reservations and the jobs placed before it (the loops of
    ``kernels.profile``).

Both take the candidate order as parallel arrays (widths, estimates, submit
times) and answer each job's start, NEVER for a job wider than the machine.

Note on numba's cache: ``conservative`` calls the compiled loops of
``kernels.profile``, and ``easy`` EASY's shadow rule of ``kernels.backfill``.
numba keys the on-disk cache of a function on its own source file only, so after
a change to one of those files the cached ``conservative`` or ``easy`` keeps the
old code until this file changes too or the ``__pycache__`` entries are removed.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from batchd.model.times import NEVER
from batchd.sched.kernels import backfill as backfill_rule
from batchd.sched.kernels import profile as kernels

Ints = npt.NDArray[np.int64]

LATER = np.iinfo(np.int64).max  # no event left


@njit(cache=True, nogil=True)
def duration(estimate: int) -> int:
    """How long a job holds its nodes: ``Job.duration``, at least one second."""
    return estimate if estimate > 0 else 1


@njit(cache=True, nogil=True)
def load_running(
    now: int, capacity: int, ends: Ints, widths: Ints, re: Ints, rw: Ints
) -> tuple[int, int]:
    """Copy the running jobs into ``re``/``rw`` by end; returns (count, free nodes).

    A job whose end is not after ``now`` has ended: its nodes are free, as in
    ``kernels.profile.build``. Ends are normally ascending already (the view keeps them
    so); a caller's unsorted list is sorted here rather than trusted.
    """
    r = len(ends)
    ascending = True
    for i in range(1, r):
        if ends[i] < ends[i - 1]:
            ascending = False
            break
    order = np.arange(r) if ascending else np.argsort(ends, kind="mergesort")
    hi = 0
    free = capacity
    for k in range(r):
        i = order[k]
        if ends[i] > now:
            re[hi] = ends[i]
            rw[hi] = widths[i]
            free -= widths[i]
            hi += 1
    return hi, free


@njit(cache=True, nogil=True)
def shift_up(a: Ints, lo: int, hi: int) -> None:
    """``a[lo + 1 : hi + 1] = a[lo:hi]``.

    Unsigned indices on purpose: numba checks every signed index for wrapping
    around from the end; without those checks the loop ran three times faster
    in a micro-benchmark of a few hundred elements.
    """
    one = np.uint64(1)
    i = np.uint64(hi)
    stop = np.uint64(lo)
    while i > stop:
        a[i] = a[i - one]
        i -= one


@njit(cache=True, nogil=True)
def shift_down(a: Ints, lo: int, hi: int) -> None:
    """``a[lo - 1 : hi - 1] = a[lo:hi]`` (lo >= 1), unsigned as in ``shift_up``."""
    one = np.uint64(1)
    i = np.uint64(lo)
    stop = np.uint64(hi)
    while i < stop:
        a[i - one] = a[i]
        i += one


@njit(cache=True, nogil=True)
def insert_end(re: Ints, rw: Ints, lo: int, hi: int, end: int, width: int) -> tuple[int, int]:
    """Put (end, width) into the sorted live slice ``re/rw[lo:hi]``; returns the new (lo, hi).

    Ends are consumed from the front (``lo`` moves up), which leaves room
    before ``lo``; the arrays hold every running job plus every waiting one, so
    there is always room after ``hi``. Shifting the shorter side halves the
    moves on average: a new end usually lands in the middle.
    """
    a = lo
    b = hi
    while a < b:  # first live end after ``end``
        mid = (a + b) >> 1
        if re[mid] <= end:
            a = mid + 1
        else:
            b = mid
    if lo > 0 and a - lo < hi - a:
        shift_down(re, lo, a)
        shift_down(rw, lo, a)
        re[a - 1] = end
        rw[a - 1] = width
        return lo - 1, hi
    shift_up(re, a, hi)
    shift_up(rw, a, hi)
    re[a] = end
    rw[a] = width
    return lo, hi + 1


# EASY's shadow rule, the policy's own function compiled: the running set already holds
# the jobs started in this pass (the policy's ``more``), merged by end. Free nodes plus
# running widths add up to the capacity and need <= capacity, so the walk stops before
# the end of the running set.
shadow = njit(cache=True, nogil=True)(backfill_rule.shadow)


@njit(cache=True, nogil=True)
def backfill(
    t: int,
    free: int,
    s: int,
    extra: int,
    widths: Ints,
    dur: Ints,
    out: Ints,
    q: Ints,
    u: int,
    qe: int,
    cand: Ints,
    nc: int,
    re: Ints,
    rw: Ints,
    lo: int,
    hi: int,
) -> tuple[int, int, int, int, int, int, int, int]:
    """The backfill part of one pass, the head and its shadow ``s`` fixed.

    Walks the candidates ``cand[:nc]`` and then the queue ``q[u:qe]`` not yet
    examined for this head (all after the candidates in queue order), starting
    every job that fits now and ends by ``s`` or fits in the extra nodes, as
    ``EasyPolicy.schedule`` does, and stops where it does: when no node is
    free. Returns (free, extra, u, nc, cmin, lo, hi, started), ``cmin`` the
    smallest candidate width (``LATER`` if none).
    """
    started = 0
    kept = 0
    cmin = LATER
    for i in range(nc):
        p = cand[i]
        w = widths[p]
        if free == 0:  # the rest stay candidates, unexamined, as the engine leaves them
            cand[kept] = p
            kept += 1
            cmin = min(cmin, w)
            continue
        end = t + dur[p]
        if not ((end <= s) | (w <= extra)):
            continue  # and never again with this head
        if w <= free:
            if end > s:
                extra -= w
            free -= w
            out[p] = t
            lo, hi = insert_end(re, rw, lo, hi, end, w)
            started += 1
            continue
        cand[kept] = p
        kept += 1
        cmin = min(cmin, w)
    nc = kept
    while u < qe and free > 0:
        p = q[u]
        u += 1
        if out[p] != NEVER:
            continue  # started by an earlier pass
        w = widths[p]
        end = t + dur[p]
        # Bitwise, not "or": both tests are cheap, and most jobs fail them in no
        # pattern a branch predictor could follow.
        ok = (end <= s) | (w <= extra)
        if ok & (w <= free):
            if end > s:
                extra -= w
            free -= w
            out[p] = t
            lo, hi = insert_end(re, rw, lo, hi, end, w)
            started += 1
        elif ok:
            cand[nc] = p
            nc += 1
            cmin = min(cmin, w)
    return free, extra, u, nc, cmin, lo, hi, started


@njit(cache=True, nogil=True)
def easy(
    now: int,
    capacity: int,
    running_ends: Ints,
    running_widths: Ints,
    widths: Ints,
    estimates: Ints,
    submits: Ints,
) -> Ints:
    """Starts of the jobs under EASY from ``now`` on, in the candidate order's positions.

    The engine's order of events at one second is kept: ends, then arrivals,
    then one pass. Durations are at least one second, so a job never ends in
    the second it starts and a second needs one pass only. A pass that starts
    nothing changes nothing (EASY keeps no plan), so such passes are skipped
    whenever that can be told in advance; see the head's state below.
    """
    n = len(widths)
    out = np.full(n, NEVER, dtype=np.int64)
    room = len(running_ends) + n
    # One block for all the work arrays: one allocation instead of eight.
    block = np.empty(2 * room + 5 * n, dtype=np.int64)
    re = block[:room]  # the running set: (end, width), sorted by end, live in [lo, hi)
    rw = block[room : 2 * room]
    hi, free = load_running(now, capacity, running_ends, running_widths, re, rw)
    lo = 0
    b = 2 * room
    q = block[b : b + n]  # the queue: positions of the jobs present, in order
    spare = block[b + n : b + 2 * n]  # for merging arrivals into q
    fut = block[b + 2 * n : b + 3 * n]  # positions of the jobs still to arrive, by submit
    cand = block[b + 3 * n : b + 4 * n]
    dur = block[b + 4 * n : b + 5 * n]
    qe = 0
    nf = 0
    qmin = LATER  # a lower bound of the waiting widths
    for p in range(n):
        dur[p] = duration(estimates[p])
        w = widths[p]
        if w > capacity:
            continue  # never fits: EasyPolicy neither starts it nor lets it block others
        if submits[p] <= now:
            q[qe] = p
            qe += 1
            qmin = min(qmin, w)
        else:
            fut[nf] = p
            nf += 1
    if nf > 1:
        order = np.argsort(submits[fut[:nf]], kind="mergesort")
        fut[:nf] = fut[:nf][order]
    # q[qs:qe] holds the waiting jobs and the slots of jobs started by backfilling
    # (out[p] != NEVER), which the walks skip and a compaction drops.
    qs = 0
    waiting = qe
    ap = 0
    # The head, kept between passes. While the head and the jobs ahead of it stay
    # the same (no arrival ahead of it, the head does not start), its shadow time
    # stays the same, and its extra nodes only shrink by what backfilled jobs take
    # of them: jobs ending by then give their nodes back before it, and the others
    # took them from the extra. So a job that fails the backfill test on time and
    # extra nodes (t + d <= s or w <= extra) keeps failing it, as t grows and extra
    # shrinks; only "w <= free" can turn true. The jobs that pass it are the
    # candidates, the only jobs a later pass with this head can start, and they come
    # in queue order before q[u:], the jobs not yet examined for this head (a pass
    # stops when no node is free). A pass with this head walks the candidates, then
    # goes on from u; it is skipped when it cannot start anything: fewer free nodes
    # than the head, the smallest candidate and (if any are left) the unexamined jobs.
    valid = False
    need = 0
    s = 0
    extra = 0
    u = 0
    nc = 0
    cmin = LATER
    t = now
    while True:
        if waiting > 0:
            if free >= (need if valid else qmin):
                # -- the head may start: in order while they fit, then a new head
                k = qs
                while k < qe:
                    p = q[k]
                    if out[p] == NEVER:
                        w = widths[p]
                        if w > free:
                            break
                        free -= w
                        out[p] = t
                        lo, hi = insert_end(re, rw, lo, hi, t + dur[p], w)
                        waiting -= 1
                    k += 1
                qs = k
                valid = waiting > 0
                if valid:
                    if 2 * waiting < qe - qs:
                        # Mostly started slots: drop them (and tighten the lower bound).
                        m = qs
                        qmin = LATER
                        for i in range(qs, qe):
                            p = q[i]
                            if out[p] == NEVER:
                                q[m] = p
                                m += 1
                                qmin = min(qmin, widths[p])
                        qe = m
                    need = widths[q[qs]]
                    s, extra = shadow(free, need, re, rw, lo, hi, t)
                    u = qs + 1
                    nc = 0
                    cmin = LATER
            if valid and free < need and (free >= cmin or (u < qe and free >= qmin)):
                # -- backfill around the head
                free, extra, u, nc, cmin, lo, hi, started = backfill(
                    t, free, s, extra, widths, dur, out, q, u, qe, cand, nc, re, rw, lo, hi
                )
                waiting -= started
        # -- the next event
        if waiting == 0:
            if ap == nf:
                break
            t = submits[fut[ap]]  # an empty queue waits for the next arrival
        else:
            t = LATER
            if lo < hi:
                t = re[lo]
            if ap < nf and submits[fut[ap]] < t:
                t = submits[fut[ap]]
            if t == LATER:
                break  # only with inconsistent input (running widths over the capacity)
        while lo < hi and re[lo] <= t:
            free += rw[lo]
            lo += 1
        if ap < nf and submits[fut[ap]] <= t:
            a = ap
            while a < nf and submits[fut[a]] <= t:
                qmin = min(qmin, widths[fut[a]])
                a += 1
            new = np.sort(fut[ap:a])
            # Merge the arrivals into the queue by position, dropping started slots.
            i = qs
            j = 0
            m = 0
            while i < qe or j < len(new):
                if j == len(new) or (i < qe and q[i] < new[j]):
                    if out[q[i]] == NEVER:
                        spare[m] = q[i]
                        m += 1
                    i += 1
                else:
                    spare[m] = new[j]
                    m += 1
                    j += 1
            q, spare = spare, q
            qs = 0
            qe = m
            waiting += a - ap
            ap = a
            valid = False  # a job may have arrived ahead of the head
    return out


@njit(cache=True, nogil=True)
def conservative(
    now: int,
    capacity: int,
    running_ends: Ints,
    running_widths: Ints,
    widths: Ints,
    estimates: Ints,
    submits: Ints,
    reservations: Ints,
) -> Ints:
    """Each job in order at its earliest start not before max(now, submit).

    The profile is the one ``forecast.running_profile`` builds: running jobs
    until their ends, then every reservation (start, end, width) reserved with
    the same ``add`` (a window begun before ``now`` counts from ``now``).
    """
    n = len(widths)
    r = len(running_ends)
    k = reservations.shape[0]
    # build() makes at most r + 1 steps; each reservation or placement splits at most two.
    size = r + 2 * (n + k) + 4
    t = np.empty(size, dtype=np.int64)
    f = np.empty(size, dtype=np.int64)
    ascending = True
    for i in range(1, r):
        if running_ends[i] < running_ends[i - 1]:
            ascending = False
            break
    if ascending:
        steps = kernels.build(t, f, now, capacity, running_ends, running_widths)
    else:
        order = np.argsort(running_ends, kind="mergesort")
        steps = kernels.build(t, f, now, capacity, running_ends[order], running_widths[order])
    for i in range(k):
        steps = kernels.add(
            t, f, steps, reservations[i, 0], reservations[i, 1], -reservations[i, 2]
        )
    out = np.empty(n, dtype=np.int64)
    for p in range(n):
        w = widths[p]
        d = duration(estimates[p])
        nb = submits[p] if submits[p] > now else now
        s = kernels.earliest_start(t, f, steps, w, d, nb)
        out[p] = s
        if s != NEVER:
            steps = kernels.add(t, f, steps, s, s + d, -w)
    return out
