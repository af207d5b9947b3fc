"""The compiled search of moldable-iterative (``sched.kernels.iterative``) called directly:
worked cases for what the random comparison with Fig. 6 written out
(tests/sched/policies/test_moldable_iterative.py) does not draw: an empty queue, an
estimate of 0 s, a fixed-runtime job whose model still names a parallelism, and queues
long enough to use several snapshots of the plan."""

from __future__ import annotations

import numpy as np

from batchd.model.times import NEVER
from batchd.sched.kernels.iterative import EVERY, iterate, planned_duration


def ints(values: list[int]) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def run(
    capacity: int,
    jobs: list[tuple[int, int, int, int]],  # low, high, requested width, estimate
    *,
    fixed: bool = False,
    a: float = 100.0,
    now: int = 0,
) -> tuple[list[int], list[int], int, int]:
    q = len(jobs)
    t0 = np.zeros(4, dtype=np.int64)
    f0 = np.zeros(4, dtype=np.int64)
    t0[0], f0[0] = now, capacity
    widths = np.zeros(q, dtype=np.int64)
    starts = np.zeros(q, dtype=np.int64)
    trials, accepted = iterate(
        t0,
        f0,
        1,
        now,
        ints([j[0] for j in jobs]),
        ints([j[1] for j in jobs]),
        ints([j[2] for j in jobs]),
        ints([j[3] for j in jobs]),
        np.full(q, fixed, dtype=np.bool_),
        np.full(q, a, dtype=np.float64),
        np.zeros(q, dtype=np.float64),
        widths,
        starts,
    )
    return widths.tolist(), starts.tolist(), int(trials), int(accepted)


def test_an_empty_queue_tries_nothing() -> None:
    assert run(4, []) == ([], [], 0, 0)


def test_planned_durations() -> None:
    # Linear: 100 s on 2 nodes is 50 s on 4; 0 s or an unknown estimate holds 1 s.
    assert planned_duration(4, 100, 2, False, 100.0, 0.0) == 50
    assert planned_duration(4, 0, 2, False, 100.0, 0.0) == 1
    assert planned_duration(4, -1, 2, False, 100.0, 0.0) == 1
    assert planned_duration(4, 100, 2, True, 100.0, 0.0) == 100


def test_estimates_of_zero_hold_their_node_one_second() -> None:
    # One node, two jobs of 0 s: the second starts when the first's second is over.
    assert run(1, [(1, 1, 1, 0), (1, 1, 1, 0)]) == ([1, 1], [0, 1], 0, 0)


def test_a_fixed_job_gains_nothing_whatever_its_parallelism() -> None:
    # A = 100 would make a Downey job linear; a fixed one keeps its 100 s on any width,
    # so no node is ever tried.
    assert run(8, [(1, 8, 1, 100)], fixed=True) == ([1], [0], 0, 0)
    # The same job with the speedup grows over the whole machine, one trial a node.
    assert run(8, [(1, 8, 1, 800)]) == ([8], [0], 7, 7)


def test_a_long_queue_plans_as_job_by_job() -> None:
    # 4 nodes, ten 1..2-node linear jobs of 40 s on 1 node: each is worth widening only
    # while it does not push the jobs behind it later. Compared with a plan written out
    # job by job from the widths the search chose (starts as on an empty profile).
    jobs = [(1, 2, 1, 40)] * (3 * EVERY - 2)
    widths, starts, trials, accepted = run(4, jobs)
    # Replan the chosen widths in order on a plain list of free nodes per second.
    free = [4] * 1000
    want = []
    for w in widths:
        d = 40 // w
        s = next(t for t in range(1000) if all(free[t + x] >= w for x in range(d)))
        for x in range(d):
            free[s + x] -= w
        want.append(s)
    assert starts == want
    assert trials >= accepted >= 0
    assert sum(s + 40 // w for s, w in zip(starts, widths, strict=True)) <= sum(
        s + 40 for s in [0, 0, 0, 0, 40, 40, 40, 40, 80, 80]
    )
    assert NEVER not in starts
