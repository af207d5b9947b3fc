"""Times are int64 seconds all through the kernels: a schedule made 2**53 + 3 seconds later
is the same schedule moved by that much, to the second. (A float64 step, anywhere on the
way, rounds such a time to an even neighbour.)"""

from __future__ import annotations

import random

import numpy as np
import pytest

from batchd.model.times import NEVER
from batchd.sched.kernels import whatif
from batchd.sched.kernels.fairshare import (
    ESTIMATE,
    FLAT,
    HIGH,
    LOW,
    SIGMA,
    SQRT_WEIGHT,
    WIDTH,
    A,
    fairshare_pass,
)
from batchd.sched.kernels.iterative import iterate

LATE = 2**53 + 3  # no float64 holds it, nor most of the seconds after it


def ints(values: list[int]) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def moved(starts: np.ndarray, by: int) -> list[int]:
    return [s if s == NEVER else s + by for s in starts.tolist()]


def random_queue(seed: int) -> tuple[int, list[int], list[int], list[int], list[int], list[int]]:
    rng = random.Random(seed)
    capacity = rng.randint(2, 8)
    running = sorted((rng.randint(1, 90), rng.randint(1, 2)) for _ in range(rng.randint(0, 3)))
    while sum(w for _, w in running) > capacity:
        running.pop()
    n = rng.randint(2, 9)
    widths = [rng.randint(1, capacity + 1) for _ in range(n)]
    estimates = [rng.choice([0, rng.randint(1, 99)]) for _ in range(n)]
    submits = [rng.choice([0, 0, rng.randint(1, 60)]) for _ in range(n)]
    return (
        capacity,
        [e for e, _ in running],
        [w for _, w in running],
        widths,
        estimates,
        submits,
    )


def shifted(values: list[int], by: int) -> np.ndarray:
    return ints([v + by for v in values])


@pytest.mark.parametrize("seed", range(6))
def test_easy_and_conservative_keep_every_second(seed: int) -> None:
    capacity, ends, busy, widths, estimates, submits = random_queue(seed)
    early = whatif.easy(0, capacity, ints(ends), ints(busy), ints(widths), ints(estimates),
                        ints(submits))  # fmt: skip
    late = whatif.easy(LATE, capacity, shifted(ends, LATE), ints(busy), ints(widths),
                       ints(estimates), shifted(submits, LATE))  # fmt: skip
    assert late.tolist() == moved(early, LATE)
    windows = np.array([[30, 45, 1]], dtype=np.int64)
    early = whatif.conservative(0, capacity, ints(ends), ints(busy), ints(widths),
                                ints(estimates), ints(submits), windows)  # fmt: skip
    late = whatif.conservative(LATE, capacity, shifted(ends, LATE), ints(busy), ints(widths),
                               ints(estimates), shifted(submits, LATE),
                               windows + np.array([[LATE, LATE, 0]]))  # fmt: skip
    assert late.tolist() == moved(early, LATE)


def test_easy_late_by_hand() -> None:
    # 2 nodes, one busy until LATE + 5: a 2-node job of 7 s waits for it; a 1-node job of
    # 3 s backfills at once; another 2-node job follows the first at LATE + 12.
    starts = whatif.easy(LATE, 2, ints([LATE + 5]), ints([1]), ints([2, 1, 2]),
                         ints([7, 3, 1]), ints([LATE, LATE, LATE]))  # fmt: skip
    assert starts.tolist() == [LATE + 5, LATE, LATE + 12]


def test_the_iterative_search_keeps_every_second() -> None:
    def run(now: int) -> list[int]:
        t0 = ints([now, now + 41, 0, 0])
        f0 = ints([1, 3, 0, 0])  # 1 of 3 nodes free until now + 41
        q = 5
        widths = np.zeros(q, dtype=np.int64)
        starts = np.zeros(q, dtype=np.int64)
        iterate(t0, f0, 2, now, ints([1] * q), ints([3] * q), ints([1] * q),
                ints([41, 7, 13, 29, 5]), np.zeros(q, dtype=np.bool_),
                np.full(q, 100.0), np.zeros(q), widths, starts)  # fmt: skip
        return moved(starts, -now)

    assert run(LATE) == run(0)


def test_the_fairshare_pass_keeps_every_second() -> None:
    def run(now: int) -> tuple[list[int], list[int]]:
        count = 3
        table = np.zeros((count, 6), dtype=np.int64)
        floats = np.zeros((count, 3), dtype=np.float64)
        for r, (low, high, width, estimate) in enumerate(
            [(1, 4, 2, 41), (2, 2, 2, 7), (1, 3, 1, 13)]
        ):
            table[r, [LOW, HIGH, WIDTH, ESTIMATE, FLAT]] = (low, high, width, estimate, 0)
            floats[r, [A, SIGMA, SQRT_WEIGHT]] = (100.0, 0.0, 1.0)
        t = np.zeros(16, dtype=np.int64)
        f = np.zeros(16, dtype=np.int64)
        limits, widths, starts, started = (np.zeros(count, dtype=np.int64) for _ in range(4))
        fairshare_pass(t, f, 4, now, ints([now + 9]), ints([3]), np.zeros((0, 3), dtype=np.int64),
                       count, 4, 1.0, 0.5, ints([0, 1, 2]), table, floats, limits, False,
                       widths, starts, started)  # fmt: skip
        return widths.tolist(), moved(starts, -now)

    assert run(LATE) == run(0)
