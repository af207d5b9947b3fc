"""The profile of the plan in force made the profile of now, from what changed.

A compression starts from the plan in force: the base it was made on (running jobs,
advance reservations) with every waiting job's slot taken. Since then the base
changed where jobs ended (early: room opens) or started, and jobs left the queue
(started or withdrawn) with the slots they held. Adding the bases' difference and
freeing those slots gives the profile laying the base of now and every waiting
job's slot out afresh would give, at the cost of the places that changed; where it
gained room are the gains the compression searches (``kernels.compression``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from batchd.model.times import NEVER
from batchd.sched.kernels.profile import add, locate


@njit(cache=True, nogil=True)
def changes_since(
    t: np.ndarray,
    f: np.ndarray,
    n: int,
    t0: np.ndarray,
    f0: np.ndarray,
    n0: int,
    t1: np.ndarray,
    f1: np.ndarray,
    n1: int,
    gone: np.ndarray,
    left_a: np.ndarray,
    left_b: np.ndarray,
    now: int,
    ga: np.ndarray,
    gb: np.ndarray,
) -> tuple[int, int]:
    """The profile of a plan made on base 0 (``t0``/``f0``) made the one on base 1, in
    place: the bases' difference from ``now`` on is added, and the slots of the jobs
    that left the plan since (rows of ``gone``: start, duration, width) are freed.

    Where the profile gained room, and the slots ``left_a``/``left_b`` the last
    compression's movers left, are written to ``ga``/``gb`` as gains (sorted, merged
    where they meet or touch). Returns (step count, gain count). ``t``/``f`` need room
    for ``n0 + n1 + 2 * len(gone)`` more steps, ``ga``/``gb`` for as many gains plus
    ``len(left_a)``.
    """
    # The change, as events (time, change of the change): the bases differ where
    # jobs started or ended, and agree over most of their steps.
    ev_t = np.empty(n0 + n1 + 2 * len(gone) + 1, dtype=np.int64)
    ev_v = np.empty(len(ev_t), dtype=np.int64)
    ne = 0
    i = locate(t0, n0, now)
    j = locate(t1, n1, now)
    v = f1[j] - f0[i]
    if v != 0:
        ev_t[0] = now
        ev_v[0] = v
        ne = 1
    while True:
        while i + 1 < n0 and j + 1 < n1 and t0[i + 1] == t1[j + 1]:  # steps in both
            i += 1
            j += 1
            nv = f1[j] - f0[i]
            if nv != v:
                ev_t[ne] = t0[i]
                ev_v[ne] = nv - v
                ne += 1
                v = nv
        nxt0 = t0[i + 1] if i + 1 < n0 else NEVER
        nxt1 = t1[j + 1] if j + 1 < n1 else NEVER
        x = nxt0 if nxt0 < nxt1 else nxt1
        if x == NEVER:
            break
        if nxt0 == x:
            i += 1
        if nxt1 == x:
            j += 1
        nv = f1[j] - f0[i]
        if nv != v:
            ev_t[ne] = x
            ev_v[ne] = nv - v
            ne += 1
            v = nv
    for k in range(len(gone)):
        a = gone[k, 0]
        w = gone[k, 2]
        if a == NEVER or w == 0:
            continue  # it held no nodes
        b = a + gone[k, 1]
        if a < now:
            a = now
        if b <= a:
            continue
        ev_t[ne] = a
        ev_v[ne] = w
        ev_t[ne + 1] = b
        ev_v[ne + 1] = -w
        ne += 2
    order = np.argsort(ev_t[:ne], kind="mergesort")

    # The change added where it is not zero (few places: a job that started as
    # planned left a slot its run now fills); where it is positive, a gain.
    ca = np.empty(ne + len(left_a) + 1, dtype=np.int64)
    cb = np.empty(len(ca), dtype=np.int64)
    nc = 0
    value = 0
    x = 0
    while x < ne:
        time = ev_t[order[x]]
        while x < ne and ev_t[order[x]] == time:
            value += ev_v[order[x]]
            x += 1
        if value == 0:
            continue
        # NEVER: more or fewer nodes from here on (a machine of another size).
        until = ev_t[order[x]] if x < ne else NEVER
        n = add(t, f, n, time, until, value)
        if value > 0:
            if nc and cb[nc - 1] == time:
                cb[nc - 1] = until  # more room on from the last gain
            else:
                ca[nc] = time
                cb[nc] = until
                nc += 1

    # Gains: where the profile gained room, and the slots left last time.
    for q in range(len(left_a)):
        a = left_a[q] if left_a[q] > now else now
        if left_b[q] > a:
            ca[nc] = a
            cb[nc] = left_b[q]
            nc += 1
    by_start = np.argsort(ca[:nc], kind="mergesort")
    ng = 0
    for q in range(nc):
        a = ca[by_start[q]]
        b = cb[by_start[q]]
        if ng and a <= gb[ng - 1]:
            if b > gb[ng - 1]:
                gb[ng - 1] = b
        else:
            ga[ng] = a
            gb[ng] = b
            ng += 1
    return n, ng
