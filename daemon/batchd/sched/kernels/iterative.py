"""The compiled search of moldable-iterative: Sabin et al.'s moldable paper, Fig. 6, on int64 arrays.

Every waiting job starts at its minimum width; the conservative plan of the queue
in its order is made on the base profile (running jobs and reservations). Then,
repeatedly, the unmarked job whose estimate falls most with one more node (the
first in queue order among equals; a fall of zero never counts) gets that node;
the queue is planned again; the node is kept if the plan's turnaround improved,
else it is taken back and the job marked. It ends when no unmarked job gains
from a node. The plan's turnaround is compared as (jobs that never fit, sum of
planned ends): fewer unplaceable jobs first, then the sum (the mean over waiting
jobs of planned end minus submit, the submits being the same on both sides).

One trial changes one job's width and duration, so the plan of the jobs ahead of
it stands: only the suffix from that job is planned again. The profile after
every ``EVERY``-th job of the accepted plan is kept (a snapshot), so a trial
starts from the snapshot at or before the job, puts the few jobs between back at
their accepted starts, and plans the rest, writing fresh snapshots as it goes; an
accepted trial takes those snapshots by swapping row indices, a rejected one
leaves them unused. The result is exactly that of planning the whole queue again
(a test compares it with a pure-Python Fig. 6 on ``ListProfile``).

Note on numba's cache: this module calls the compiled loops of ``kernels.profile`` and
``kernels.moldable``; after a change there, clear this file's ``__pycache__``
entries too (see ``kernels.whatif``).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from batchd.model.times import NEVER
from batchd.sched.kernels import blocked_plan, blocks
from batchd.sched.kernels import profile as kernels
from batchd.sched.kernels.moldable import scaled

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
Flags = npt.NDArray[np.bool_]

EVERY = 4  # jobs between two snapshots of the accepted plan's profile


@njit(cache=True, nogil=True)
def planned_duration(n: int, estimate: int, width: int, fixed: bool, a: float, sigma: float) -> int:
    """The job's planned duration on ``n`` nodes: its scaled estimate, at least 1 s
    (``Job.duration`` after the engine reshapes it to ``n``)."""
    d = scaled(estimate, n, width, fixed, a, sigma)
    return d if d > 0 else 1


@njit(cache=True, nogil=True)
def _suffix(
    p: int,
    w: Ints,
    d: Ints,
    acc: Ints,
    out: Ints,
    now: int,
    pt: Ints,
    pf: Ints,
    pn: Ints,
    slot: Ints,
    tslot: Ints,
    t: Ints,
    f: Ints,
) -> tuple[int, int]:
    """Plan jobs ``p..`` onto the accepted plan of the jobs ahead of ``p``.

    Starts go to ``out[p:]``; the snapshots after ``p`` to the rows ``tslot``
    names. Returns (jobs that never fit, sum of planned ends) over ``p..``.
    """
    q = len(w)
    c = p // EVERY
    row = slot[c]
    m = pn[row]
    t[:m] = pt[row, :m]
    f[:m] = pf[row, :m]
    for k in range(c * EVERY, p):
        s = acc[k]
        if s != NEVER:
            m = kernels.add(t, f, m, s, s + d[k], -w[k])
    never = 0
    total = 0
    for k in range(p, q):
        if k % EVERY == 0 and k > p:
            r = tslot[k // EVERY]
            pt[r, :m] = t[:m]
            pf[r, :m] = f[:m]
            pn[r] = m
        s = kernels.earliest_start(t, f, m, w[k], d[k], now)
        out[k] = s
        if s == NEVER:
            never += 1
        else:
            m = kernels.add(t, f, m, s, s + d[k], -w[k])
            total += s + d[k]
    return never, total


@njit(cache=True, nogil=True)
def _gain(
    k: int,
    w: Ints,
    d: Ints,
    high: Ints,
    est: Ints,
    req: Ints,
    fixed: Flags,
    a: Floats,
    sigma: Floats,
) -> int:
    """How much job ``k``'s duration falls with one more node (0 at its maximum)."""
    if w[k] >= high[k]:
        return 0
    wider: int = planned_duration(w[k] + 1, est[k], req[k], fixed[k], a[k], sigma[k])
    return int(d[k]) - wider


