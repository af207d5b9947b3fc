"""Compiled loops of the genetic search over queue orders (Lee's utility paper, sec. 6).

An individual is a queue order: a permutation of the waiting jobs' indices 0..n-1 (in
the step's arrival order) whose first ``k`` positions hold jobs 0..k-1 in some order
and whose tail is jobs k..n-1 in arrival order. A population is a (size, n) int64 array
of them.

``fitness``
    the aggregate utility of each individual's EASY schedule from the current state
    (``sched.kernels.whatif.easy``: jobs run their estimates, nobody else arrives): the sum
    over the waiting jobs of their utility functions at end - submit.
``breed``
    the next population: the best individual kept (elitism), every other one a child
    of two parents drawn in proportion to their fitness (AIMA's selection, which the
    seed adapted), made by zipper crossover and then, with the mutation rate, one swap.
``zipper``
    the seed's crossover: the child takes its first job from one parent, its second
    from the other, and so on, each parent a queue popped from the front; a job that
    the child already holds is popped and passed over until one it does not hold.

Random numbers are drawn by the caller (numpy's generator, seeded) and passed in, so a
search is reproducible and the loops run without the GIL.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from batchd.model.times import NEVER
from batchd.sched.kernels import whatif as whatif_kernels

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]


@njit(cache=True, nogil=True)
def value_at(times: Floats, values: Floats, count: int, t: float) -> float:
    """``Utility.value_at`` on one job's points (``count`` of them; 0: no function)."""
    if count == 0:
        return 0.0
    if t <= 0:
        return float(values[0])
    if t > times[count - 1]:
        return 0.0
    lo = 0
    hi = count
    while lo < hi:  # the first point after t
        mid = (lo + hi) >> 1
        if times[mid] <= t:
            lo = mid + 1
        else:
            hi = mid
    if lo >= count:
        return float(values[count - 1])
    t0 = times[lo - 1]
    v0 = values[lo - 1]
    return float(v0 + (values[lo] - v0) * (t - t0) / (times[lo] - t0))


@njit(cache=True, nogil=True)
def values_at(times: Floats, values: Floats, counts: Ints, at: Ints) -> Floats:
    """Each job's utility at ``at`` seconds after its submission."""
    n = len(counts)
    out = np.empty(n, dtype=np.float64)
    for j in range(n):
        out[j] = value_at(times[j], values[j], counts[j], at[j])
    return out


@njit(cache=True, nogil=True)
def fitness(
    population: Ints,
    first: int,
    now: int,
    capacity: int,
    running_ends: Ints,
    running_widths: Ints,
    widths: Ints,
    estimates: Ints,
    submits: Ints,
    times: Floats,
    values: Floats,
    counts: Ints,
    out: Floats,
) -> None:
    """``out[i]`` := the aggregate utility of individual i's EASY schedule, for i >= first."""
    size, n = population.shape
    w = np.empty(n, dtype=np.int64)
    e = np.empty(n, dtype=np.int64)
    s = np.empty(n, dtype=np.int64)
    for i in range(first, size):
        perm = population[i]
        for p in range(n):
            j = perm[p]
            w[p] = widths[j]
            e[p] = estimates[j]
            s[p] = submits[j]
        starts = whatif_kernels.easy(now, capacity, running_ends, running_widths, w, e, s)
        total = 0.0
        for p in range(n):
            start = starts[p]
            if start == NEVER:
                continue
            j = perm[p]
            end = start + whatif_kernels.duration(e[p])
            total += value_at(times[j], values[j], counts[j], end - s[p])
        out[i] = total


@njit(cache=True, nogil=True)
def zipper(a: Ints, b: Ints, child: Ints, held: Bools) -> None:
    """The zipper crossover of orders ``a`` and ``b`` (permutations of 0..k-1) into ``child``.

    ``held`` is scratch space of k flags.
    """
    k = len(a)
    held[:k] = False
    ia = 0
    ib = 0
    for m in range(k):
        if m % 2 == 0:
            while held[a[ia]]:
                ia += 1
            x = a[ia]
            ia += 1
        else:
            while held[b[ib]]:
                ib += 1
            x = b[ib]
            ib += 1
        child[m] = x
        held[x] = True


@njit(cache=True, nogil=True)
def pick(cumulative: Floats, u: float) -> int:
    """The individual a uniform draw ``u`` in [0, 1) selects in proportion to fitness
    (``cumulative`` sums of it); uniformly when every fitness is 0."""
    size = len(cumulative)
    total = cumulative[size - 1]
    if total <= 0.0:
        return min(int(u * size), size - 1)
    r = u * total
    lo = 0
    hi = size - 1
    while lo < hi:  # the first individual whose cumulative sum exceeds r
        mid = (lo + hi) >> 1
        if cumulative[mid] > r:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(cache=True, nogil=True)
def breed(
    population: Ints,
    scores: Floats,
    k: int,
    parents: Floats,
    mutate: Floats,
    swaps: Ints,
    rate: float,
    out: Ints,
) -> None:
    """The next generation into ``out``: row 0 the best individual (the first best), rows
    1.. children. Child c's parents are picked with ``parents[c - 1]`` (two draws in
    [0, 1)); it mutates when ``mutate[c - 1] < rate``, swapping the positions
    ``swaps[c - 1]`` (two different positions below k)."""
    size, n = population.shape
    best = 0
    for i in range(1, size):
        if scores[i] > scores[best]:
            best = i
    out[0, :] = population[best]
    cumulative = np.cumsum(scores)
    held = np.empty(k, dtype=np.bool_)
    for c in range(1, size):
        a = pick(cumulative, parents[c - 1, 0])
        b = pick(cumulative, parents[c - 1, 1])
        child = out[c]
        zipper(population[a, :k], population[b, :k], child[:k], held)
        child[k:] = population[a, k:]
        if mutate[c - 1] < rate:
            i = swaps[c - 1, 0]
            j = swaps[c - 1, 1]
            child[i], child[j] = child[j], child[i]