@njit(cache=True, nogil=True)
def iterate(
    t0: Ints,
    f0: Ints,
    n0: int,
    now: int,
    low: Ints,
    high: Ints,
    req: Ints,
    est: Ints,
    fixed: Flags,
    a: Floats,
    sigma: Floats,
    widths: Ints,
    starts: Ints,
) -> tuple[int, int]:
    """Fig. 6 on the queue (in its order) over the base profile ``t0/f0[:n0]``.

    Job ``k`` ranges over ``low[k]..high[k]`` nodes; its estimate ``est[k]`` is for
    ``req[k]`` nodes and scales with Downey's speedup (``fixed``: it does not). A
    rigid job is ``low == high``. Writes the chosen widths and planned starts
    (NEVER: it never fits) and returns (trials, accepted).
    """
    q = len(low)
    if q == 0:
        return 0, 0
    cap = n0 + 2 * q + 4
    if _rigid(low, high):
        # No job can take a node more: no trial, and the plan is the first one.
        _plan_rigid(t0, f0, n0, now, low, est, req, fixed, a, sigma, widths, starts, cap)
        return 0, 0
    rows = q // EVERY + 1
    pt = np.empty((2 * rows, cap), dtype=np.int64)
    pf = np.empty((2 * rows, cap), dtype=np.int64)
    pn = np.zeros(2 * rows, dtype=np.int64)
    slot = np.arange(rows, dtype=np.int64)
    tslot = np.arange(rows, 2 * rows, dtype=np.int64)
    pt[0, :n0] = t0[:n0]
    pf[0, :n0] = f0[:n0]
    pn[0] = n0
    t = np.empty(cap, dtype=np.int64)
    f = np.empty(cap, dtype=np.int64)
    w = widths
    d = np.empty(q, dtype=np.int64)
    gain = np.zeros(q, dtype=np.int64)
    for k in range(q):
        w[k] = low[k]
        d[k] = planned_duration(low[k], est[k], req[k], fixed[k], a[k], sigma[k])
    trial = np.empty(q, dtype=np.int64)
    never, total = _suffix(0, w, d, starts, starts, now, pt, pf, pn, slot, tslot, t, f)
    for r in range(1, rows):
        slot[r], tslot[r] = tslot[r], slot[r]
    for k in range(q):
        gain[k] = _gain(k, w, d, high, est, req, fixed, a, sigma)
    trials = 0
    accepted = 0
    while True:
        best = -1
        most = 0
        for k in range(q):
            if gain[k] > most:
                most = gain[k]
                best = k
        if best < 0:
            break
        j = best
        trials += 1
        old_d = d[j]
        w[j] += 1
        d[j] = old_d - most
        # The accepted plan's figures over the same suffix.
        was_never = 0
        was_total = 0
        for k in range(j, q):
            s = starts[k]
            if s == NEVER:
                was_never += 1
            else:
                was_total += s + (old_d if k == j else d[k])
        now_never, now_total = _suffix(j, w, d, starts, trial, now, pt, pf, pn, slot, tslot, t, f)
        if now_never < was_never or (now_never == was_never and now_total < was_total):
            accepted += 1
            starts[j:] = trial[j:]
            for r in range(j // EVERY + 1, rows):
                slot[r], tslot[r] = tslot[r], slot[r]
            gain[j] = _gain(j, w, d, high, est, req, fixed, a, sigma)
        else:
            w[j] -= 1
            d[j] = old_d
            gain[j] = 0  # marked
    return trials, accepted


@njit(cache=True, nogil=True)
def _rigid(low: Ints, high: Ints) -> bool:
    return bool(np.all(low >= high))


@njit(cache=True, nogil=True)
def _plan_rigid(
    t0: Ints,
    f0: Ints,
    n0: int,
    now: int,
    low: Ints,
    est: Ints,
    req: Ints,
    fixed: Flags,
    a: Floats,
    sigma: Floats,
    widths: Ints,
    starts: Ints,
    cap: int,
) -> None:
    """``iterate``'s first plan, made as ``Profile.plan`` makes it: no snapshots kept."""
    q = len(low)
    d = np.empty(q, dtype=np.int64)
    for k in range(q):
        widths[k] = low[k]
        d[k] = planned_duration(low[k], est[k], req[k], fixed[k], a[k], sigma[k])
    t = np.empty(cap, dtype=np.int64)
    f = np.empty(cap, dtype=np.int64)
    t[:n0] = t0[:n0]
    f[:n0] = f0[:n0]
    if n0 >= blocks.BLOCKED_FROM:
        blocked_plan.plan_all(t, f, n0, widths, d, now, starts, blocks.BLOCK, None)
    else:
        kernels.plan_all(t, f, n0, widths, d, now, starts, None)
